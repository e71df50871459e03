// pprof's profile format (github.com/google/pprof, proto/profile.proto): what `go tool pprof`,
// the pprof web UI and most profilers open. This is lockprof's own description of a profile,
// with strings instead of string-table indices and no protobuf types, so no module above sees
// the generated code; encode_pprof() builds the protobuf message (libprotobuf) and gzips it
// (zlib), as pprof writes its files. Ids are the caller's: non-zero, unique per kind, and every
// id a sample, location or line names must be defined.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace lockprof::exporting::pprof {

struct ValueType {
    std::string type;  // "samples", "cpu", "cycles"
    std::string unit;  // "count", "nanoseconds"
};

// A string label ("lock" = "tas") when `str` is set, else a numeric one ("threads" = 2) with
// an optional unit.
struct Label {
    std::string key;
    std::string str;
    std::int64_t num = 0;
    std::string num_unit;

    static Label text(std::string key, std::string value) {
        return {std::move(key), std::move(value), 0, {}};
    }
    static Label number(std::string key, std::int64_t value, std::string unit = {}) {
        return {std::move(key), {}, value, std::move(unit)};
    }
    bool numeric() const { return str.empty(); }
};

struct Sample {
    std::vector<std::uint64_t> location_ids;  // the leaf first, then its callers
    std::vector<std::int64_t> values;         // one per Profile::sample_types
    std::vector<Label> labels;
};

// One mapped range of a file in the process, as /proc/PID/maps lists it.
struct Mapping {
    std::uint64_t id = 0;
    std::uint64_t start = 0, limit = 0, offset = 0;
    std::string file;
    std::string build_id;  // hex GNU build id, "" when the file has none
    // What the locations in this mapping carry already; set, pprof does not symbolize again.
    bool has_functions = false, has_filenames = false, has_line_numbers = false,
         has_inline_frames = false;
};

struct Function {
    std::uint64_t id = 0;
    std::string name;         // human-readable (demangled)
    std::string system_name;  // as the system knows it; "" takes `name`
    std::string file;         // source file, "" when unknown
    std::int64_t start_line = 0;
};

// One frame at an address: a function and the line in it.
struct Line {
    std::uint64_t function_id = 0;
    std::int64_t line = 0;  // 0 when unknown
};

struct Location {
    std::uint64_t id = 0;
    std::uint64_t mapping_id = 0;  // 0: in no mapping (kernel, anonymous memory)
    std::uint64_t address = 0;     // in the process's address space
    // Innermost first: the functions inlined at `address`, the function they were inlined
    // into last (pprof's order).
    std::vector<Line> lines;
};

struct Profile {
    std::vector<ValueType> sample_types;
    std::vector<Sample> samples;
    std::vector<Mapping> mappings;
    std::vector<Location> locations;
    std::vector<Function> functions;
    ValueType period_type;
    std::int64_t period = 0;
    std::int64_t time_nanos = 0;      // when the profile started (Unix epoch), 0 when unknown
    std::int64_t duration_nanos = 0;  // how long it covers
    std::string default_sample_type;  // a sample_types[].type; "" for pprof's default (last)
    std::vector<std::string> comments;
};

// The serialized profile.proto message, gzip'd (what a .pb.gz file holds). Throws Error when
// an id is zero, repeated or undefined, or a sample has the wrong number of values.
std::string encode_pprof(const Profile& profile);

// Writes encode_pprof(profile) to `path` through write_output() (common/output_file.hpp).
void write_pprof(const Profile& profile, const std::filesystem::path& path);

}  // namespace lockprof::exporting::pprof
