// The recording's document: computed from a recording, written as JSON, read back from JSON.
#include "lockprof/report/record_document.hpp"

#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/record_report.hpp"

namespace lockprof::report {

using nlohmann::json;

RecordDocument record_document(const record::RecordResult& r, const record::RecordAnalysis& p) {
    RecordDocument d;
    d.provenance = r.provenance;
    d.target = {r.mode, r.pids, r.match, r.command};
    d.duration_s = r.duration_s;
    d.interrupted = r.interrupted;
    d.interrupted_by = r.interrupted_by;
    d.exit_status = r.exit_status;
    d.events = r.events;
    for (std::size_t i = 0; i < r.processes.size(); ++i) {
        const auto& proc = r.processes[i];
        RecordProcess out;
        out.info = proc.info;
        out.exited = proc.exited;
        out.seen_at_s = proc.seen_at_s;
        out.problem = proc.problem;
        out.threads = proc.threads;
        if (auto it = p.samples_per_process.find(i); it != p.samples_per_process.end())
            out.samples = it->second;
        if (auto it = p.per_process.find(i); it != p.per_process.end()) out.counters = it->second;
        out.inherited_counters = proc.inherited;
        d.processes.push_back(std::move(out));
    }
    d.totals = p.totals;
    d.notes = r.notes;
    d.warnings = p.warnings;
    if (r.sampling) {
        RecordSampling s{*r.sampling, p.samples, r.samples_lost, p.unresolved_share,
                         p.sampled_cpu_share};
        s.info.modules.clear();
        d.sampling = std::move(s);
    }
    d.hot_symbols = p.hot_symbols;
    for (const auto& f : p.annotated) {
        RecordAnnotation a{f.name, f.short_name, f.module, f.share, f.loop_rule, f.error, {}};
        for (const auto& i : f.instructions)
            a.instructions.push_back({i.instruction.address, i.instruction.text(),
                                      i.instruction.listing_text(), i.source, i.share,
                                      i.in_acquire_loop});
        d.annotations.push_back(std::move(a));
    }
    d.spin_locks = {p.spin.pattern,   p.spin.probed,  p.spin.share,
                    spin_sentence(p), p.spin.symbols, p.spin.hot_instructions};
    if (p.instruments && r.calibration)
        d.instrument_cost = RecordInstrumentCost{
            *r.calibration, *p.instruments, instruments_sentence(*r.calibration, *p.instruments),
            instruments_warning(*r.calibration, *p.instruments)};
    if (p.spin_calls) {
        RecordSpinCalls sc;
        sc.profile = *p.spin_calls;
        for (std::size_t i = 0; i < sc.profile.functions.size(); ++i)
            sc.functions.push_back({sc.profile.functions[i], r.spin->probes[i].address,
                                    r.spin->probes[i].file_offset});
        sc.profile.functions.clear();
        for (auto& site : sc.profile.sites)
            if (site.stacks.size() > kRecordSpinStacks) site.stacks.resize(kRecordSpinStacks);
        d.spin_calls = std::move(sc);
    }
    return d;
}

// Writing.
namespace record_document_detail {

std::string hex(std::uint64_t value) {
    return fmt::format("{:#x}", value);
}

json counters_json(const std::vector<measure::CounterReading>& readings) {
    json out = json::array();
    for (const auto& c : readings) {
        json j = {{"event", c.event},
                  {"raw", c.raw},
                  {"enabled_ns", c.enabled_ns},
                  {"running_ns", c.running_ns},
                  {"counted", c.running_ns > 0}};
        if (auto v = measure::scaled_value(c)) j["value"] = *v;
        out.push_back(std::move(j));
    }
    return out;
}

json totals_json(const std::vector<record::CounterTotal>& totals) {
    json out = json::array();
    for (const auto& t : totals) {
        json j = {{"event", t.event}, {"counted", t.value.has_value()}};
        if (t.value) j["value"] = *t.value, j["per_second"] = t.per_second;
        out.push_back(std::move(j));
    }
    return out;
}

json symbol_json(const record::SymbolShare& s) {
    json j = {{"symbol", s.symbol},      {"short_name", s.short_name}, {"module", s.module},
              {"samples", s.samples},    {"weight", s.weight},         {"share", s.share},
              {"processes", s.processes}};
    if (!s.inlined_into.empty()) j["inlined_into"] = s.inlined_into;
    return j;
}

json symbols_json(const std::vector<record::SymbolShare>& symbols) {
    json out = json::array();
    for (const auto& sym : symbols) out.push_back(symbol_json(sym));
    return out;
}

json optional_json(const auto& v) {
    return v ? json(*v) : json(nullptr);
}

json target_json(const RecordTarget& t) {
    json target = {{"mode", record::mode_name(t.mode)}};
    if (t.mode == record::Mode::pid) target["pids"] = t.pids;
    if (t.mode == record::Mode::match) target["match"] = t.match;
    if (t.mode == record::Mode::command) target["command"] = t.command;
    return target;
}

json processes_json(const std::vector<RecordProcess>& processes) {
    json out = json::array();
    for (const auto& proc : processes) {
        json threads = json::array();
        for (const auto& t : proc.threads)
            threads.push_back({{"tid", t.tid},
                               {"comm", t.comm},
                               {"attached", t.attached},
                               {"counters", counters_json(t.counters)}});
        json j = {{"pid", proc.info.pid},    {"comm", proc.info.comm},
                  {"exe", proc.info.exe},    {"uid", proc.info.uid},
                  {"exited", proc.exited},   {"seen_at_s", proc.seen_at_s},
                  {"problem", proc.problem}, {"threads", std::move(threads)},
                  {"samples", proc.samples}, {"counters", totals_json(proc.counters)}};
        if (!proc.inherited_counters.empty())
            j["inherited_counters"] = counters_json(proc.inherited_counters);
        out.push_back(std::move(j));
    }
    return out;
}

json sampling_section_json(const RecordSampling& s) {
    json out = sampling_json(s.info);
    out.erase("modules");
    out["samples"] = s.samples;
    out["lost"] = s.lost;
    out["unresolved_share"] = s.unresolved_share;
    out["kernel"] = s.info.kernel;
    out["sampled_cpu_share"] = optional_json(s.sampled_cpu_share);
    return out;
}

json annotations_json(const std::vector<RecordAnnotation>& annotations) {
    json out = json::array();
    for (const auto& f : annotations) {
        json insns = json::array();
        for (const auto& i : f.instructions)
            insns.push_back({{"address", hex(i.address)},
                             {"text", i.text},
                             {"listing", i.listing},
                             {"source", i.source},
                             {"share", i.share},
                             {"in_loop", i.in_loop}});
        out.push_back({{"symbol", f.symbol},
                       {"short_name", f.short_name},
                       {"module", f.module},
                       {"share", f.share},
                       {"loop_rule", f.loop_rule},
                       {"error", f.error},
                       {"instructions", std::move(insns)}});
    }
    return out;
}

json spin_locks_json(const RecordSpinLocks& s) {
    json hot = json::array();
    for (const auto& i : s.hot_instructions)
        hot.push_back({{"symbol", i.symbol},
                       {"module", i.module},
                       {"address", hex(i.address)},
                       {"text", i.text},
                       {"share_of_spin", i.share_of_spin},
                       {"share", i.share}});
    return {{"pattern", s.pattern},
            {"probed_functions", s.probed_functions},
            {"share", s.share},
            {"summary", s.summary},
            {"symbols", symbols_json(s.symbols)},
            {"hot_instructions", std::move(hot)}};
}

json estimate_json(const std::optional<sampling::CostEstimate>& e) {
    if (!e) return nullptr;
    return {{"ns", e->ns},
            {"low_ns", e->low},
            {"high_ns", e->high},
            {"rounds", e->rounds},
            {"measured", e->units}};
}

json instrument_cost_json(const RecordInstrumentCost& cost) {
    const auto& c = cost.calibration;
    const auto& i = cost.share;
    return {{"calibration",
             {{"probe_call", estimate_json(c.probe_call)},
              {"sample", estimate_json(c.sample)},
              {"sample_frequency", c.sample_frequency},
              {"problems", c.problems}}},
            {"probe_calls", i.probe_calls},
            {"samples", i.samples},
            {"probes_ns", optional_json(i.probes_ns)},
            {"sampling_ns", optional_json(i.sampling_ns)},
            {"target_cpu_ns", optional_json(i.target_cpu_ns)},
            {"target_cpu_source", i.target_cpu_source},
            {"share", optional_json(i.share)},
            {"summary", cost.summary},
            {"warning", cost.warning}};
}

json spin_calls_json(const RecordSpinCalls& calls) {
    const auto& sc = calls.profile;
    json functions = json::array();
    for (const auto& [f, address, file_offset] : calls.functions)
        functions.push_back({{"function", f.function},
                             {"path", f.path},
                             {"address", hex(address)},
                             {"file_offset", hex(file_offset)},
                             {"entries", f.entries},
                             {"kernel_entries", f.kernel_entries},
                             {"refused", f.refused},
                             {"total_ns", f.total_ns},
                             {"sleeps", f.sleeps ? json(*f.sleeps) : json()}});
    json sites = json::array();
    for (const auto& site : sc.sites) {
        json locks = json::array();
        for (auto l : site.locks) locks.push_back(hex(l));
        json stacks = json::array();
        for (std::size_t i = 0; i < site.stacks.size() && i < kRecordSpinStacks; ++i)
            stacks.push_back(
                {{"frames", site.stacks[i].frames}, {"samples", site.stacks[i].samples}});
        sites.push_back({{"function", site.function},
                         {"site", site.site},
                         {"file", site.file},
                         {"line", site.line},
                         {"caller", site.caller},
                         {"module", site.module},
                         {"entries", site.entries},
                         {"timed", site.timed},
                         {"total_ns", site.total_ns},
                         {"mean_ns", site.mean_ns},
                         {"max_ns", site.max_ns},
                         {"sleeps", site.sleeps ? json(*site.sleeps) : json()},
                         {"locks", std::move(locks)},
                         {"distinct_locks", site.distinct_locks},
                         {"processes", site.processes},
                         {"stacks", std::move(stacks)}});
    }
    return {{"functions", std::move(functions)},
            {"searched", sc.searched},
            {"entries", sc.entries},
            {"timed", sc.timed},
            {"total_ns", sc.total_ns},
            {"sleeps", sc.sleeps ? json(*sc.sleeps) : json()},
            {"sites", std::move(sites)},
            {"call_graph", sc.stack_size ? "dwarf" : "fp"},
            {"stack_size", sc.stack_size},
            {"stacks_seen", sc.stacks_seen},
            {"stack_samples", sc.stack_samples},
            {"notes", sc.notes}};
}

}  // namespace record_document_detail

json to_json(const RecordDocument& d) {
    namespace rd = record_document_detail;
    json doc = {{"schema", kRecordSchemaName},
                {"schema_version", kRecordSchemaVersion},
                {"provenance", provenance_json(d.provenance)},
                {"target", rd::target_json(d.target)},
                {"duration_s", d.duration_s},
                {"interrupted", d.interrupted},
                {"events", d.events},
                {"processes", rd::processes_json(d.processes)},
                {"totals", rd::totals_json(d.totals)},
                {"notes", d.notes},
                {"warnings", d.warnings}};
    doc["exit_status"] = rd::optional_json(d.exit_status);
    doc["interrupted_by"] = d.interrupted_by.empty() ? json(nullptr) : json(d.interrupted_by);
    doc["sampling"] = d.sampling ? rd::sampling_section_json(*d.sampling) : json(nullptr);
    doc["hot_symbols"] = rd::symbols_json(d.hot_symbols);
    doc["annotations"] = rd::annotations_json(d.annotations);
    doc["spin_locks"] = rd::spin_locks_json(d.spin_locks);
    doc["instrument_cost"] =
        d.instrument_cost ? rd::instrument_cost_json(*d.instrument_cost) : nullptr;
    doc["spin_calls"] = d.spin_calls ? rd::spin_calls_json(*d.spin_calls) : nullptr;
    return doc;
}

// Reading. What the HTML report shows must be there (`at`: nlohmann's message names the key);
// the rest takes its default where absent (`or_default`), as recordings written before it had
// it. A part of the wrong type is refused either way.
namespace record_document_detail {

[[noreturn]] void incomplete(const std::string& why) {
    throw UsageError(fmt::format(
        "not a complete lockprof recording ({}); give the JSON `lockprof record --output` wrote",
        why));
}

// A whole number of type T as the writer puts there (`what` names it). A real number, or one
// outside T's range, is refused: nlohmann's own conversion is a cast, undefined behaviour out of
// range.
template <typename T>
T whole_value(const json& v, const char* what) {
    if (v.is_number_unsigned()) {
        if (const auto n = v.get<std::uint64_t>(); std::in_range<T>(n)) return static_cast<T>(n);
    } else if (v.is_number_integer()) {
        if (const auto n = v.get<std::int64_t>(); std::in_range<T>(n)) return static_cast<T>(n);
    }
    incomplete(fmt::format("\"{}\": {} is not a whole number it can hold", what, v.dump()));
}

// An address as the writer puts it, "0x8ff73".
std::uint64_t hex_address(const json& v) {
    const auto text = v.get<std::string>();
    const std::string_view digits = std::string_view(text).substr(text.starts_with("0x") ? 2 : 0);
    std::uint64_t address = 0;
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), address, 16);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size())
        incomplete(fmt::format("\"address\": \"{}\" is not a hex address", text));
    return address;
}

// Reads j[key] into `out`: required (`at`) or, with a default, only where present.
template <typename T>
void value(const json& v, const char* key, T& out) {
    if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T> ||
                  !std::is_arithmetic_v<T>)
        out = v.get<T>();
    else
        out = whole_value<T>(v, key);
}

template <typename T>
T at(const json& j, const char* key) {
    T out{};
    value(j.at(key), key, out);
    return out;
}

template <typename T>
void or_default(const json& j, const char* key, T& out) {
    if (j.contains(key)) value(j.at(key), key, out);
}

template <typename T>
std::optional<T> nullable(const json& j, const char* key, bool required) {
    if (!required && !j.contains(key)) return std::nullopt;
    const json& v = j.at(key);
    if (v.is_null()) return std::nullopt;
    T out{};
    value(v, key, out);
    return out;
}

workload::Provenance provenance_from(const json& j) {
    workload::Provenance p;
    p.lockprof_version = at<std::string>(j, "lockprof_version");
    p.git_revision = at<std::string>(j, "git_revision");
    p.command_line = at<std::string>(j, "command_line");
    p.timestamp_utc = at<std::string>(j, "timestamp_utc");
    p.hostname = at<std::string>(j, "hostname");
    p.arch = at<std::string>(j, "arch");
    p.cpu_model = at<std::string>(j, "cpu_model");
    or_default(j, "cpu_vendor", p.cpu_vendor);
    or_default(j, "midr", p.midr);
    or_default(j, "lse", p.lse);
    or_default(j, "spe", p.spe);
    p.logical_cpus = at<unsigned>(j, "logical_cpus");
    p.kernel = at<std::string>(j, "kernel");
    p.perf_event_paranoid = at<int>(j, "perf_event_paranoid");
    p.vm_hint = at<std::string>(j, "vm_hint");
    or_default(j, "compiler", p.compiler);
    or_default(j, "compiler_flags", p.compiler_flags);
    or_default(j, "build_type", p.build_type);
    or_default(j, "assertions", p.assertions);
    or_default(j, "cpufreq_governor", p.cpufreq_governor);
    or_default(j, "cpu_boost", p.cpu_boost);
    return p;
}

RecordTarget target_from(const json& j) {
    RecordTarget t;
    const auto mode = at<std::string>(j, "mode");
    if (mode == "command") {
        t.mode = record::Mode::command;
        t.command = at<std::vector<std::string>>(j, "command");
    } else if (mode == "pid") {
        t.mode = record::Mode::pid;
        for (const auto& pid : j.at("pids")) t.pids.push_back(whole_value<pid_t>(pid, "pids"));
    } else {
        t.mode = record::Mode::match;
        t.match = at<std::string>(j, "match");
    }
    return t;
}

// A reading's "counted" and "value" are derived from the others: not read.
std::vector<measure::CounterReading> readings_from(const json& j) {
    std::vector<measure::CounterReading> out;
    for (const auto& c : j) {
        measure::CounterReading r;
        or_default(c, "event", r.event);
        or_default(c, "raw", r.raw);
        or_default(c, "enabled_ns", r.enabled_ns);
        or_default(c, "running_ns", r.running_ns);
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<record::CounterTotal> totals_from(const json& j) {
    std::vector<record::CounterTotal> out;
    for (const auto& t : j) {
        record::CounterTotal total;
        or_default(t, "event", total.event);
        if (at<bool>(t, "counted")) {
            total.value = at<double>(t, "value");
            total.per_second = at<double>(t, "per_second");
        }
        out.push_back(std::move(total));
    }
    return out;
}

std::vector<RecordProcess> processes_from(const json& j) {
    std::vector<RecordProcess> out;
    for (const auto& p : j) {
        RecordProcess proc;
        proc.info.pid = at<pid_t>(p, "pid");
        proc.info.comm = at<std::string>(p, "comm");
        or_default(p, "exe", proc.info.exe);
        or_default(p, "uid", proc.info.uid);
        proc.exited = at<bool>(p, "exited");
        or_default(p, "seen_at_s", proc.seen_at_s);
        or_default(p, "problem", proc.problem);
        for (const auto& t : p.at("threads")) {
            record::TaskRecord task;
            or_default(t, "tid", task.tid);
            or_default(t, "comm", task.comm);
            or_default(t, "attached", task.attached);
            if (t.contains("counters")) task.counters = readings_from(t.at("counters"));
            proc.threads.push_back(std::move(task));
        }
        or_default(p, "samples", proc.samples);
        proc.counters = totals_from(p.at("counters"));
        if (p.contains("inherited_counters"))
            proc.inherited_counters = readings_from(p.at("inherited_counters"));
        out.push_back(std::move(proc));
    }
    return out;
}

measure::Skid skid_from(const std::string& name) {
    for (auto skid : {measure::Skid::arbitrary, measure::Skid::constant, measure::Skid::zero})
        if (measure::skid_name(skid) == name) return skid;
    incomplete(fmt::format("\"skid\": \"{}\" is not arbitrary, constant or zero", name));
}

RecordSampling sampling_from(const json& j) {
    RecordSampling s;
    auto& i = s.info;
    or_default(j, "sampler", i.sampler);
    or_default(j, "sampler_reason", i.sampler_reason);
    or_default(j, "requested_event", i.requested_event);
    i.event = at<std::string>(j, "event");
    i.event_note = at<std::string>(j, "event_note");
    i.period = at<std::uint64_t>(j, "period");
    i.frequency = at<std::uint64_t>(j, "frequency");
    or_default(j, "precise_ip", i.precise_ip);
    if (j.contains("skid")) i.skid = skid_from(at<std::string>(j, "skid"));
    i.precise_note = at<std::string>(j, "precise_note");
    or_default(j, "kernel", i.kernel);
    // Recordings written before --call-graph existed took frame-pointer stacks.
    or_default(j, "call_graph", i.call_graph);
    or_default(j, "stack_size", i.stack_size);
    or_default(j, "call_graph_note", i.call_graph_note);
    or_default(j, "unwound", i.unwound);
    or_default(j, "unwound_without_callers", i.unwound_without_callers);
    or_default(j, "unwind_s", i.unwind_seconds);
    s.samples = at<std::uint64_t>(j, "samples");
    s.lost = at<std::uint64_t>(j, "lost");
    s.unresolved_share = at<double>(j, "unresolved_share");
    s.sampled_cpu_share = nullable<double>(j, "sampled_cpu_share", false);
    return s;
}

record::SymbolShare symbol_from(const json& j) {
    record::SymbolShare s;
    or_default(j, "symbol", s.symbol);
    s.short_name = at<std::string>(j, "short_name");
    s.module = at<std::string>(j, "module");
    s.samples = at<std::uint64_t>(j, "samples");
    or_default(j, "weight", s.weight);
    s.share = at<double>(j, "share");
    s.processes = at<std::size_t>(j, "processes");
    or_default(j, "inlined_into", s.inlined_into);
    return s;
}

std::vector<RecordAnnotation> annotations_from(const json& j) {
    std::vector<RecordAnnotation> out;
    for (const auto& a : j) {
        RecordAnnotation f;
        f.symbol = at<std::string>(a, "symbol");
        f.short_name = at<std::string>(a, "short_name");
        f.module = at<std::string>(a, "module");
        f.share = at<double>(a, "share");
        f.loop_rule = at<std::string>(a, "loop_rule");
        f.error = at<std::string>(a, "error");
        for (const auto& i : a.at("instructions")) {
            RecordInstruction insn;
            insn.address = hex_address(i.at("address"));
            or_default(i, "text", insn.text);
            insn.listing = at<std::string>(i, "listing");
            insn.source = at<std::string>(i, "source");
            insn.share = at<double>(i, "share");
            insn.in_loop = at<bool>(i, "in_loop");
            f.instructions.push_back(std::move(insn));
        }
        out.push_back(std::move(f));
    }
    return out;
}

RecordSpinLocks spin_locks_from(const json& j) {
    RecordSpinLocks s;
    s.pattern = at<std::string>(j, "pattern");
    or_default(j, "probed_functions", s.probed_functions);
    or_default(j, "share", s.share);
    s.summary = at<std::string>(j, "summary");
    for (const auto& sym : j.at("symbols")) {
        record::SymbolShare share = symbol_from(sym);
        s.symbols.push_back(std::move(share));
    }
    for (const auto& i : j.at("hot_instructions")) {
        record::SpinInstruction insn;
        insn.symbol = at<std::string>(i, "symbol");
        or_default(i, "module", insn.module);
        insn.address = hex_address(i.at("address"));
        insn.text = at<std::string>(i, "text");
        insn.share_of_spin = at<double>(i, "share_of_spin");
        or_default(i, "share", insn.share);
        s.hot_instructions.push_back(std::move(insn));
    }
    return s;
}

std::optional<sampling::CostEstimate> estimate_from(const json& j, const char* key) {
    if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
    const json& e = j.at(key);
    sampling::CostEstimate c;
    or_default(e, "ns", c.ns);
    or_default(e, "low_ns", c.low);
    or_default(e, "high_ns", c.high);
    or_default(e, "rounds", c.rounds);
    or_default(e, "measured", c.units);
    return c;
}

RecordInstrumentCost instrument_cost_from(const json& j) {
    RecordInstrumentCost cost;
    if (j.contains("calibration")) {
        const json& c = j.at("calibration");
        cost.calibration.probe_call = estimate_from(c, "probe_call");
        cost.calibration.sample = estimate_from(c, "sample");
        or_default(c, "sample_frequency", cost.calibration.sample_frequency);
        or_default(c, "problems", cost.calibration.problems);
    }
    auto& s = cost.share;
    or_default(j, "probe_calls", s.probe_calls);
    or_default(j, "samples", s.samples);
    s.probes_ns = nullable<double>(j, "probes_ns", false);
    s.sampling_ns = nullable<double>(j, "sampling_ns", false);
    s.target_cpu_ns = nullable<double>(j, "target_cpu_ns", false);
    or_default(j, "target_cpu_source", s.target_cpu_source);
    s.share = nullable<double>(j, "share", false);
    cost.summary = at<std::string>(j, "summary");
    cost.warning = at<std::string>(j, "warning");
    return cost;
}

RecordSpinCalls spin_calls_from(const json& j) {
    RecordSpinCalls calls;
    for (const auto& f : j.at("functions")) {
        RecordSpinFunction out;
        out.function.function = at<std::string>(f, "function");
        out.function.path = at<std::string>(f, "path");
        if (f.contains("address")) out.address = hex_address(f.at("address"));
        if (f.contains("file_offset")) out.file_offset = hex_address(f.at("file_offset"));
        or_default(f, "entries", out.function.entries);
        or_default(f, "kernel_entries", out.function.kernel_entries);
        out.function.refused = at<std::string>(f, "refused");
        or_default(f, "total_ns", out.function.total_ns);
        out.function.sleeps = nullable<std::uint64_t>(f, "sleeps", false);
        calls.functions.push_back(std::move(out));
    }
    auto& sc = calls.profile;
    or_default(j, "searched", sc.searched);
    sc.entries = at<std::uint64_t>(j, "entries");
    or_default(j, "timed", sc.timed);
    sc.total_ns = at<double>(j, "total_ns");
    sc.sleeps = nullable<std::uint64_t>(j, "sleeps", false);
    for (const auto& s : j.at("sites")) {
        record::SpinSite site;
        site.function = at<std::string>(s, "function");
        site.site = at<std::string>(s, "site");
        or_default(s, "file", site.file);
        or_default(s, "line", site.line);
        or_default(s, "caller", site.caller);
        or_default(s, "module", site.module);
        site.entries = at<std::uint64_t>(s, "entries");
        site.timed = at<std::uint64_t>(s, "timed");
        site.total_ns = at<double>(s, "total_ns");
        site.mean_ns = at<double>(s, "mean_ns");
        site.max_ns = at<double>(s, "max_ns");
        site.sleeps = nullable<std::uint64_t>(s, "sleeps", false);
        if (s.contains("locks"))
            for (const auto& l : s.at("locks")) site.locks.push_back(hex_address(l));
        or_default(s, "distinct_locks", site.distinct_locks);
        site.processes = at<std::size_t>(s, "processes");
        if (s.contains("stacks"))
            for (const auto& st : s.at("stacks")) {
                record::SpinSite::Stack stack;
                or_default(st, "frames", stack.frames);
                or_default(st, "samples", stack.samples);
                site.stacks.push_back(std::move(stack));
            }
        sc.sites.push_back(std::move(site));
    }
    // "call_graph" says whether stack_size is 0: not read.
    or_default(j, "stack_size", sc.stack_size);
    or_default(j, "stacks_seen", sc.stacks_seen);
    or_default(j, "stack_samples", sc.stack_samples);
    sc.notes = at<std::vector<std::string>>(j, "notes");
    return calls;
}

RecordDocument document_from(const json& doc) {
    if (!is_recording(doc))
        throw UsageError("not a `lockprof record` recording (no \"schema\": \"lockprof.record\")");
    // Version 1 named its version "version"; its content is version 2's.
    const bool v1 = doc["schema"] == kRecordSchemaNameV1;
    const char* version_key = v1 ? "version" : "schema_version";
    const int expected = v1 ? 1 : kRecordSchemaVersion;
    if (!doc.contains(version_key) || doc[version_key] != expected)
        throw UsageError(fmt::format(
            "recording schema version {} is not supported (this lockprof reads version {}); use "
            "the lockprof version that wrote it",
            doc.contains(version_key) ? doc[version_key].dump() : "(none)", expected));
    RecordDocument d;
    d.provenance = provenance_from(doc.at("provenance"));
    d.target = target_from(doc.at("target"));
    d.duration_s = at<double>(doc, "duration_s");
    d.interrupted = at<bool>(doc, "interrupted");
    if (auto by = nullable<std::string>(doc, "interrupted_by", true)) d.interrupted_by = *by;
    d.exit_status = nullable<int>(doc, "exit_status", true);
    d.events = at<std::vector<std::string>>(doc, "events");
    d.processes = processes_from(doc.at("processes"));
    d.totals = totals_from(doc.at("totals"));
    d.notes = at<std::vector<std::string>>(doc, "notes");
    d.warnings = at<std::vector<std::string>>(doc, "warnings");
    if (!doc.at("sampling").is_null()) d.sampling = sampling_from(doc.at("sampling"));
    for (const auto& sym : doc.at("hot_symbols")) d.hot_symbols.push_back(symbol_from(sym));
    d.annotations = annotations_from(doc.at("annotations"));
    d.spin_locks = spin_locks_from(doc.at("spin_locks"));
    // Recordings written before the calibration have no "instrument_cost".
    if (doc.contains("instrument_cost") && !doc.at("instrument_cost").is_null())
        d.instrument_cost = instrument_cost_from(doc.at("instrument_cost"));
    if (!doc.at("spin_calls").is_null()) d.spin_calls = spin_calls_from(doc.at("spin_calls"));
    return d;
}

}  // namespace record_document_detail

RecordDocument record_document_from_json(const json& doc) {
    try {
        return record_document_detail::document_from(doc);
    } catch (const json::exception& e) {
        record_document_detail::incomplete(e.what());
    }
}

RecordDocument record_document_as_read(const record::RecordResult& result,
                                       const record::RecordAnalysis& profile) {
    return record_document_from_json(
        json::parse(json_text(to_json(record_document(result, profile)), 1)));
}

bool is_recording(const json& doc) {
    return doc.is_object() && doc.contains("schema") &&
           (doc["schema"] == kRecordSchemaName || doc["schema"] == kRecordSchemaNameV1);
}

std::optional<json> read_recording(const std::string& path) {
    // Unreadable, not JSON or not a recording: the result reader says what is wrong with it.
    json doc = json::parse(read_all(path), nullptr, false);
    if (doc.is_discarded() || !is_recording(doc)) return std::nullopt;
    return doc;
}

}  // namespace lockprof::report
