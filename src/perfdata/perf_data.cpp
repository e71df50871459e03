#include "lockprof/perfdata/perf_data.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"

namespace lockprof::perfdata {
namespace {

// perf's header (tools/perf/util/header.h): magic, size, attr_size, attrs, data, event_types
// sections, then the feature bitmap.
struct FileSection {
    std::uint64_t offset, size;
};
struct FileHeader {
    char magic[8];
    std::uint64_t size, attr_size;
    FileSection attrs, data, event_types;
    std::uint64_t features[4];
};
static_assert(sizeof(FileHeader) == 104);

constexpr int kFeatureBuildId = 2;                   // HEADER_BUILD_ID
constexpr int kFeatureEventDesc = 12;                // HEADER_EVENT_DESC
constexpr std::uint16_t kMiscBuildIdSize = 1 << 15;  // PERF_RECORD_MISC_BUILD_ID_SIZE

// The names perf gives the generic events (tools/perf/util/evsel.c).
std::string generic_name(std::uint32_t type, std::uint64_t config) {
    static const char* const kHardware[] = {"cycles",
                                            "instructions",
                                            "cache-references",
                                            "cache-misses",
                                            "branches",
                                            "branch-misses",
                                            "bus-cycles",
                                            "stalled-cycles-frontend",
                                            "stalled-cycles-backend",
                                            "ref-cycles"};
    static const char* const kSoftware[] = {
        "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
        "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
        "emulation-faults", "dummy",        "bpf-output",   "cgroup-switches"};
    if (type == PERF_TYPE_HARDWARE && config < std::size(kHardware)) return kHardware[config];
    if (type == PERF_TYPE_SOFTWARE && config < std::size(kSoftware)) return kSoftware[config];
    return fmt::format("{}:{:#x}", type, config);
}

// The file's bytes as parse() reads them, and its refusal.
struct Bytes {
    const std::string& name;
    const unsigned char* bytes;
    std::size_t size;
    // A section [offset, offset + size) inside the file (overflow-safe).
    bool inside(std::uint64_t offset, std::uint64_t length) const {
        return offset <= size && length <= size - offset;
    }
    [[noreturn]] void fail(const std::string& why) const {
        throw UsageError(fmt::format("{}: {}", name, why));
    }
};

// The magic and the header: perf.data from a little-endian machine, written to a file.
FileHeader read_header(const Bytes& file) {
    if (file.size < 8 || std::memcmp(file.bytes, kMagic.data(), 8) != 0) {
        if (file.size >= 8 && std::memcmp(file.bytes, "2ELIFREP", 8) == 0)
            file.fail(
                "a perf.data file from a big-endian machine; lockprof reads little-endian "
                "ones: run `perf script` there and fold its text");
        file.fail(file.size < 8
                      ? "too short for a perf.data file; check that the recording finished"
                      : "not a perf.data file (no PERFILE2 magic); give `perf record`'s "
                        "output, or `perf script` text");
    }
    if (file.size < 16)
        file.fail("too short for a perf.data file; check that the recording finished");
    std::uint64_t header_size = 0;
    std::memcpy(&header_size, file.bytes + 8, 8);
    if (header_size == 16)
        file.fail(
            "a pipe-mode perf.data (perf record -o -); record to a file, or rewrite it with "
            "`perf inject -i IN -o OUT`");
    if (header_size != sizeof(FileHeader) || file.size < sizeof(FileHeader))
        file.fail(fmt::format(
            "header of {} bytes, expected {} (truncated, or a perf version "
            "lockprof does not know); fold `perf script` text instead",
            file.size < sizeof(FileHeader) ? file.size : header_size, sizeof(FileHeader)));
    FileHeader h;
    std::memcpy(&h, file.bytes, sizeof h);
    return h;
}

// The events: perf_event_attr (attr_size - 16 bytes, whatever the perf version) + their ids,
// one entry per event in the attribute section [offset, offset + size).
std::vector<Event> read_attributes(const Bytes& file, std::uint64_t attr_size,
                                   const FileSection& section) {
    const std::uint64_t offset = section.offset, size = section.size;
    std::vector<Event> events;
    constexpr std::uint64_t kAttrVer0 = 64;  // PERF_ATTR_SIZE_VER0
    if (attr_size < kAttrVer0 + 16 || attr_size > 4096 || size % attr_size != 0 ||
        !file.inside(offset, size))
        file.fail(
            fmt::format("attribute section ({} bytes at {}, {} per event) does not fit the "
                        "file; the file is damaged or truncated",
                        size, offset, attr_size));
    if (size == 0) file.fail("no events in the file; record with `perf record -e EVENT`");
    for (std::uint64_t at = offset; at < offset + size; at += attr_size) {
        perf_event_attr attr{};
        std::memcpy(&attr, file.bytes + at, std::min<std::size_t>(attr_size - 16, sizeof attr));
        FileSection ids;
        std::memcpy(&ids, file.bytes + at + attr_size - 16, 16);
        if (ids.size % 8 != 0 || !file.inside(ids.offset, ids.size))
            file.fail(fmt::format("event {}'s id list does not fit the file; the file is damaged",
                                  events.size() + 1));
        Event e;
        e.type = attr.type;
        e.config = attr.config;
        e.layout = {attr.sample_type, attr.read_format, attr.sample_id_all != 0,
                    attr.sample_regs_user};
        (attr.freq ? e.frequency : e.period) = attr.sample_period;
        e.ids.resize(ids.size / 8);
        if (ids.size) std::memcpy(e.ids.data(), file.bytes + ids.offset, ids.size);
        e.name = generic_name(attr.type, attr.config);
        events.push_back(std::move(e));
    }
    if (events.size() > 1) {
        const long pos = sampling::sample_id_offset(events[0].layout.sample_type);
        for (const auto& e : events)
            if (pos < 0 || sampling::sample_id_offset(e.layout.sample_type) != pos ||
                e.layout.sample_id_all != events[0].layout.sample_id_all)
                file.fail(
                    "events whose samples carry no id, or carry it in different places, so "
                    "their samples cannot be told apart; fold `perf script` text instead");
    }
    return events;
}

// HEADER_BUILD_ID: perf_record_header_build_id records, each header, pid, build_id[24] (20
// bytes + size), name.
void read_build_ids(const unsigned char* p, std::size_t n,
                    std::map<std::string, std::string>& build_ids) {
    for (std::size_t off = 0; off + 8 + 4 + 24 <= n;) {
        perf_event_header rh;
        std::memcpy(&rh, p + off, sizeof rh);
        if (rh.size < 8 + 4 + 24 || rh.size > n - off) break;
        std::size_t id_size = 20;
        if (rh.misc & kMiscBuildIdSize) id_size = std::min<std::size_t>(p[off + 32], 20);
        std::string hex;
        for (std::size_t i = 0; i < id_size; ++i) hex += fmt::format("{:02x}", p[off + 12 + i]);
        const auto* name = reinterpret_cast<const char*>(p + off + 36);
        const std::string file(name, strnlen(name, rh.size - 36));
        build_ids.emplace(file, hex);
        off += rh.size;
    }
}

// HEADER_EVENT_DESC (n >= 8 bytes): u32 nr, u32 attr_size; per event: attr, u32 nr_ids, string
// (u32 len, bytes), u64 ids[nr_ids]. Names the events.
void name_events(const unsigned char* p, std::size_t n, std::vector<Event>& events) {
    std::uint32_t nr = 0, attr_size = 0;
    std::memcpy(&nr, p, 4);
    std::memcpy(&attr_size, p + 4, 4);
    std::size_t off = 8;
    std::vector<std::pair<std::string, std::vector<std::uint64_t>>> described;
    for (std::uint32_t i = 0; i < nr; ++i) {
        std::uint32_t nr_ids = 0, len = 0;
        // The attribute and the two u32s after it, inside the section (n - 8 - attr_size
        // would wrap around when the attribute leaves less than 8 bytes).
        if (attr_size > n - 8 || off > n - 8 - attr_size) break;
        off += attr_size;
        std::memcpy(&nr_ids, p + off, 4);
        std::memcpy(&len, p + off + 4, 4);
        off += 8;
        if (len > n - off) break;
        const auto* name = reinterpret_cast<const char*>(p + off);
        std::string event(name, strnlen(name, len));
        off += len;
        if (nr_ids > (n - off) / 8) break;
        std::vector<std::uint64_t> ids(nr_ids);
        if (nr_ids) std::memcpy(ids.data(), p + off, nr_ids * 8ull);
        off += nr_ids * 8ull;
        described.emplace_back(std::move(event), std::move(ids));
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
        // By id where the ids say, else by position (perf writes them in order).
        bool named = false;
        for (const auto& [event, ids] : described)
            if (!ids.empty() && !events[i].ids.empty() && ids[0] == events[i].ids[0]) {
                events[i].name = event;
                named = true;
            }
        if (!named && described.size() == events.size() && !described[i].first.empty())
            events[i].name = described[i].first;
    }
}

// The feature sections whose table starts at `at`: one entry per bit of `features` set, in
// bit order. Those lockprof uses: HEADER_BUILD_ID and HEADER_EVENT_DESC.
void read_features(const Bytes& file, const std::uint64_t (&features)[4], std::uint64_t at,
                   std::vector<Event>& events, std::map<std::string, std::string>& build_ids) {
    for (int bit = 1; bit < 256; ++bit) {
        if (!(features[bit / 64] >> (bit % 64) & 1)) continue;
        if (!file.inside(at, 16)) return;  // no feature sections: names and build ids unknown
        FileSection section;
        std::memcpy(&section, file.bytes + at, 16);
        at += 16;
        if (!file.inside(section.offset, section.size)) continue;
        const unsigned char* p = file.bytes + section.offset;
        const std::size_t n = static_cast<std::size_t>(section.size);
        if (bit == kFeatureBuildId)
            read_build_ids(p, n, build_ids);
        else if (bit == kFeatureEventDesc && n >= 8)
            name_events(p, n, events);
    }
}

}  // namespace

PerfData PerfData::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw UsageError(
            fmt::format("cannot read '{}': {}; check the path", path, std::strerror(errno)));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw UsageError(fmt::format("'{}' is not a regular file; give a perf.data file", path));
    }
    PerfData file;
    file.name_ = path;
    file.size_ = static_cast<std::size_t>(st.st_size);
    if (file.size_ > 0) {
        void* base = mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (base == MAP_FAILED) {
            const int e = errno;
            ::close(fd);
            throw Error(fmt::format("cannot map '{}': {}", path, std::strerror(e)));
        }
        const std::size_t size = file.size_;
        file.storage_ = std::shared_ptr<const void>(
            base, [size](const void* p) { munmap(const_cast<void*>(p), size); });
        file.bytes_ = static_cast<const unsigned char*>(base);
    }
    ::close(fd);
    file.parse();
    return file;
}

PerfData PerfData::from_bytes(std::string bytes, std::string name) {
    PerfData file;
    file.name_ = std::move(name);
    auto owned = std::make_shared<std::string>(std::move(bytes));
    file.bytes_ = reinterpret_cast<const unsigned char*>(owned->data());
    file.size_ = owned->size();
    file.storage_ = owned;
    file.parse();
    return file;
}

void PerfData::parse() {
    const Bytes file{name_, bytes_, size_};
    const FileHeader h = read_header(file);
    events_ = read_attributes(file, h.attr_size, h.attrs);
    if (!file.inside(h.data.offset, 0)) file.fail("data section starts past the end of the file");
    data_offset_ = static_cast<std::size_t>(h.data.offset);
    truncated_ = !file.inside(h.data.offset, h.data.size);
    data_size_ = truncated_ ? size_ - data_offset_ : static_cast<std::size_t>(h.data.size);
    // Features: one section per bit set, in bit order, right after the data section.
    if (!truncated_)
        read_features(file, h.features, h.data.offset + h.data.size, events_, build_ids_);
}

}  // namespace lockprof::perfdata
