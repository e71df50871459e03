#include "lockprof/report/html_report.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "lockprof/common/parse.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/report/plot.hpp"
#include "lockprof/report/run_report.hpp"
#include "lockprof/report/text_table.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "lockprof/workload/provenance.hpp"
#include "report/html_page.hpp"
#include "lockprof/common/number_format.hpp"
#include "lockprof/report/annotation_report.hpp"

namespace lockprof::report {

namespace {

// Screen and print styles. Print drops the navigation and keeps figures whole on a page.
constexpr const char* kStyle = R"css(
:root { --ink:#1d1f24; --muted:#5b6070; --line:#dde0e7; --accent:#0b5cad; --bad:#b3261e;
        --warn-bg:#fff6e5; --warn-line:#e0a100; --bad-bg:#fdecea; }
* { box-sizing: border-box; }
body { margin:0; color:var(--ink); background:#f4f5f8;
       font:14px/1.5 system-ui,-apple-system,"Segoe UI","DejaVu Sans",Helvetica,Arial,sans-serif; }
main { max-width:1120px; margin:0 auto; padding:28px 32px 48px; background:#fff;
       box-shadow:0 0 0 1px var(--line); min-height:100vh; }
header h1 { margin:0 0 4px; font-size:26px; letter-spacing:-0.01em; }
header .sub { color:var(--muted); margin:0; }
h2 { font-size:19px; margin:34px 0 10px; padding-bottom:6px; border-bottom:2px solid var(--line); }
h3 { font-size:15px; margin:20px 0 6px; }
nav.toc { margin:16px 0 4px; display:flex; flex-wrap:wrap; gap:6px 14px; font-size:13px; }
nav.toc a { color:var(--accent); text-decoration:none; }
.banner { border-left:5px solid var(--bad); background:var(--bad-bg); padding:10px 14px;
          margin:16px 0; font-weight:600; color:var(--bad); }
dl.prov { display:grid; grid-template-columns:max-content 1fr; gap:3px 18px; margin:0; }
dl.prov dt { color:var(--muted); }
dl.prov dd { margin:0; font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace; font-size:12.5px;
             overflow-wrap:anywhere; }
dd.alert { color:var(--bad); font-weight:700; }
ul.notes { margin:8px 0; padding:0; list-style:none; }
ul.notes li { background:var(--warn-bg); border-left:4px solid var(--warn-line); padding:5px 10px;
              margin:4px 0; }
figure { margin:12px 0; }
figure svg.lp-plot { width:100%; height:auto; display:block; border:1px solid var(--line);
                     border-radius:4px; }
figcaption { color:var(--muted); font-size:12.5px; margin-top:4px; }
.grid { display:grid; grid-template-columns:repeat(auto-fit,minmax(430px,1fr)); gap:8px 20px; }
.scroll { overflow-x:auto; }
table { border-collapse:collapse; font-size:12.5px; margin:8px 0; width:100%; }
th, td { padding:4px 7px; border-bottom:1px solid var(--line); text-align:right; white-space:nowrap; }
th { background:#f0f2f6; font-weight:600; position:sticky; top:0; }
th:first-child, td:first-child, td.l, th.l { text-align:left; }
tbody tr:nth-child(even) { background:#fafbfc; }
td.bad { color:var(--bad); font-weight:700; }
td.wrap { white-space:normal; overflow-wrap:anywhere; }
td.v-faster { color:#1b6e20; font-weight:600; } td.v-slower { color:var(--bad); font-weight:600; }
td.v-equivalent { color:var(--accent); } td.v-open, td.v-none { color:var(--muted); }
tr.differs td { background:var(--warn-bg); }
tr.explains td { background:var(--bad-bg); } tr.explains td:first-child { color:var(--bad); font-weight:700; }
p.conclusion { font-weight:600; margin:4px 0 6px; }
.swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:6px; }
.muted { color:var(--muted); }
ol.findings li { margin:3px 0; }
.pair { margin:10px 0 14px; }
.pair h3 { margin-bottom:2px; }
table.asm td { font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace; font-size:12px; }
table.asm td.ins { text-align:left; white-space:pre; }
table.asm tr.loop td { background:#eef5ff; }
.bar { display:inline-block; height:9px; background:var(--accent); border-radius:1px;
       vertical-align:middle; margin-right:6px; }
iframe.flamegraph { width:100%; border:1px solid var(--line); border-radius:4px; background:#fff; }
footer { margin-top:40px; color:var(--muted); font-size:12px; border-top:1px solid var(--line);
         padding-top:10px; }
@media print {
  body { background:#fff; font-size:11pt; }
  main { box-shadow:none; max-width:none; padding:0; }
  nav.toc { display:none; }
  section, figure, .pair, table { break-inside:avoid; }
  h2 { break-after:avoid; }
  th { position:static; }
  .grid { grid-template-columns:1fr 1fr; }
  @page { margin:14mm; }
}
)css";

std::string escape_html(std::string_view text) {
    return html::escape(text);
}

std::string provenance_row(const std::string& name, const std::string& value, bool alert = false) {
    return fmt::format("<dt>{}</dt><dd{}>{}</dd>\n", escape_html(name),
                       alert ? " class=\"alert\"" : "",
                       escape_html(value.empty() ? "(unknown)" : value));
}

std::string provenance_block(const workload::RunResult& run,
                             const std::vector<analysis::CellSummary>& summaries) {
    const auto& p = run.provenance;
    const auto& s = run.spec;
    std::string out = "<dl class=\"prov\">\n";
    out += provenance_row(
        "CPU", fmt::format("{}{}, {} logical CPUs", p.cpu_model,
                           p.cpu_vendor.empty() ? "" : " (" + p.cpu_vendor + ")", p.logical_cpus));
    out += provenance_row("architecture", p.arch);
    if (!p.midr.empty()) out += provenance_row("MIDR", p.midr);
    const auto lse = workload::lse_atomics(p);
    out += provenance_row("LSE atomics",
                          lse ? (*lse ? "yes" : "no") : "not applicable (" + p.arch + ")");
    if (p.arch == "aarch64") out += provenance_row("SPE", p.spe ? "yes" : "no");
    out += provenance_row("VM hint", p.vm_hint.empty() ? "none detected" : p.vm_hint,
                          !p.vm_hint.empty());
    out += provenance_row("kernel", p.kernel);
    out += provenance_row(
        "CPU frequency",
        fmt::format("governor {}, boost {}",
                    p.cpufreq_governor.empty() ? "unknown (no cpufreq)" : p.cpufreq_governor,
                    p.cpu_boost.empty() ? "unknown" : p.cpu_boost));
    out += provenance_row("perf_event_paranoid", p.perf_event_paranoid == -99
                                                     ? "unreadable"
                                                     : std::to_string(p.perf_event_paranoid));
    out += provenance_row("compiler", p.compiler);
    out += provenance_row("flags", p.compiler_flags.empty() ? "(none)" : p.compiler_flags);
    out += provenance_row("build type", p.build_type);
    out += provenance_row(
        "assertions", p.assertions ? "ON: numbers not representative (build with NDEBUG)" : "off",
        p.assertions);
    out += provenance_row("lockprof", fmt::format("{} ({})", p.lockprof_version, p.git_revision));
    out += provenance_row("host, date", fmt::format("{}, {}", p.hostname, p.timestamp_utc));
    out += provenance_row("command", p.command_line);
    out += provenance_row(
        "workload",
        fmt::format("{}; delay {}{}", describe_workload(run, summaries),
                    s.delay ? std::string(arch::delay_name(*s.delay)) : "per-lock default",
                    s.latency ? "; latency recorded" : ""));
    if (std::string exclusion = exclusion_summary(run); !exclusion.empty())
        out += provenance_row("exclusion", exclusion, exclusion_failed(run));
    analysis::StealTally steal;
    for (const auto& cell : run.cells) steal.add(cell);
    out += provenance_row("hypervisor steal", analysis::steal_overview(steal), steal.high > 0);
    if (run.calibration.ticks_per_ns > 0)
        out += provenance_row("tick counter",
                              fmt::format("{:.3f} ticks/ns", run.calibration.ticks_per_ns));
    return out + "</dl>\n";
}

std::string figure(const PlotSpec& spec, const std::string& caption) {
    return fmt::format("<figure>\n{}<figcaption>{}</figcaption>\n</figure>\n", render_plot(spec),
                       escape_html(caption));
}

std::string swatch(const std::vector<std::string>& locks, const std::string& lock) {
    const auto it = std::find(locks.begin(), locks.end(), lock);
    return fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>",
                       series_colour(static_cast<std::size_t>(it - locks.begin())));
}

// The PMU events counted in some cell, in first-seen order.
std::vector<std::string> counted_events(const std::vector<analysis::CellSummary>& summaries) {
    std::vector<std::string> events;
    for (const auto& s : summaries)
        for (const auto& e : s.events)
            if (e.counted && std::find(events.begin(), events.end(), e.event) == events.end())
                events.push_back(e.event);
    return events;
}

// "baseline", or throughput relative to the first lock with its verdict (analysis/verdict.hpp).
std::string versus_first(const analysis::CellSummary& s) {
    if (!s.comparison) return "baseline";
    return analysis::effect_text(s.comparison->effect);
}

// One cell's row of the results table.
std::string results_row(const analysis::CellSummary& s, const std::vector<std::string>& locks,
                        const OptionalColumns& columns, const std::vector<std::string>& events,
                        bool perturbation) {
    const auto& c = *s.cell;
    std::string out =
        fmt::format("<tr><td>{}{}</td><td>{}</td><td>{}</td>", swatch(locks, c.lock),
                    escape_html(c.lock), c.threads, escape_html(arch::delay_name(c.delay)));
    if (s.trials == 0)
        return out +
               fmt::format("<td colspan=\"{}\" class=\"l muted\">no finished trial</td></tr>\n",
                           9 + perturbation + columns.sleeps + columns.partial + events.size());
    out += fmt::format(
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td>"
        "<td>{}</td>{}<td{}>{}</td>{}",
        format_si(s.throughput > 0 ? s.throughput : s.acquires_per_second.median),
        format_si(s.acquires_per_second.min), format_si(s.acquires_per_second.max),
        analysis::spread_text(s.acquires_per_second), escape_html(versus_first(s)),
        !perturbation ? ""
        : s.perturbation
            ? fmt::format("<td>{}</td>", escape_html(analysis::perturbation_text(*s.perturbation)))
            : "<td>-</td>",
        format_table_number(s.cpu_ns_per_acquire.median),
        format_table_number(s.rmw_per_acquire.median),
        format_table_number(s.spins_per_acquire.median),
        columns.sleeps
            ? fmt::format("<td>{}</td>", format_table_number(s.sleeps_per_acquire.median))
            : "",
        c.overlaps || c.lost_updates ? " class=\"bad\"" : "",
        c.overlaps || c.lost_updates
            ? fmt::format("EXCLUSION FAILED ({} overlaps, {} lost)", c.overlaps, c.lost_updates)
            : fmt::format("{:.3f}", s.jain.median),
        columns.partial ? fmt::format("<td>{:.0f}%</td>", 100 * s.full_concurrency.median) : "");
    for (const auto& name : events) {
        const auto it = std::find_if(s.events.begin(), s.events.end(),
                                     [&](const auto& e) { return e.event == name; });
        out += fmt::format("<td>{}</td>", it != s.events.end() && it->counted
                                              ? format_table_number(it->per_acquire.median)
                                              : "n/c");
    }
    return out + "</tr>\n";
}

std::string results_table(const std::vector<analysis::CellSummary>& summaries,
                          const std::vector<std::string>& locks) {
    const auto events = counted_events(summaries);
    const auto columns = optional_columns(summaries);
    std::string out =
        "<div class=\"scroll\"><table "
        "id=\"results-table\">\n<thead><tr><th>lock</th><th>threads</th><th>delay</th>"
        "<th title=\"geometric mean of the trials: the figure vs first divides\">acquires/s</th>"
        "<th>min</th><th>max</th><th title=\"(max - min) / median of the "
        "trials\">spread</th><th>vs first</th>";
    const bool perturbation = analysis::any_perturbation(summaries);
    if (perturbation)
        out +=
            "<th title=\"acquires/s with the instruments over the same trials without "
            "them\">instr/plain</th>";
    out += "<th>CPU ns/acq</th><th>rmw/acq</th><th>spins/acq</th>";
    if (columns.sleeps) out += "<th>sleeps/acq</th>";
    out += "<th>Jain</th>";
    if (columns.partial) out += "<th>all-run</th>";
    for (const auto& e : events) out += fmt::format("<th>{}/acq</th>", escape_html(e));
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& s : summaries)
        if (s.cell) out += results_row(s, locks, columns, events, perturbation);
    out += "</tbody></table></div>\n";
    auto notes = analysis::verdict_notes(summaries);
    for (auto& note : analysis::perturbation_notes(summaries)) notes.push_back(std::move(note));
    if (!notes.empty()) {
        out += "<ul class=\"muted verdict-notes\">\n";
        for (const auto& note : notes) out += "<li>" + escape_html(note) + "</li>\n";
        out += "</ul>\n";
    }
    if (columns.sleeps)
        out +=
            "<p class=\"muted\">sleeps/acq: times a waiter gave up its CPU (pg-slock's "
            "pg_usleep, event-mutex's event waits) per acquire.</p>\n";
    if (columns.partial)
        out +=
            "<p class=\"muted\">all-run: share of the trial window in which every thread was "
            "running the loop (median over trials).</p>\n";
    return out;
}

// What every section renders from.
struct Report {
    const workload::RunResult& run;
    const std::vector<analysis::CellSummary>& summaries;
    const ReportExtras& extras;
    const HtmlReportOptions& options;
    std::vector<std::string> locks;  // lock_order(summaries)
};

std::string provenance_section(const Report& report) {
    std::string out = provenance_block(report.run, report.summaries);
    std::vector<std::string> notes = report.run.notes;
    for (auto& note : cell_notes(report.run, report.summaries)) notes.push_back(std::move(note));
    for (const auto& o : report.extras.omitted) notes.push_back("not in this report: " + o);
    if (!notes.empty()) {
        out += "<h3>Notes</h3>\n<ul class=\"notes\">\n";
        for (const auto& n : notes) out += "<li>" + escape_html(n) + "</li>\n";
        out += "</ul>\n";
    }
    return out;
}

std::string throughput_section(const Report& report) {
    auto scalability = scalability_plot(report.run, report.summaries);
    scalability.width = 1000, scalability.height = 440;
    return figure(scalability,
                  "Acquires per second of all threads together; points are medians over trials, "
                  "bars the trials' min and max. Higher is better.") +
           results_table(report.summaries, report.locks);
}

PlotSpec small_plot(PlotSpec spec, std::string id) {
    spec.id = std::move(id);
    spec.width = 540, spec.height = 330;
    return spec;
}

// One small plot per counted PMU event, per acquire.
std::string event_plots(const std::vector<analysis::CellSummary>& summaries,
                        const std::vector<std::string>& events) {
    std::string out;
    for (const auto& event : events) {
        std::string id = "plot-event-";
        for (char c : event) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
        const auto per_acquire =
            [event](const analysis::CellSummary& s) -> const analysis::Spread* {
            for (const auto& e : s.events)
                if (e.event == event && e.counted) return &e.per_acquire;
            return nullptr;
        };
        out += figure(small_plot(figure_plot(summaries, per_acquire, event + " per acquire",
                                             event + " / acquire", event + "/acquire"),
                                 id),
                      "Counted with perf_event, scaled for multiplexing.");
    }
    return out;
}

std::string per_acquire_section(const Report& report) {
    const auto& summaries = report.summaries;
    std::string out = "<div class=\"grid\">\n";
    out +=
        figure(small_plot(figure_plot(
                              summaries,
                              [](const analysis::CellSummary& s) { return &s.cpu_ns_per_acquire; },
                              "CPU time per acquire", "CPU ns / acquire", "CPU ns/acquire"),
                          "plot-cpu-ns"),
               "CPU time of all threads (spinning included) per acquire. Lower is better.");
    out += figure(
        small_plot(figure_plot(
                       summaries, [](const analysis::CellSummary& s) { return &s.rmw_per_acquire; },
                       "Atomic RMW attempts per acquire", "RMW / acquire", "rmw/acquire"),
                   "plot-rmw"),
        "Read-modify-write attempts (xchg, cas, stxr) per acquire; 1 means no retries.");
    const auto events = counted_events(summaries);
    out += event_plots(summaries, events);
    out += "</div>\n";
    if (events.empty())
        out +=
            "<p class=\"muted\">No PMU events were counted (none requested, or the CPU "
            "exposes no counters here, as in most VMs); <code>lockprof doctor</code> says "
            "why.</p>\n";
    return out;
}

std::string fairness_section(const Report& report) {
    auto jain = figure_plot(
        report.summaries, [](const analysis::CellSummary& s) { return &s.jain; },
        "Fairness (Jain's index) vs threads", "Jain's index of per-thread acquires", "");
    jain.id = "plot-fairness";
    jain.y_max = 1;
    jain.width = 1000, jain.height = 340;
    return figure(jain,
                  "1 when every thread acquired equally often, 1/n when one thread got "
                  "everything.");
}

std::string latency_section(const Report& report) {
    const auto& summaries = report.summaries;
    const auto& locks = report.locks;
    bool any = false;
    for (const auto& s : summaries) any |= s.latency.has_value();
    if (!any)
        return fmt::format(
            "<p class=\"muted\">Not measured{}: run with <code>--latency</code> to "
            "record each acquire's latency with the tick counter.</p>\n",
            report.run.spec.latency ? " (no samples recorded)" : "");
    PlotSpec p99;
    p99.id = "plot-latency-p99";
    p99.title = "p99 acquire latency vs threads";
    p99.x_label = "threads (log\u2082 scale)";
    p99.y_label = "p99 latency (ns)";
    p99.width = 900, p99.height = 340;
    for (std::size_t i = 0; i < locks.size(); ++i) {
        PlotSeries series{locks[i], series_colour(i), {}, {}};
        for (const auto& s : summaries)
            if (s.cell && s.cell->lock == locks[i] && s.latency)
                series.points.push_back(
                    {static_cast<double>(s.cell->threads), s.latency->p99_ns, std::nullopt,
                     std::nullopt,
                     fmt::format("{}, {}: p99 {} ns", locks[i], threads_text(s.cell->threads),
                                 tick_label(s.latency->p99_ns))});
        p99.series.push_back(std::move(series));
    }
    std::string out = figure(p99,
                             "All trials' acquires merged per cell; percentiles are at most 3% "
                             "above the true value (log-linear histogram).");
    out +=
        "<table id=\"latency-table\">\n<thead><tr><th>lock</th><th>threads</th><th>p50 ns</th>"
        "<th>p99 ns</th><th>p99.9 ns</th><th>max ns</th><th>acquires recorded</th></tr>"
        "</thead>\n<tbody>\n";
    for (const auto& s : summaries)
        if (s.cell && s.latency)
            out += fmt::format(
                "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}"
                "</td></tr>\n",
                swatch(locks, s.cell->lock), escape_html(s.cell->lock), s.cell->threads,
                format_table_number(s.latency->p50_ns), format_table_number(s.latency->p99_ns),
                format_table_number(s.latency->p999_ns), format_table_number(s.latency->max_ns),
                format_si(static_cast<double>(s.latency->samples)));
    return out + "</tbody></table>\n";
}

std::string explanation_section(const Report& report) {
    const auto& explanation = report.extras.explanation;
    if (explanation.empty())
        return "<p class=\"muted\">Nothing to explain: the run has a single lock, so there "
               "is no pair to compare.</p>\n";
    std::string out =
        "<p class=\"muted\">From measured evidence only; each claim quotes its numbers.</p>\n";
    for (const auto& d : explanation) {
        out += fmt::format("<div class=\"pair\"><h3>{} vs {}, {} thread{}</h3>\n",
                           escape_html(d.other), escape_html(d.baseline), d.threads,
                           d.threads == 1 ? "" : "s");
        if (d.findings.empty())
            out += "<p class=\"muted\">no findings for this pair.</p>\n";
        else {
            out += "<ol class=\"findings\">\n";
            for (const auto& f : d.findings)
                out += fmt::format("<li data-rule=\"{}\">{}</li>\n", escape_html(f.rule),
                                   escape_html(f.text));
            out += "</ol>\n";
        }
        out += "</div>\n";
    }
    return out;
}

// A cell's hottest functions, each with its instruction table.
std::string cell_functions(const attribution::CellAnnotation& cell,
                           const HtmlReportOptions& options) {
    std::string out =
        fmt::format("<h3>{} ({} samples; acquire loop {:.1f}%, whole acquire path {:.1f}%)</h3>\n",
                    escape_html(cell.lock), cell.samples, cell.acquire_loop_share * 100,
                    cell.acquire_path_share * 100);
    if (const auto phases = attribution::describe_phases(cell); !phases.empty())
        out += fmt::format("<p>Measured loop by phase (of all samples): {}</p>\n",
                           escape_html(phases));
    unsigned shown = 0;
    for (const auto& f : cell.functions) {
        if (shown == options.annotate_functions) break;
        ++shown;
        out += fmt::format(
            "<p><b>{:.1f}%</b> <code>{}</code> <span class=\"muted\">{}{}</span>"
            "</p>\n",
            f.share * 100, escape_html(f.short_name), escape_html(f.module),
            f.loop_rule.empty() ? "" : "; " + escape_html(f.loop_rule));
        if (!f.error.empty()) {
            out +=
                fmt::format("<p class=\"muted\">not disassembled: {}</p>\n", escape_html(f.error));
            continue;
        }
        out += html::instruction_table(f, options.max_instructions);
    }
    return out;
}

std::string annotation_section(const Report& report) {
    const auto& run = report.run;
    const auto& attribution = report.extras.attribution;
    if (!attribution) {
        std::string why =
            "The run was not sampled; run with <code>--sample</code> to see where "
            "each lock spends its time, instruction by instruction.";
        if (run.sampling)
            why =
                "The run was sampled, but this result holds no raw samples (<code>--output"
                "</code> leaves them out); write them with <code>--samples-out FILE</code> and "
                "run <code>lockprof report FILE</code>.";
        return "<p class=\"muted\">" + why + "</p>\n";
    }
    unsigned threads = 0;
    for (const auto& c : attribution->cells)
        if (c.samples > 0) threads = std::max(threads, c.threads);
    if (report.options.annotate_threads) threads = *report.options.annotate_threads;
    std::string out = fmt::format(
        "<p class=\"muted\">At {} thread{}; {} sampler, event {}; call stacks: {}. Rows in "
        "the acquire loop are shaded; shares are of the cell's samples.</p>\n",
        threads, threads == 1 ? "" : "s", run.sampling ? escape_html(run.sampling->sampler) : "?",
        run.sampling ? escape_html(run.sampling->event) : "?",
        run.sampling ? escape_html(sampling::call_graph_summary(*run.sampling)) : "?");
    for (const auto& w : attribution->warnings)
        out += fmt::format("<ul class=\"notes\"><li>{}</li></ul>\n", escape_html(w));
    for (const auto& n : attribution->notes)
        out += fmt::format("<ul class=\"notes\"><li>{}</li></ul>\n", escape_html(n));
    bool any = false;
    for (const auto& cell : attribution->cells) {
        if (cell.threads != threads || cell.samples == 0) continue;
        any = true;
        out += cell_functions(cell, report.options);
    }
    if (!any)
        out += fmt::format("<p class=\"muted\">No cell at {} holds samples.</p>\n",
                           threads_text(threads));
    return out;
}

std::string flamegraph_section(const Report& report) {
    const std::string& svg = report.extras.flamegraph_svg;
    if (svg.empty())
        return "<p class=\"muted\">" +
               (report.run.sampling
                    ? std::string("No raw samples in this result (see above).")
                    : std::string("The run was not sampled (<code>--sample</code>).")) +
               "</p>\n";
    // The iframe takes the SVG's own height: the first height="N" inside the <svg ...> tag.
    int height = 400;
    const auto tag = svg.find("<svg");
    const auto tag_end = tag == std::string::npos ? tag : svg.find('>', tag);
    const auto attribute = tag_end == std::string::npos ? tag_end : svg.find(" height=\"", tag);
    if (attribute != std::string::npos && attribute < tag_end) {
        const char* digits = svg.c_str() + attribute + 9;
        if (std::isdigit(static_cast<unsigned char>(*digits))) height = std::atoi(digits);
    }
    return fmt::format(
        "<p class=\"muted\">All cells, one root frame per cell (lock/threads). "
        "Click a frame to zoom; the graph has its own search button.</p>\n"
        "<iframe class=\"flamegraph\" title=\"flamegraph\" height=\"{}\" "
        "src=\"data:image/svg+xml;base64,{}\"></iframe>\n",
        height + 4, base64(svg));
}

// The report's sections in order: the navigation links each by its id and title, and each is
// written as <section id><h2>heading</h2> body </section>.
struct Section {
    const char* id;
    const char* title;    // in the navigation
    const char* heading;  // over the section
    std::string (*body)(const Report&);
};
constexpr Section kSections[] = {
    {"provenance", "Provenance", "Provenance", provenance_section},
    {"throughput", "Throughput", "Throughput", throughput_section},
    {"per-acquire", "Per-acquire costs", "Per-acquire costs", per_acquire_section},
    {"fairness", "Fairness", "Fairness", fairness_section},
    {"latency", "Latency", "Acquire latency", latency_section},
    {"explanation", "Explanation", "Explanation", explanation_section},
    {"annotation", "Hot instructions", "Hot instructions", annotation_section},
    {"flamegraph", "Flamegraph", "Flamegraph", flamegraph_section},
};

// <head>, the title header and the banners for assertion builds and interrupted runs.
std::string document_start(const Report& report) {
    const auto& p = report.run.provenance;
    const auto& title = report.options.title;
    std::vector<unsigned> threads;
    for (const auto& s : report.summaries)
        if (s.cell && std::find(threads.begin(), threads.end(), s.cell->threads) == threads.end())
            threads.push_back(s.cell->threads);
    const std::string locks = escape_html(fmt::format("{}", fmt::join(report.locks, ", ")));
    std::string out =
        html::head(fmt::format("{}: {}", title, fmt::join(report.locks, ", ")), p.lockprof_version);
    out += fmt::format(
        "<header>\n<h1>{}</h1>\n<p class=\"sub\">{} on {}{} &middot; {} thread count{} &middot; "
        "{}{}</p>\n</header>\n",
        escape_html(title), locks, escape_html(p.cpu_model.empty() ? p.arch : p.cpu_model),
        p.vm_hint.empty() ? "" : " (VM)", threads.size(), threads.size() == 1 ? "" : "s",
        escape_html(p.timestamp_utc),
        report.options.source.empty() ? "" : " &middot; " + escape_html(report.options.source));
    if (p.assertions)
        out +=
            "<div class=\"banner\" id=\"assertions-banner\">This build has assertions ON "
            "(no NDEBUG): its numbers are not representative. Rebuild with "
            "CMAKE_BUILD_TYPE=Release or RelWithDebInfo before comparing.</div>\n";
    if (report.run.interrupted)
        out +=
            "<div class=\"banner\">The run was interrupted: only finished trials are "
            "shown.</div>\n";
    return out;
}

}  // namespace

std::string base64(std::string_view bytes) {
    static const char* const alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 |
                           static_cast<unsigned char>(bytes[i + 1]) << 8 |
                           static_cast<unsigned char>(bytes[i + 2]);
        out += alphabet[v >> 18 & 63], out += alphabet[v >> 12 & 63];
        out += alphabet[v >> 6 & 63], out += alphabet[v & 63];
    }
    if (i + 1 == bytes.size()) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
        out += alphabet[v >> 18 & 63], out += alphabet[v >> 12 & 63], out += "==";
    } else if (i + 2 == bytes.size()) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 |
                           static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += alphabet[v >> 18 & 63], out += alphabet[v >> 12 & 63];
        out += alphabet[v >> 6 & 63], out += '=';
    }
    return out;
}

ReportExtras with_flamegraph(analysis::ReportInputs inputs, const workload::RunResult& run) {
    ReportExtras extras;
    static_cast<analysis::ReportInputs&>(extras) = std::move(inputs);
    if (extras.stacks && run.sampling)
        extras.flamegraph_svg =
            exporting::render_flamegraph_svg(*extras.stacks, attribution::flamegraph_options(run));
    return extras;
}

std::string render_html_report(const workload::RunResult& run,
                               const std::vector<analysis::CellSummary>& summaries,
                               const ReportExtras& extras, const HtmlReportOptions& options) {
    const Report report{run, summaries, extras, options, lock_order(summaries)};
    std::vector<html::Section> sections;
    for (const auto& section : kSections)
        sections.push_back({section.id, section.title, section.heading, section.body(report)});
    std::string out =
        document_start(report) + html::navigation(sections) + html::sections(sections);
    return out + html::footer(run.provenance.lockprof_version, run.provenance.git_revision);
}

namespace html {

std::string escape(std::string_view text) {
    // The XML escaper (export/xml.hpp) is right for text and attribute values both.
    return escape_xml(text);
}

std::string head(const std::string& title, const std::string& lockprof_version) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out += "<meta name=\"generator\" content=\"lockprof " + escape(lockprof_version) + "\">\n";
    out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
                       escape(title), kStyle);
    return out;
}

std::string navigation(const std::vector<Section>& sections) {
    std::string out = "<nav class=\"toc\">";
    for (const auto& section : sections)
        out += fmt::format("<a href=\"#{}\">{}</a>", section.id, escape(section.title));
    return out + "</nav>\n";
}

std::string sections(const std::vector<Section>& sections) {
    std::string out;
    for (const auto& section : sections)
        out +=
            fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", section.id, escape(section.heading)) +
            section.body + "</section>\n";
    return out;
}

std::string footer(const std::string& lockprof_version, const std::string& git_revision) {
    return fmt::format(
        "<footer>Generated by lockprof {} ({}). Self-contained: no scripts, fonts "
        "or data are loaded from elsewhere.</footer>\n</main>\n</body>\n</html>\n",
        escape(lockprof_version), escape(git_revision));
}

std::vector<std::size_t> instruction_rows(const attribution::HotFunction& f, unsigned max_rows) {
    // The hottest rows (the acquire loop's, and any at kListingShare or more), at most
    // max_rows of them...
    std::vector<std::size_t> by_share(f.instructions.size());
    for (std::size_t i = 0; i < by_share.size(); ++i) by_share[i] = i;
    std::stable_sort(by_share.begin(), by_share.end(), [&](std::size_t a, std::size_t b) {
        return f.instructions[a].share > f.instructions[b].share;
    });
    std::set<std::size_t> kept;
    for (const std::size_t i : by_share) {
        if (kept.size() >= max_rows) break;
        const auto& ins = f.instructions[i];
        if (ins.in_acquire_loop || ins.share >= kListingShare) kept.insert(i);
    }
    // ...each with the instruction before it, on which skid puts a sample's cost: the
    // `lock cmpxchg` before the hot `jne`.
    std::set<std::size_t> with_context = kept;
    for (const std::size_t i : kept)
        if (i > 0) with_context.insert(i - 1);
    return {with_context.begin(), with_context.end()};
}

std::string instruction_table(const attribution::HotFunction& f, unsigned max_rows) {
    std::string out;
    if (auto note = attribution::no_line_information_note(f); !note.empty()) {
        note.erase(0, note.find_first_not_of(' '));
        note.pop_back();  // the text listing's newline
        out += fmt::format("<p class=\"muted\">{}</p>\n", escape(note));
    }
    out +=
        "<table class=\"asm\"><thead><tr><th>share</th><th>address</th>"
        "<th class=\"l\">instruction</th><th class=\"l\">source</th></tr></thead>"
        "<tbody>\n";
    std::optional<std::size_t> previous;
    for (const std::size_t index : instruction_rows(f, max_rows)) {
        if (previous && index > *previous + 1)
            out += fmt::format(
                "<tr class=\"gap\"><td></td><td></td><td class=\"l\">&hellip; {} "
                "instruction{} not shown</td><td></td></tr>\n",
                index - *previous - 1, index - *previous - 1 == 1 ? "" : "s");
        previous = index;
        const auto& i = f.instructions[index];
        out += fmt::format(
            "<tr{}><td><span class=\"bar\" style=\"width:{:.0f}px\"></span>{:.1f}%</td>"
            "<td>{:x}</td><td class=\"ins\">{}</td><td class=\"l\">{}</td></tr>\n",
            i.in_acquire_loop ? " class=\"loop\"" : "", std::round(i.share * 80), i.share * 100,
            i.instruction.address, escape(i.instruction.listing_text()), escape(i.source));
    }
    return out + "</tbody></table>\n";
}

}  // namespace html

}  // namespace lockprof::report
