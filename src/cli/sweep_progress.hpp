// The progress line of `run` on a terminal's stderr, rewritten in place before each trial
// (run_command.cpp's progress_hooks; never in a pipe, a file or JSON):
//   [3/12, about 1m 20s left] tas with 2 threads, trial 1/3
// The time left is an estimate, shown only for a sweep that takes more than a few seconds
// (kShowTimeLeftFrom): the plan's trials x --duration plus its verification trials, scaled by
// how much longer than planned the steps so far took (thread start, calibration, joining); with
// --acquires, whose trials have no planned length, the measured trials so far per trial; with
// --trials auto, "up to" what is left of --max-time (cells that settle stop sooner), or the
// trials every cell still must run where those take longer.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "lockprof/workload/plan.hpp"

namespace lockprof::cli {

// From this planned or estimated length of a sweep on, its progress line says the time left.
inline constexpr std::chrono::seconds kShowTimeLeftFrom{5};

// What a sweep will run, as far as it is known before it starts.
struct SweepShape {
    std::size_t verifications = 0;           // verification (or warm-up) trials, one per cell
    std::uint64_t verification_ns = 0;       // the length of each
    std::size_t measured = 0;                // measured trials planned; with a budget, the minimum
    std::optional<std::uint64_t> trial_ns;   // each measured trial's length; none with --acquires
    std::optional<std::uint64_t> budget_ns;  // --trials auto's --max-time
};

// The shape of `plan`'s sweep, as workload::run_sweep will run it.
SweepShape sweep_shape(const workload::Plan& plan);

// "9s", "45s", "1m 20s", "1h 05m": to the nearest second (minute), at least "1s".
std::string format_time_left(std::chrono::nanoseconds left);

class SweepProgress {
  public:
    using Clock = std::chrono::steady_clock;
    SweepProgress(SweepShape shape, Clock::time_point start);

    // The line for the step the sweep is about to start, named `what` as the sweep names it
    // (SweepHooks::progress: a verification or warm-up trial starts with
    // workload::kVerifyingPrefix or "warm-up"), at `now`. Without the "\r\033[K" that rewrites
    // the terminal's line.
    std::string line(const std::string& what, Clock::time_point now);

    // The estimated time left at `now`, the step about to start included; nullopt when there
    // is nothing to estimate from yet (--acquires before its first measured trial ended).
    std::optional<std::chrono::nanoseconds> time_left(Clock::time_point now) const;

  private:
    SweepShape shape_;
    Clock::time_point start_;
    std::size_t verified_ = 0;  // verification steps started (all but the last one done)
    std::size_t measured_ = 0;  // measured steps started
    std::optional<Clock::time_point> first_measured_;  // when the first measured step started
    bool show_time_left_ = false;                      // the sweep takes kShowTimeLeftFrom or more
};

}  // namespace lockprof::cli
