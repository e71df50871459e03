// A result cell made of given throughputs, for tests of the verdicts built on them (compare,
// the cross-host report): each trial a 1 s window in which `threads` threads made `per_second`
// acquires between them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockprof/workload/results.hpp"

namespace lockprof::test {

inline workload::CellResult synthetic_cell(const std::string& lock, unsigned threads,
                                           const std::vector<double>& per_second) {
    workload::CellResult c;
    c.lock = c.algorithm = lock;
    c.threads = threads;
    for (std::size_t i = 0; i < per_second.size(); ++i) {
        workload::TrialResult t;
        t.trial = static_cast<unsigned>(i);
        t.wall_ns = 1'000'000'000;
        workload::ThreadResult th;
        th.acquires = static_cast<std::uint64_t>(per_second[i] / threads);
        th.rmw_attempts = th.acquires;
        th.cpu_ns = t.wall_ns;
        th.end_ns = t.wall_ns;
        t.threads.assign(threads, th);
        for (unsigned k = 0; k < threads; ++k) t.threads[k].index = k;
        c.trials.push_back(t);
    }
    return c;
}

}  // namespace lockprof::test
