#include "lockprof/report/html_report.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>

#include <fmt/format.h>

#include "lockprof/common/parse.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/report/plot.hpp"
#include "lockprof/report/run_report.hpp"
#include "lockprof/report/text_table.hpp"

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

std::string h(std::string_view text) {
    return escape_xml(text);
}

std::string provenance_row(const std::string& name, const std::string& value, bool alert = false) {
    return fmt::format("<dt>{}</dt><dd{}>{}</dd>\n", h(name), alert ? " class=\"alert\"" : "",
                       h(value.empty() ? "(unknown)" : value));
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
    out += provenance_row("LSE atomics", p.arch == "aarch64" ? (p.lse ? "yes" : "no")
                                                             : "not applicable (" + p.arch + ")");
    if (p.arch == "aarch64") out += provenance_row("SPE", p.spe ? "yes" : "no");
    out += provenance_row("VM hint", p.vm_hint.empty() ? "none detected" : p.vm_hint,
                          !p.vm_hint.empty());
    out += provenance_row("kernel", p.kernel);
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
    if (run.calibration.ticks_per_ns > 0)
        out += provenance_row("tick counter",
                              fmt::format("{:.3f} ticks/ns", run.calibration.ticks_per_ns));
    return out + "</dl>\n";
}

std::string figure(const PlotSpec& spec, const std::string& caption) {
    return fmt::format("<figure>\n{}<figcaption>{}</figcaption>\n</figure>\n", render_plot(spec),
                       h(caption));
}

std::string swatch(const std::vector<std::string>& locks, const std::string& lock) {
    const auto it = std::find(locks.begin(), locks.end(), lock);
    return fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>",
                       series_colour(static_cast<std::size_t>(it - locks.begin())));
}

std::string results_table(const std::vector<analysis::CellSummary>& summaries,
                          const std::vector<std::string>& locks) {
    std::vector<std::string> events;
    for (const auto& s : summaries)
        for (const auto& e : s.events)
            if (e.counted && std::find(events.begin(), events.end(), e.event) == events.end())
                events.push_back(e.event);
    std::string out =
        "<div class=\"scroll\"><table "
        "id=\"results-table\">\n<thead><tr><th>lock</th><th>threads</th><th>delay</th>"
        "<th>acquires/s</th><th>min</th><th>max</th><th>spread</th><th>vs first</th>"
        "<th>CPU ns/acq</th><th>rmw/acq</th><th>spins/acq</th>";
    const auto columns = optional_columns(summaries);
    if (columns.sleeps) out += "<th>sleeps/acq</th>";
    out += "<th>Jain</th>";
    if (columns.partial) out += "<th>all-run</th>";
    for (const auto& e : events) out += fmt::format("<th>{}/acq</th>", h(e));
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& s : summaries) {
        if (!s.cell) continue;
        const auto& c = *s.cell;
        out += fmt::format("<tr><td>{}{}</td><td>{}</td><td>{}</td>", swatch(locks, c.lock),
                           h(c.lock), c.threads, h(arch::delay_name(c.delay)));
        if (s.trials == 0) {
            out += fmt::format("<td colspan=\"{}\" class=\"l muted\">no finished trial</td></tr>\n",
                               9 + columns.sleeps + columns.partial + events.size());
            continue;
        }
        std::string versus = "baseline";
        if (s.comparison)
            versus = s.comparison->single_trial
                         ? fmt::format("{:.2f}x (1 trial)", s.comparison->throughput_ratio)
                     : s.comparison->within_noise
                         ? fmt::format("{:.2f}x (noise)", s.comparison->throughput_ratio)
                         : fmt::format("{:.2f}x", s.comparison->throughput_ratio);
        out += fmt::format(
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td>{}<td{}>{}</td>{}",
            si(s.acquires_per_second.median), si(s.acquires_per_second.min),
            si(s.acquires_per_second.max),
            s.trials > 1 ? fmt::format("{:.1f}%", s.acquires_per_second.relative_spread() * 100)
                         : "-",
            h(versus), number(s.cpu_ns_per_acquire.median), number(s.rmw_per_acquire.median),
            number(s.spins_per_acquire.median),
            columns.sleeps ? fmt::format("<td>{}</td>", number(s.sleeps_per_acquire.median)) : "",
            c.overlaps || c.lost_updates ? " class=\"bad\"" : "",
            c.overlaps || c.lost_updates
                ? fmt::format("EXCLUSION FAILED ({} overlaps, {} lost)", c.overlaps, c.lost_updates)
                : fmt::format("{:.3f}", s.jain.median),
            columns.partial ? fmt::format("<td>{:.0f}%</td>", 100 * s.full_concurrency.median)
                            : "");
        for (const auto& name : events) {
            const auto it = std::find_if(s.events.begin(), s.events.end(),
                                         [&](const auto& e) { return e.event == name; });
            out += fmt::format("<td>{}</td>", it != s.events.end() && it->counted
                                                  ? number(it->per_acquire.median)
                                                  : "n/c");
        }
        out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
    if (columns.sleeps)
        out +=
            "<p class=\"muted\">sleeps/acq: times a waiter gave up its CPU (pg-slock's "
            "pg_usleep) per acquire.</p>\n";
    if (columns.partial)
        out +=
            "<p class=\"muted\">all-run: share of the trial window in which every thread was "
            "running the loop (median over trials).</p>\n";
    return out;
}

std::string latency_section(const workload::RunResult& run,
                            const std::vector<analysis::CellSummary>& summaries,
                            const std::vector<std::string>& locks) {
    bool any = false;
    for (const auto& s : summaries) any |= s.latency.has_value();
    std::string out = "<section id=\"latency\">\n<h2>Acquire latency</h2>\n";
    if (!any)
        return out + fmt::format(
                         "<p class=\"muted\">Not measured{}: run with <code>--latency</code> to "
                         "record each acquire's latency with the tick counter.</p>\n</section>\n",
                         run.spec.latency ? " (no samples recorded)" : "");
    PlotSpec p99;
    p99.id = "plot-latency-p99";
    p99.title = "p99 acquire latency vs threads";
    p99.x_label = "threads (log\u2082 scale)";
    p99.y_label = "p99 latency (ns)";
    p99.width = 900, p99.height = 340;
    for (std::size_t i = 0; i < locks.size(); ++i) {
        PlotSeries series{locks[i], series_colour(i), {}};
        for (const auto& s : summaries)
            if (s.cell && s.cell->lock == locks[i] && s.latency)
                series.points.push_back(
                    {static_cast<double>(s.cell->threads), s.latency->p99_ns, std::nullopt,
                     std::nullopt,
                     fmt::format("{}, {} threads: p99 {} ns", locks[i], s.cell->threads,
                                 tick_label(s.latency->p99_ns))});
        p99.series.push_back(std::move(series));
    }
    out += figure(p99,
                  "All trials' acquires merged per cell; percentiles are at most 3% above "
                  "the true value (log-linear histogram).");
    out +=
        "<table id=\"latency-table\">\n<thead><tr><th>lock</th><th>threads</th><th>p50 ns</th>"
        "<th>p99 ns</th><th>p99.9 ns</th><th>max ns</th><th>acquires recorded</th></tr>"
        "</thead>\n<tbody>\n";
    for (const auto& s : summaries)
        if (s.cell && s.latency)
            out += fmt::format(
                "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}"
                "</td></tr>\n",
                swatch(locks, s.cell->lock), h(s.cell->lock), s.cell->threads,
                number(s.latency->p50_ns), number(s.latency->p99_ns), number(s.latency->p999_ns),
                number(s.latency->max_ns), si(static_cast<double>(s.latency->samples)));
    return out + "</tbody></table>\n</section>\n";
}

std::string explanation_section(const ReportExtras& extras) {
    std::string out = "<section id=\"explanation\">\n<h2>Explanation</h2>\n";
    if (extras.explanation.empty())
        return out +
               "<p class=\"muted\">Nothing to explain: the run has a single lock, so there "
               "is no pair to compare.</p>\n</section>\n";
    out += "<p class=\"muted\">From measured evidence only; each claim quotes its numbers.</p>\n";
    for (const auto& d : extras.explanation) {
        out += fmt::format("<div class=\"pair\"><h3>{} vs {}, {} thread{}</h3>\n", h(d.other),
                           h(d.baseline), d.threads, d.threads == 1 ? "" : "s");
        if (d.findings.empty())
            out += "<p class=\"muted\">inconclusive: no difference beyond noise.</p>\n";
        else {
            out += "<ol class=\"findings\">\n";
            for (const auto& f : d.findings)
                out += fmt::format("<li data-rule=\"{}\">{}</li>\n", h(f.rule), h(f.text));
            out += "</ol>\n";
        }
        out += "</div>\n";
    }
    return out + "</section>\n";
}

std::string annotation_section(const workload::RunResult& run, const ReportExtras& extras,
                               const HtmlReportOptions& options) {
    std::string out = "<section id=\"annotation\">\n<h2>Hot instructions</h2>\n";
    if (!extras.attribution) {
        std::string why =
            "The run was not sampled; run with <code>--sample</code> to see where "
            "each lock spends its time, instruction by instruction.";
        if (run.sampling)
            why =
                "The run was sampled, but this result holds no raw samples (<code>--output"
                "</code> leaves them out); write them with <code>--samples-out FILE</code> and "
                "run <code>lockprof report FILE</code>.";
        return out + "<p class=\"muted\">" + why + "</p>\n</section>\n";
    }
    unsigned threads = 0;
    for (const auto& c : extras.attribution->cells)
        if (c.samples > 0) threads = std::max(threads, c.threads);
    if (options.annotate_threads) threads = *options.annotate_threads;
    out += fmt::format(
        "<p class=\"muted\">At {} thread{}; {} sampler, event {}. Rows in the "
        "acquire loop are shaded; shares are of the cell's samples.</p>\n",
        threads, threads == 1 ? "" : "s", run.sampling ? h(run.sampling->sampler) : "?",
        run.sampling ? h(run.sampling->event) : "?");
    for (const auto& w : extras.attribution->warnings)
        out += fmt::format("<ul class=\"notes\"><li>{}</li></ul>\n", h(w));
    bool any = false;
    for (const auto& cell : extras.attribution->cells) {
        if (cell.threads != threads || cell.samples == 0) continue;
        any = true;
        out += fmt::format(
            "<h3>{} ({} samples; acquire loop {:.1f}%, whole acquire path {:.1f}%)</h3>\n",
            h(cell.lock), cell.samples, cell.acquire_loop_share * 100,
            cell.acquire_path_share * 100);
        unsigned shown = 0;
        for (const auto& f : cell.functions) {
            if (shown == options.annotate_functions) break;
            ++shown;
            out += fmt::format(
                "<p><b>{:.1f}%</b> <code>{}</code> <span class=\"muted\">{}{}</span>"
                "</p>\n",
                f.share * 100, h(f.short_name), h(f.module),
                f.loop_rule.empty() ? "" : "; " + h(f.loop_rule));
            if (!f.error.empty()) {
                out += fmt::format("<p class=\"muted\">not disassembled: {}</p>\n", h(f.error));
                continue;
            }
            // The hottest instructions plus the whole acquire loop, in address order, so the
            // loop reads as code.
            std::vector<const sampling::AnnotatedInstruction*> rows;
            for (const auto& i : f.instructions) rows.push_back(&i);
            std::stable_sort(rows.begin(), rows.end(),
                             [](auto* a, auto* b) { return a->share > b->share; });
            std::vector<const sampling::AnnotatedInstruction*> kept;
            for (auto* i : rows)
                if ((i->in_acquire_loop || i->share >= 0.005) &&
                    kept.size() < options.max_instructions)
                    kept.push_back(i);
            std::sort(kept.begin(), kept.end(), [](auto* a, auto* b) {
                return a->instruction.address < b->instruction.address;
            });
            out +=
                "<table class=\"asm\"><thead><tr><th>share</th><th>address</th>"
                "<th class=\"l\">instruction</th><th class=\"l\">source</th></tr></thead>"
                "<tbody>\n";
            for (auto* i : kept)
                out += fmt::format(
                    "<tr{}><td><span class=\"bar\" style=\"width:{:.0f}px\"></span>{:.1f}%</td>"
                    "<td>{:x}</td><td class=\"ins\">{}</td><td class=\"l\">{}</td></tr>\n",
                    i->in_acquire_loop ? " class=\"loop\"" : "", std::round(i->share * 80),
                    i->share * 100, i->instruction.address, h(i->instruction.text()), h(i->source));
            out += "</tbody></table>\n";
        }
    }
    if (!any)
        out +=
            fmt::format("<p class=\"muted\">No cell at {} threads holds samples.</p>\n", threads);
    return out + "</section>\n";
}

std::string flamegraph_section(const workload::RunResult& run, const ReportExtras& extras) {
    std::string out = "<section id=\"flamegraph\">\n<h2>Flamegraph</h2>\n";
    if (extras.flamegraph_svg.empty())
        return out + "<p class=\"muted\">" +
               (run.sampling ? std::string("No raw samples in this result (see above).")
                             : std::string("The run was not sampled (<code>--sample</code>).")) +
               "</p>\n</section>\n";
    // The iframe takes the SVG's own height: the first height="N" inside the <svg ...> tag.
    int height = 400;
    const std::string& svg = extras.flamegraph_svg;
    const auto tag = svg.find("<svg");
    const auto tag_end = tag == std::string::npos ? tag : svg.find('>', tag);
    const auto attribute = tag_end == std::string::npos ? tag_end : svg.find(" height=\"", tag);
    if (attribute != std::string::npos && attribute < tag_end) {
        const char* digits = svg.c_str() + attribute + 9;
        if (std::isdigit(static_cast<unsigned char>(*digits))) height = std::atoi(digits);
    }
    return out + fmt::format(
                     "<p class=\"muted\">All cells, one root frame per cell (lock/threads). "
                     "Click a frame to zoom; the graph has its own search button.</p>\n"
                     "<iframe class=\"flamegraph\" title=\"flamegraph\" height=\"{}\" "
                     "src=\"data:image/svg+xml;base64,{}\"></iframe>\n</section>\n",
                     height + 4, base64(extras.flamegraph_svg));
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
            exporting::render_flamegraph_svg(*extras.stacks, analysis::flamegraph_options(run));
    return extras;
}

std::string render_html_report(const workload::RunResult& run,
                               const std::vector<analysis::CellSummary>& summaries,
                               const ReportExtras& extras, const HtmlReportOptions& options) {
    const auto& p = run.provenance;
    const auto locks = lock_order(summaries);
    std::vector<unsigned> threads;
    for (const auto& s : summaries)
        if (s.cell && std::find(threads.begin(), threads.end(), s.cell->threads) == threads.end())
            threads.push_back(s.cell->threads);

    std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out += "<meta name=\"generator\" content=\"lockprof " + h(p.lockprof_version) + "\">\n";
    out += fmt::format("<title>{}: {}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
                       h(options.title), h(fmt::format("{}", fmt::join(locks, ", "))), kStyle);
    out += fmt::format(
        "<header>\n<h1>{}</h1>\n<p class=\"sub\">{} on {}{} &middot; {} thread count{} &middot; "
        "{}{}</p>\n</header>\n",
        h(options.title), h(fmt::format("{}", fmt::join(locks, ", "))),
        h(p.cpu_model.empty() ? p.arch : p.cpu_model), p.vm_hint.empty() ? "" : " (VM)",
        threads.size(), threads.size() == 1 ? "" : "s", h(p.timestamp_utc),
        options.source.empty() ? "" : " &middot; " + h(options.source));
    if (p.assertions)
        out +=
            "<div class=\"banner\" id=\"assertions-banner\">This build has assertions ON "
            "(no NDEBUG): its numbers are not representative. Rebuild with "
            "CMAKE_BUILD_TYPE=Release or RelWithDebInfo before comparing.</div>\n";
    if (run.interrupted)
        out +=
            "<div class=\"banner\">The run was interrupted: only finished trials are "
            "shown.</div>\n";
    out +=
        "<nav class=\"toc\"><a href=\"#provenance\">Provenance</a><a "
        "href=\"#throughput\">Throughput</a><a href=\"#per-acquire\">Per-acquire costs</a><a "
        "href=\"#fairness\">Fairness</a><a href=\"#latency\">Latency</a><a "
        "href=\"#explanation\">Explanation</a><a href=\"#annotation\">Hot instructions</a><a "
        "href=\"#flamegraph\">Flamegraph</a></nav>\n";

    out += "<section id=\"provenance\">\n<h2>Provenance</h2>\n" + provenance_block(run, summaries);
    std::vector<std::string> notes = run.notes;
    for (const auto& s : summaries)
        if (auto note = partial_concurrency_note(s); !note.empty())
            notes.push_back(std::move(note));
    for (const auto& o : extras.omitted) notes.push_back("not in this report: " + o);
    if (!notes.empty()) {
        out += "<h3>Notes</h3>\n<ul class=\"notes\">\n";
        for (const auto& n : notes) out += "<li>" + h(n) + "</li>\n";
        out += "</ul>\n";
    }
    out += "</section>\n";

    auto scalability = scalability_plot(run, summaries);
    scalability.width = 1000, scalability.height = 440;
    out += "<section id=\"throughput\">\n<h2>Throughput</h2>\n";
    out += figure(scalability,
                  "Acquires per second of all threads together; points are medians over trials, "
                  "bars the trials' min and max. Higher is better.");
    out += results_table(summaries, locks) + "</section>\n";

    out += "<section id=\"per-acquire\">\n<h2>Per-acquire costs</h2>\n<div class=\"grid\">\n";
    const auto small = [](PlotSpec spec, std::string id) {
        spec.id = std::move(id);
        spec.width = 540, spec.height = 330;
        return spec;
    };
    out += figure(
        small(figure_plot(
                  summaries, [](const analysis::CellSummary& s) { return &s.cpu_ns_per_acquire; },
                  "CPU time per acquire", "CPU ns / acquire", "CPU ns/acquire"),
              "plot-cpu-ns"),
        "CPU time of all threads (spinning included) per acquire. Lower is better.");
    out += figure(
        small(figure_plot(
                  summaries, [](const analysis::CellSummary& s) { return &s.rmw_per_acquire; },
                  "Atomic RMW attempts per acquire", "RMW / acquire", "rmw/acquire"),
              "plot-rmw"),
        "Read-modify-write attempts (xchg, cas, stxr) per acquire; 1 means no retries.");
    std::vector<std::string> events;
    for (const auto& s : summaries)
        for (const auto& e : s.events)
            if (e.counted && std::find(events.begin(), events.end(), e.event) == events.end())
                events.push_back(e.event);
    for (const auto& event : events) {
        std::string id = "plot-event-";
        for (char c : event) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
        out += figure(small(figure_plot(
                                summaries,
                                [event](const analysis::CellSummary& s) -> const analysis::Spread* {
                                    for (const auto& e : s.events)
                                        if (e.event == event && e.counted) return &e.per_acquire;
                                    return nullptr;
                                },
                                event + " per acquire", event + " / acquire", event + "/acquire"),
                            id),
                      "Counted with perf_event, scaled for multiplexing.");
    }
    out += "</div>\n";
    if (events.empty())
        out +=
            "<p class=\"muted\">No PMU events were counted (none requested, or the CPU "
            "exposes no counters here, as in most VMs); <code>lockprof doctor</code> says "
            "why.</p>\n";
    out += "</section>\n";

    auto jain = figure_plot(
        summaries, [](const analysis::CellSummary& s) { return &s.jain; },
        "Fairness (Jain's index) vs threads", "Jain's index of per-thread acquires", "");
    jain.id = "plot-fairness";
    jain.y_max = 1;
    jain.width = 1000, jain.height = 340;
    out += "<section id=\"fairness\">\n<h2>Fairness</h2>\n";
    out += figure(jain,
                  "1 when every thread acquired equally often, 1/n when one thread got "
                  "everything.");
    out += "</section>\n";

    out += latency_section(run, summaries, locks);
    out += explanation_section(extras);
    out += annotation_section(run, extras, options);
    out += flamegraph_section(run, extras);
    out += fmt::format(
        "<footer>Generated by lockprof {} ({}). Self-contained: no scripts, fonts "
        "or data are loaded from elsewhere.</footer>\n</main>\n</body>\n</html>\n",
        h(p.lockprof_version), h(p.git_revision));
    return out;
}

}  // namespace lockprof::report
