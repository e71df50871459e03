// A recording's HTML report, rendered from its lockprof.record JSON document with the page,
// sections and instruction tables of the run report (html_page.hpp).
#include <cctype>
#include <charconv>
#include <utility>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/common/number_format.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/record_report.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "report/html_page.hpp"

namespace lockprof::report {
namespace {

using html::escape;
using nlohmann::json;

std::string str(const json& j, const char* key) {
    return j.at(key).get<std::string>();
}

double num(const json& j, const char* key) {
    return j.at(key).get<double>();
}

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

template <typename T>
T whole(const json& j, const char* key) {
    return whole_value<T>(j.at(key), key);
}

// whole(j, key), or `fallback` where j has no `key` (recordings written before it existed).
template <typename T>
T whole_or(const json& j, const char* key, T fallback) {
    return j.contains(key) ? whole<T>(j, key) : fallback;
}

// An instruction's address as the writer puts it, "0x8ff73".
std::uint64_t hex_address(const std::string& text) {
    const std::string_view digits = std::string_view(text).substr(text.starts_with("0x") ? 2 : 0);
    std::uint64_t address = 0;
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), address, 16);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size())
        incomplete(fmt::format("\"address\": \"{}\" is not a hex address", text));
    return address;
}

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

std::string notes_list(const json& items) {
    if (items.empty()) return "";
    std::string out = "<ul class=\"notes\">\n";
    for (const auto& n : items) out += "<li>" + escape(n.get<std::string>()) + "</li>\n";
    return out + "</ul>\n";
}

std::string target_text(const json& target) {
    const std::string mode = str(target, "mode");
    if (mode == "command") {
        std::vector<std::string> words = target.at("command").get<std::vector<std::string>>();
        return fmt::format("command: {}", fmt::join(words, " "));
    }
    if (mode == "pid") {
        std::vector<long> pids;
        for (const auto& pid : target.at("pids")) pids.push_back(whole_value<long>(pid, "pids"));
        return fmt::format("pids: {}", fmt::join(pids, ","));
    }
    return fmt::format("processes named '{}'", str(target, "match"));
}

std::string prov_row(const std::string& name, const std::string& value) {
    return fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape(name),
                       escape(value.empty() ? "(unknown)" : value));
}

std::string target_section(const json& doc) {
    const json& p = doc.at("provenance");
    std::string out = "<dl class=\"prov\">\n";
    out += prov_row("target", target_text(doc.at("target")));
    std::string recorded = fmt::format("{:.2f} s", num(doc, "duration_s"));
    if (doc.at("interrupted").get<bool>())
        recorded += doc.at("interrupted_by").is_null()
                        ? " (interrupted)"
                        : " (interrupted by " + str(doc, "interrupted_by") + ")";
    if (!doc.at("exit_status").is_null())
        recorded += fmt::format("; exit status {}", whole<int>(doc, "exit_status"));
    out += prov_row("recorded", recorded);
    // Recordings written before the calibration have no "instrument_cost".
    if (doc.contains("instrument_cost") && !doc.at("instrument_cost").is_null())
        out += prov_row("instruments' cost", str(doc.at("instrument_cost"), "summary"));
    out += prov_row("CPU", fmt::format("{}, {} logical CPUs", str(p, "cpu_model"),
                                       whole<unsigned>(p, "logical_cpus")));
    out += prov_row("architecture", str(p, "arch"));
    out += prov_row("VM hint", p.at("vm_hint").get<std::string>().empty() ? "none detected"
                                                                          : str(p, "vm_hint"));
    out += prov_row("kernel", str(p, "kernel"));
    const int paranoid = whole<int>(p, "perf_event_paranoid");
    out +=
        prov_row("perf_event_paranoid", paranoid == -99 ? "unreadable" : std::to_string(paranoid));
    out += prov_row("lockprof",
                    fmt::format("{} ({})", str(p, "lockprof_version"), str(p, "git_revision")));
    out +=
        prov_row("host, date", fmt::format("{}, {}", str(p, "hostname"), str(p, "timestamp_utc")));
    out += prov_row("command", str(p, "command_line"));
    return out + "</dl>\n" + notes_list(doc.at("notes"));
}

std::string value_cell(const json& total) {
    return total.at("counted").get<bool>() ? escape(format_si(num(total, "value"))) : "not counted";
}

std::string counters_section(const json& doc) {
    const auto events = doc.at("events").get<std::vector<std::string>>();
    if (events.empty()) return "<p class=\"muted\">Nothing was counted (--no-counters).</p>\n";
    std::vector<std::string> header{"pid", "name", "threads"};
    header.insert(header.end(), events.begin(), events.end());
    std::string rows;
    for (const auto& proc : doc.at("processes")) {
        if (proc.at("counters").empty()) continue;
        std::vector<std::string> cells{
            std::to_string(whole<long>(proc, "pid")),
            escape(str(proc, "comm") + (proc.at("exited").get<bool>() ? " (exited)" : "")),
            proc.contains("inherited_counters") ? "all"
                                                : std::to_string(proc.at("threads").size())};
        for (const auto& t : proc.at("counters")) cells.push_back(value_cell(t));
        rows += row(cells);
    }
    std::vector<std::string> total{"", "total", ""}, rate{"", "per second", ""};
    for (const auto& t : doc.at("totals")) {
        total.push_back(value_cell(t));
        rate.push_back(t.at("counted").get<bool>() ? escape(format_si(num(t, "per_second"))) : "");
    }
    rows += row(total) + row(rate);
    return "<p class=\"muted\">task_clock in ns; per process, the sum of its threads.</p>\n" +
           table(header, rows);
}

std::string symbols_section(const json& doc) {
    const json& s = doc.at("sampling");
    if (s.is_null())
        return "<p class=\"muted\">The recording was not sampled; record with "
               "<code>--sample</code> to see the hottest symbols.</p>\n";
    const auto samples = whole<std::uint64_t>(s, "samples");
    const auto frequency = whole<std::uint64_t>(s, "frequency");
    std::string out = fmt::format(
        "<p>{} samples of {} ({}), {} lost{}.</p>\n", samples, escape(str(s, "event")),
        frequency ? fmt::format("{} Hz", frequency)
                  : fmt::format("every {}", whole<std::uint64_t>(s, "period")),
        whole<std::uint64_t>(s, "lost"),
        s.at("event_note").get<std::string>().empty() ? "" : "; " + escape(str(s, "event_note")));
    // Recordings written before --call-graph existed took frame-pointer stacks.
    profiling::SamplingInfo stacks;
    stacks.call_graph = s.value("call_graph", std::string("fp"));
    stacks.stack_size = whole_or(s, "stack_size", std::uint32_t{0});
    stacks.unwound = whole_or(s, "unwound", std::uint64_t{0});
    stacks.unwound_without_callers = whole_or(s, "unwound_without_callers", std::uint64_t{0});
    stacks.unwind_seconds = s.value("unwind_s", 0.0);
    out += fmt::format("<p class=\"muted\">Call stacks: {}.</p>\n",
                       escape(sampling::call_graph_summary(stacks)));
    if (samples == 0)
        return out + "<p class=\"muted\">No samples: the targets did not run on a CPU.</p>\n";
    std::string rows;
    for (const auto& sym : doc.at("hot_symbols"))
        rows +=
            row({percent(num(sym, "share")), std::to_string(whole<std::uint64_t>(sym, "samples")),
                 std::to_string(whole<std::size_t>(sym, "processes")),
                 "<code>" + escape(str(sym, "short_name")) + "</code>",
                 escape(base_name(str(sym, "module")))});
    if (const double unresolved = num(s, "unresolved_share"); unresolved > 0)
        rows += row({percent(unresolved), "", "", "[no symbol], all modules", ""});
    return out + table({"share", "samples", "procs", "symbol", "module"}, rows, 3);
}

// An annotation entry as the listing code holds it: the instruction's text as listed.
attribution::HotFunction hot_function(const json& a) {
    attribution::HotFunction f;
    f.name = str(a, "symbol");
    f.short_name = str(a, "short_name");
    f.module = str(a, "module");
    f.share = num(a, "share");
    f.loop_rule = str(a, "loop_rule");
    f.error = str(a, "error");
    for (const auto& i : a.at("instructions")) {
        attribution::AnnotatedInstruction ai;
        ai.instruction.address = hex_address(str(i, "address"));
        ai.instruction.mnemonic = str(i, "listing");
        ai.share = num(i, "share");
        ai.in_acquire_loop = i.at("in_loop").get<bool>();
        ai.source = str(i, "source");
        f.instructions.push_back(std::move(ai));
    }
    return f;
}

constexpr unsigned kListingRows = 24;

std::string annotation_section(const json& doc) {
    if (doc.at("sampling").is_null() || doc.at("annotations").empty())
        return "<p class=\"muted\">No annotated functions: the recording was not sampled, or "
               "no sampled function could be disassembled.</p>\n";
    std::string out = fmt::format(
        "<p class=\"muted\">{}. Rows in each function's hottest loop are shaded; shares are of "
        "all samples.</p>\n",
        escape(str(doc.at("sampling"), "precise_note")));
    for (const auto& a : doc.at("annotations")) {
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

std::string spin_section(const json& doc) {
    const json& spin = doc.at("spin_locks");
    std::string probed;
    if (spin.contains("probed_functions") && !spin.at("probed_functions").empty())
        probed = fmt::format(
            " and the functions <code>--spin</code> probed, <code>{}</code>",
            escape(fmt::format(
                "{}",
                fmt::join(spin.at("probed_functions").get<std::vector<std::string>>(), ", "))));
    std::string out =
        fmt::format("<p>Functions matching <code>{}</code>{}: {}.</p>\n",
                    escape(str(spin, "pattern")), probed, escape(str(spin, "summary")));
    if (!spin.at("symbols").empty()) {
        std::string rows;
        for (const auto& sym : spin.at("symbols"))
            rows += row({percent(num(sym, "share")),
                         std::to_string(whole<std::uint64_t>(sym, "samples")),
                         "<code>" + escape(str(sym, "short_name")) + "</code>",
                         escape(base_name(str(sym, "module")))});
        out += table({"share", "samples", "function", "module"}, rows, 2);
    }
    if (!spin.at("hot_instructions").empty()) {
        std::string rows;
        for (const auto& i : spin.at("hot_instructions"))
            rows += row({fmt::format("{:.1f}%", num(i, "share_of_spin") * 100),
                         escape(str(i, "address")), "<code>" + escape(str(i, "text")) + "</code>",
                         escape(str(i, "symbol"))});
        out += "<h3>Hottest instructions of the spin-lock functions</h3>\n" +
               table({"of spin samples", "address", "instruction", "function"}, rows, 2);
    }
    return out;
}

std::string spin_calls_section(const json& doc) {
    const json& sc = doc.at("spin_calls");
    std::vector<std::string> probed;
    for (const auto& f : sc.at("functions"))
        if (str(f, "refused").empty())
            probed.push_back(
                fmt::format("{} in {}", str(f, "function"), base_name(str(f, "path"))));
    std::string out =
        fmt::format("<p>Uprobes on {}: {} entries, {} in the slow path.</p>\n",
                    escape(fmt::format("{}", fmt::join(probed, ", "))),
                    whole<std::uint64_t>(sc, "entries"), duration_text(num(sc, "total_ns")));
    std::string rows;
    for (const auto& site : sc.at("sites")) {
        const bool timed = whole<std::uint64_t>(site, "timed") > 0;
        rows += row(
            {std::to_string(whole<std::uint64_t>(site, "entries")),
             duration_text(num(site, "total_ns")), timed ? duration_text(num(site, "mean_ns")) : "",
             timed ? duration_text(num(site, "max_ns")) : "",
             std::to_string(whole<std::size_t>(site, "processes")),
             "<code>" + escape(str(site, "function")) + "</code>", escape(str(site, "site"))});
    }
    if (!rows.empty())
        out +=
            table({"entries", "total", "mean", "max", "procs", "function", "call site"}, rows, 5);
    else
        out +=
            "<p class=\"muted\">No entries: the probed functions were not called while "
            "recording.</p>\n";
    return out + notes_list(sc.at("notes"));
}

std::string render(const json& doc, const std::string& title) {
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
    const json& p = doc.at("provenance");
    std::vector<html::Section> sections{
        {"target", "Target", "Target and provenance", target_section(doc)},
        {"counters", "Counters", "Counters", counters_section(doc)},
        {"symbols", "Hottest symbols", "Hottest symbols", symbols_section(doc)},
        {"annotation", "Hot instructions", "Hot instructions", annotation_section(doc)},
        {"spin", "Spin locks", "Spin locks", spin_section(doc)},
    };
    if (!doc.at("spin_calls").is_null())
        sections.push_back({"spin-calls", "Spin call sites", "Spin slow paths by call site",
                            spin_calls_section(doc)});
    json warnings = doc.at("warnings");
    if (doc.contains("instrument_cost") && !doc.at("instrument_cost").is_null() &&
        !str(doc.at("instrument_cost"), "warning").empty())
        warnings.push_back(str(doc.at("instrument_cost"), "warning"));
    if (!warnings.empty())
        sections.push_back({"warnings", "Warnings", "Warnings", notes_list(warnings)});
    std::string out = html::head(fmt::format("{}: {}", title, target_text(doc.at("target"))),
                                 str(p, "lockprof_version"));
    out += fmt::format(
        "<header>\n<h1>{}</h1>\n<p class=\"sub\">lockprof record of {} on {} &middot; {}</p>\n"
        "</header>\n",
        escape(title), escape(target_text(doc.at("target"))),
        escape(str(p, str(p, "cpu_model").empty() ? "arch" : "cpu_model")),
        escape(str(p, "timestamp_utc")));
    const auto& status = doc.at("exit_status");
    if (const auto failed = failed_command_sentence(
            status.is_null() ? std::nullopt : std::optional<int>(whole<int>(doc, "exit_status")));
        !failed.empty()) {
        std::string sentence = failed;
        sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
        out += "<div class=\"banner\">" + escape(sentence) + ".</div>\n";
    }
    if (doc.at("interrupted").get<bool>())
        out +=
            "<div class=\"banner\">The recording was interrupted: it holds what was recorded "
            "until then.</div>\n";
    return out + html::navigation(sections) + html::sections(sections) +
           html::footer(str(p, "lockprof_version"), str(p, "git_revision"));
}

}  // namespace

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

std::string render_record_html(const json& doc, const std::string& title) {
    try {
        return render(doc, title);
    } catch (const json::exception& e) {
        incomplete(e.what());
    }
}

std::string render_record_html(const record::RecordResult& result,
                               const record::RecordAnalysis& profile, const std::string& title) {
    return render_record_html(json::parse(json_text(record_to_json(result, profile), 1)), title);
}

}  // namespace lockprof::report
