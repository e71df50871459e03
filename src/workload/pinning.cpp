#include "lockprof/workload/pinning.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>
#include <sched.h>

#include "lockprof/common/error.hpp"

namespace lockprof::workload {
namespace {
int read_int(const std::string& path, int fallback) {
    std::ifstream in(path);
    int value;
    return (in >> value) ? value : fallback;
}
}  // namespace

std::vector<int> affinity_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
}

std::vector<CpuTopology> allowed_cpus() {
    std::vector<CpuTopology> cpus;
    for (int cpu : affinity_cpus()) {
        const auto base = fmt::format("/sys/devices/system/cpu/cpu{}/topology/", cpu);
        cpus.push_back(
            {cpu, read_int(base + "core_id", cpu), read_int(base + "physical_package_id", 0)});
    }
    return cpus;
}

std::vector<int> assign_cpus(const PinSpec& pin, unsigned threads,
                             const std::vector<CpuTopology>& cpus) {
    std::vector<int> order;
    switch (pin.mode) {
        case PinMode::none:
            return {};
        case PinMode::list: {
            for (int cpu : pin.cpus) {
                const bool allowed = std::any_of(cpus.begin(), cpus.end(),
                                                 [&](const auto& c) { return c.cpu == cpu; });
                if (!allowed)
                    throw UsageError(fmt::format(
                        "{}: CPU {} is not available to this process (allowed: {} CPUs); "
                        "check `taskset -p $$` or nproc",
                        pin.cpu_order_file.empty() ? std::string("--pin")
                                                   : "--cpu-order " + pin.cpu_order_file,
                        cpu, cpus.size()));
            }
            order = pin.cpus;
            break;
        }
        case PinMode::compact:
            for (const auto& c : cpus) order.push_back(c.cpu);
            break;
        case PinMode::scatter: {
            // Rank of each CPU among the SMT siblings of its core, and of its core within its
            // package; sorting by (sibling rank, core rank, package) spreads out first.
            std::map<std::pair<int, int>, int> siblings_seen;
            std::map<int, std::map<int, int>> core_rank;
            struct Key {
                int sibling, core, package, cpu;
            };
            std::vector<Key> keys;
            for (const auto& c : cpus) {
                auto& cores = core_rank[c.package];
                const int rank =
                    cores.emplace(c.core, static_cast<int>(cores.size())).first->second;
                keys.push_back({siblings_seen[{c.package, c.core}]++, rank, c.package, c.cpu});
            }
            std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
                return std::tie(a.sibling, a.core, a.package) <
                       std::tie(b.sibling, b.core, b.package);
            });
            for (const auto& k : keys) order.push_back(k.cpu);
            break;
        }
    }
    if (order.empty()) throw Error("no CPU available to pin threads to");
    std::vector<int> assignment(threads);
    for (unsigned i = 0; i < threads; ++i) assignment[i] = order[i % order.size()];
    return assignment;
}

}  // namespace lockprof::workload
