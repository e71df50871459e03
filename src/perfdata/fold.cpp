// Folding a perf.data file as `perf script | lockprof fold` folds it: records replayed in time
// order (perf script's ordered events), each thread's name from COMM and FORK records ("perf
// script" prints ":TID" for a thread it never saw named), each process's mappings from
// MMAP/MMAP2 records at the time of the sample, call chains as perf walks them (context
// markers switch between kernel and user, at most 127 frames), and every frame named as
// perf script prints it: the ELF symbol demangled without parameters, "[unknown]" and the
// module otherwise, the kernel's from kallsyms.
#include <sys/stat.h>

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "lockprof/attribution/pprof_builder.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/perfdata/perf_data.hpp"
#include "lockprof/symbols/kallsyms.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace lockprof::perfdata {
namespace {

using exporting::PerfSampleFolder;

// perf's default call-chain depth (kernel.perf_event_max_stack), frames beyond it dropped.
constexpr std::uint64_t kMaxStack = 127;
// Where a position-independent file's segments are laid out for its own resolver.
constexpr std::uint64_t kPieBase = 0x100000000000ull;
constexpr std::size_t kNoFile = static_cast<std::size_t>(-1);
constexpr std::uint32_t kKernelPid = static_cast<std::uint32_t>(-1);
constexpr std::string_view kUnknown = "[unknown]";
constexpr std::string_view kKernelImage = "[kernel.kallsyms]";

bool exists(const std::string& path) {
    struct stat st {};
    return !path.empty() && stat(path.c_str(), &st) == 0;
}

// One mapped file, its symbols loaded the first time a sample lands in it.
struct File {
    std::string path;     // as the mmap records name it
    std::string module;   // as perf script prints it
    bool loaded = false;  // resolver and image tried
    symbols::ElfImage image;
    std::uint64_t base = 0;
    std::string resolved;  // the file symbols come from ("" none): the path or the cache's copy
    std::unique_ptr<symbols::SymbolResolver> resolver;
    std::unordered_map<std::uint64_t, std::string> names;  // file offset -> symbol ("" none)
};

struct Map {
    std::uint64_t start = 0, end = 0, pgoff = 0;
    std::size_t file = kNoFile;
    std::string module;  // kernel maps: "[kernel.kallsyms]" or "[module]"
};
using Maps = std::map<std::uint64_t, Map>;  // by start, never overlapping

// Inserts `m`, cutting away what it overlaps (perf's maps__fixup_overlappings).
void insert_map(Maps& maps, Map m) {
    if (m.end <= m.start) return;
    auto it = maps.upper_bound(m.start);
    if (it != maps.begin()) --it;
    while (it != maps.end() && it->second.start < m.end) {
        Map old = it->second;
        if (old.end <= m.start) {
            ++it;
            continue;
        }
        it = maps.erase(it);
        if (old.start < m.start) {
            Map before = old;
            before.end = m.start;
            maps.emplace(before.start, before);
        }
        if (old.end > m.end) {
            Map after = old;
            after.pgoff += m.end - old.start;
            after.start = m.end;
            maps.emplace(after.start, after);
        }
    }
    maps.emplace(m.start, std::move(m));
}

const Map* find_map(const Maps& maps, std::uint64_t address) {
    auto it = maps.upper_bound(address);
    if (it == maps.begin()) return nullptr;
    --it;
    return address < it->second.end ? &it->second : nullptr;
}

struct Thread {
    std::uint32_t pid = 0;
    std::string comm;
};

struct Frame {
    std::string_view symbol, module;
    std::uint64_t address = 0;
};

class Replay {
  public:
    Replay(const PerfData& file, const exporting::PerfScriptOptions& options,
           exporting::PerfScriptReport& report, const ResolveOptions& resolve)
        : file_(file), report_(report), folder_(file.name(), options, report), resolve_(resolve) {
        if (resolve_.debug_dir.empty()) {
            const char* home = std::getenv("HOME");
            resolve_.debug_dir = home && *home ? fmt::format("{}/.debug", home) : "";
        }
        for (std::size_t i = 0; i < file.events().size(); ++i) {
            const auto& e = file.events()[i];
            for (auto id : e.ids) event_of_id_.emplace(id, i);
            auto name = std::string_view(e.name);
            short_names_.emplace_back(name.substr(0, name.find(':')));
        }
    }

    exporting::FoldedStacks run();
    // After run(): the first event's samples as a pprof profile (collect() before run()).
    void collect() { collect_ = true; }
    exporting::pprof::Profile pprof();

  private:
    struct Item {
        std::uint64_t time;
        std::size_t offset;
        std::size_t event;
    };

    // `offset`: the record's, in the data section; messages give the file's byte offset.
    void problem(std::size_t offset, const std::string& why) {
        folder_.problem(file_.data_offset() + offset, why,
                        " (run without --strict to skip such records)");
    }
    std::size_t event_of_sample(const unsigned char* body, std::size_t size) const;
    std::size_t event_of_side_band(const unsigned char* body, std::size_t size) const;
    Thread& thread(std::uint32_t pid, std::uint32_t tid);
    void side_band(const perf_event_header& h, const unsigned char* body, std::size_t size,
                   std::size_t event);
    void sample(const perf_event_header& h, const unsigned char* body, std::size_t size,
                std::size_t event, std::size_t offset);
    void add_frame(std::uint32_t pid, std::uint64_t address, int cpumode);
    Frame user_frame(std::uint32_t pid, std::uint64_t address);
    Frame kernel_frame(std::uint64_t address);
    std::size_t file_index(const std::string& path, std::uint32_t pid);
    const std::string& symbol_in(File& file, std::uint64_t file_offset);
    void load(File& file);

    const PerfData& file_;
    exporting::PerfScriptReport& report_;
    PerfSampleFolder folder_;
    ResolveOptions resolve_;
    std::unordered_map<std::uint64_t, std::size_t> event_of_id_;
    std::vector<std::string> short_names_;
    std::unordered_map<std::uint32_t, Thread> threads_;
    std::unordered_map<std::uint32_t, Maps> maps_;  // by pid
    Maps kernel_maps_;
    std::vector<std::unique_ptr<File>> files_;
    std::map<std::string, std::size_t> file_by_path_;
    std::optional<symbols::KernelSymbols> kallsyms_;
    std::string tid_text_;
    bool collect_ = false;
    std::size_t collected_event_ = kNoFile;
    std::vector<measure::RawSample> collected_;
};

std::size_t Replay::event_of_sample(const unsigned char* body, std::size_t size) const {
    if (file_.events().size() == 1) return 0;
    const long pos = sampling::sample_id_offset(file_.events()[0].layout.sample_type);
    if (pos < 0 || static_cast<std::size_t>(pos) + 8 > size) return kNoFile;
    std::uint64_t id = 0;
    std::memcpy(&id, body + pos, 8);
    auto it = event_of_id_.find(id);
    return it == event_of_id_.end() ? kNoFile : it->second;
}

std::size_t Replay::event_of_side_band(const unsigned char* body, std::size_t size) const {
    if (file_.events().size() == 1 || !file_.events()[0].layout.sample_id_all) return 0;
    const long from_end =
        sampling::side_band_id_offset_from_end(file_.events()[0].layout.sample_type);
    if (from_end < 0 || static_cast<std::size_t>(from_end) > size) return 0;
    std::uint64_t id = 0;
    std::memcpy(&id, body + size - from_end, 8);
    auto it = event_of_id_.find(id);
    return it == event_of_id_.end() ? 0 : it->second;
}

Thread& Replay::thread(std::uint32_t pid, std::uint32_t tid) {
    auto [it, inserted] = threads_.try_emplace(tid);
    if (inserted) {
        it->second.pid = pid;
        it->second.comm = fmt::format(":{}", tid);  // perf's name for a thread never named
    }
    return it->second;
}

std::size_t Replay::file_index(const std::string& path, std::uint32_t pid) {
    // perf names anonymous executable memory after the JIT map file it would read.
    const bool anon = path == "//anon" || path == "/dev/zero" || path.starts_with("/anon_hugepage");
    const std::string key = anon ? fmt::format("/tmp/perf-{}.map", pid) : path;
    auto [it, inserted] = file_by_path_.try_emplace(key, files_.size());
    if (inserted) {
        auto f = std::make_unique<File>();
        f->path = anon ? std::string() : path;
        f->module = key;
        f->loaded = anon;  // nothing to load
        files_.push_back(std::move(f));
    }
    return it->second;
}

void Replay::side_band(const perf_event_header& h, const unsigned char* body, std::size_t size,
                       std::size_t event) {
    sampling::SideBand r;
    if (!sampling::decode_side_band(h.type, h.misc, file_.events()[event].layout, body, size, r))
        return;
    using Kind = sampling::SideBand::Kind;
    if (r.kind == Kind::comm) {
        thread(r.pid, r.tid).comm = std::string(r.name);
    } else if (r.kind == Kind::fork) {
        Thread& parent = thread(r.ppid, r.ptid);
        const std::string comm = parent.comm;
        threads_.erase(r.tid);
        thread(r.pid, r.tid).comm = comm;
        if (r.pid != r.ppid && !maps_.contains(r.pid)) {
            auto p = maps_.find(r.ppid);
            if (p != maps_.end()) maps_[r.pid] = p->second;
        }
    } else if (r.kind == Kind::mmap) {
        const int cpumode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
        Map m;
        m.start = r.address;
        m.end = r.address + r.length;
        m.pgoff = r.file_offset;
        const std::string path(r.name);
        if (cpumode == PERF_RECORD_MISC_KERNEL || r.pid == kKernelPid) {
            if (path.starts_with(kKernelImage) || path.starts_with("[vmlinux")) {
                m.module = std::string(kKernelImage);
            } else {
                // "/lib/modules/.../nf_tables.ko(.xz)" or "[nf_tables]": "[nf_tables]", '-' as '_'.
                std::string base = path.substr(path.rfind('/') + 1);
                if (base.starts_with('[') && base.ends_with(']'))
                    base = base.substr(1, base.size() - 2);
                base = base.substr(0, base.find(".ko"));
                std::replace(base.begin(), base.end(), '-', '_');
                m.module = fmt::format("[{}]", base);
            }
            insert_map(kernel_maps_, std::move(m));
            return;
        }
        thread(r.pid, r.tid);
        m.file = file_index(path, r.pid);
        insert_map(maps_[r.pid], std::move(m));
    }
}

void Replay::load(File& f) {
    f.loaded = true;
    std::string path = f.path;
    const auto id = file_.build_ids().find(f.path);
    const std::string build_id = id != file_.build_ids().end() ? id->second : "";
    const std::string cached =
        build_id.size() > 2 && !resolve_.debug_dir.empty()
            ? fmt::format("{}/.build-id/{}/{}/{}", resolve_.debug_dir, build_id.substr(0, 2),
                          build_id.substr(2), f.path == "[vdso]" ? "vdso" : "elf")
            : std::string();
    if (f.path == "[vdso]") {
        path = exists(cached) ? cached : std::string();
    } else if (!build_id.empty() && symbols::build_id_of(path) != build_id) {
        if (exists(cached)) {
            path = cached;
        } else if (report_.problems.size() < exporting::kMaxReportedProblems) {
            report_.problems.push_back(fmt::format(
                "{}: {} is not the file that was recorded (build id {}) and perf's cache has "
                "no copy; its frames are named after the module",
                file_.name(), f.path, build_id));
            path.clear();
        }
    }
    if (path.empty() || !symbols::elf_image(path, f.image)) return;
    f.resolved = path;
    f.base = f.image.position_independent ? kPieBase : 0;
    f.resolver = std::make_unique<symbols::SymbolResolver>(
        symbols::image_mappings(path, f.image, f.base, std::string()));
}

const std::string& Replay::symbol_in(File& f, std::uint64_t file_offset) {
    auto [it, inserted] = f.names.try_emplace(file_offset);
    if (!inserted) return it->second;
    if (!f.loaded) load(f);
    if (!f.resolver) return it->second;
    for (const auto& seg : f.image.segments)
        if (file_offset >= seg.offset && file_offset - seg.offset < seg.filesz) {
            const auto loc =
                f.resolver->resolve_symbol(f.base + seg.vaddr + (file_offset - seg.offset));
            // PLT stubs included: the resolver names them "name@plt" as perf synthesizes them,
            // and one whose relocation names no symbol (R_X86_64_IRELATIVE: 39 of libc.so.6's
            // 53 stubs, its calls to its own ifuncs) "@plt", as perf 6.1 does.
            if (loc.has_symbol()) it->second = symbols::perf_symbol_name(loc.linkage_name);
            break;
        }
    return it->second;
}

Frame Replay::user_frame(std::uint32_t pid, std::uint64_t address) {
    Frame f{kUnknown, kUnknown, address};
    auto maps = maps_.find(pid);
    if (maps == maps_.end()) return f;
    const Map* m = find_map(maps->second, address);
    if (!m || m->file == kNoFile) return f;
    File& file = *files_[m->file];
    f.module = file.module;
    const std::string& name = symbol_in(file, address - m->start + m->pgoff);
    if (!name.empty()) f.symbol = name;
    return f;
}

Frame Replay::kernel_frame(std::uint64_t address) {
    Frame f{kUnknown, kUnknown, address};
    const Map* m = kernel_maps_.empty() ? nullptr : find_map(kernel_maps_, address);
    if (!kernel_maps_.empty() && !m) return f;
    f.module = m ? std::string_view(m->module) : kKernelImage;
    if (!kallsyms_) {
        std::string path = resolve_.kallsyms;
        if (path.empty()) {
            const auto id = file_.build_ids().find(std::string(kKernelImage));
            if (id != file_.build_ids().end() && !resolve_.debug_dir.empty())
                path =
                    fmt::format("{}/{}/{}/kallsyms", resolve_.debug_dir, kKernelImage, id->second);
            if (!exists(path)) path = "/proc/kallsyms";
        }
        std::string text;
        try {
            text = read_all(path);
        } catch (const std::exception&) {
        }
        kallsyms_ = symbols::KernelSymbols::parse(text);
        if (kallsyms_->empty() && report_.problems.size() < exporting::kMaxReportedProblems)
            report_.problems.push_back(fmt::format(
                "{}: no kernel symbols in {} (kernel.kptr_restrict?); kernel frames are named "
                "{}",
                file_.name(), path, kKernelImage));
    }
    const auto* s = kallsyms_->find(address);
    const std::string_view module =
        f.module == kKernelImage ? std::string_view() : f.module.substr(1, f.module.size() - 2);
    if (s && s->module == module) f.symbol = s->name;
    return f;
}

void Replay::add_frame(std::uint32_t pid, std::uint64_t address, int cpumode) {
    Frame f;
    if (cpumode == PERF_RECORD_MISC_KERNEL)
        f = kernel_frame(address);
    else if (cpumode == PERF_RECORD_MISC_USER)
        f = user_frame(pid, address);
    else
        f = Frame{kUnknown, kUnknown, address};  // guest or hypervisor code: not resolved
    const int by_module = exporting::kernel_by_module(f.module);
    folder_.add_frame(f.symbol, f.module,
                      by_module >= 0 ? by_module == 1 : exporting::is_kernel_address(address));
}

void Replay::sample(const perf_event_header& h, const unsigned char* body, std::size_t size,
                    std::size_t event, std::size_t offset) {
    const auto& e = file_.events()[event];
    const auto s = sampling::decode_sample(e.layout, body, size);
    if (!s.complete) {
        problem(offset, fmt::format("the sample record at this byte ({} bytes) ends before its "
                                    "fields do; the file is damaged",
                                    size));
        if (s.chain_size == 0) return;
    }
    const Thread& t = thread(s.pid, s.tid);
    if (collect_ && (collected_event_ == kNoFile || collected_event_ == event)) {
        // As lockprof's ring buffers keep a sample: the IP, then the call chain without context
        // markers, zeros and the first frame equal to the IP.
        collected_event_ = event;
        measure::RawSample raw;
        raw.ip = s.ip;
        raw.pid = s.pid;
        raw.tid = s.tid;
        raw.time_ns = s.time;
        raw.weight = s.period ? s.period : 1;
        bool skipped_ip = false;
        for (std::uint64_t i = 0; i < s.chain_size && i < kMaxStack; ++i) {
            const std::uint64_t a = s.chain_at(i);
            if (a >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX) || a == 0) continue;
            if (!skipped_ip && a == s.ip) {
                skipped_ip = true;
                continue;
            }
            skipped_ip = true;
            raw.callchain.push_back(a);
        }
        collected_.push_back(std::move(raw));
    }
    tid_text_ = fmt::format_int(s.tid).str();
    folder_.start_sample(t.comm, tid_text_, short_names_[event], s.period);
    int cpumode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    if (!(e.layout.sample_type & PERF_SAMPLE_CALLCHAIN)) {
        add_frame(s.pid, s.ip, cpumode);
        return;
    }
    std::uint64_t frames = 0;
    for (std::uint64_t i = 0; i < s.chain_size && frames < kMaxStack; ++i) {
        const std::uint64_t address = s.chain_at(i);
        if (address >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX)) {
            switch (address) {
                case PERF_CONTEXT_KERNEL:
                    cpumode = PERF_RECORD_MISC_KERNEL;
                    break;
                case PERF_CONTEXT_USER:
                    cpumode = PERF_RECORD_MISC_USER;
                    break;
                case PERF_CONTEXT_HV:
                    cpumode = PERF_RECORD_MISC_HYPERVISOR;
                    break;
                case PERF_CONTEXT_GUEST_KERNEL:
                    cpumode = PERF_RECORD_MISC_GUEST_KERNEL;
                    break;
                case PERF_CONTEXT_GUEST_USER:
                    cpumode = PERF_RECORD_MISC_GUEST_USER;
                    break;
                default:
                    break;
            }
            continue;
        }
        ++frames;
        add_frame(s.pid, address, cpumode);
    }
}

exporting::FoldedStacks Replay::run() {
    const unsigned char* data = file_.data();
    const std::size_t size = file_.data_size();
    std::vector<Item> items;
    items.reserve(size / 64);
    std::size_t at = 0;
    while (at < size) {
        if (size - at < sizeof(perf_event_header)) {
            problem(at, fmt::format("{} stray bytes at the end of the data section; the file is "
                                    "damaged or truncated",
                                    size - at));
            break;
        }
        perf_event_header h;
        std::memcpy(&h, data + at, sizeof h);
        if (h.size < sizeof h || h.size > size - at) {
            problem(at, fmt::format("the record at this byte (type {}) claims {} bytes, {} are "
                                    "left; the file is {}",
                                    h.type, h.size, size - at,
                                    file_.truncated() ? "truncated" : "damaged"));
            break;
        }
        ++report_.lines;
        const unsigned char* body = data + at + sizeof h;
        const std::size_t body_size = h.size - sizeof h;
        std::size_t next = at + h.size;
        if (h.type == 81 /* PERF_RECORD_COMPRESSED */)
            throw UsageError(fmt::format(
                "{}: holds compressed records (perf record -z); record without -z, or fold "
                "`perf script` text",
                file_.name()));
        if (h.type == 71 /* PERF_RECORD_AUXTRACE: its trace data follows the record */) {
            std::uint64_t aux = 0;
            if (body_size >= 8) std::memcpy(&aux, body, 8);
            next = aux > size - next ? size : next + aux;
        }
        if (h.type == PERF_RECORD_SAMPLE) {
            const std::size_t event = event_of_sample(body, body_size);
            if (event == kNoFile) {
                problem(at,
                        "the sample at this byte is of an event the file does not "
                        "describe; the file is damaged");
            } else {
                items.push_back(
                    {sampling::decode_sample(file_.events()[event].layout, body, body_size).time,
                     at, event});
            }
        } else if (h.type == PERF_RECORD_MMAP || h.type == PERF_RECORD_MMAP2 ||
                   h.type == PERF_RECORD_COMM || h.type == PERF_RECORD_FORK) {
            const std::size_t event = event_of_side_band(body, body_size);
            sampling::SampleId id;
            sampling::decode_sample_id(file_.events()[event].layout, body, body_size, id);
            items.push_back({id.time, at, event});
        }
        at = next;
    }
    // perf script delivers records in time order (its ordered events), samples of one time
    // after the side-band records before them in the file.
    if (!std::is_sorted(items.begin(), items.end(),
                        [](const Item& a, const Item& b) { return a.time < b.time; }))
        std::stable_sort(items.begin(), items.end(),
                         [](const Item& a, const Item& b) { return a.time < b.time; });
    for (const auto& item : items) {
        perf_event_header h;
        std::memcpy(&h, data + item.offset, sizeof h);
        const unsigned char* body = data + item.offset + sizeof h;
        const std::size_t body_size = h.size - sizeof h;
        if (h.type == PERF_RECORD_SAMPLE)
            sample(h, body, body_size, item.event, item.offset);
        else
            side_band(h, body, body_size, item.event);
    }
    return folder_.result();
}

exporting::pprof::Profile Replay::pprof() {
    namespace pprof = exporting::pprof;
    measure::SamplingInfo info;
    info.sampler = "perf";
    if (collected_event_ != kNoFile) {
        const auto& e = file_.events()[collected_event_];
        info.event = short_names_[collected_event_];
        info.period = e.period;
        info.frequency = e.frequency;
    }
    attribution::PprofBuilder builder(info);
    std::map<std::uint32_t, std::vector<const measure::RawSample*>> by_pid;
    for (const auto& s : collected_) by_pid[s.pid].push_back(&s);
    // Each process's mappings as they were at the end, its files as fold() resolves them.
    std::vector<std::unique_ptr<std::vector<measure::MappedModule>>> modules;
    std::vector<std::unique_ptr<symbols::SymbolResolver>> resolvers;
    for (const auto& [pid, samples] : by_pid) {
        // perf records the executable mappings only; libdwfl lays a file out from all of its
        // segments, so each file gets the mappings /proc/PID/maps would have shown, at the load
        // bias its recorded mapping implies.
        auto mods = std::make_unique<std::vector<measure::MappedModule>>();
        std::set<std::size_t> laid_out;
        if (auto maps = maps_.find(pid); maps != maps_.end())
            for (const auto& [start, m] : maps->second) {
                if (m.file == kNoFile) continue;
                File& f = *files_[m.file];
                if (!f.loaded) load(f);
                const auto id = file_.build_ids().find(f.path);
                const std::string build_id = id != file_.build_ids().end() ? id->second : "";
                if (f.path == symbols::kVdso) {
                    mods->push_back({f.path, m.start, m.end, m.pgoff, "r-xp", ""});
                    continue;
                }
                if (f.resolved.empty() || !laid_out.insert(m.file).second) continue;
                for (const auto& seg : f.image.segments)
                    if (m.pgoff >= seg.offset && m.pgoff - seg.offset < seg.filesz) {
                        const std::uint64_t bias = m.start - (seg.vaddr + (m.pgoff - seg.offset));
                        auto laid = symbols::image_mappings(f.resolved, f.image, bias, build_id);
                        mods->insert(mods->end(), laid.begin(), laid.end());
                        break;
                    }
            }
        resolvers.push_back(std::make_unique<symbols::SymbolResolver>(*mods));
        const std::size_t space = builder.add_address_space(*mods, *resolvers.back());
        modules.push_back(std::move(mods));
        const auto process = threads_.find(pid);
        for (const auto* s : samples) {
            std::vector<pprof::Label> labels;
            labels.push_back(pprof::Label::text("process", process != threads_.end()
                                                               ? process->second.comm
                                                               : fmt::format(":{}", pid)));
            labels.push_back(pprof::Label::number("pid", pid));
            labels.push_back(pprof::Label::number("tid", s->tid));
            if (auto t = threads_.find(s->tid); t != threads_.end())
                labels.push_back(pprof::Label::text("thread", t->second.comm));
            builder.add(space, *s, builder.weighs_time() ? static_cast<std::int64_t>(s->weight) : 0,
                        std::move(labels));
        }
    }
    std::uint64_t first = ~0ull, last = 0;
    for (const auto& s : collected_) {
        first = std::min(first, s.time_ns);
        last = std::max(last, s.time_ns);
    }
    std::vector<std::string> comments = {
        fmt::format("lockprof convert {}: event {}", file_.name(), info.event)};
    if (!builder.weighs_time())
        comments.push_back(
            fmt::format("cpu/nanoseconds is 0: {} counts events, not time", info.event));
    return builder.finish(last > first ? static_cast<std::int64_t>(last - first) : 0, 0,
                          std::move(comments));
}

}  // namespace

exporting::pprof::Profile perf_data_pprof(const PerfData& file, const ResolveOptions& resolve) {
    exporting::PerfScriptReport report;
    exporting::PerfScriptOptions options;
    options.event = "all";
    Replay replay(file, options, report, resolve);
    replay.collect();
    replay.run();
    return replay.pprof();
}

exporting::FoldedStacks fold(const PerfData& file, const exporting::PerfScriptOptions& options,
                             exporting::PerfScriptReport& report, const ResolveOptions& resolve) {
    Replay replay(file, options, report, resolve);
    return replay.run();
}

}  // namespace lockprof::perfdata
