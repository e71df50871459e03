// A recording's HTML report, rendered from its document (record_document.hpp) with the page,
// sections and instruction tables of the run report (html_page.hpp).
#include <cctype>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/files.hpp"
#include "lockprof/common/number_format.hpp"
#include "lockprof/report/record_document.hpp"
#include "lockprof/report/record_report.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "report/html_page.hpp"

namespace lockprof::report {
namespace {

using html::escape;

std::string percent(double share) {
    return fmt::format("{:.2f}%", share * 100);
}

std::string row(const std::vector<std::string>& cells, const std::string& cls = "") {
    std::string out = cls.empty() ? "<tr>" : "<tr class=\"" + cls + "\">";
    for (const auto& c : cells) out += "<td>" + c + "</td>";
    return out + "</tr>\n";
}

std::string table(const std::vector<std::string>& header, const std::string& rows,
                  std::size_t left_from = 0) {
    std::string out = "<div class=\"scroll\"><table><thead><tr>";
    for (std::size_t i = 0; i < header.size(); ++i)
        out += fmt::format("<th{}>{}</th>", i >= left_from && left_from ? " class=\"l\"" : "",
                           escape(header[i]));
    return out + "</tr></thead><tbody>\n" + rows + "</tbody></table></div>\n";
}

std::string notes_list(const std::vector<std::string>& items) {
    if (items.empty()) return "";
    std::string out = "<ul class=\"notes\">\n";
    for (const auto& n : items) out += "<li>" + escape(n) + "</li>\n";
    return out + "</ul>\n";
}

std::string target_text(const RecordTarget& target) {
    switch (target.mode) {
        case record::Mode::command:
            return fmt::format("command: {}", fmt::join(target.command, " "));
        case record::Mode::pid:
            return fmt::format("pids: {}", fmt::join(target.pids, ","));
        case record::Mode::match:
            break;
    }
    return fmt::format("processes named '{}'", target.match);
}

std::string prov_row(const std::string& name, const std::string& value) {
    return fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape(name),
                       escape(value.empty() ? "(unknown)" : value));
}

std::string target_section(const RecordDocument& doc) {
    const auto& p = doc.provenance;
    std::string out = "<dl class=\"prov\">\n";
    out += prov_row("target", target_text(doc.target));
    std::string recorded = fmt::format("{:.2f} s", doc.duration_s);
    if (doc.interrupted)
        recorded += doc.interrupted_by.empty() ? " (interrupted)"
                                               : " (interrupted by " + doc.interrupted_by + ")";
    if (doc.exit_status) recorded += fmt::format("; exit status {}", *doc.exit_status);
    out += prov_row("recorded", recorded);
    if (doc.instrument_cost) out += prov_row("instruments' cost", doc.instrument_cost->summary);
    out += prov_row("CPU", fmt::format("{}, {} logical CPUs", p.cpu_model, p.logical_cpus));
    out += prov_row("architecture", p.arch);
    out += prov_row("VM hint", p.vm_hint.empty() ? "none detected" : p.vm_hint);
    out += prov_row("kernel", p.kernel);
    out += prov_row("perf_event_paranoid", p.perf_event_paranoid == -99
                                               ? "unreadable"
                                               : std::to_string(p.perf_event_paranoid));
    out += prov_row("lockprof", fmt::format("{} ({})", p.lockprof_version, p.git_revision));
    out += prov_row("host, date", fmt::format("{}, {}", p.hostname, p.timestamp_utc));
    out += prov_row("command", p.command_line);
    return out + "</dl>\n" + notes_list(doc.notes);
}

std::string value_cell(const record::CounterTotal& total) {
    return total.value ? escape(format_si(*total.value)) : "not counted";
}

std::string counters_section(const RecordDocument& doc) {
    if (doc.events.empty()) return "<p class=\"muted\">Nothing was counted (--no-counters).</p>\n";
    std::vector<std::string> header{"pid", "name", "threads"};
    header.insert(header.end(), doc.events.begin(), doc.events.end());
    std::string rows;
    for (const auto& proc : doc.processes) {
        if (proc.counters.empty()) continue;
        std::vector<std::string> cells{
            std::to_string(proc.info.pid),
            escape(proc.info.comm + (proc.exited ? " (exited)" : "")),
            !proc.inherited_counters.empty() ? "all" : std::to_string(proc.threads.size())};
        for (const auto& t : proc.counters) cells.push_back(value_cell(t));
        rows += row(cells);
    }
    std::vector<std::string> total{"", "total", ""}, rate{"", "per second", ""};
    for (const auto& t : doc.totals) {
        total.push_back(value_cell(t));
        rate.push_back(t.value ? escape(format_si(t.per_second)) : "");
    }
    rows += row(total) + row(rate);
    return "<p class=\"muted\">task_clock in ns; per process, the sum of its threads.</p>\n" +
           table(header, rows);
}

std::string symbols_section(const RecordDocument& doc) {
    if (!doc.sampling)
        return "<p class=\"muted\">The recording was not sampled; record with "
               "<code>--sample</code> to see the hottest symbols.</p>\n";
    const auto& s = *doc.sampling;
    const auto& info = s.info;
    std::string out =
        fmt::format("<p>{} samples of {} ({}), {} lost{}.</p>\n", s.samples, escape(info.event),
                    info.frequency ? fmt::format("{} Hz", info.frequency)
                                   : fmt::format("every {}", info.period),
                    s.lost, info.event_note.empty() ? "" : "; " + escape(info.event_note));
    out += fmt::format("<p class=\"muted\">Call stacks: {}.</p>\n",
                       escape(sampling::call_graph_summary(info)));
    if (s.samples == 0)
        return out + "<p class=\"muted\">No samples: the targets did not run on a CPU.</p>\n";
    std::string rows;
    for (const auto& sym : doc.hot_symbols)
        rows += row({percent(sym.share), std::to_string(sym.samples), std::to_string(sym.processes),
                     "<code>" + escape(sym.short_name) + "</code>", escape(base_name(sym.module))});
    if (s.unresolved_share > 0)
        rows += row({percent(s.unresolved_share), "", "", "[no symbol], all modules", ""});
    return out + table({"share", "samples", "procs", "symbol", "module"}, rows, 3);
}

// An annotation entry as the listing code holds it: the instruction's text as listed.
attribution::HotFunction hot_function(const RecordAnnotation& a) {
    attribution::HotFunction f;
    f.name = a.symbol;
    f.short_name = a.short_name;
    f.module = a.module;
    f.share = a.share;
    f.loop_rule = a.loop_rule;
    f.error = a.error;
    for (const auto& i : a.instructions) {
        attribution::AnnotatedInstruction ai;
        ai.instruction.address = i.address;
        ai.instruction.mnemonic = i.listing;
        ai.share = i.share;
        ai.in_acquire_loop = i.in_loop;
        ai.source = i.source;
        f.instructions.push_back(std::move(ai));
    }
    return f;
}

constexpr unsigned kListingRows = 24;

std::string annotation_section(const RecordDocument& doc) {
    if (!doc.sampling || doc.annotations.empty())
        return "<p class=\"muted\">No annotated functions: the recording was not sampled, or "
               "no sampled function could be disassembled.</p>\n";
    std::string out = fmt::format(
        "<p class=\"muted\">{}. Rows in each function's hottest loop are shaded; shares are of "
        "all samples.</p>\n",
        escape(doc.sampling->info.precise_note));
    for (const auto& a : doc.annotations) {
        const auto f = hot_function(a);
        out +=
            fmt::format("<p><b>{:.1f}%</b> <code>{}</code> <span class=\"muted\">{}{}</span></p>\n",
                        f.share * 100, escape(f.short_name), escape(f.module),
                        f.loop_rule.empty() ? "" : "; " + escape(f.loop_rule));
        if (!f.error.empty())
            out += fmt::format("<p class=\"muted\">not disassembled: {}</p>\n", escape(f.error));
        else
            out += html::instruction_table(f, kListingRows);
    }
    return out;
}

std::string spin_section(const RecordDocument& doc) {
    const auto& spin = doc.spin_locks;
    std::string probed;
    if (!spin.probed_functions.empty())
        probed = fmt::format(" and the functions <code>--spin</code> probed, <code>{}</code>",
                             escape(fmt::format("{}", fmt::join(spin.probed_functions, ", "))));
    std::string out = fmt::format("<p>Functions matching <code>{}</code>{}: {}.</p>\n",
                                  escape(spin.pattern), probed, escape(spin.summary));
    if (!spin.symbols.empty()) {
        std::string rows;
        for (const auto& sym : spin.symbols)
            rows +=
                row({percent(sym.share), std::to_string(sym.samples),
                     "<code>" + escape(sym.short_name) + "</code>", escape(base_name(sym.module))});
        out += table({"share", "samples", "function", "module"}, rows, 2);
    }
    if (!spin.hot_instructions.empty()) {
        std::string rows;
        for (const auto& i : spin.hot_instructions)
            rows += row({fmt::format("{:.1f}%", i.share_of_spin * 100),
                         escape(fmt::format("{:#x}", i.address)),
                         "<code>" + escape(i.text) + "</code>", escape(i.symbol)});
        out += "<h3>Hottest instructions of the spin-lock functions</h3>\n" +
               table({"of spin samples", "address", "instruction", "function"}, rows, 2);
    }
    return out;
}

std::string spin_calls_section(const RecordSpinCalls& calls) {
    const auto& sc = calls.profile;
    std::vector<std::string> probed;
    for (const auto& f : calls.functions)
        if (f.function.refused.empty())
            probed.push_back(
                fmt::format("{} in {}", f.function.function, base_name(f.function.path)));
    std::string out = fmt::format("<p>Uprobes on {}: {} entries, {} in the slow path.</p>\n",
                                  escape(fmt::format("{}", fmt::join(probed, ", "))), sc.entries,
                                  duration_text(sc.total_ns));
    std::string rows;
    for (const auto& site : sc.sites) {
        const bool timed = site.timed > 0;
        rows += row({std::to_string(site.entries), duration_text(site.total_ns),
                     timed ? duration_text(site.mean_ns) : "",
                     timed ? duration_text(site.max_ns) : "", std::to_string(site.processes),
                     "<code>" + escape(site.function) + "</code>", escape(site.site)});
    }
    if (!rows.empty())
        out +=
            table({"entries", "total", "mean", "max", "procs", "function", "call site"}, rows, 5);
    else
        out +=
            "<p class=\"muted\">No entries: the probed functions were not called while "
            "recording.</p>\n";
    return out + notes_list(sc.notes);
}

}  // namespace

std::string render_record_html(const RecordDocument& doc, const std::string& title) {
    const auto& p = doc.provenance;
    std::vector<html::Section> sections{
        {"target", "Target", "Target and provenance", target_section(doc)},
        {"counters", "Counters", "Counters", counters_section(doc)},
        {"symbols", "Hottest symbols", "Hottest symbols", symbols_section(doc)},
        {"annotation", "Hot instructions", "Hot instructions", annotation_section(doc)},
        {"spin", "Spin locks", "Spin locks", spin_section(doc)},
    };
    if (doc.spin_calls)
        sections.push_back({"spin-calls", "Spin call sites", "Spin slow paths by call site",
                            spin_calls_section(*doc.spin_calls)});
    std::vector<std::string> warnings = doc.warnings;
    if (doc.instrument_cost && !doc.instrument_cost->warning.empty())
        warnings.push_back(doc.instrument_cost->warning);
    if (!warnings.empty())
        sections.push_back({"warnings", "Warnings", "Warnings", notes_list(warnings)});
    std::string out =
        html::head(fmt::format("{}: {}", title, target_text(doc.target)), p.lockprof_version);
    out += fmt::format(
        "<header>\n<h1>{}</h1>\n<p class=\"sub\">lockprof record of {} on {} &middot; {}</p>\n"
        "</header>\n",
        escape(title), escape(target_text(doc.target)),
        escape(p.cpu_model.empty() ? p.arch : p.cpu_model), escape(p.timestamp_utc));
    if (const auto failed = failed_command_sentence(doc.exit_status); !failed.empty()) {
        std::string sentence = failed;
        sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
        out += "<div class=\"banner\">" + escape(sentence) + ".</div>\n";
    }
    if (doc.interrupted)
        out +=
            "<div class=\"banner\">The recording was interrupted: it holds what was recorded "
            "until then.</div>\n";
    return out + html::navigation(sections) + html::sections(sections) +
           html::footer(p.lockprof_version, p.git_revision);
}

std::string render_record_html(const record::RecordResult& result,
                               const record::RecordAnalysis& profile, const std::string& title) {
    return render_record_html(record_document_as_read(result, profile), title);
}

}  // namespace lockprof::report
