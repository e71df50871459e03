// Reading a result file back (read_result, result_from_json): every field is checked against
// what docs/result-schema.md promises ("Validation when reading"), and a refusal names the JSON
// path of the offending value, "cells[2].trials[0].threads[1].acquires: -5 is negative".
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/results/result_reader.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "lockprof/common/number_format.hpp"

namespace lockprof::results {

using nlohmann::json;

namespace {

// A value of the document and where it sits. Each Node holds its own path: a Node made from a
// temporary one (j["trials"][0]) must not refer to it, since the temporary is gone by the time
// a value is refused (TSan's stack layout turned such a reference into endless recursion).
class Node {
  public:
    explicit Node(const json& value) : value_(value) {}

    std::string path() const { return path_; }
    [[noreturn]] void fail(const std::string& reason) const {
        const std::string where = path();
        throw UsageError(
            fmt::format("{}: {}; the file is damaged or was edited, write it again "
                        "with lockprof",
                        where.empty() ? "the document" : where, reason));
    }

    bool has(const char* key) const { return value_.is_object() && value_.contains(key); }
    bool is_null() const { return value_.is_null(); }
    // A member that must be there.
    Node operator[](const char* key) const {
        if (!value_.is_object()) fail("is not an object");
        const auto it = value_.find(key);
        if (it == value_.end()) Node(value_, this, key).fail("is missing");
        return Node(*it, this, key);
    }
    std::size_t size() const {
        if (!value_.is_array()) fail("is not an array");
        return value_.size();
    }
    Node operator[](std::size_t index) const {
        if (index >= size()) Node(value_, this, index).fail("is missing");
        return Node(value_[index], this, index);
    }
    void each(const std::function<void(const Node&)>& visit) const {
        const std::size_t n = size();
        for (std::size_t i = 0; i < n; ++i) visit(Node(value_[i], this, i));
    }

    // A count: a whole number, not negative.
    std::uint64_t count() const {
        if (value_.is_number_unsigned()) return value_.get<std::uint64_t>();
        if (value_.is_number_integer()) {  // signed: what a document built in memory holds
            const auto n = value_.get<std::int64_t>();
            if (n < 0) fail(fmt::format("{} is negative, a count cannot be", shown()));
            return static_cast<std::uint64_t>(n);
        }
        fail(fmt::format("{} is not a whole number", shown()));
    }
    // A count that must be above 0 (durations, thread and trial counts).
    std::uint64_t positive() const {
        const std::uint64_t n = count();
        if (n == 0) fail("is 0, and must be positive");
        return n;
    }
    unsigned count32() const {
        const std::uint64_t n = count();
        if (n > UINT32_MAX) fail(fmt::format("{} is too large", n));
        return static_cast<unsigned>(n);
    }
    int integer() const {
        if (!value_.is_number_integer()) fail(fmt::format("{} is not a whole number", shown()));
        if (value_.is_number_unsigned() ? value_.get<std::uint64_t>() > INT32_MAX
                                        : value_.get<std::int64_t>() < INT32_MIN)
            fail(fmt::format("{} is out of range", shown()));
        return value_.get<int>();
    }
    // A finite number, at least 0.
    double non_negative() const {
        if (!value_.is_number()) fail(fmt::format("{} is not a number", shown()));
        const double x = value_.get<double>();
        if (!std::isfinite(x) || x < 0) fail(fmt::format("{} is negative", shown()));
        return x;
    }
    double above_zero() const {
        const double x = non_negative();
        if (x == 0) fail("is 0, and must be positive");
        return x;
    }
    bool boolean() const {
        if (!value_.is_boolean()) fail(fmt::format("{} is not true or false", shown()));
        return value_.get<bool>();
    }
    std::string string() const {
        if (!value_.is_string()) fail(fmt::format("{} is not a string", shown()));
        return value_.get<std::string>();
    }

    std::uint64_t count_or(const char* key, std::uint64_t fallback) const {
        return has(key) ? (*this)[key].count() : fallback;
    }
    double non_negative_or(const char* key, double fallback) const {
        return has(key) ? (*this)[key].non_negative() : fallback;
    }

  private:
    Node(const json& value, const Node* parent, const char* key)
        : value_(value),
          path_(parent->path_.empty() ? std::string(key) : parent->path_ + "." + key) {}
    Node(const json& value, const Node* parent, std::size_t index)
        : value_(value), path_(fmt::format("{}[{}]", parent->path_, index)) {}

    // The value as it stands in the file, cut short.
    std::string shown() const {
        std::string text = value_.dump();
        if (text.size() > 40) text = text.substr(0, 37) + "...";
        return text;
    }

    const json& value_;
    std::string path_;
};

std::vector<std::string> strings(const Node& n) {
    std::vector<std::string> out;
    n.each([&](const Node& item) { out.push_back(item.string()); });
    return out;
}

// Results written before "skid" existed: what their precise_ip means on the architecture that
// wrote them (a hardware event whenever one was granted).
measure::Skid skid_from_json(const Node& j, const std::string& arch, int precise_ip) {
    if (!j.has("skid"))
        return sampling::skid_meaning(arch == "aarch64" ? pmu::Isa::aarch64 : pmu::Isa::x86_64,
                                      precise_ip > 0, precise_ip, "")
            .skid;
    const std::string name = j["skid"].string();
    for (auto skid : {measure::Skid::arbitrary, measure::Skid::constant, measure::Skid::zero})
        if (measure::skid_name(skid) == name) return skid;
    throw UsageError(fmt::format(
        "sampling.skid: unknown skid '{}' (arbitrary, constant or zero); the file is damaged or "
        "from a newer lockprof",
        name));
}

measure::SamplingInfo sampling_from_json(const Node& j, const std::string& arch) {
    measure::SamplingInfo s;
    s.sampler = j["sampler"].string();
    s.sampler_reason = j["sampler_reason"].string();
    s.requested_event = j["requested_event"].string();
    s.event = j["event"].string();
    s.event_note = j["event_note"].string();
    s.period = j["period"].count();
    s.frequency = j["frequency"].count();
    s.precise_ip = j["precise_ip"].integer();
    s.skid = skid_from_json(j, arch, s.precise_ip);
    s.precise_note = j["precise_note"].string();
    // Results written before --call-graph existed took frame-pointer stacks.
    if (j.has("call_graph")) {
        s.call_graph = j["call_graph"].string();
        if (s.call_graph != "fp" && s.call_graph != "dwarf")
            j["call_graph"].fail(fmt::format("'{}' is not fp or dwarf", s.call_graph));
        s.stack_size = j["stack_size"].count32();
        s.call_graph_note = j.has("call_graph_note") ? j["call_graph_note"].string() : "";
        s.unwound = j.count_or("unwound", 0);
        s.unwound_without_callers = j.count_or("unwound_without_callers", 0);
        s.unwind_seconds = j.non_negative_or("unwind_s", 0);
    }
    j["modules"].each([&](const Node& m) {
        measure::MappedModule module{m["path"].string(),        m["start"].count(),
                                     m["end"].count(),          m["offset"].count(),
                                     m["permissions"].string(), m["build_id"].string()};
        if (module.end < module.start) m["end"].fail("is below start");
        s.modules.push_back(std::move(module));
    });
    return s;
}

workload::Provenance provenance_from_json(const Node& p) {
    workload::Provenance pv;
    pv.lockprof_version = p["lockprof_version"].string();
    pv.git_revision = p["git_revision"].string();
    pv.command_line = p["command_line"].string();
    pv.timestamp_utc = p["timestamp_utc"].string();
    pv.hostname = p["hostname"].string();
    pv.arch = p["arch"].string();
    pv.cpu_model = p["cpu_model"].string();
    pv.cpu_vendor = p["cpu_vendor"].string();
    pv.midr = p["midr"].string();
    pv.lse = p["lse"].boolean();
    pv.spe = p["spe"].boolean();
    pv.logical_cpus = p["logical_cpus"].count32();
    pv.kernel = p["kernel"].string();
    pv.perf_event_paranoid = p["perf_event_paranoid"].integer();
    pv.vm_hint = p["vm_hint"].string();
    pv.compiler = p["compiler"].string();
    pv.compiler_flags = p["compiler_flags"].string();
    pv.build_type = p["build_type"].string();
    pv.assertions = p["assertions"].boolean();
    // Added after schema version 1 was first written: optional, "" (unknown) when absent.
    if (p.has("cpufreq_governor")) pv.cpufreq_governor = p["cpufreq_governor"].string();
    if (p.has("cpu_boost")) pv.cpu_boost = p["cpu_boost"].string();
    return pv;
}

workload::RunSpec spec_from_json(const Node& c) {
    workload::RunSpec s;
    s.locks = strings(c["locks"]);
    c["threads"].each([&](const Node& n) {
        const std::uint64_t threads = n.positive();
        if (threads > UINT32_MAX) n.fail("is too large");
        s.threads.push_back(static_cast<unsigned>(threads));
    });
    s.work.critical_ns = c["critical_ns"].count();
    s.work.parallel_ns = c["parallel_ns"].count();
    // --critical-ins / --parallel-ins, added later: absent or null, the work was in ns.
    const auto instructions = [&](const char* key, std::uint64_t ns, const char* ns_key) {
        std::optional<std::uint64_t> out;
        if (!c.has(key) || c[key].is_null()) return out;
        out = c[key].count();
        if (ns != 0)
            c[key].fail(
                fmt::format("is set, and so is {} ({}): the work is one or the other", ns_key, ns));
        return out;
    };
    s.work.critical_instructions =
        instructions("critical_instructions", s.work.critical_ns, "critical_ns");
    s.work.parallel_instructions =
        instructions("parallel_instructions", s.work.parallel_ns, "parallel_ns");
    const std::string page = c.has("lock_page") ? c["lock_page"].string() : "normal";
    if (page == "huge")
        s.work.lock_page = workload::LockPage::huge;
    else if (page != "normal")  // older files: the heap, what every run used then
        c["lock_page"].fail(fmt::format("unknown lock page '{}' (normal or huge)", page));
    s.work.shared_lines = c["shared_lines"].count32();
    const std::string data = c.has("data") ? c["data"].string() : "separate";  // older files
    if (data == "same-line")
        s.work.data = workload::DataPlacement::same_line;
    else if (data != "separate")
        c["data"].fail(fmt::format("unknown data placement '{}' (separate or same-line)", data));
    s.warmup_ns = c["warmup_ns"].count();
    s.trials = c["trials"].count32();
    if (s.trials == 0) c["trials"].fail("is 0, and must be positive");
    s.seed = c["seed"].count();
    s.work.read_fraction = c.non_negative_or("read_fraction", 0.0);  // older files: none
    if (s.work.read_fraction > 1)
        c["read_fraction"].fail(fmt::format("{} is more than 1", s.work.read_fraction));
    s.latency = c["latency"].boolean();
    s.watchdog_ns = c["watchdog_ns"].positive();
    if (!c["duration_ns"].is_null()) s.duration_ns = c["duration_ns"].positive();
    if (!c["acquires_per_thread"].is_null())
        s.acquires_per_thread = c["acquires_per_thread"].positive();
    if (!c["delay"].is_null())
        s.delay = arch::parse_delay(c["delay"].string(), "config.delay in result");
    if (c.has("pin")) {  // compare warns when two runs were pinned differently
        const Node pin = c["pin"];
        const std::string mode = pin["mode"].string();
        bool known = false;
        for (auto m : {workload::PinMode::none, workload::PinMode::compact,
                       workload::PinMode::scatter, workload::PinMode::list})
            if (mode == workload::pin_mode_name(m)) s.pin.mode = m, known = true;
        if (!known)
            pin["mode"].fail(
                fmt::format("unknown pin mode '{}' (none, compact, scatter or list)", mode));
        pin["cpus"].each([&](const Node& n) { s.pin.cpus.push_back(n.integer()); });
        if (pin.has("cpu_order_file")) s.pin.cpu_order_file = pin["cpu_order_file"].string();
    }
    if (c.has("sched")) {  // added later: absent is SCHED_OTHER, what every older run used
        const std::string sched = c["sched"].string();
        if (sched == "fifo")
            s.sched = workload::SchedPolicy::fifo;
        else if (sched != "other")
            c["sched"].fail(fmt::format("unknown scheduling policy '{}' (other or fifo)", sched));
    }
    s.processes = static_cast<unsigned>(
        std::min<std::uint64_t>(c.count_or("processes", 1), UINT32_MAX));  // added later
    if (s.processes == 0) c["processes"].fail("is 0, and must be positive");
    if (c.has("trials_auto") && !c["trials_auto"].is_null())  // added later: optional
        s.max_time_ns = c["trials_auto"]["max_time_ns"].positive();
    if (c.has("perturbation_check"))  // added later: older files ran no plain twins
        s.perturbation_check = c["perturbation_check"].boolean();
    return s;
}

workload::LatencyHistogram histogram_from_json(const Node& l) {
    workload::LatencyHistogram h;
    if (l.has("sub_bucket_bits") &&
        l["sub_bucket_bits"].count() != workload::LatencyHistogram::kSubBits)
        l["sub_bucket_bits"].fail(
            fmt::format("this lockprof reads only {}", workload::LatencyHistogram::kSubBits));
    l["buckets"].each([&](const Node& b) {
        const std::uint64_t index = b[std::size_t{0}].count();
        if (index >= workload::LatencyHistogram::kBuckets)
            b[std::size_t{0}].fail(fmt::format("bucket {} does not exist (0 to {})", index,
                                               workload::LatencyHistogram::kBuckets - 1));
        h.set_bucket(static_cast<unsigned>(index), b[1].count());
    });
    h.set_max(l["max"].count());
    return h;
}

workload::ThreadResult thread_from_json(const Node& j) {
    workload::ThreadResult t;
    t.index = j["index"].count32();
    t.cpu = j["cpu"].integer();
    if (t.cpu < -1) j["cpu"].fail(fmt::format("{} is not a CPU (-1: not pinned)", t.cpu));
    t.acquires = j["acquires"].count();
    t.overlaps = j.count_or("overlaps", 0);
    t.read_acquires = j.count_or("read_acquires", 0);  // older files: all exclusive
    if (t.read_acquires > t.acquires)
        j["read_acquires"].fail(
            fmt::format("{} is more than the thread's {} acquires", t.read_acquires, t.acquires));
    t.mix_seed = j.count_or("mix_seed", 0);
    if (t.overlaps > t.acquires)
        j["overlaps"].fail(
            fmt::format("{} is more than the thread's {} acquires", t.overlaps, t.acquires));
    t.rmw_attempts = j["rmw_attempts"].count();
    t.spin_iterations = j["spin_iterations"].count();
    t.sleeps = j.count_or("sleeps", 0);  // older files: none counted
    // Per-worker calibration; files written before it have none (0).
    t.burn_iterations_per_ns = j.non_negative_or("burn_iterations_per_ns", 0.0);
    t.critical_iterations = j.count_or("critical_iterations", 0);
    t.parallel_iterations = j.count_or("parallel_iterations", 0);
    t.critical_work_ns = j.non_negative_or("critical_work_ns", 0.0);
    t.parallel_work_ns = j.non_negative_or("parallel_work_ns", 0.0);
    t.cpu_ns = j["cpu_ns"].count();
    t.start_ns = j["start_ns"].count();
    t.end_ns = j["end_ns"].count();
    if (t.end_ns < t.start_ns)
        j["end_ns"].fail(fmt::format("{} is before start_ns {}", t.end_ns, t.start_ns));
    if (j.has("latency_ticks")) t.latency = histogram_from_json(j["latency_ticks"]);
    if (j.has("read_latency_ticks")) t.read_latency = histogram_from_json(j["read_latency_ticks"]);
    if (j.has("counters"))
        j["counters"].each([&](const Node& c) {
            measure::CounterReading reading{c["event"].string(), c["raw"].count(),
                                            c["enabled_ns"].count(), c["running_ns"].count()};
            if (reading.running_ns > reading.enabled_ns)
                c["running_ns"].fail(fmt::format("{} is more than enabled_ns {}",
                                                 reading.running_ns, reading.enabled_ns));
            t.counters.push_back(std::move(reading));
        });
    t.sampled = j.has("sampled") && j["sampled"].boolean();
    t.samples_lost = j.count_or("samples_lost", 0);
    // Files written before samples_pid: 0, "not recorded".
    const auto pid =
        static_cast<std::uint32_t>(j.has("samples_pid") ? j["samples_pid"].count32() : 0);
    if (j.has("samples"))
        j["samples"].each([&](const Node& row) {
            measure::RawSample sample;
            sample.ip = row[std::size_t{0}].count();
            sample.tid = row[1].count32();
            sample.time_ns = row[2].count();
            sample.weight = row[3].count();
            row[4].each([&](const Node& a) { sample.callchain.push_back(a.count()); });
            sample.pid = pid;
            t.samples.push_back(std::move(sample));
        });
    return t;
}

// One trial: its threads, and the window they define (wall_ns is first start to last end).
// With --lock-page huge (`huge`) its page, which only such a trial has.
workload::TrialResult trial_from_json(const Node& j, unsigned threads, bool huge) {
    workload::TrialResult trial;
    trial.trial = j["trial"].count32();
    if (huge) {
        const Node page = j["lock_page"];
        workload::LockPageUse use;
        use.page_size = page["page_size"].positive();
        if (!page["physical_address"].is_null()) {
            use.physical_address = page["physical_address"].count();
            if (*use.physical_address == 0)
                page["physical_address"].fail(
                    "is 0, which is no huge page's address (null: "
                    "not recorded)");
        }
        trial.lock_page = use;
    } else if (j.has("lock_page")) {
        j["lock_page"].fail("is set, but config.lock_page is not huge");
    }
    if (j.has("steal") && !j["steal"].is_null()) {  // older files, and unknown: null or absent
        const Node steal = j["steal"];
        workload::TrialSteal use;
        std::set<int> seen;
        steal["cpus"].each([&](const Node& cpu) {
            const int n = cpu.integer();
            if (n < 0 || !seen.insert(n).second)
                cpu.fail(fmt::format("{} is {}", n, n < 0 ? "not a CPU number" : "repeated"));
            use.cpus.push_back(n);
        });
        if (use.cpus.empty()) steal["cpus"].fail("is empty (null: steal not measured)");
        use.steal_ns = steal["steal_ns"].count();
        use.window_ns = steal["window_ns"].positive();
        use.tick_ns = steal["tick_ns"].positive();
        trial.steal = std::move(use);
    }
    trial.process = static_cast<unsigned>(j.count_or("process", 0));  // older files: 0
    trial.wall_ns = j["wall_ns"].positive();
    trial.ticks = j["ticks"].count();
    const Node list = j["threads"];
    if (list.size() != threads)
        list.fail(fmt::format("{}, but the cell ran {}", threads_text(list.size()), threads));
    std::set<unsigned> indices;
    list.each([&](const Node& th) {
        auto thread = thread_from_json(th);
        if (thread.index >= threads || !indices.insert(thread.index).second)
            th["index"].fail(fmt::format("{} is {} (threads are 0 to {}, each once)", thread.index,
                                         thread.index >= threads ? "out of range" : "repeated",
                                         threads - 1));
        trial.threads.push_back(std::move(thread));
    });
    std::uint64_t first_start = UINT64_MAX, last_end = 0;
    for (const auto& t : trial.threads) {
        first_start = std::min(first_start, t.start_ns);
        last_end = std::max(last_end, t.end_ns);
    }
    if (last_end - first_start != trial.wall_ns)
        j["wall_ns"].fail(
            fmt::format("{} is not the threads' window, first start_ns to last end_ns ({})",
                        trial.wall_ns, last_end - first_start));
    return trial;
}

// The summary is for scripts and is recomputed on reading, but where it is there it must say
// what the raw figures say: its trial count and each trial's acquires, the threads' sum.
void check_summary(const Node& summary, const workload::CellResult& cell) {
    if (summary["trials"].count() != cell.trials.size())
        summary["trials"].fail(fmt::format("{} trials, but the cell holds {}",
                                           summary["trials"].count(), cell.trials.size()));
    const Node acquires = summary["acquires"]["trials"];
    if (acquires.size() != cell.trials.size())
        acquires.fail(fmt::format("{} values for {} trials", acquires.size(), cell.trials.size()));
    for (std::size_t i = 0; i < cell.trials.size(); ++i) {
        std::uint64_t sum = 0;
        for (const auto& t : cell.trials[i].threads) sum += t.acquires;
        const double stated = acquires[i].non_negative();
        const double counted = static_cast<double>(sum);
        if (std::abs(stated - counted) > 1e-9 * std::max(1.0, counted))
            acquires[i].fail(
                fmt::format("{} acquires, but the trial's threads add up to {}", stated, sum));
    }
}

// A cell's verification trial(s) (workload::Verification): one per process at most.
workload::Verification verification_from_json(const Node& j, const workload::RunSpec& spec) {
    workload::Verification v;
    v.trials = j["trials"].count32();
    if (v.trials == 0 || v.trials > spec.processes)
        j["trials"].fail(
            fmt::format("is {}; a cell has 1 to config.processes ({}) verification "
                        "trials",
                        v.trials, spec.processes));
    v.acquires = j["acquires"].count();
    v.wall_ns = j["wall_ns"].count();
    v.overlaps = j["overlaps"].count();
    v.lost_updates = j["lost_updates"].count();
    if (v.overlaps > v.acquires)
        j["overlaps"].fail(
            fmt::format("{} is more than the {} acquires checked", v.overlaps, v.acquires));
    return v;
}

workload::CellResult cell_from_json(const Node& j, const workload::RunSpec& spec,
                                    bool interrupted) {
    workload::CellResult cell;
    cell.lock = j["lock"].string();
    if (cell.lock.empty()) j["lock"].fail("is empty");
    cell.algorithm = j["algorithm"].string();
    cell.flavour = j["flavour"].string();
    cell.delay = arch::parse_delay(j["delay"].string(), "cell delay in result");
    cell.threads = j["threads"].count32();
    if (cell.threads == 0) j["threads"].fail("is 0, and must be positive");
    cell.complete = j["complete"].boolean();
    cell.overlaps = j.count_or("overlaps", 0);  // older files lack it
    cell.lost_updates = j["lost_updates"].count();
    const Node trials = j["trials"];
    // --trials auto: each cell has its own count (spec.trials the minimum), trials 0 to n - 1.
    const bool adaptive = spec.max_time_ns.has_value();
    // --processes N: N * trials, numbered on from one process to the next.
    const std::size_t expected =
        adaptive ? trials.size() : static_cast<std::size_t>(spec.trials) * spec.processes;
    // A list of trials ("trials", or the observer-effect check's "plain_trials", numbered as
    // the trials they pair with): each number once, in range, each process one of the run's.
    const auto read_trials = [&](const Node& list, const char* what,
                                 std::vector<workload::TrialResult>& into) {
        std::set<unsigned> seen;
        list.each([&](const Node& jt) {
            auto trial =
                trial_from_json(jt, cell.threads, spec.work.lock_page == workload::LockPage::huge);
            if (trial.trial >= expected || !seen.insert(trial.trial).second)
                jt["trial"].fail(fmt::format("{} is {} ({} are 0 to {}, each once)", trial.trial,
                                             trial.trial >= expected ? "out of range" : "repeated",
                                             what, expected - 1));
            if (trial.process >= spec.processes)
                jt["process"].fail(fmt::format("{} is out of range (config.processes is {})",
                                               trial.process, spec.processes));
            into.push_back(std::move(trial));
        });
    };
    read_trials(trials, "trials", cell.trials);
    if (j.has("plain_trials")) {
        if (!spec.perturbation_check)
            j["plain_trials"].fail("is present, but config.perturbation_check is not set");
        read_trials(j["plain_trials"], "plain trials", cell.plain_trials);
    }
    if (cell.trials.empty() && !interrupted)
        trials.fail(fmt::format("{} with {} has no trials, yet the run was not interrupted",
                                cell.lock, threads_text(cell.threads)));
    if (j.has("stop")) {  // added later: older files derive it from `complete`
        const Node stop = j["stop"];
        const std::string reason = stop["reason"].string();
        bool known = false;
        for (auto r : {workload::TrialStop::planned, workload::TrialStop::settled,
                       workload::TrialStop::budget, workload::TrialStop::interrupted})
            if (reason == workload::trial_stop_name(r)) cell.stop = r, known = true;
        if (!known)
            stop["reason"].fail(fmt::format(
                "unknown reason '{}' (planned, settled, budget or interrupted)", reason));
        const bool automatic =
            cell.stop == workload::TrialStop::settled || cell.stop == workload::TrialStop::budget;
        if (automatic && !adaptive)
            stop["reason"].fail(fmt::format("is '{}', but config.trials_auto is not set", reason));
        if (cell.stop == workload::TrialStop::planned && adaptive)
            stop["reason"].fail("is 'planned', but config.trials_auto is set");
        if (automatic && cell.trials.size() < spec.trials)
            stop["trials"].fail(
                fmt::format("{} trials, below the minimum of {}", cell.trials.size(), spec.trials));
    } else {
        cell.stop = cell.complete ? workload::TrialStop::planned : workload::TrialStop::interrupted;
    }
    const bool complete =
        adaptive ? cell.stop != workload::TrialStop::interrupted : cell.trials.size() == expected;
    if (cell.complete != complete)
        j["complete"].fail(
            adaptive ? fmt::format("says {}, but the cell stopped as '{}'",
                                   cell.complete ? "true" : "false",
                                   workload::trial_stop_name(cell.stop))
                     : fmt::format("says {} with {} of the {} trials config.trials asks for",
                                   cell.complete ? "true" : "false", cell.trials.size(), expected));
    if (j.has("stop") && j["stop"]["trials"].count() != cell.trials.size())
        j["stop"]["trials"].fail(fmt::format("{} trials, but the cell holds {}",
                                             j["stop"]["trials"].count(), cell.trials.size()));
    if (!adaptive &&
        cell.stop != (complete ? workload::TrialStop::planned : workload::TrialStop::interrupted))
        j["stop"]["reason"].fail(
            fmt::format("is '{}' with {} of the {} trials config.trials asks for",
                        workload::trial_stop_name(cell.stop), cell.trials.size(), expected));
    if (j.has("verification") && !j["verification"].is_null())  // older files lack it
        cell.verification = verification_from_json(j["verification"], spec);
    std::uint64_t overlaps = cell.verification ? cell.verification->overlaps : 0;
    for (const auto* trials : {&cell.trials, &cell.plain_trials})
        for (const auto& t : *trials)
            for (const auto& th : t.threads) overlaps += th.overlaps;
    if (j.has("overlaps") && cell.overlaps != overlaps)
        j["overlaps"].fail(
            fmt::format("{}, but the verification's and the threads' overlaps add "
                        "up to {}",
                        cell.overlaps, overlaps));
    if (cell.verification && cell.lost_updates < cell.verification->lost_updates)
        j["lost_updates"].fail(fmt::format("{}, fewer than the verification's {}",
                                           cell.lost_updates, cell.verification->lost_updates));
    if (j.has("summary")) check_summary(j["summary"], cell);
    return cell;
}

// Why `doc` is not a run result, in one line: lockprof's other documents are named for what
// they are and what reads them.
std::string not_a_result(const json& doc) {
    const json* schema = doc.is_object() && doc.contains("schema") ? &doc["schema"] : nullptr;
    if (!schema || !schema->is_string())
        return "not a lockprof result (no \"schema\": \"lockprof.result\")";
    const auto name = schema->get<std::string>();
    if (name == kRecordSchemaName || name == kRecordSchemaNameV1)
        return "a `lockprof record` recording (schema lockprof.record), not a run result: "
               "compare and annotate read `lockprof run -o FILE` results; `lockprof report FILE "
               "-o REPORT.html` renders a recording";
    if (name == "lockprof.compare")
        return "a `lockprof compare` output (schema lockprof.compare), not a run result: give "
               "the run results it compared";
    return fmt::format("not a lockprof result (schema \"{}\", not \"lockprof.result\")", name);
}

}  // namespace

workload::RunResult result_from_json(const json& doc) {
    if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != kResultSchemaName)
        throw UsageError(not_a_result(doc));
    const Node root(doc);
    const int version = doc.contains("schema_version") && doc["schema_version"].is_number_integer()
                            ? doc["schema_version"].get<int>()
                            : -1;
    if (version != kResultSchemaVersion) {
        // Which lockprof wrote it, where the provenance says.
        std::string writer = "the lockprof version that wrote it";
        if (doc.contains("provenance") && doc["provenance"].is_object() &&
            doc["provenance"].contains("lockprof_version") &&
            doc["provenance"]["lockprof_version"].is_string())
            writer = fmt::format("lockprof {}, which wrote it",
                                 doc["provenance"]["lockprof_version"].get<std::string>());
        throw UsageError(fmt::format(
            "result schema version {} is not supported (this lockprof reads version {}); "
            "read it with {}",
            version, kResultSchemaVersion, writer));
    }
    workload::RunResult run;
    run.interrupted = root["interrupted"].boolean();
    if (root.has("interrupted_by") && !root["interrupted_by"].is_null())
        run.interrupted_by = root["interrupted_by"].string();
    run.provenance = provenance_from_json(root["provenance"]);
    run.spec = spec_from_json(root["config"]);
    const Node calibration = root["calibration"];
    run.calibration.burn_iterations_per_ns = calibration["burn_iterations_per_ns"].non_negative();
    run.calibration.ticks_per_ns = calibration["ticks_per_ns"].above_zero();
    run.notes = strings(root["notes"]);
    if (root.has("sampling"))
        run.sampling = sampling_from_json(root["sampling"], run.provenance.arch);
    root["cells"].each([&](const Node& jc) {
        run.cells.push_back(cell_from_json(jc, run.spec, run.interrupted));
    });
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

}  // namespace lockprof::results
