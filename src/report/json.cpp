#include "lockprof/report/json.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/sampling/sampler.hpp"

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
            {"assertions", p.assertions}};
}

namespace {

json spec_json(const workload::RunSpec& s) {
    json j = {{"locks", s.locks},
              {"threads", s.threads},
              {"critical_ns", s.work.critical_ns},
              {"parallel_ns", s.work.parallel_ns},
              {"shared_lines", s.work.shared_lines},
              {"data", workload::data_placement_name(s.work.data)},
              {"warmup_ns", s.warmup_ns},
              {"trials", s.trials},
              {"seed", s.seed},
              {"latency", s.latency},
              {"watchdog_ns", s.watchdog_ns}};
    j["duration_ns"] = s.duration_ns ? json(*s.duration_ns) : json(nullptr);
    j["acquires_per_thread"] = s.acquires_per_thread ? json(*s.acquires_per_thread) : json(nullptr);
    j["delay"] = s.delay ? json(std::string(arch::delay_name(*s.delay))) : json(nullptr);
    j["pin"] = {{"mode", workload::pin_mode_name(s.pin.mode)}, {"cpus", s.pin.cpus}};
    return j;
}

json thread_json(const workload::ThreadResult& t, bool raw_samples) {
    json j = {{"index", t.index},
              {"cpu", t.cpu},
              {"acquires", t.acquires},
              {"overlaps", t.overlaps},
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
    if (!t.latency.empty()) {
        json buckets = json::array();
        for (auto [index, count] : t.latency.nonzero()) buckets.push_back({index, count});
        j["latency_ticks"] = {{"sub_bucket_bits", workload::LatencyHistogram::kSubBits},
                              {"max", t.latency.max()},
                              {"buckets", buckets}};
    }
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

json sampling_json(const profiling::SamplingInfo& s) {
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
            {"skid", std::string(profiling::skid_name(s.skid))},
            {"precise_note", s.precise_note},
            {"modules", modules}};
}

namespace {

// Results written before "skid" existed: what their precise_ip means on the architecture that
// wrote them (a hardware event whenever one was granted).
profiling::Skid skid_from_json(const json& j, const std::string& arch, int precise_ip) {
    if (!j.contains("skid"))
        return sampling::skid_meaning(arch == "aarch64" ? pmu::Isa::aarch64 : pmu::Isa::x86_64,
                                      precise_ip > 0, precise_ip, "")
            .skid;
    const std::string name = j.at("skid");
    for (auto skid : {profiling::Skid::arbitrary, profiling::Skid::constant, profiling::Skid::zero})
        if (profiling::skid_name(skid) == name) return skid;
    throw UsageError(fmt::format(
        "unknown skid '{}' in sampling (arbitrary, constant or zero); the file is damaged or "
        "from a newer lockprof",
        name));
}

profiling::SamplingInfo sampling_from_json(const json& j, const std::string& arch) {
    profiling::SamplingInfo s;
    s.sampler = j.at("sampler");
    s.sampler_reason = j.at("sampler_reason");
    s.requested_event = j.at("requested_event");
    s.event = j.at("event");
    s.event_note = j.at("event_note");
    s.period = j.at("period");
    s.frequency = j.at("frequency");
    s.precise_ip = j.at("precise_ip");
    s.skid = skid_from_json(j, arch, s.precise_ip);
    s.precise_note = j.at("precise_note");
    for (const auto& m : j.at("modules"))
        s.modules.push_back({m.at("path"), m.at("start"), m.at("end"), m.at("offset"),
                             m.at("permissions"), m.at("build_id")});
    return s;
}

json summary_json(const analysis::CellSummary& s) {
    json j = {{"trials", s.trials},
              {"acquires", spread_json(s.acquires)},
              {"acquires_per_second", spread_json(s.acquires_per_second)},
              {"wall_ns_per_acquire", spread_json(s.wall_ns_per_acquire)},
              {"cpu_ns_per_acquire", spread_json(s.cpu_ns_per_acquire)},
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
    if (s.latency)
        j["latency_ns"] = {{"p50", s.latency->p50_ns},
                           {"p99", s.latency->p99_ns},
                           {"p99_9", s.latency->p999_ns},
                           {"max", s.latency->max_ns},
                           {"samples", s.latency->samples}};
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
    if (s.comparison)
        j["comparison"] = {{"baseline", s.comparison->baseline},
                           {"throughput_ratio", s.comparison->throughput_ratio},
                           {"within_noise", s.comparison->within_noise},
                           {"single_trial", s.comparison->single_trial}};
    return j;
}

}  // namespace

json to_json(const workload::RunResult& run, const std::vector<analysis::CellSummary>& summaries,
             RawSamples samples) {
    json cells = json::array();
    for (std::size_t i = 0; i < run.cells.size(); ++i) {
        const auto& c = run.cells[i];
        json trials = json::array();
        for (const auto& t : c.trials) {
            json threads = json::array();
            for (const auto& th : t.threads)
                threads.push_back(thread_json(th, samples == RawSamples::keep));
            trials.push_back({{"trial", t.trial},
                              {"wall_ns", t.wall_ns},
                              {"ticks", t.ticks},
                              {"threads", threads}});
        }
        json cell = {{"lock", c.lock},         {"algorithm", c.algorithm},
                     {"flavour", c.flavour},   {"delay", std::string(arch::delay_name(c.delay))},
                     {"threads", c.threads},   {"complete", c.complete},
                     {"overlaps", c.overlaps}, {"lost_updates", c.lost_updates},
                     {"trials", trials}};
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
    if (run.sampling) doc["sampling"] = sampling_json(*run.sampling);
    return doc;
}

namespace {

workload::Provenance provenance_from_json(const json& p) {
    workload::Provenance pv;
    pv.lockprof_version = p.at("lockprof_version");
    pv.git_revision = p.at("git_revision");
    pv.command_line = p.at("command_line");
    pv.timestamp_utc = p.at("timestamp_utc");
    pv.hostname = p.at("hostname");
    pv.arch = p.at("arch");
    pv.cpu_model = p.at("cpu_model");
    pv.cpu_vendor = p.at("cpu_vendor");
    pv.midr = p.at("midr");
    pv.lse = p.at("lse");
    pv.spe = p.at("spe");
    pv.logical_cpus = p.at("logical_cpus");
    pv.kernel = p.at("kernel");
    pv.perf_event_paranoid = p.at("perf_event_paranoid");
    pv.vm_hint = p.at("vm_hint");
    pv.compiler = p.at("compiler");
    pv.compiler_flags = p.at("compiler_flags");
    pv.build_type = p.at("build_type");
    pv.assertions = p.at("assertions");

    return pv;
}

workload::RunSpec spec_from_json(const json& c) {
    workload::RunSpec s;
    s.locks = c.at("locks").get<std::vector<std::string>>();
    s.threads = c.at("threads").get<std::vector<unsigned>>();
    s.work.critical_ns = c.at("critical_ns");
    s.work.parallel_ns = c.at("parallel_ns");
    s.work.shared_lines = c.at("shared_lines");
    const std::string data = c.value("data", "separate");  // older files: always separate
    if (data == "same-line")
        s.work.data = workload::DataPlacement::same_line;
    else if (data != "separate")
        throw UsageError(fmt::format("unknown data placement '{}' in config", data));
    s.warmup_ns = c.at("warmup_ns");
    s.trials = c.at("trials");
    s.seed = c.at("seed");
    s.latency = c.at("latency");
    s.watchdog_ns = c.at("watchdog_ns");
    if (!c.at("duration_ns").is_null()) s.duration_ns = c.at("duration_ns").get<std::uint64_t>();
    if (!c.at("acquires_per_thread").is_null())
        s.acquires_per_thread = c.at("acquires_per_thread").get<std::uint64_t>();
    if (!c.at("delay").is_null())
        s.delay = arch::parse_delay(c.at("delay").get<std::string>(), "delay in result");
    if (c.contains("pin")) {  // compare warns when two runs were pinned differently
        const auto& pin = c.at("pin");
        const std::string mode = pin.at("mode");
        bool known = false;
        for (auto m : {workload::PinMode::none, workload::PinMode::compact,
                       workload::PinMode::scatter, workload::PinMode::list})
            if (mode == workload::pin_mode_name(m)) s.pin.mode = m, known = true;
        if (!known)
            throw UsageError(fmt::format(
                "unknown pin mode '{}' in config (none, compact, scatter or list)", mode));
        s.pin.cpus = pin.at("cpus").get<std::vector<int>>();
    }

    return s;
}

workload::ThreadResult thread_from_json(const json& jth) {
    workload::ThreadResult t;
    t.index = jth.at("index");
    t.cpu = jth.at("cpu");
    t.acquires = jth.at("acquires");
    t.overlaps = jth.value("overlaps", std::uint64_t{0});
    t.rmw_attempts = jth.at("rmw_attempts");
    t.spin_iterations = jth.at("spin_iterations");
    t.sleeps = jth.value("sleeps", std::uint64_t{0});  // older files: none counted
    // Per-worker calibration; files written before it have none (0).
    t.burn_iterations_per_ns = jth.value("burn_iterations_per_ns", 0.0);
    t.critical_iterations = jth.value("critical_iterations", std::uint64_t{0});
    t.parallel_iterations = jth.value("parallel_iterations", std::uint64_t{0});
    t.critical_work_ns = jth.value("critical_work_ns", 0.0);
    t.parallel_work_ns = jth.value("parallel_work_ns", 0.0);
    t.cpu_ns = jth.at("cpu_ns");
    t.start_ns = jth.at("start_ns");
    t.end_ns = jth.at("end_ns");
    if (jth.contains("latency_ticks")) {
        const auto& l = jth.at("latency_ticks");
        for (const auto& b : l.at("buckets"))
            t.latency.set_bucket(b.at(0).get<unsigned>(), b.at(1).get<std::uint64_t>());
        t.latency.set_max(l.at("max"));
    }
    if (jth.contains("counters"))
        for (const auto& jcount : jth.at("counters"))
            t.counters.push_back({jcount.at("event"), jcount.at("raw"), jcount.at("enabled_ns"),
                                  jcount.at("running_ns")});
    t.sampled = jth.value("sampled", false);
    t.samples_lost = jth.value("samples_lost", std::uint64_t{0});
    // Files written before samples_pid: 0, "not recorded".
    const auto pid = jth.value("samples_pid", std::uint32_t{0});
    if (jth.contains("samples"))
        for (const auto& row : jth.at("samples"))
            t.samples.push_back({row.at(0), row.at(1), row.at(2), row.at(3),
                                 row.at(4).get<std::vector<std::uint64_t>>(), pid});
    return t;
}

workload::CellResult cell_from_json(const json& jc) {
    workload::CellResult cell;
    cell.lock = jc.at("lock");
    cell.algorithm = jc.at("algorithm");
    cell.flavour = jc.at("flavour");
    cell.delay = arch::parse_delay(jc.at("delay").get<std::string>(), "delay in result");
    cell.threads = jc.at("threads");
    cell.complete = jc.at("complete");
    cell.overlaps = jc.value("overlaps", std::uint64_t{0});  // older files lack it
    cell.lost_updates = jc.at("lost_updates");
    for (const auto& jt : jc.at("trials")) {
        workload::TrialResult trial;
        trial.trial = jt.at("trial");
        trial.wall_ns = jt.at("wall_ns");
        trial.ticks = jt.at("ticks");
        for (const auto& jth : jt.at("threads")) trial.threads.push_back(thread_from_json(jth));
        cell.trials.push_back(std::move(trial));
    }
    return cell;
}

// The members whose values are real numbers; every other number the reader takes is a whole
// one. nlohmann converts a JSON real to an integer with a plain cast, undefined behaviour beyond
// the integer's range ("acquires": 1e30), so reals where whole numbers belong are refused first.
bool is_real_member(std::string_view key) {
    return key == "burn_iterations_per_ns" || key == "ticks_per_ns" || key == "critical_work_ns" ||
           key == "parallel_work_ns";
}

// Throws UsageError naming the JSON path of the first real number in `j` that is not the value
// of a real member. `key` is the member `j` is the value of, or the one holding its array.
void check_whole_numbers(const json& j, std::string_view key, const std::string& path) {
    if (j.is_object()) {
        for (const auto& [member, value] : j.items()) {
            if (member == "summary") continue;  // derived figures, recomputed, never read
            check_whole_numbers(value, member, path.empty() ? member : path + "." + member);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            check_whole_numbers(j[i], key, fmt::format("{}[{}]", path, i));
    } else if (j.is_number_float() && !is_real_member(key)) {
        throw UsageError(
            fmt::format("{} is {}, where the schema has a whole number", path, j.dump()));
    }
}

}  // namespace

workload::RunResult result_from_json(const json& doc) {
    if (!doc.is_object() || doc.value("schema", "") != kSchemaName)
        throw UsageError("not a lockprof result (no \"schema\": \"lockprof.result\")");
    check_whole_numbers(doc, "", "");
    const int version = doc.value("schema_version", -1);
    if (version != kSchemaVersion)
        throw UsageError(fmt::format(
            "result schema version {} is not supported (this lockprof reads version {}); "
            "use the lockprof version that wrote it",
            version, kSchemaVersion));
    workload::RunResult run;
    run.interrupted = doc.at("interrupted").get<bool>();
    run.provenance = provenance_from_json(doc.at("provenance"));
    run.spec = spec_from_json(doc.at("config"));
    run.calibration.burn_iterations_per_ns = doc.at("calibration").at("burn_iterations_per_ns");
    run.calibration.ticks_per_ns = doc.at("calibration").at("ticks_per_ns");
    run.notes = doc.at("notes").get<std::vector<std::string>>();

    if (doc.contains("sampling"))
        run.sampling = sampling_from_json(doc.at("sampling"), run.provenance.arch);

    for (const auto& jc : doc.at("cells")) run.cells.push_back(cell_from_json(jc));
    return run;
}

workload::RunResult read_result(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw UsageError(
            fmt::format("cannot read '{}': no such file or not readable", path.string()));
    std::ostringstream text;
    text << in.rdbuf();
    return result_from_text(text.str(), path.string());
}

workload::RunResult result_from_text(std::string_view text, const std::string& name) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        throw UsageError(fmt::format("'{}' is not valid JSON (truncated?): {}", name, e.what()));
    } catch (const json::exception& e) {
        // A number beyond a double's range (1e999) is valid JSON the parser cannot hold.
        throw UsageError(fmt::format("'{}' cannot be read as JSON: {}", name, e.what()));
    }
    try {
        return result_from_json(doc);
    } catch (const UsageError& e) {
        throw UsageError(fmt::format("'{}': {}", name, e.what()));
    } catch (const json::exception& e) {
        throw UsageError(fmt::format("'{}' is not a complete lockprof result: {}", name, e.what()));
    }
}

}  // namespace lockprof::report
