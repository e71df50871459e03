// /proc/stat text (src/workload/steal.cpp, parse_proc_stat): the per-CPU steal every trial and
// `doctor` read, from a kernel, container or emulator that may write fewer or odd columns.
#include "fuzz_support.hpp"
#include "lockprof/workload/steal.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    fuzz::refusals_only([&] {
        const workload::CpuTimesSnapshot snapshot = workload::parse_proc_stat(text);
        fuzz::check(snapshot.cpus.empty() != snapshot.unknown_because.empty(),
                    "steal is either read or unknown with a reason");
        for (const auto& [cpu, times] : snapshot.cpus) {
            fuzz::check(cpu >= 0, "a CPU number is not negative");
            fuzz::check(times.steal <= times.total, "steal is part of the CPU's time");
        }
        if (const auto share = workload::steal_share_since_boot(snapshot))
            fuzz::check(*share >= 0 && *share <= 1, "a share is between 0 and 1");
    });
    return 0;
}
