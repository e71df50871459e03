#include "lockprof/analysis/steal.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lockprof/analysis/stats.hpp"

namespace lockprof::analysis {
namespace {

double cpu_time_ns(const workload::TrialSteal& steal) {
    return static_cast<double>(steal.window_ns) * static_cast<double>(steal.cpus.size());
}

// "9-14%", or "9%" when both ends round alike.
std::string share_range(double least, double most) {
    const auto low = std::lround(100 * least), high = std::lround(100 * most);
    return low == high ? fmt::format("{}%", low) : fmt::format("{}-{}%", low, high);
}

// Counts `count` more high trials whose shares run from `least` to `most`.
void add_high(StealTally& tally, std::size_t count, double least, double most) {
    if (count == 0) return;
    tally.high_least = tally.high == 0 ? least : std::min(tally.high_least, least);
    tally.high_most = tally.high == 0 ? most : std::max(tally.high_most, most);
    tally.high += count;
}

std::string tick_text(std::uint64_t tick_ns) {
    return fmt::format("{:g} ms per CPU", static_cast<double>(tick_ns) / 1e6);
}

}  // namespace

double steal_share(const workload::TrialSteal& steal) {
    const double time = cpu_time_ns(steal);
    return time > 0 ? static_cast<double>(steal.steal_ns) / time : 0;
}

bool high_steal(const workload::TrialSteal& steal) {
    const double time = cpu_time_ns(steal);
    const double resolution =
        static_cast<double>(steal.tick_ns) * static_cast<double>(steal.cpus.size());
    return time > 0 && static_cast<double>(steal.steal_ns) - resolution > kHighStealShare * time;
}

void StealTally::add(const workload::TrialResult& trial) {
    ++trials;
    if (!trial.steal) return;
    ++measured;
    const double share = steal_share(*trial.steal);
    shares.push_back(share);
    most = std::max(most, share);
    tick_ns = trial.steal->tick_ns;
    if (high_steal(*trial.steal)) add_high(*this, 1, share, share);
}

void StealTally::add(const workload::CellResult& cell) {
    for (const auto& trial : cell.trials) add(trial);
}

void StealTally::add(const StealTally& other) {
    trials += other.trials;
    measured += other.measured;
    shares.insert(shares.end(), other.shares.begin(), other.shares.end());
    most = std::max(most, other.most);
    if (other.tick_ns) tick_ns = other.tick_ns;
    add_high(*this, other.high, other.high_least, other.high_most);
}

std::string high_steal_text(const StealTally& tally) {
    if (tally.high == 0) return "";
    return fmt::format("the hypervisor took {} of the threads' CPUs in {} of {} trials",
                       share_range(tally.high_least, tally.high_most), tally.high, tally.measured);
}

std::string steal_note(const StealTally& run) {
    if (run.high == 0) return "";
    const std::size_t unmeasured = run.trials - run.measured;
    return fmt::format(
        "hypervisor steal: {} (above {:g}% of a trial's CPU time, /proc/stat{}): expect spread "
        "between trials; run on an idle or dedicated host",
        high_steal_text(run), kHighStealShare * 100,
        unmeasured
            ? fmt::format("; {} trial{} not measured", unmeasured, unmeasured == 1 ? "" : "s")
            : "");
}

std::string steal_overview(const StealTally& tally) {
    if (tally.measured == 0)
        return tally.trials == 0 ? "no trial ran"
                                 : "unknown: not measured in any trial (the notes say why)";
    return fmt::format(
        "measured in {} of {} trials (/proc/stat, {}): median {:.1f}%, at most {:.1f}% of the "
        "threads' CPUs' time{}",
        tally.measured, tally.trials, tick_text(tally.tick_ns), 100 * median(tally.shares),
        100 * tally.most,
        tally.high ? fmt::format("; {} high (over {:g}%)", tally.high, kHighStealShare * 100) : "");
}

ClockRange task_clock_range(std::uint64_t thread_cpu_ns, const workload::TrialSteal& steal) {
    const double cpu = static_cast<double>(thread_cpu_ns);
    const double resolution =
        static_cast<double>(steal.tick_ns) * static_cast<double>(steal.cpus.size());
    return {cpu * (1 - kClockSlack),
            cpu * (1 + kClockSlack) + static_cast<double>(steal.steal_ns) + resolution};
}

}  // namespace lockprof::analysis
