#include "cli/sweep_progress.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lockprof/workload/sweep.hpp"

namespace lockprof::cli {
namespace {

using std::chrono::nanoseconds;

bool is_verification(const std::string& what) {
    return what.rfind("warm-up", 0) == 0 || what.rfind(workload::kVerifyingPrefix, 0) == 0;
}

nanoseconds ns(double value) {
    return nanoseconds(static_cast<std::int64_t>(std::max(0.0, value)));
}

}  // namespace

SweepShape sweep_shape(const workload::Plan& plan) {
    const workload::RunSpec& spec = plan.spec;
    SweepShape shape;
    // As verify_cells() in workload/sweep.cpp: a lock that claims no exclusion warms up only
    // with --warmup; the trial lasts --warmup, else a measured trial's length up to the cap.
    for (const auto& cell : plan.cells)
        if (cell.lock->excludes || spec.warmup_ns > 0) ++shape.verifications;
    shape.verification_ns = spec.warmup_ns > 0
                                ? spec.warmup_ns
                                : std::min(spec.duration_ns.value_or(workload::kVerificationCapNs),
                                           workload::kVerificationCapNs);
    // The observer-effect check pairs every measured trial with a plain one (sweep.hpp).
    shape.measured = plan.cells.size() * spec.trials * (spec.perturbation_check ? 2 : 1);
    if (spec.duration_ns) shape.trial_ns = *spec.duration_ns;
    shape.budget_ns = spec.max_time_ns;
    return shape;
}

std::string format_time_left(nanoseconds left) {
    // To the nearest second, at least 1: "0s left" while a trial still runs would be wrong.
    const auto seconds = std::max(1LL, std::llround(static_cast<double>(left.count()) / 1e9));
    if (seconds < 60) return fmt::format("{}s", seconds);
    if (seconds < 3600) return fmt::format("{}m {:02}s", seconds / 60, seconds % 60);
    return fmt::format("{}h {:02}m", seconds / 3600, seconds % 3600 / 60);
}

SweepProgress::SweepProgress(SweepShape shape, Clock::time_point start)
    : shape_(shape), start_(start) {}

std::optional<nanoseconds> SweepProgress::time_left(Clock::time_point now) const {
    const double elapsed = static_cast<double>(nanoseconds(now - start_).count());
    // Steps finished: every one started before the one about to start.
    const std::size_t verified = verified_, measured = measured_;
    const double verifications_left =
        static_cast<double>(shape_.verifications - std::min(verified, shape_.verifications)) *
        static_cast<double>(shape_.verification_ns);
    const double trials_left =
        static_cast<double>(shape_.measured - std::min(measured, shape_.measured));
    // A measured trial's length as the sweep so far says: planned x how much longer than planned
    // the steps took, or (--acquires) what the measured trials took each.
    std::optional<double> per_trial;
    double scale = 1;
    if (shape_.trial_ns) {
        const double planned_done =
            static_cast<double>(std::min(verified, shape_.verifications)) *
                static_cast<double>(shape_.verification_ns) +
            static_cast<double>(measured) * static_cast<double>(*shape_.trial_ns);
        if (planned_done > 0) scale = std::max(1.0, elapsed / planned_done);
        per_trial = static_cast<double>(*shape_.trial_ns) * scale;
    } else if (measured > 0 && first_measured_) {
        per_trial = static_cast<double>(nanoseconds(now - *first_measured_).count()) /
                    static_cast<double>(measured);
    }
    const double still_to_run = verifications_left * scale + trials_left * per_trial.value_or(0);
    if (shape_.budget_ns)
        return ns(std::max(static_cast<double>(*shape_.budget_ns) - elapsed, still_to_run));
    if (!per_trial) return std::nullopt;
    return ns(still_to_run);
}

std::string SweepProgress::line(const std::string& what, Clock::time_point now) {
    const bool verification = is_verification(what);
    // The step that ran before this one has ended: it counts as done from here on.
    const auto left = time_left(now);
    if (verification) {
        ++verified_;
    } else {
        if (!first_measured_) first_measured_ = now;
        ++measured_;
    }
    std::string where = std::to_string(measured_);
    if (!shape_.budget_ns) where += fmt::format("/{}", shape_.measured);
    if (left) {
        const auto total = nanoseconds(now - start_) + *left;
        if (total >= kShowTimeLeftFrom) show_time_left_ = true;
    }
    if (show_time_left_ && left) {
        // With a budget, cells that settle stop early: the budget's rest is the most it takes,
        // unless the trials every cell must still run take longer.
        const bool bounded =
            shape_.budget_ns && nanoseconds(*shape_.budget_ns) - nanoseconds(now - start_) >= *left;
        where += fmt::format(", {} {} left", bounded ? "up to" : "about", format_time_left(*left));
    }
    return fmt::format("[{}] {}", where, what);
}

}  // namespace lockprof::cli
