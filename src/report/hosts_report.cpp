#include "lockprof/report/hosts_report.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "html_page.hpp"
#include "lockprof/common/number_format.hpp"
#include "lockprof/report/text_table.hpp"
#include "lockprof/workload/provenance.hpp"

namespace lockprof::report {

// Named, not anonymous: unity batches (LOCKPROF_UNITY_BUILD) share one anonymous namespace.
namespace hosts_report_detail {

using analysis::HostsComparison;

// A cell of a pair's table: "1.24x faster", "-" where the host lacks a cell.
std::string cell_text(const analysis::HostPairCell& cell) {
    return cell.effect ? analysis::effect_text(*cell.effect) : "-";
}

// "AMD EPYC, 2 CPUs, VM hypervisor flag set; GNU 12.2.0 RelWithDebInfo; 3 trials".
std::string describe(const analysis::Host& h) {
    const auto& p = h.run->provenance;
    return fmt::format("{}, {} CPUs{}; {} {}{}; {} trial{}",
                       p.cpu_model.empty() ? p.arch : p.cpu_model, p.logical_cpus,
                       p.vm_hint.empty() ? "" : ", VM " + p.vm_hint, p.compiler, p.build_type,
                       p.assertions ? ", ASSERTIONS ON" : "", h.run->spec.trials,
                       h.run->spec.trials == 1 ? "" : "s");
}

std::string method(const HostsComparison& hosts) {
    std::vector<std::string> families;
    for (const auto& h : hosts.hosts) families.push_back(std::to_string(h.family));
    return fmt::format(
        "Each host's verdicts come from its own trials only: {}, {} at {:g}% family-wise "
        "confidence, Bonferroni over each host's comparisons ({}); faster/slower outside the {} "
        "band, equivalent inside it, inconclusive otherwise.",
        analysis::kMethodStatistic, analysis::kMethodInterval, hosts.options.confidence * 100,
        fmt::join(families, ", "), analysis::band_text(hosts.options.equivalence));
}

const char* verdict_class(const analysis::HostPairCell& cell) {
    if (!cell.effect) return "none";
    switch (cell.effect->verdict) {
        case analysis::Verdict::faster:
            return "faster";
        case analysis::Verdict::slower:
            return "slower";
        case analysis::Verdict::equivalent:
            return "equivalent";
        default:
            return "open";
    }
}

// Dash patterns per host, so a host keeps its line style in every plot (colours are the locks').
const char* host_dash(std::size_t host) {
    static const char* const dashes[] = {"", "7 4", "2 3", "9 3 2 3", "4 4", "1 5"};
    return dashes[host % std::size(dashes)];
}

}  // namespace hosts_report_detail

using namespace hosts_report_detail;

std::string hosts_text(const HostsComparison& hosts) {
    std::string out = fmt::format("lockprof report: {} hosts\n", hosts.hosts.size());
    {
        TextTable table;
        using A = TextTable::Align;
        table.set_header({"host", "file", "machine and build"}, {A::left, A::left, A::left});
        for (const auto& h : hosts.hosts) table.add_row({h.label, h.file, describe(h)});
        out += table.render();
    }
    for (const auto& w : hosts.warnings) out += "warning: " + w + "\n";
    for (const auto& a : hosts.absent) out += "not compared: " + a + "\n";
    if (hosts.locks.size() < 2)
        out += fmt::format(
            "\nNo lock pair is in every file ({}): run the same --lock list on every host to "
            "compare locks across them.\n",
            hosts.locks.empty() ? std::string("no lock is in all of them")
                                : "only " + hosts.locks[0] + " is in all of them");
    for (const auto& pair : hosts.pairs) {
        out += fmt::format("\n{} vs {} (acquires/s ratio {}/{} on each host):\n", pair.other,
                           pair.base, pair.other, pair.base);
        TextTable table;
        using A = TextTable::Align;
        std::vector<std::string> header{"host"};
        std::vector<A> align{A::left};
        for (auto t : hosts.threads) header.push_back(threads_text(t)), align.push_back(A::left);
        table.set_header(header, align);
        for (const auto& row : pair.rows) {
            std::vector<std::string> cells{hosts.hosts[row.host].label};
            for (const auto& c : row.cells) cells.push_back(cell_text(c));
            table.add_row(cells);
        }
        out += table.render();
        out += pair.summary + "\n";
    }
    bool any_differs = false;
    for (const auto& f : hosts.provenance) any_differs |= f.differs || f.explains;
    if (any_differs) {
        out += "\nWhere the hosts differ (! can explain a result by itself):\n";
        for (const auto& f : hosts.provenance) {
            if (!f.differs && !f.explains) continue;
            std::vector<std::string> values;
            for (std::size_t i = 0; i < hosts.hosts.size(); ++i)
                values.push_back(fmt::format("{}: {}", hosts.hosts[i].name, f.values[i]));
            out += fmt::format("{} {}\n      {}\n", f.explains ? "!" : " ", f.label,
                               fmt::join(values, " | "));
            if (f.explains) out += fmt::format("      why it matters: {}\n", f.why);
        }
    }
    out += "\nPMU evidence (each host's largest thread count):\n";
    for (const auto& ev : hosts.evidence) {
        const auto& h = hosts.hosts[ev.host];
        if (ev.lines.empty()) {
            out += fmt::format("  {}: {}\n", h.label, ev.not_counted);
            continue;
        }
        out += fmt::format("  {} at {}:\n", h.label, threads_text(ev.threads));
        for (const auto& line : ev.lines) out += "    " + line + "\n";
        if (!ev.not_counted.empty()) out += "    " + ev.not_counted + "\n";
    }
    out += "\n" + method(hosts) + "\n";
    return out;
}

PlotSpec hosts_plot(const HostsComparison& hosts, bool normalised) {
    PlotSpec spec;
    spec.id = normalised ? "plot-hosts-normalised" : "plot-hosts";
    spec.title = normalised ? "Scaling on each host (relative to its fewest threads)"
                            : "Throughput vs threads on each host";
    spec.subtitle = normalised ? "acquires/s divided by the same host's and lock's figure at the "
                                 "fewest threads it ran; 1 = no loss"
                               : "median of the trials, bars: min\u2013max";
    spec.x_label = "threads (log\u2082 scale)";
    spec.y_label = normalised ? "relative throughput" : "acquires/s (all threads)";
    spec.height = 420;
    // The locks of the report first (each its colour), then any lock only some files have.
    std::vector<std::string> locks = hosts.locks;
    for (const auto& h : hosts.hosts)
        for (const auto& s : h.summaries)
            if (s.cell && std::find(locks.begin(), locks.end(), s.cell->lock) == locks.end())
                locks.push_back(s.cell->lock);
    for (std::size_t l = 0; l < locks.size(); ++l)
        for (std::size_t i = 0; i < hosts.hosts.size(); ++i) {
            const auto& h = hosts.hosts[i];
            PlotSeries series;
            series.name = fmt::format("{} \u00b7 {}", locks[l], h.name);
            series.colour = series_colour(l);
            series.dash = host_dash(i);
            const analysis::CellSummary* first = nullptr;
            for (const auto& s : h.summaries)
                if (s.cell && s.cell->lock == locks[l] && s.trials > 0 &&
                    (!first || s.cell->threads < first->cell->threads))
                    first = &s;
            if (!first || (normalised && first->acquires_per_second.median <= 0)) continue;
            const double scale = normalised ? 1.0 / first->acquires_per_second.median : 1.0;
            for (const auto& s : h.summaries) {
                if (!s.cell || s.cell->lock != locks[l] || s.trials == 0) continue;
                const auto& v = s.acquires_per_second;
                PlotPoint p;
                p.x = s.cell->threads;
                p.y = v.median * scale;
                if (v.values.size() > 1) p.low = v.min * scale, p.high = v.max * scale;
                p.tooltip = fmt::format(
                    "{} on {}, {}: {}", locks[l], h.name, threads_text(s.cell->threads),
                    normalised ? fmt::format("{:.2f}x", p.y) : format_si(v.median) + " acquires/s");
                series.points.push_back(std::move(p));
            }
            spec.series.push_back(std::move(series));
        }
    return spec;
}

std::string hosts_html(const HostsComparison& hosts, const std::string& title) {
    const auto& first = hosts.hosts.front().run->provenance;
    const auto esc = [](std::string_view t) { return html::escape(t); };
    std::string out =
        html::head(fmt::format("{}: {} hosts", title, hosts.hosts.size()), first.lockprof_version);
    out += fmt::format(
        "<header>\n<h1>{}</h1>\n<p class=\"sub\">{} hosts &middot; {} &middot; {}</p>\n"
        "</header>\n",
        esc(title), hosts.hosts.size(),
        esc(hosts.locks.empty() ? std::string("no lock in every file")
                                : fmt::format("{}", fmt::join(hosts.locks, ", "))),
        esc(fmt::format("{}", fmt::join(hosts.threads, ", "))) + " threads");
    for (const auto& w : hosts.warnings)
        out += fmt::format("<div class=\"banner\">{}</div>\n", esc(w));

    std::vector<html::Section> sections;
    {
        std::string body =
            "<div class=\"scroll\"><table id=\"hosts\"><thead><tr><th>host</th>"
            "<th class=\"l\">file</th><th class=\"l\">machine and build</th>"
            "</tr></thead><tbody>\n";
        for (const auto& h : hosts.hosts)
            body += fmt::format(
                "<tr><td>{}</td><td class=\"l wrap\">{}</td><td class=\"l wrap\">{}</td></tr>\n",
                esc(h.label), esc(h.file), esc(describe(h)));
        body += "</tbody></table></div>\n";
        if (!hosts.absent.empty()) {
            body += "<ul class=\"notes\">\n";
            for (const auto& a : hosts.absent)
                body += fmt::format("<li>not compared: {}</li>\n", esc(a));
            body += "</ul>\n";
        }
        sections.push_back({"hosts-list", "Hosts", "Hosts", body});
    }
    std::string verdicts;
    if (hosts.pairs.empty())
        verdicts =
            "<p class=\"muted\">No lock pair is in every file: run the same --lock list on "
            "every host to compare locks across them.</p>\n";
    for (std::size_t k = 0; k < hosts.pairs.size(); ++k) {
        const auto& pair = hosts.pairs[k];
        verdicts +=
            fmt::format("<div class=\"pair\"><h3>{} vs {}</h3>\n", esc(pair.other), esc(pair.base));
        verdicts += fmt::format("<p class=\"conclusion\" id=\"pair-{}-summary\">{}</p>\n", k + 1,
                                esc(pair.summary));
        verdicts += fmt::format(
            "<div class=\"scroll\"><table class=\"host-verdicts\" id=\"pair-{}\" "
            "data-pair=\"{} vs {}\"><thead><tr><th>host</th>",
            k + 1, esc(pair.other), esc(pair.base));
        for (auto t : hosts.threads) verdicts += fmt::format("<th>{}</th>", esc(threads_text(t)));
        verdicts += "<th class=\"l\">on this host</th></tr></thead><tbody>\n";
        for (const auto& row : pair.rows) {
            verdicts +=
                fmt::format("<tr data-host=\"{}\"><td>{}</td>", esc(hosts.hosts[row.host].name),
                            esc(hosts.hosts[row.host].label));
            for (const auto& c : row.cells)
                verdicts += fmt::format(
                    "<td class=\"v-{}\" title=\"{}\">{}</td>", verdict_class(c),
                    esc(c.effect ? "interval " + analysis::interval_text(*c.effect) : "no cell"),
                    esc(cell_text(c)));
            verdicts += fmt::format("<td class=\"l\">{}</td></tr>\n", esc(row.verdicts));
        }
        verdicts += "</tbody></table></div></div>\n";
    }
    verdicts += fmt::format("<p class=\"muted\">{}</p>\n", esc(method(hosts)));
    sections.push_back({"verdicts", "Verdicts", "Lock pairs on every host", verdicts});

    sections.push_back(
        {"scalability", "Scalability", "Throughput and scaling, host by host",
         "<div class=\"grid\">\n<figure>" + render_plot(hosts_plot(hosts, false)) +
             "<figcaption>One colour per lock, one dash pattern and marker per host; thread "
             "counts on one axis for every host.</figcaption></figure>\n<figure>" +
             render_plot(hosts_plot(hosts, true)) +
             "<figcaption>Each line divided by its own first point: how each host's lock "
             "scales, whatever its absolute speed.</figcaption></figure>\n</div>\n"});

    {
        std::string body =
            "<p class=\"muted\">Rows that differ between hosts are shaded; red rows can explain "
            "a result by themselves (the reason is in the last column).</p>\n<div "
            "class=\"scroll\"><table id=\"hosts-provenance\"><thead><tr><th>field</th>";
        for (const auto& h : hosts.hosts)
            body += fmt::format("<th class=\"l\">{}</th>", esc(h.name));
        body += "<th class=\"l\">why it matters</th></tr></thead><tbody>\n";
        for (const auto& f : hosts.provenance) {
            body += fmt::format("<tr id=\"field-{}\"{}><td>{}</td>", esc(f.field),
                                f.explains  ? " class=\"explains\""
                                : f.differs ? " class=\"differs\""
                                            : "",
                                esc(f.label));
            for (const auto& v : f.values)
                body += fmt::format("<td class=\"l wrap\">{}</td>", esc(v));
            body += fmt::format("<td class=\"l wrap\">{}</td></tr>\n", esc(f.why));
        }
        body += "</tbody></table></div>\n";
        sections.push_back({"provenance", "Provenance", "The hosts side by side", body});
    }
    {
        std::string body =
            "<p class=\"muted\">Hardware events per acquire at each host's "
            "largest thread count (medians of the trials).</p>\n<ul "
            "id=\"pmu-evidence\">\n";
        for (const auto& ev : hosts.evidence) {
            const auto& h = hosts.hosts[ev.host];
            if (ev.lines.empty()) {
                body += fmt::format("<li><b>{}</b>: <span class=\"muted\">{}</span></li>\n",
                                    esc(h.label), esc(ev.not_counted));
                continue;
            }
            body += fmt::format("<li><b>{}</b> at {}:<ul>", esc(h.label),
                                esc(threads_text(ev.threads)));
            for (const auto& line : ev.lines) body += fmt::format("<li>{}</li>", esc(line));
            if (!ev.not_counted.empty())
                body += fmt::format("<li class=\"muted\">{}</li>", esc(ev.not_counted));
            body += "</ul></li>\n";
        }
        body += "</ul>\n";
        sections.push_back({"pmu", "PMU evidence", "What each host's PMU counted", body});
    }
    out += html::navigation(sections) + html::sections(sections);
    return out + html::footer(first.lockprof_version, first.git_revision);
}

}  // namespace lockprof::report
