#include "lockprof/report/compare_report.hpp"

#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "lockprof/common/number_format.hpp"
#include "lockprof/analysis/hosts.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/run_report.hpp"
#include "lockprof/report/text_table.hpp"
#include "lockprof/workload/lock_page.hpp"
#include "lockprof/workload/provenance.hpp"

namespace lockprof::report {

// Named, not anonymous: unity batches (LOCKPROF_UNITY_BUILD) share one anonymous namespace.
namespace compare_detail {

std::string describe(const workload::RunResult& run) {
    const auto& p = run.provenance;
    const std::string_view lse = workload::lse_label(p);
    std::string frequency;
    if (!p.cpufreq_governor.empty()) frequency += ", governor " + p.cpufreq_governor;
    if (!p.cpu_boost.empty()) frequency += ", boost " + p.cpu_boost;
    return fmt::format(
        "lockprof {} on {}{}{}{}, {} {}{}, kernel {}, pin {}, lock page {}, {} trial{}, {}",
        p.lockprof_version, p.cpu_model.empty() ? p.arch : p.cpu_model,
        lse.empty() ? "" : fmt::format(" ({})", lse), p.vm_hint.empty() ? "" : ", VM " + p.vm_hint,
        frequency, p.compiler, p.build_type, p.assertions ? ", ASSERTIONS ON" : "", p.kernel,
        workload::pin_mode_name(run.spec.pin.mode),
        workload::lock_placement_label(workload::lock_placement(run)), run.spec.trials,
        run.spec.trials == 1 ? "" : "s", p.timestamp_utc);
}

// "across hosts: base ran on vm (AMD EPYC, x86_64), new on n1 (Neoverse-N1, aarch64, LSE);
// hostname, arch, cpu_model differ: ...", "" for runs of one machine.
std::string across_hosts_line(const workload::RunResult& base, const workload::RunResult& other,
                              const analysis::RunComparison& c) {
    if (c.host_differences.empty()) return "";
    const auto host = [](const workload::Provenance& p) {
        const std::string_view lse = workload::lse_label(p);
        return fmt::format("{} ({}, {}{})", analysis::host_name(p),
                           p.cpu_model.empty() ? "unknown CPU" : p.cpu_model, p.arch,
                           lse.empty() ? "" : fmt::format(", {}", lse));
    };
    return fmt::format(
        "across hosts: base ran on {}, new on {}; {} differ{}: each ratio compares the machines "
        "as much as the runs",
        host(base.provenance), host(other.provenance), fmt::join(c.host_differences, ", "),
        c.host_differences.size() == 1 ? "s" : "");
}

std::string cell_list(const std::vector<analysis::MissingCell>& cells) {
    std::string out;
    for (const auto& c : cells)
        out += fmt::format("{}{}/{}t", out.empty() ? "" : ", ", c.lock, c.threads);
    return out;
}

std::string test_statement(const analysis::RunComparison& c) {
    return analysis::method_text(c.options, c.family) + "; " + c.resampling + "; " +
           std::string(analysis::kSpreadDefinition) + "; " + analysis::kOutlierPolicy;
}

// Under a comparison's table: what stays open per cell (inconclusive cells and what would
// settle them, stated limits, outliers), then the method.
std::vector<std::string> cell_notes(const analysis::RunComparison& comparison) {
    std::vector<std::string> out;
    for (const auto& cell : comparison.cells) {
        const auto& e = cell.effect;
        const std::string name = fmt::format("{}/{}t", cell.lock, cell.threads);
        if (e.verdict == analysis::Verdict::inconclusive)
            out.push_back(fmt::format("{}: inconclusive; {}", name, analysis::settle_text(e)));
        else if (!e.limit.empty())
            out.push_back(fmt::format("{}: {}", name, e.limit));
        if (auto outliers = analysis::outlier_text(e, "base", "new"); !outliers.empty())
            out.push_back(fmt::format("{}: {}", name, outliers));
    }
    return out;
}

std::string interval_header(const analysis::RunComparison& c) {
    return fmt::format("{:g}% interval",
                       analysis::corrected_level(c.options.confidence, c.family) * 100);
}

// --read-fraction: each cell's reads and writes per second in both runs, where either had any.
std::string read_write_lines(const analysis::RunComparison& comparison) {
    std::string out;
    const auto pair = [](const std::optional<analysis::Spread>& reads,
                         const std::optional<analysis::Spread>& writes) {
        return reads && writes ? fmt::format("{} reads/s, {} writes/s", format_si(reads->median),
                                             format_si(writes->median))
                               : std::string("no reads");
    };
    for (const auto& cell : comparison.cells)
        if (cell.base_reads || cell.other_reads)
            out += fmt::format("reads and writes: {} at {}: base {}; new {}\n", cell.lock,
                               threads_text(cell.threads), pair(cell.base_reads, cell.base_writes),
                               pair(cell.other_reads, cell.other_writes));
    return out;
}

}  // namespace compare_detail

using namespace compare_detail;

std::string compare_table(const ComparedFile& base, const std::vector<FileComparison>& all) {
    std::string out;
    for (const auto& c : all) {
        if (auto line = across_hosts_line(base.run, c.other->run, c.comparison); !line.empty())
            out += line + "\n";
        out += fmt::format("base: {}\n      {}\nnew:  {}\n      {}\n", base.file,
                           describe(base.run), c.other->file, describe(c.other->run));
        for (const auto& w : c.comparison.warnings) out += "warning: " + w.message + "\n";
        out += "\n";
        TextTable table;
        using A = TextTable::Align;
        table.set_header({"lock", "threads", "base acq/s", "spread", "new acq/s", "spread",
                          "new/base", interval_header(c.comparison), "verdict"},
                         {A::left, A::right, A::right, A::right, A::right, A::right, A::right,
                          A::left, A::left});
        for (const auto& cell : c.comparison.cells)
            table.add_row({cell.lock, std::to_string(cell.threads), format_si(cell.base.median),
                           analysis::spread_text(cell.base), format_si(cell.other.median),
                           analysis::spread_text(cell.other),
                           fmt::format("{:.3f}", cell.effect.ratio),
                           analysis::interval_text(cell.effect),
                           analysis::verdict_line(cell.effect, c.comparison.caveat)});
        out += table.render();
        out += read_write_lines(c.comparison);
        for (const auto& note : cell_notes(c.comparison)) out += note + "\n";
        if (!c.comparison.only_in_base.empty())
            out += "only in base: " + cell_list(c.comparison.only_in_base) + "\n";
        if (!c.comparison.only_in_other.empty())
            out += "only in new:  " + cell_list(c.comparison.only_in_other) + "\n";
        out += test_statement(c.comparison) + "\n\n";
    }
    return out;
}

std::string compare_markdown(const ComparedFile& base, const std::vector<FileComparison>& all) {
    std::string out;
    for (const auto& c : all) {
        out += fmt::format("### lockprof compare: `{}` vs base `{}`\n\n", c.other->file, base.file);
        if (auto line = across_hosts_line(base.run, c.other->run, c.comparison); !line.empty())
            out += "**" + line + "**\n\n";
        out += fmt::format("- base: {}\n- new: {}\n\n", describe(base.run), describe(c.other->run));
        for (const auto& w : c.comparison.warnings)
            out += fmt::format("> **Warning:** {}\n>\n", w.message);
        if (!c.comparison.warnings.empty()) out.resize(out.size() - 2), out += "\n\n";
        out += fmt::format(
            "| lock | threads | base acquires/s | spread | new acquires/s | spread | new/base | "
            "{} | verdict |\n|---|--:|--:|--:|--:|--:|--:|---|---|\n",
            interval_header(c.comparison));
        for (const auto& cell : c.comparison.cells) {
            const auto v = cell.effect.verdict;
            const bool decided = v == analysis::Verdict::faster || v == analysis::Verdict::slower ||
                                 v == analysis::Verdict::equivalent;
            const std::string verdict = analysis::verdict_text(cell.effect);
            // A decided verdict is bold only when the comparison is like-for-like.
            std::string shown =
                decided && c.comparison.caveat.empty() ? "**" + verdict + "**" : verdict;
            if (!c.comparison.caveat.empty()) shown += ", but " + c.comparison.caveat;
            out += fmt::format("| {} | {} | {} | {} | {} | {} | {:.3f} | {} | {} |\n", cell.lock,
                               cell.threads, format_si(cell.base.median),
                               analysis::spread_text(cell.base), format_si(cell.other.median),
                               analysis::spread_text(cell.other), cell.effect.ratio,
                               analysis::interval_text(cell.effect), shown);
        }
        out += "\n";
        if (const auto notes = cell_notes(c.comparison); !notes.empty()) {
            for (const auto& note : notes) out += "- " + note + "\n";
            out += "\n";
        }
        out += "_" + test_statement(c.comparison) + "_\n\n";
        if (!c.comparison.only_in_base.empty())
            out += "Only in base: " + cell_list(c.comparison.only_in_base) + "\n\n";
        if (!c.comparison.only_in_other.empty())
            out += "Only in new: " + cell_list(c.comparison.only_in_other) + "\n\n";
    }
    return out;
}

std::string compare_json(const ComparedFile& base, const std::vector<FileComparison>& all,
                         const analysis::VerdictOptions& options) {
    using nlohmann::json;
    json doc = {{"schema", "lockprof.compare"},
                {"schema_version", 2},
                {"test",
                 {{"statistic", analysis::kMethodStatistic},
                  {"interval", analysis::kMethodInterval},
                  {"correction", analysis::kMethodCorrection},
                  {"confidence", options.confidence},
                  {"equivalence", options.equivalence},
                  {"min_trials", analysis::kMinTrials}}},
                {"base", {{"file", base.file}, {"description", describe(base.run)}}},
                {"comparisons", json::array()}};
    const auto missing = [](const std::vector<analysis::MissingCell>& cells) {
        json list = json::array();
        for (const auto& m : cells) list.push_back({{"lock", m.lock}, {"threads", m.threads}});
        return list;
    };
    for (const auto& c : all) {
        json entry = {{"new", {{"file", c.other->file}, {"description", describe(c.other->run)}}},
                      {"warnings", json::array()},
                      {"across_hosts", c.comparison.host_differences},
                      {"caveat", c.comparison.caveat},
                      {"family", c.comparison.family},
                      {"over_processes", c.comparison.over_processes},
                      {"resampling", c.comparison.resampling},
                      {"level", analysis::corrected_level(options.confidence, c.comparison.family)},
                      {"cells", json::array()},
                      {"only_in_base", missing(c.comparison.only_in_base)},
                      {"only_in_new", missing(c.comparison.only_in_other)}};
        for (const auto& w : c.comparison.warnings)
            entry["warnings"].push_back({{"field", w.field},
                                         {"base", w.base_value},
                                         {"new", w.other_value},
                                         {"message", w.message}});
        for (const auto& cell : c.comparison.cells) {
            const auto& e = cell.effect;
            json interval = nullptr;
            if (e.interval) interval = {{"low", e.interval->low}, {"high", e.interval->high}};
            const auto optional_spread = [](const std::optional<analysis::Spread>& s) {
                return s ? spread_json(*s) : json(nullptr);
            };
            entry["cells"].push_back(
                {{"lock", cell.lock},
                 {"reads_per_second",
                  {{"base", optional_spread(cell.base_reads)},
                   {"new", optional_spread(cell.other_reads)}}},
                 {"writes_per_second",
                  {{"base", optional_spread(cell.base_writes)},
                   {"new", optional_spread(cell.other_writes)}}},
                 {"threads", cell.threads},
                 {"base", spread_json(cell.base)},
                 {"new", spread_json(cell.other)},
                 {"ratio", e.ratio},
                 {"interval", interval},
                 {"verdict", analysis::verdict_name(e.verdict)},
                 {"verdict_line", analysis::verdict_line(e, c.comparison.caveat)},
                 {"limit", e.limit.empty() ? json() : json(e.limit)},
                 {"trials_to_settle", e.trials_to_settle ? json(*e.trials_to_settle) : json()},
                 {"outliers", {{"base", e.base_outliers}, {"new", e.other_outliers}}}});
        }
        doc["comparisons"].push_back(std::move(entry));
    }
    return json_text(doc, 2);
}

std::string compare_csv(const std::vector<FileComparison>& all) {
    std::string out =
        "new_file,lock,threads,base_median,base_min,base_max,base_trials,new_median,new_min,"
        "new_max,new_trials,ratio,interval_low,interval_high,verdict,trials_to_settle,caveat\n";
    for (const auto& c : all) {
        const std::string file = csv_field(c.other->file);
        for (const auto& cell : c.comparison.cells)
            out += fmt::format(
                "{},{},{},{:.6g},{:.6g},{:.6g},{},{:.6g},{:.6g},{:.6g},{},{:.6f},{},{},{},{},{}\n",
                file, csv_field(cell.lock), cell.threads, cell.base.median, cell.base.min,
                cell.base.max, cell.base.values.size(), cell.other.median, cell.other.min,
                cell.other.max, cell.other.values.size(), cell.effect.ratio,
                cell.effect.interval ? fmt::format("{:.6f}", cell.effect.interval->low) : "",
                cell.effect.interval ? fmt::format("{:.6f}", cell.effect.interval->high) : "",
                analysis::verdict_name(cell.effect.verdict),
                cell.effect.trials_to_settle ? std::to_string(*cell.effect.trials_to_settle) : "",
                csv_field(c.comparison.caveat));
        // Mismatched cells stay in the data, so a script sees them too.
        for (const auto& m : c.comparison.only_in_base)
            out += fmt::format("{},{},{},,,,,,,,,,,,only in base,,\n", file, csv_field(m.lock),
                               m.threads);
        for (const auto& m : c.comparison.only_in_other)
            out += fmt::format("{},{},{},,,,,,,,,,,,only in new,,\n", file, csv_field(m.lock),
                               m.threads);
    }
    return out;
}

}  // namespace lockprof::report
