// Writing the result file; reading it back (and validating it) is results/result_reader.cpp.
#include "lockprof/report/json.hpp"

namespace lockprof::report {

using nlohmann::json;

json spread_json(const analysis::Spread& s) {
    return {{"median", s.median},
            {"min", s.min},
            {"max", s.max},
            {"relative_spread", s.relative_spread()},
            {"trials", s.values}};
}

json provenance_json(const workload::Provenance& p) {
    return {{"lockprof_version", p.lockprof_version},
            {"git_revision", p.git_revision},
            {"command_line", p.command_line},
            {"timestamp_utc", p.timestamp_utc},
            {"hostname", p.hostname},
            {"arch", p.arch},
            {"cpu_model", p.cpu_model},
            {"cpu_vendor", p.cpu_vendor},
            {"midr", p.midr},
            {"lse", p.lse},
            {"spe", p.spe},
            {"logical_cpus", p.logical_cpus},
            {"kernel", p.kernel},
            {"perf_event_paranoid", p.perf_event_paranoid},
            {"vm_hint", p.vm_hint},
            {"compiler", p.compiler},
            {"compiler_flags", p.compiler_flags},
            {"build_type", p.build_type},
            {"assertions", p.assertions},
            {"cpufreq_governor", p.cpufreq_governor},
            {"cpu_boost", p.cpu_boost}};
}

namespace {

json spec_json(const workload::RunSpec& s) {
    json j = {{"locks", s.locks},
              {"threads", s.threads},
              {"critical_ns", s.work.critical_ns},
              {"parallel_ns", s.work.parallel_ns},
              {"shared_lines", s.work.shared_lines},
              {"data", workload::data_placement_name(s.work.data)},
              {"lock_page", workload::lock_page_name(s.work.lock_page)},
              {"warmup_ns", s.warmup_ns},
              {"trials", s.trials},
              {"seed", s.seed},
              {"read_fraction", s.work.read_fraction},
              {"latency", s.latency},
              {"watchdog_ns", s.watchdog_ns}};
    // --critical-ins / --parallel-ins: the work in instructions (the ns figure is then 0).
    j["critical_instructions"] =
        s.work.critical_instructions ? json(*s.work.critical_instructions) : json(nullptr);
    j["parallel_instructions"] =
        s.work.parallel_instructions ? json(*s.work.parallel_instructions) : json(nullptr);
    j["duration_ns"] = s.duration_ns ? json(*s.duration_ns) : json(nullptr);
    j["acquires_per_thread"] = s.acquires_per_thread ? json(*s.acquires_per_thread) : json(nullptr);
    j["delay"] = s.delay ? json(std::string(arch::delay_name(*s.delay))) : json(nullptr);
    j["pin"] = {{"mode", workload::pin_mode_name(s.pin.mode)},
                {"cpus", s.pin.cpus},
                {"cpu_order_file", s.pin.cpu_order_file}};
    j["sched"] = workload::sched_policy_name(s.sched);
    j["processes"] = s.processes;
    // --trials auto: "trials" above is then the minimum per cell.
    j["trials_auto"] = s.max_time_ns ? json{{"max_time_ns", *s.max_time_ns}} : json(nullptr);
    // Each measured trial paired with one without instruments (cells' plain_trials).
    j["perturbation_check"] = s.perturbation_check;
    return j;
}

json histogram_json(const workload::LatencyHistogram& h) {
    json buckets = json::array();
    for (auto [index, count] : h.nonzero()) buckets.push_back({index, count});
    return {{"sub_bucket_bits", workload::LatencyHistogram::kSubBits},
            {"max", h.max()},
            {"buckets", buckets}};
}

json thread_json(const workload::ThreadResult& t, bool raw_samples) {
    json j = {{"index", t.index},
              {"cpu", t.cpu},
              {"acquires", t.acquires},
              {"overlaps", t.overlaps},
              {"read_acquires", t.read_acquires},
              {"mix_seed", t.mix_seed},
              {"rmw_attempts", t.rmw_attempts},
              {"spin_iterations", t.spin_iterations},
              {"sleeps", t.sleeps},
              {"burn_iterations_per_ns", t.burn_iterations_per_ns},
              {"critical_iterations", t.critical_iterations},
              {"parallel_iterations", t.parallel_iterations},
              {"critical_work_ns", t.critical_work_ns},
              {"parallel_work_ns", t.parallel_work_ns},
              {"cpu_ns", t.cpu_ns},
              {"start_ns", t.start_ns},
              {"end_ns", t.end_ns}};
    if (!t.latency.empty()) j["latency_ticks"] = histogram_json(t.latency);
    if (!t.read_latency.empty()) j["read_latency_ticks"] = histogram_json(t.read_latency);
    if (!t.counters.empty()) {
        json counters = json::array();
        for (const auto& c : t.counters)
            counters.push_back({{"event", c.event},
                                {"raw", c.raw},
                                {"enabled_ns", c.enabled_ns},
                                {"running_ns", c.running_ns}});
        j["counters"] = counters;
    }
    if (t.sampled) {
        j["sampled"] = true;
        j["samples_lost"] = t.samples_lost;
    }
    if (raw_samples && !t.samples.empty()) {
        // Compact rows [ip, tid, time_ns, weight, [callchain]]: a run holds many thousands. The
        // process is the thread's, the same for every row: written once.
        json samples = json::array();
        for (const auto& s : t.samples)
            samples.push_back(json::array({s.ip, s.tid, s.time_ns, s.weight, s.callchain}));
        j["samples"] = std::move(samples);
        j["samples_pid"] = t.samples.front().pid;
    }
    return j;
}

}  // namespace

json sampling_json(const measure::SamplingInfo& s) {
    json modules = json::array();
    for (const auto& m : s.modules)
        modules.push_back({{"path", m.path},
                           {"start", m.start},
                           {"end", m.end},
                           {"offset", m.offset},
                           {"permissions", m.permissions},
                           {"build_id", m.build_id}});
    return {{"sampler", s.sampler},
            {"sampler_reason", s.sampler_reason},
            {"requested_event", s.requested_event},
            {"event", s.event},
            {"event_note", s.event_note},
            {"period", s.period},
            {"frequency", s.frequency},
            {"precise_ip", s.precise_ip},
            {"skid", std::string(measure::skid_name(s.skid))},
            {"precise_note", s.precise_note},
            {"call_graph", s.call_graph},
            {"stack_size", s.stack_size},
            {"call_graph_note", s.call_graph_note},
            {"unwound", s.unwound},
            {"unwound_without_callers", s.unwound_without_callers},
            {"unwind_s", s.unwind_seconds},
            {"modules", modules}};
}

namespace {

json latency_json(const analysis::LatencySummary& l) {
    return {{"p50", l.p50_ns},
            {"p99", l.p99_ns},
            {"p99_9", l.p999_ns},
            {"max", l.max_ns},
            {"samples", l.samples}};
}

json trial_json(const workload::TrialResult& t, RawSamples samples) {
    json threads = json::array();
    for (const auto& th : t.threads)
        threads.push_back(thread_json(th, samples == RawSamples::keep));
    json trial = {{"trial", t.trial},
                  {"process", t.process},
                  {"wall_ns", t.wall_ns},
                  {"ticks", t.ticks},
                  {"threads", threads}};
    if (t.lock_page)  // --lock-page huge
        trial["lock_page"] = {
            {"page_size", t.lock_page->page_size},
            {"physical_address",
             t.lock_page->physical_address ? json(*t.lock_page->physical_address) : json(nullptr)}};
    // Steal is unknown rather than 0 where it was not measured (run.notes say why).
    trial["steal"] = t.steal ? json{{"cpus", t.steal->cpus},
                                    {"steal_ns", t.steal->steal_ns},
                                    {"window_ns", t.steal->window_ns},
                                    {"tick_ns", t.steal->tick_ns}}
                             : json(nullptr);
    return trial;
}

json effect_interval_json(const analysis::Effect& e) {
    return e.interval ? json{{"low", e.interval->low}, {"high", e.interval->high}} : json();
}

json summary_json(const analysis::CellSummary& s) {
    json j = {{"trials", s.trials},
              {"acquires", spread_json(s.acquires)},
              {"acquires_per_second", spread_json(s.acquires_per_second)},
              {"wall_ns_per_acquire", spread_json(s.wall_ns_per_acquire)},
              {"cpu_ns_per_acquire", spread_json(s.cpu_ns_per_acquire)},
              {"cpus_used", spread_json(s.cpus_used)},
              {"ticks_per_acquire", spread_json(s.ticks_per_acquire)},
              {"rmw_per_acquire", spread_json(s.rmw_per_acquire)},
              {"spins_per_acquire", spread_json(s.spins_per_acquire)},
              {"sleeps_per_acquire", spread_json(s.sleeps_per_acquire)},
              {"full_concurrency", spread_json(s.full_concurrency)},
              {"critical_work_ns", spread_json(s.critical_work_ns)},
              {"parallel_work_ns", spread_json(s.parallel_work_ns)},
              {"fairness",
               {{"jain_index", spread_json(s.jain)},
                {"min_max_ratio", spread_json(s.min_max)},
                {"coefficient_of_variation", spread_json(s.cv)}}}};
    if (s.latency) j["latency_ns"] = latency_json(*s.latency);
    if (s.read_acquires) {
        j["read_acquires"] = spread_json(*s.read_acquires);
        j["read_acquires_per_second"] = spread_json(*s.read_acquires_per_second);
        j["write_acquires_per_second"] = spread_json(*s.write_acquires_per_second);
    }
    if (s.read_latency) j["read_latency_ns"] = latency_json(*s.read_latency);
    if (s.write_latency) j["write_latency_ns"] = latency_json(*s.write_latency);
    json events = json::array();
    for (const auto& e : s.events)
        events.push_back({{"event", e.event},
                          {"counted", e.counted},
                          {"per_acquire", e.counted ? spread_json(e.per_acquire) : json(nullptr)},
                          {"running_fraction", e.running_fraction}});
    j["events"] = events;
    json derived = json::object();
    for (const auto& d : s.derived) derived[d.name] = spread_json(d.value);
    if (!s.derived.empty()) j["derived"] = derived;
    if (s.precision) {
        const auto& p = *s.precision;
        j["precision"] = {
            {"level", p.level},
            {"equivalence", p.equivalence},
            {"interval",
             p.interval ? json{{"low", p.interval->low}, {"high", p.interval->high}} : json()},
            {"half_width", p.interval ? json(p.half_width) : json()},
            {"narrow", p.narrow},
            {"trials_to_narrow", p.trials_to_narrow ? json(*p.trials_to_narrow) : json()}};
    }
    if (s.perturbation) {  // instrumented / plain acquires/s (summary.hpp)
        const auto& e = *s.perturbation;
        j["perturbation"] = {
            {"instruments", s.instruments},
            {"ratio", e.ratio},
            {"interval", effect_interval_json(e)},
            {"verdict", analysis::perturbation_verdict_name(e.verdict)},
            {"trials", {{"instrumented", e.other_trials}, {"plain", e.base_trials}}},
            {"level", e.level},
            {"family", e.family},
            {"equivalence", e.equivalence}};
    }
    if (s.comparison) {
        const auto& e = s.comparison->effect;
        j["comparison"] = {
            {"baseline", s.comparison->baseline},
            {"resampled_over", s.comparison->over_processes ? "processes" : "trials"},
            {"processes", s.comparison->processes},
            {"throughput_ratio", e.ratio},
            {"verdict", analysis::verdict_name(e.verdict)},
            {"interval", effect_interval_json(e)},
            {"level", e.level},
            {"family", e.family},
            {"equivalence", e.equivalence}};
    }
    return j;
}

}  // namespace

json to_json(const workload::RunResult& run, const std::vector<analysis::CellSummary>& summaries,
             RawSamples samples) {
    json cells = json::array();
    for (std::size_t i = 0; i < run.cells.size(); ++i) {
        const auto& c = run.cells[i];
        json trials = json::array();
        for (const auto& t : c.trials) trials.push_back(trial_json(t, samples));
        json cell = {{"lock", c.lock},         {"algorithm", c.algorithm},
                     {"flavour", c.flavour},   {"delay", std::string(arch::delay_name(c.delay))},
                     {"threads", c.threads},   {"complete", c.complete},
                     {"overlaps", c.overlaps}, {"lost_updates", c.lost_updates},
                     {"trials", trials}};
        // A fixed count's reason follows from `complete` (results built by hand say nothing).
        const workload::TrialStop stop = run.spec.max_time_ns ? c.stop
                                         : c.complete         ? workload::TrialStop::planned
                                                              : workload::TrialStop::interrupted;
        cell["stop"] = {{"reason", workload::trial_stop_name(stop)}, {"trials", c.trials.size()}};
        // The checked trial(s) before the measured ones (workload/sweep.hpp); null where none
        // ran (a lock that claims no exclusion, or an interrupt first).
        cell["verification"] = c.verification ? json{{"trials", c.verification->trials},
                                                     {"acquires", c.verification->acquires},
                                                     {"wall_ns", c.verification->wall_ns},
                                                     {"overlaps", c.verification->overlaps},
                                                     {"lost_updates", c.verification->lost_updates}}
                                              : json(nullptr);
        if (run.spec.perturbation_check) {  // the observer-effect check's uninstrumented twins
            json plain = json::array();
            for (const auto& t : c.plain_trials) plain.push_back(trial_json(t, samples));
            cell["plain_trials"] = std::move(plain);
        }
        if (i < summaries.size()) cell["summary"] = summary_json(summaries[i]);
        cells.push_back(cell);
    }
    json doc = {{"schema", kSchemaName},
                {"schema_version", kSchemaVersion},
                {"interrupted", run.interrupted},
                {"provenance", provenance_json(run.provenance)},
                {"config", spec_json(run.spec)},
                {"calibration",
                 {{"burn_iterations_per_ns", run.calibration.burn_iterations_per_ns},
                  {"ticks_per_ns", run.calibration.ticks_per_ns}}},
                {"notes", run.notes},
                {"cells", cells}};
    doc["interrupted_by"] = run.interrupted_by.empty() ? json(nullptr) : json(run.interrupted_by);
    if (run.sampling) doc["sampling"] = sampling_json(*run.sampling);
    return doc;
}

std::string json_text(const json& doc, int indent) {
    return doc.dump(indent, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace lockprof::report
