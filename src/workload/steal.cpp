#include "lockprof/workload/steal.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <system_error>

#include "lockprof/common/files.hpp"

namespace lockprof::workload {
namespace {

// The columns of a cpuN line up to steal: user nice system idle iowait irq softirq steal.
constexpr std::size_t kStealColumn = 8;

std::string_view next_word(std::string_view& line) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) return line = {}, std::string_view{};
    line.remove_prefix(start);
    const auto end = std::min(line.find(' '), line.size());
    const std::string_view word = line.substr(0, end);
    line.remove_prefix(end);
    return word;
}

std::optional<std::uint64_t> whole_number(std::string_view word) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (error != std::errc() || end != word.data() + word.size() || word.empty())
        return std::nullopt;
    return value;
}

// "cpu12" -> 12; nullopt for the all-CPU "cpu" line and anything else.
std::optional<int> cpu_number(std::string_view word) {
    if (word.size() <= 3 || word.substr(0, 3) != "cpu") return std::nullopt;
    const auto n = whole_number(word.substr(3));
    if (!n || *n > 1u << 20) return std::nullopt;
    return static_cast<int>(*n);
}

}  // namespace

CpuTimesSnapshot parse_proc_stat(std::string_view text) {
    CpuTimesSnapshot snapshot;
    bool short_line = false;
    while (!text.empty()) {
        const auto end = std::min(text.find('\n'), text.size());
        std::string_view line = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
        const auto cpu = cpu_number(next_word(line));
        if (!cpu) continue;
        CpuTimes times;
        std::size_t columns = 0;
        for (; columns < kStealColumn; ++columns) {
            const auto value = whole_number(next_word(line));
            if (!value || __builtin_add_overflow(times.total, *value, &times.total)) break;
            times.steal = *value;  // the last one read: steal once all eight are
        }
        if (columns < kStealColumn) {
            short_line = true;
            continue;
        }
        snapshot.cpus[*cpu] = times;
    }
    if (snapshot.cpus.empty())
        snapshot.unknown_because =
            short_line ? "/proc/stat has no steal column (a kernel before 2.6.11, or an emulated "
                         "/proc)"
                       : "/proc/stat has no per-CPU lines";
    return snapshot;
}

CpuTimesSnapshot read_cpu_times(const std::filesystem::path& root) {
    const auto path = root / "proc/stat";
    const std::string text = read_all(path);
    if (text.empty()) {
        std::error_code error;
        CpuTimesSnapshot none;
        none.unknown_because = std::filesystem::exists(path, error)
                                   ? "/proc/stat cannot be read"
                                   : "there is no /proc/stat (is /proc mounted?)";
        return none;
    }
    return parse_proc_stat(text);
}

std::uint64_t proc_stat_tick_ns() {
    const long hz = sysconf(_SC_CLK_TCK);
    return 1'000'000'000ull / static_cast<std::uint64_t>(hz > 0 ? hz : 100);
}

std::vector<int> steal_cpus(const std::vector<ThreadResult>& threads,
                            const std::vector<int>& allowed) {
    std::vector<int> pinned;
    for (const auto& thread : threads) {
        if (thread.cpu < 0) return allowed;
        pinned.push_back(thread.cpu);
    }
    std::sort(pinned.begin(), pinned.end());
    pinned.erase(std::unique(pinned.begin(), pinned.end()), pinned.end());
    return pinned.empty() ? allowed : pinned;
}

StealReading steal_between(const CpuTimesSnapshot& before, const CpuTimesSnapshot& after,
                           const std::vector<int>& cpus, std::uint64_t window_ns,
                           std::uint64_t tick_ns) {
    StealReading reading;
    for (const auto* snapshot : {&before, &after})
        if (!snapshot->unknown_because.empty()) {
            reading.unknown_because = snapshot->unknown_because;
            return reading;
        }
    TrialSteal steal;
    steal.window_ns = window_ns;
    steal.tick_ns = tick_ns;
    for (int cpu : cpus) {
        const auto from = before.cpus.find(cpu), to = after.cpus.find(cpu);
        if (from == before.cpus.end() || to == after.cpus.end()) continue;
        if (to->second.steal < from->second.steal) continue;
        steal.cpus.push_back(cpu);
        steal.steal_ns += (to->second.steal - from->second.steal) * tick_ns;
    }
    if (steal.cpus.empty())
        reading.unknown_because =
            cpus.empty() ? "the CPUs the threads could run on are unknown (sched_getaffinity "
                           "failed)"
                         : "/proc/stat has no usable steal figure for the CPUs the threads ran on";
    else
        reading.steal = std::move(steal);
    return reading;
}

std::optional<double> steal_share_since_boot(const CpuTimesSnapshot& now) {
    double steal = 0, total = 0;  // in double: many CPUs' tick counts may not fit 64 bits summed
    for (const auto& [cpu, times] : now.cpus)
        steal += static_cast<double>(times.steal), total += static_cast<double>(times.total);
    if (total == 0) return std::nullopt;
    return steal / total;
}

}  // namespace lockprof::workload
