#include "lockprof/report/record_report.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/common/number_format.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/common/signal_name.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/text_table.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "lockprof/report/annotation_report.hpp"

namespace lockprof::report {
namespace {

using nlohmann::json;

std::string target_line(const record::RecordResult& r) {
    switch (r.mode) {
        case record::Mode::command:
            return fmt::format("command: {}", fmt::join(r.command, " "));
        case record::Mode::pid:
            return fmt::format("pids: {}", fmt::join(r.pids, ","));
        case record::Mode::match:
            return fmt::format("processes named '{}'", r.match);
    }
    return "";
}

std::string value_text(const std::optional<double>& v) {
    return v ? format_si(*v) : "not counted";
}

json counters_json(const std::vector<profiling::CounterReading>& readings) {
    json out = json::array();
    for (const auto& c : readings) {
        json j = {{"event", c.event},
                  {"raw", c.raw},
                  {"enabled_ns", c.enabled_ns},
                  {"running_ns", c.running_ns},
                  {"counted", c.running_ns > 0}};
        if (auto v = profiling::scaled_value(c)) j["value"] = *v;
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

}  // namespace

std::string spin_view_scope(const record::SpinView& view) {
    if (view.probed.empty()) return fmt::format("'{}'", view.pattern);
    return fmt::format("'{}' and --spin's {}", view.pattern, fmt::join(view.probed, ", "));
}

std::string spin_sentence(const record::RecordAnalysis& p) {
    if (p.samples == 0) return "no samples";
    if (p.spin.symbols.empty() && !p.spin.without_debug_info.empty()) {
        const auto& without = p.spin.without_debug_info;
        return fmt::format(
            "no samples are in functions matching {}, but {}{} {} no line or inline "
            "information (built without -g, or stripped), so a lock inlined into {} cannot be "
            "seen; rebuild with -g, which costs nothing at run time",
            spin_view_scope(p.spin),
            fmt::join(without.begin(), without.begin() + std::min<long>(3, without.size()), ", "),
            without.size() > 3 ? ", ..." : "", without.size() == 1 ? "has" : "have",
            without.size() == 1 ? "it" : "them");
    }
    if (p.spin.symbols.empty())
        return fmt::format("no samples are in functions matching {}", spin_view_scope(p.spin));
    std::vector<std::string> names;
    for (std::size_t i = 0; i < p.spin.symbols.size() && i < 3; ++i)
        names.push_back(p.spin.symbols[i].short_name);
    std::string out = fmt::format("{:.1f}% of samples are in {}{}", p.spin.share * 100,
                                  fmt::join(names, ", "), p.spin.symbols.size() > 3 ? ", ..." : "");
    if (!p.spin.hot_instructions.empty()) {
        const auto& hot = p.spin.hot_instructions.front();
        out += fmt::format(", {:.1f}% of those on `{}` in {}", hot.share_of_spin * 100, hot.text,
                           hot.symbol);
    }
    return out;
}

std::string failed_command_sentence(std::optional<int> exit_status) {
    if (!exit_status || *exit_status == 0) return "";
    const int status = *exit_status;
    const std::string how =
        status > 128 && status < 128 + 65
            ? fmt::format("was killed by {} (exit status {})", signal_name(status - 128), status)
            : fmt::format("exited with status {}", status);
    return fmt::format(
        "the command {}: what was recorded is a run that failed, and may not be the program's "
        "normal behaviour; its own output says why",
        how);
}

// "12.3 ms", "850 ns": a slow-path time.
std::string duration_text(double ns) {
    if (ns >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
    if (ns >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
    if (ns >= 1e3) return fmt::format("{:.2f} us", ns / 1e3);
    return fmt::format("{:.0f} ns", ns);
}

// "2.41 us a call (2.10-2.90, 7 rounds)": a calibrated cost.
std::string cost_text(const sampling::CostEstimate& c, const char* unit) {
    return fmt::format("{} a {} ({}-{}, {} rounds)", duration_text(c.ns), unit,
                       duration_text(c.low), duration_text(c.high), c.rounds);
}

std::string locks_text(const record::SpinSite& s) {
    if (s.locks.empty()) return "";
    std::string out = fmt::format("{:#x}", s.locks.front());
    if (s.distinct_locks > 1) out += fmt::format(" +{}", s.distinct_locks - 1);
    return out;
}

// A site's sampled call stacks (--call-graph dwarf), the most sampled first, up to 8.
json stacks_json(const record::SpinSite& site) {
    json out = json::array();
    for (std::size_t i = 0; i < site.stacks.size() && i < 8; ++i)
        out.push_back({{"frames", site.stacks[i].frames}, {"samples", site.stacks[i].samples}});
    return out;
}

// The --spin section: per call site, hottest (most time in the slow path) first.
std::string render_spin(const record::SpinProfile& s) {
    std::vector<std::string> names;
    for (const auto& f : s.functions)
        if (f.refused.empty())
            names.push_back(fmt::format("{} in {}", f.function, base_name(f.path)));
    std::string out =
        fmt::format("\nSpin slow paths (uprobes on {}): {} entries, {} in the slow path{}{}\n",
                    fmt::join(names, ", "), s.entries, duration_text(s.total_ns),
                    s.timed && s.timed < s.entries ? fmt::format(" ({} timed)", s.timed) : "",
                    s.sleeps ? fmt::format(", {} sleeps", *s.sleeps) : "");
    if (s.sites.empty()) {
        out += "  no entries: the probed functions were not called while recording\n";
    } else {
        // The sleeps column only when a probed function says how often it slept (s_lock).
        const bool sleeps = s.sleeps.has_value();
        using Align = TextTable::Align;
        std::vector<std::string> header{"entries", "total", "mean", "max"};
        std::vector<Align> align(4, Align::right);
        if (sleeps) {
            header.emplace_back("sleeps");
            align.push_back(Align::right);
        }
        header.insert(header.end(), {"lock", "procs", "function", "call site"});
        align.insert(align.end(), {Align::left, Align::right, Align::left, Align::left});
        TextTable table;
        table.set_header(header, align);
        for (const auto& site : s.sites) {
            std::vector<std::string> row{std::to_string(site.entries), duration_text(site.total_ns),
                                         site.timed ? duration_text(site.mean_ns) : "",
                                         site.timed ? duration_text(site.max_ns) : ""};
            if (sleeps) row.push_back(site.sleeps ? std::to_string(*site.sleeps) : "");
            row.insert(row.end(), {locks_text(site), std::to_string(site.processes), site.function,
                                   site.site});
            table.add_row(row);
        }
        out += table.render("  ");
        if (sleeps)
            out +=
                "  sleeps: times the slow path slept (s_lock's result: perform_spin_delay's "
                "pg_usleep calls), over the timed entries\n";
    }
    if (s.stack_size)
        out += fmt::format(
            "  call stacks: {} of {} entries' stacks (up to {} per call site, at random) "
            "unwound from {}-byte stack copies (--call-graph dwarf); --spin-folded and "
            "--spin-flamegraph split each site's time over them\n",
            s.stack_samples, s.stacks_seen, record::kSpinStacksPerSite, s.stack_size);
    for (const auto& n : s.notes) out += fmt::format("  {}\n", n);
    return out;
}

std::string instruments_sentence(const record::InstrumentCalibration& c,
                                 const record::InstrumentShare& s) {
    std::vector<std::string> parts;
    if (c.probe_call && s.probes_ns)
        parts.push_back(fmt::format("spin probes {} x {} calls = {}",
                                    cost_text(*c.probe_call, "call"), s.probe_calls,
                                    duration_text(*s.probes_ns)));
    if (c.sample && s.sampling_ns)
        parts.push_back(fmt::format("sampling {} x {} samples = {}", cost_text(*c.sample, "sample"),
                                    s.samples, duration_text(*s.sampling_ns)));
    for (const auto& p : c.problems) parts.push_back("not calibrated: " + p);
    std::string out = fmt::format("{}", fmt::join(parts, "; "));
    if (s.share)
        out += fmt::format(": about {:.1f}% of the targets' {} of CPU time ({})", *s.share * 100,
                           duration_text(*s.target_cpu_ns), s.target_cpu_source);
    else if (s.probes_ns || s.sampling_ns)
        out += ": their share is unknown (no task_clock counted: drop --no-counters)";
    return out;
}

std::string instruments_warning(const record::InstrumentCalibration& c,
                                const record::InstrumentShare& s) {
    if (!s.share || *s.share <= record::kInstrumentShareNote) return "";
    std::vector<std::string> lower;
    const double target = *s.target_cpu_ns;
    if (s.probes_ns && *s.probes_ns / target > record::kInstrumentShareNote / 2)
        lower.push_back(
            fmt::format("probe fewer functions or calls (--spin FUNC: each probed call costs {})",
                        duration_text(c.probe_call->ns)));
    if (s.sampling_ns && *s.sampling_ns / target > record::kInstrumentShareNote / 2)
        lower.push_back(fmt::format("sample less often (--sample-freq; each sample costs {})",
                                    duration_text(c.sample->ns)));
    return fmt::format(
        "the instruments took about {:.1f}% of the targets' CPU time, so the program ran "
        "slower than without them{}{}",
        *s.share * 100, lower.empty() ? "" : ": ", fmt::join(lower, ", or "));
}

std::string render_record(const record::RecordResult& r, const record::RecordAnalysis& p,
                          std::size_t top_symbols, unsigned listing_top) {
    const auto& pv = r.provenance;
    std::string out =
        fmt::format("lockprof {} record on {} {}, {} CPUs{}\n", pv.lockprof_version, pv.arch,
                    pv.cpu_model, pv.logical_cpus, pv.vm_hint.empty() ? "" : ", VM: " + pv.vm_hint);
    out += fmt::format("target: {}; recorded {:.2f} s{}{}\n", target_line(r), r.duration_s,
                       !r.interrupted             ? ""
                       : r.interrupted_by.empty() ? " (interrupted)"
                                                  : " (interrupted by " + r.interrupted_by + ")",
                       r.exit_status ? fmt::format("; exit status {}", *r.exit_status) : "");
    if (const auto failed = failed_command_sentence(r.exit_status); !failed.empty())
        out += fmt::format("warning: {}\n", failed);

    if (!r.events.empty()) {
        TextTable table;
        std::vector<std::string> header{"pid", "name", "threads"};
        std::vector<TextTable::Align> align{TextTable::Align::right, TextTable::Align::left,
                                            TextTable::Align::right};
        for (const auto& e : r.events) {
            header.push_back(e);
            align.push_back(TextTable::Align::right);
        }
        table.set_header(header, align);
        for (const auto& [index, totals] : p.per_process) {
            const auto& proc = r.processes[index];
            std::vector<std::string> row{
                std::to_string(proc.info.pid), proc.info.comm + (proc.exited ? " (exited)" : ""),
                proc.inherited.empty() ? std::to_string(proc.threads.size()) : "all"};
            for (const auto& t : totals) row.push_back(value_text(t.value));
            table.add_row(std::move(row));
        }
        std::vector<std::string> total{"", "total", ""};
        for (const auto& t : p.totals) total.push_back(value_text(t.value));
        table.add_row(std::move(total));
        std::vector<std::string> rate{"", "per second", ""};
        for (const auto& t : p.totals) rate.push_back(t.value ? format_si(t.per_second) : "");
        table.add_row(std::move(rate));
        out += "\nCounters (task_clock in ns; per process, the sum of its threads)\n";
        out += table.render("  ");
    }

    if (r.sampling) {
        const auto& s = *r.sampling;
        out += fmt::format(
            "\nHottest symbols - {} samples of {} ({}), {} lost{}\n", p.samples, s.event,
            s.frequency ? fmt::format("{} Hz", s.frequency) : fmt::format("every {}", s.period),
            r.samples_lost, s.event_note.empty() ? "" : "; " + s.event_note);
        out += fmt::format("  call stacks: {}\n", sampling::call_graph_summary(s));
        if (p.samples == 0) out += "  no samples: the targets did not run on a CPU\n";
        TextTable table;
        table.set_header({"share", "samples", "procs", "symbol", "module"},
                         {TextTable::Align::right, TextTable::Align::right, TextTable::Align::right,
                          TextTable::Align::left, TextTable::Align::left});
        for (std::size_t i = 0; i < p.hot_symbols.size() && i < top_symbols; ++i) {
            const auto& sym = p.hot_symbols[i];
            table.add_row({fmt::format("{:.2f}%", sym.share * 100), std::to_string(sym.samples),
                           std::to_string(sym.processes), sym.short_name, base_name(sym.module)});
        }
        if (p.unresolved_share > 0)
            table.add_row({fmt::format("{:.2f}%", p.unresolved_share * 100), "", "",
                           "[no symbol], all modules", ""});
        if (p.samples > 0) out += table.render("  ");
        if (p.samples > 0 && listing_top > 0) {
            out += fmt::format("\nAnnotation: the hottest functions ({})\n", s.precise_note);
            for (std::size_t i = 0; i < p.annotated.size() && i < listing_top; ++i)
                out += render_function_listing(p.annotated[i], "hottest loop");
        }
        out += fmt::format("\nSpin locks ({}): {}\n", spin_view_scope(p.spin), spin_sentence(p));
        for (const auto& sym : p.spin.symbols)
            out += fmt::format("  {:6.2f}%  {}  [{}]\n", sym.share * 100, sym.short_name,
                               base_name(sym.module));
        for (const auto& i : p.spin.hot_instructions)
            out += fmt::format("    {:5.1f}% of spin samples on {:x} `{}` in {}\n",
                               i.share_of_spin * 100, i.address, i.text, i.symbol);
        for (std::size_t i = listing_top; i < p.annotated.size(); ++i)
            if (p.lock_function[i]) out += render_function_listing(p.annotated[i], "hottest loop");
    }
    if (p.spin_calls) out += render_spin(*p.spin_calls);
    if (p.instruments && r.calibration) {
        out += fmt::format("\nInstruments (their cost calibrated here before attaching): {}\n",
                           instruments_sentence(*r.calibration, *p.instruments));
        if (const auto w = instruments_warning(*r.calibration, *p.instruments); !w.empty())
            out += fmt::format("warning: {}\n", w);
    }
    for (const auto& w : p.warnings) out += fmt::format("warning: {}\n", w);
    if (!r.notes.empty()) {
        out += "\n";
        for (const auto& n : r.notes) out += fmt::format("note: {}\n", n);
    }
    return out;
}

namespace {

// What was recorded: a command, pids, or processes matching a name.
json target_json(const record::RecordResult& r) {
    json target = {{"mode", record::mode_name(r.mode)}};
    if (r.mode == record::Mode::pid) target["pids"] = r.pids;
    if (r.mode == record::Mode::match) target["match"] = r.match;
    if (r.mode == record::Mode::command) target["command"] = r.command;
    return target;
}

// Each process with its threads, their counters and its samples.
json processes_json(const record::RecordResult& r, const record::RecordAnalysis& p) {
    json processes = json::array();
    for (std::size_t i = 0; i < r.processes.size(); ++i) {
        const auto& proc = r.processes[i];
        json threads = json::array();
        for (const auto& t : proc.threads)
            threads.push_back({{"tid", t.tid},
                               {"comm", t.comm},
                               {"attached", t.attached},
                               {"counters", counters_json(t.counters)}});
        json j = {{"pid", proc.info.pid},
                  {"comm", proc.info.comm},
                  {"exe", proc.info.exe},
                  {"uid", proc.info.uid},
                  {"exited", proc.exited},
                  {"seen_at_s", proc.seen_at_s},
                  {"problem", proc.problem},
                  {"threads", std::move(threads)},
                  {"samples", p.samples_per_process.count(i) ? p.samples_per_process.at(i) : 0}};
        if (auto it = p.per_process.find(i); it != p.per_process.end())
            j["counters"] = totals_json(it->second);
        else
            j["counters"] = json::array();
        if (!proc.inherited.empty()) j["inherited_counters"] = counters_json(proc.inherited);
        processes.push_back(std::move(j));
    }
    return processes;
}

// The sampling section (null when not sampled): the result file's, without the modules.
json record_sampling_json(const record::RecordResult& r, const record::RecordAnalysis& p) {
    if (!r.sampling) return nullptr;
    json s = sampling_json(*r.sampling);
    s.erase("modules");
    s["samples"] = p.samples;
    s["lost"] = r.samples_lost;
    s["unresolved_share"] = p.unresolved_share;
    s["kernel"] = r.sampling->kernel;
    s["sampled_cpu_share"] = p.sampled_cpu_share ? json(*p.sampled_cpu_share) : json(nullptr);
    return s;
}

// The hot functions instruction by instruction.
json annotations_json(const record::RecordAnalysis& p) {
    json annotations = json::array();
    for (const auto& f : p.annotated) {
        json insns = json::array();
        for (const auto& i : f.instructions)
            insns.push_back({{"address", fmt::format("{:#x}", i.instruction.address)},
                             {"text", i.instruction.text()},
                             {"listing", i.instruction.listing_text()},
                             {"source", i.source},
                             {"share", i.share},
                             {"in_loop", i.in_acquire_loop}});
        annotations.push_back({{"symbol", f.name},
                               {"short_name", f.short_name},
                               {"module", f.module},
                               {"share", f.share},
                               {"loop_rule", f.loop_rule},
                               {"error", f.error},
                               {"instructions", std::move(insns)}});
    }
    return annotations;
}

// The spin-lock view: its functions and their hottest instructions.
json spin_locks_json(const record::RecordAnalysis& p) {
    json spin_symbols = json::array();
    for (const auto& sym : p.spin.symbols) spin_symbols.push_back(symbol_json(sym));
    json spin_hot = json::array();
    for (const auto& i : p.spin.hot_instructions)
        spin_hot.push_back({{"symbol", i.symbol},
                            {"module", i.module},
                            {"address", fmt::format("{:#x}", i.address)},
                            {"text", i.text},
                            {"share_of_spin", i.share_of_spin},
                            {"share", i.share}});
    return {{"pattern", p.spin.pattern},
            {"probed_functions", p.spin.probed},
            {"share", p.spin.share},
            {"summary", spin_sentence(p)},
            {"symbols", std::move(spin_symbols)},
            {"hot_instructions", std::move(spin_hot)}};
}

// The instruments' calibrated cost and their share of the targets' CPU time (null without).
json instrument_cost_json(const record::RecordResult& r, const record::RecordAnalysis& p) {
    if (!p.instruments || !r.calibration) return nullptr;
    const auto& c = *r.calibration;
    const auto& i = *p.instruments;
    const auto estimate = [](const std::optional<sampling::CostEstimate>& e) -> json {
        if (!e) return nullptr;
        return {{"ns", e->ns},
                {"low_ns", e->low},
                {"high_ns", e->high},
                {"rounds", e->rounds},
                {"measured", e->units}};
    };
    const auto optional = [](const std::optional<double>& v) -> json {
        return v ? json(*v) : json(nullptr);
    };
    return {{"calibration",
             {{"probe_call", estimate(c.probe_call)},
              {"sample", estimate(c.sample)},
              {"sample_frequency", c.sample_frequency},
              {"problems", c.problems}}},
            {"probe_calls", i.probe_calls},
            {"samples", i.samples},
            {"probes_ns", optional(i.probes_ns)},
            {"sampling_ns", optional(i.sampling_ns)},
            {"target_cpu_ns", optional(i.target_cpu_ns)},
            {"target_cpu_source", i.target_cpu_source},
            {"share", optional(i.share)},
            {"summary", instruments_sentence(c, i)},
            {"warning", instruments_warning(c, i)}};
}

// --spin's probed functions and call sites (null without --spin).
json spin_calls_json(const record::RecordResult& r, const record::RecordAnalysis& p) {
    if (!p.spin_calls) return nullptr;
    const auto& sc = *p.spin_calls;
    json functions = json::array();
    for (std::size_t i = 0; i < sc.functions.size(); ++i) {
        const auto& f = sc.functions[i];
        const auto& probe = r.spin->probes[i];
        functions.push_back({{"function", f.function},
                             {"path", f.path},
                             {"address", fmt::format("{:#x}", probe.address)},
                             {"file_offset", fmt::format("{:#x}", probe.file_offset)},
                             {"entries", f.entries},
                             {"kernel_entries", f.kernel_entries},
                             {"refused", f.refused},
                             {"total_ns", f.total_ns},
                             {"sleeps", f.sleeps ? json(*f.sleeps) : json()}});
    }
    json sites = json::array();
    for (const auto& site : sc.sites) {
        json locks = json::array();
        for (auto l : site.locks) locks.push_back(fmt::format("{:#x}", l));
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
                         {"stacks", stacks_json(site)}});
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

}  // namespace

json record_to_json(const record::RecordResult& r, const record::RecordAnalysis& p) {
    json doc = {{"schema", kRecordSchemaName},
                {"schema_version", kRecordSchemaVersion},
                {"provenance", provenance_json(r.provenance)},
                {"target", target_json(r)},
                {"duration_s", r.duration_s},
                {"interrupted", r.interrupted},
                {"events", r.events},
                {"processes", processes_json(r, p)},
                {"totals", totals_json(p.totals)},
                {"notes", r.notes},
                {"warnings", p.warnings}};
    doc["exit_status"] = r.exit_status ? json(*r.exit_status) : json(nullptr);
    doc["interrupted_by"] = r.interrupted_by.empty() ? json(nullptr) : json(r.interrupted_by);
    doc["sampling"] = record_sampling_json(r, p);
    json hot = json::array();
    for (const auto& sym : p.hot_symbols) hot.push_back(symbol_json(sym));
    doc["hot_symbols"] = std::move(hot);
    doc["annotations"] = annotations_json(p);
    doc["spin_locks"] = spin_locks_json(p);
    doc["instrument_cost"] = instrument_cost_json(r, p);
    doc["spin_calls"] = spin_calls_json(r, p);
    return doc;
}

}  // namespace lockprof::report
