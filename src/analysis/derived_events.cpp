#include "lockprof/analysis/derived_events.hpp"

#include "lockprof/analysis/summary.hpp"

namespace lockprof::analysis {
namespace {

// Sum of one event's scaled values over a trial's threads; nullopt when no thread counted it.
std::optional<double> trial_total(const workload::TrialResult& trial, const std::string& event) {
    std::optional<double> total;
    for (const auto& thread : trial.threads)
        for (const auto& reading : thread.counters)
            if (reading.event == event)
                if (auto v = scaled_value(reading)) total = total.value_or(0) + *v;
    return total;
}

struct Definition {
    const char* name;
    const char* label;
    bool percent;
    const char* numerator;
    const char* other;
    std::optional<double> (*compute)(std::optional<double>, std::optional<double>);
};

constexpr Definition kDefinitions[] = {
    {"ipc", "IPC", false, "instructions", "cycles", instructions_per_cycle},
    {"stxr_fail_ratio", "stxr fail%", true, "stxr_fail", "stxr_pass", failure_ratio},
};

}  // namespace

std::optional<double> instructions_per_cycle(std::optional<double> instructions,
                                             std::optional<double> cycles) {
    if (!instructions || !cycles || *cycles <= 0) return std::nullopt;
    return *instructions / *cycles;
}

std::optional<double> failure_ratio(std::optional<double> failed, std::optional<double> passed) {
    if (!failed || !passed || *failed + *passed <= 0) return std::nullopt;
    return *failed / (*failed + *passed);
}

std::vector<DerivedMetric> derived_metrics(const workload::CellResult& cell) {
    std::vector<DerivedMetric> out;
    for (const auto& d : kDefinitions) {
        std::vector<double> values;
        for (const auto& trial : cell.trials)
            if (auto v = d.compute(trial_total(trial, d.numerator), trial_total(trial, d.other)))
                values.push_back(*v);
        if (values.empty()) continue;
        out.push_back({d.name, d.label, d.percent, summarize(std::move(values))});
    }
    return out;
}

}  // namespace lockprof::analysis
