// Where a result came from: enough for a reviewer to reproduce or refute it (the thread's
// assert-enabled build would have been caught by `assertions`).
#pragma once

#include <string>
#include <vector>

namespace lockprof::workload {

struct Provenance {
    std::string lockprof_version;
    std::string git_revision;
    std::string command_line;
    std::string timestamp_utc;  // ISO 8601
    std::string hostname;
    std::string arch;
    std::string cpu_model;
    std::string cpu_vendor;
    std::string midr;  // aarch64: "implementer 0x41 part 0xd0c variant 0x3 revision 0x1"
    bool lse = false;
    bool spe = false;
    unsigned logical_cpus = 0;
    std::string kernel;
    int perf_event_paranoid = -99;  // -99: unreadable
    std::string vm_hint;            // "" when none detected
    std::string compiler;
    std::string compiler_flags;
    std::string build_type;
    bool assertions = false;
};

// Provenance of this process and build, with the given command line.
Provenance collect_provenance(const std::vector<std::string>& argv);

}  // namespace lockprof::workload
