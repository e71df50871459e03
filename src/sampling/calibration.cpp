#include "lockprof/sampling/calibration.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "lockprof/common/files.hpp"
#include "lockprof/sampling/task_sampler.hpp"
#include "lockprof/sampling/uprobe_sampler.hpp"
#include "lockprof/symbols/resolver.hpp"

// The function the probe calibration probes: a call as short as a slow path's entry can be,
// so the measured difference is the probes'. Outside any namespace, by a name no program shares.
extern "C" __attribute__((noinline, used)) int lockprof_calibration_target(volatile int* word) {
    const int next = *word + 1;
    *word = next;
    return next;
}

namespace lockprof::sampling {
namespace {

constexpr unsigned kRounds = 5;
// Probed calls per round: about 150 KiB of records, well within the 512 KiB buffer, so none is
// lost (a lost record costs the kernel less than a written one).
constexpr unsigned kCallsPerRound = 1000;
// CPU time of a sampling round's work, and the calibration's sample rate: at 10 kHz a round
// takes ~100 samples, whose cost stands well above the rounds' noise.
constexpr double kWorkNs = 10e6;

double thread_cpu_ns() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

pid_t own_tid() {
    return static_cast<pid_t>(syscall(SYS_gettid));
}

// A loop the compiler cannot fold: `iterations` dependent steps.
std::uint64_t busy(std::uint64_t iterations) {
    volatile std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < iterations; ++i) x = x * 6364136223846793005ull + i;
    return x;
}

// Runs `round(instrumented)` on a fresh thread of its own per round, plain and instrumented
// alternating, and returns each round's (CPU ns, units).
template <typename Round>
void alternate(Round round, std::vector<double>& plain, std::vector<double>& instrumented,
               std::vector<std::uint64_t>& units, std::string& why) {
    for (unsigned r = 0; r < 2 * kRounds && why.empty(); ++r) {
        const bool on = r % 2 == 1;
        double ns = 0;
        std::uint64_t n = 0;
        std::thread([&] { round(on, ns, n, why); }).join();
        if (!why.empty()) break;
        (on ? instrumented : plain).push_back(ns);
        if (on) units.push_back(n);
    }
}

}  // namespace

CostEstimate summarize_rounds(const std::vector<double>& plain_ns,
                              const std::vector<double>& instrumented_ns,
                              const std::vector<std::uint64_t>& units) {
    CostEstimate e;
    std::vector<double> per_unit;
    for (std::size_t i = 0; i < instrumented_ns.size() && i < plain_ns.size() && i < units.size();
         ++i) {
        if (units[i] == 0) continue;
        per_unit.push_back((instrumented_ns[i] - plain_ns[i]) / static_cast<double>(units[i]));
        e.units += units[i];
    }
    if (per_unit.empty()) return e;
    std::sort(per_unit.begin(), per_unit.end());
    const std::size_t n = per_unit.size();
    e.ns = n % 2 ? per_unit[n / 2] : (per_unit[n / 2 - 1] + per_unit[n / 2]) / 2;
    // A cost below zero is noise: the instrument costs nothing measurable.
    e.ns = std::max(0.0, e.ns);
    e.low = std::max(0.0, per_unit.front());
    e.high = std::max(0.0, per_unit.back());
    e.rounds = static_cast<unsigned>(n);
    return e;
}

std::optional<CostEstimate> probe_call_cost(const pmu::UprobePmu& pmu, std::uint32_t stack_size,
                                            std::string& why) {
    // Where the target function is in lockprof's own file: its mapping, stripped or not.
    const auto address = reinterpret_cast<std::uint64_t>(&lockprof_calibration_target);
    std::string path;
    std::uint64_t offset = 0;
    for (const auto& m : symbols::parse_maps(read_all("/proc/self/maps")))
        if (address >= m.start && address < m.end) {
            path = m.path;
            offset = address - m.start + m.offset;
        }
    if (path.empty()) {
        why = "lockprof's own code is in no file mapping of /proc/self/maps";
        return std::nullopt;
    }
    std::vector<double> plain, probed;
    std::vector<std::uint64_t> units;
    alternate(
        [&](bool on, double& ns, std::uint64_t& n, std::string& error) {
            std::optional<UprobeSampler> sampler;
            if (on) {
                sampler.emplace(pmu, std::vector<UprobeTarget>{{path, offset, "calibration"}},
                                stack_size);
                std::size_t failed = 0;
                if (const int e = sampler->attach_task(own_tid(), failed)) {
                    error = pmu::explain_uprobe_error(e, "lockprof_calibration_target", path);
                    return;
                }
            }
            volatile int word = 0;
            const double start = thread_cpu_ns();
            for (unsigned i = 0; i < kCallsPerRound; ++i) lockprof_calibration_target(&word);
            ns = thread_cpu_ns() - start;
            if (sampler) {
                sampler->stop();
                std::uint64_t entries = 0;
                for (const auto& hit : sampler->drain()) entries += !hit.is_return && !hit.is_stack;
                n = sampler->lost() ? 0 : entries;  // a round with losses measured less
            }
        },
        plain, probed, units, why);
    if (!why.empty()) return std::nullopt;
    auto estimate = summarize_rounds(plain, probed, units);
    if (estimate.rounds == 0) {
        why = "no calibration round recorded its calls";
        return std::nullopt;
    }
    return estimate;
}

std::optional<CostEstimate> sample_cost(const perf_event_attr& attr, std::uint64_t frequency,
                                        std::string& why) {
    // Iterations of busy() that take about kWorkNs of CPU time here.
    const double probe_start = thread_cpu_ns();
    busy(1'000'000);
    const double per_iteration = std::max(0.1, (thread_cpu_ns() - probe_start) / 1e6);
    const auto iterations = static_cast<std::uint64_t>(kWorkNs / per_iteration);
    perf_event_attr sampled = attr;
    sampled.freq = 1;
    sampled.sample_freq = frequency;
    std::vector<double> plain, with_samples;
    std::vector<std::uint64_t> units;
    alternate(
        [&](bool on, double& ns, std::uint64_t& n, std::string& error) {
            std::optional<TaskSampler> sampler;
            if (on) {
                sampler.emplace(sampled, measure::SamplingInfo{});
                if (const int e = sampler->attach_task(own_tid())) {
                    error = fmt::format("cannot sample lockprof's calibration thread: {}",
                                        std::strerror(e));
                    return;
                }
            }
            const double start = thread_cpu_ns();
            busy(iterations);
            ns = thread_cpu_ns() - start;
            if (sampler) {
                sampler->stop();
                n = sampler->drain().size() + sampler->lost();
            }
        },
        plain, with_samples, units, why);
    if (!why.empty()) return std::nullopt;
    auto estimate = summarize_rounds(plain, with_samples, units);
    if (estimate.rounds == 0) {
        why = "no calibration round was sampled";
        return std::nullopt;
    }
    return estimate;
}

}  // namespace lockprof::sampling
