#include "lockprof/report/record_report.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/common/number_format.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/common/signal_name.hpp"
#include "lockprof/report/record_document.hpp"
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
    // The instruments run on the targets' own CPU time, so their real cost cannot exceed it; an
    // estimate that does says a hit cost less here than when calibrated.
    if (s.share && *s.share > 1)
        out += fmt::format(
            ": more than the targets' {} of CPU time ({}), which their real cost cannot be: a "
            "hit cost less here than in the calibration, and the instruments took most of that "
            "time",
            duration_text(*s.target_cpu_ns), s.target_cpu_source);
    else if (s.share)
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
    const std::string took =
        *s.share > 1 ? std::string("most of the targets' CPU time (the estimate exceeds it)")
                     : fmt::format("about {:.1f}% of the targets' CPU time", *s.share * 100);
    return fmt::format("the instruments took {}, so the program ran slower than without them{}{}",
                       took, lower.empty() ? "" : ": ", fmt::join(lower, ", or "));
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

json record_to_json(const record::RecordResult& r, const record::RecordAnalysis& p) {
    return to_json(record_document(r, p));
}

}  // namespace lockprof::report
