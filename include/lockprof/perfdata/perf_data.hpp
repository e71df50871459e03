// perf.data files read directly (`lockprof fold perf.data`, `convert perf.data`, `flamegraph
// perf.data`): the header, the event attributes with their ids, the features lockprof uses
// (HEADER_BUILD_ID, HEADER_EVENT_DESC) and the data section's PERF_RECORD_* records, decoded
// with the ring buffers' layout code (sampling/perf_record.hpp). fold() replays the records in
// time order as `perf script` does (threads' names, each process's mappings) and names every
// frame as perf script prints it, resolved through symbols/ (SymbolResolver for ELF files,
// perf's build-id cache, KernelSymbols for the kernel), so its folded stacks are
// `perf script | lockprof fold`'s. docs/flamegraph.md says what is resolved and how.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockprof/export/folded.hpp"
#include "lockprof/export/perf_script.hpp"
#include "lockprof/export/pprof.hpp"
#include "lockprof/sampling/perf_record.hpp"

namespace lockprof::perfdata {

inline constexpr std::string_view kMagic = "PERFILE2";
// True when a file's first bytes are perf.data's magic.
inline bool looks_like_perf_data(std::string_view head) {
    return head.starts_with(kMagic);
}

struct Event {
    std::string name;  // as perf names it: HEADER_EVENT_DESC's, else from type and config
    std::uint32_t type = 0;
    std::uint64_t config = 0;
    sampling::RecordLayout layout;
    std::uint64_t period = 0, frequency = 0;  // sample_period or sample_freq (attr.freq)
    std::vector<std::uint64_t> ids;
};

class PerfData {
  public:
    // Maps `path` and checks its header, attributes and sections: UsageError, one line, when
    // it is not a perf.data file lockprof reads (wrong magic, pipe mode, big-endian, sizes that
    // do not fit the file).
    static PerfData open(const std::string& path);
    // The same from bytes in memory (standard input, tests); `name` is used in messages.
    static PerfData from_bytes(std::string bytes, std::string name);

    const std::string& name() const { return name_; }
    const std::vector<Event>& events() const { return events_; }
    // File name (as the mmap records give it, "[kernel.kallsyms]", "[vdso]") -> hex build id.
    const std::map<std::string, std::string>& build_ids() const { return build_ids_; }
    // The data section, cut at the end of the file when the file is shorter than its header
    // says (truncated() is then true).
    const unsigned char* data() const { return bytes_ + data_offset_; }
    std::size_t data_offset() const { return data_offset_; }  // in the file
    std::size_t data_size() const { return data_size_; }
    bool truncated() const { return truncated_; }

  private:
    void parse();

    std::string name_;
    std::shared_ptr<const void> storage_;
    const unsigned char* bytes_ = nullptr;
    std::size_t size_ = 0;
    std::size_t data_offset_ = 0, data_size_ = 0;
    bool truncated_ = false;
    std::vector<Event> events_;
    std::map<std::string, std::string> build_ids_;
};

struct ResolveOptions {
    // perf's build-id cache, where `perf record` copies each file it saw; "" = $HOME/.debug.
    std::string debug_dir;
    // Kernel symbols: "" = the cache's copy for the recorded kernel's build id, else
    // /proc/kallsyms.
    std::string kallsyms;
};

// The samples as folded stacks, as `perf script | lockprof fold` with `options` folds them.
// Malformed records are report.problems (UsageError under options.strict); report.lines
// counts records.
exporting::FoldedStacks fold(const PerfData& file, const exporting::PerfScriptOptions& options,
                             exporting::PerfScriptReport& report,
                             const ResolveOptions& resolve = {});

// The first event's samples as a pprof profile, built as a `record`'s is
// (attribution::PprofBuilder: locations at instruction addresses in each process's mappings,
// callers at their return address - 1, functions under lockprof's short names), labels process,
// pid, tid and thread. Each process's mappings are those it had at the end of the recording;
// its files are resolved as fold() resolves them (build ids, perf's cache).
exporting::pprof::Profile perf_data_pprof(const PerfData& file, const ResolveOptions& resolve = {});

}  // namespace lockprof::perfdata
