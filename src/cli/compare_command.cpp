// `lockprof compare BASE.json NEW.json [...]`: the thread's "head vs patch" table. Every NEW is
// compared with BASE cell by cell; provenance differences are warned about above the table and
// never refused (a reviewer may still want to see the numbers).
#include <iostream>
#include <string_view>

#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "lockprof/analysis/compare.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/run_report.hpp"
#include "lockprof/report/text_table.hpp"
#include "lockprof/workload/lock_page.hpp"
#include "lockprof/workload/provenance.hpp"
#include "lockprof/common/number_format.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

struct Loaded {
    std::string file;
    workload::RunResult run;
};

struct Compared {
    const Loaded* other;
    analysis::RunComparison comparison;
};

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

std::string cell_list(const std::vector<analysis::MissingCell>& cells) {
    std::string out;
    for (const auto& c : cells)
        out += fmt::format("{}{}/{}t", out.empty() ? "" : ", ", c.lock, c.threads);
    return out;
}

std::string test_statement(const analysis::RunComparison& c) {
    return analysis::method_text(c.options, c.family) + "; " + c.resampling + "; " +
           std::string(analysis::kSpreadDefinition) +
           "; outliers (Tukey fences) are flagged and kept";
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
        return reads && writes ? fmt::format("{} reads/s, {} writes/s", report::si(reads->median),
                                             report::si(writes->median))
                               : std::string("no reads");
    };
    for (const auto& cell : comparison.cells)
        if (cell.base_reads || cell.other_reads)
            out += fmt::format("reads and writes: {} at {}: base {}; new {}\n", cell.lock,
                               threads_text(cell.threads), pair(cell.base_reads, cell.base_writes),
                               pair(cell.other_reads, cell.other_writes));
    return out;
}

std::string render_text(const Loaded& base, const std::vector<Compared>& all) {
    std::string out;
    for (const auto& c : all) {
        out += fmt::format("base: {}\n      {}\nnew:  {}\n      {}\n", base.file,
                           describe(base.run), c.other->file, describe(c.other->run));
        for (const auto& w : c.comparison.warnings) out += "warning: " + w.message + "\n";
        out += "\n";
        report::TextTable table;
        using A = report::TextTable::Align;
        table.set_header({"lock", "threads", "base acq/s", "spread", "new acq/s", "spread",
                          "new/base", interval_header(c.comparison), "verdict"},
                         {A::left, A::right, A::right, A::right, A::right, A::right, A::right,
                          A::left, A::left});
        for (const auto& cell : c.comparison.cells)
            table.add_row({cell.lock, std::to_string(cell.threads), report::si(cell.base.median),
                           analysis::spread_text(cell.base), report::si(cell.other.median),
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

std::string render_markdown(const Loaded& base, const std::vector<Compared>& all) {
    std::string out;
    for (const auto& c : all) {
        out += fmt::format("### lockprof compare: `{}` vs base `{}`\n\n", c.other->file, base.file);
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
                               cell.threads, report::si(cell.base.median),
                               analysis::spread_text(cell.base), report::si(cell.other.median),
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

std::string render_json(const Loaded& base, const std::vector<Compared>& all,
                        const analysis::VerdictOptions& options) {
    using nlohmann::json;
    json doc = {{"schema", "lockprof.compare"},
                {"schema_version", 2},
                {"test",
                 {{"statistic", "ratio of geometric means of acquires/s over trials, new/base"},
                  {"interval", "Welch t interval on log acquires/s"},
                  {"correction", "Bonferroni over the cells of each comparison"},
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
                return s ? report::spread_json(*s) : json(nullptr);
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
                 {"base", report::spread_json(cell.base)},
                 {"new", report::spread_json(cell.other)},
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
    return report::json_text(doc, 2);
}

std::string render_csv(const std::vector<Compared>& all) {
    std::string out =
        "new_file,lock,threads,base_median,base_min,base_max,base_trials,new_median,new_min,"
        "new_max,new_trials,ratio,interval_low,interval_high,verdict,trials_to_settle,caveat\n";
    for (const auto& c : all) {
        const std::string file = report::csv_field(c.other->file);
        for (const auto& cell : c.comparison.cells)
            out += fmt::format(
                "{},{},{},{:.6g},{:.6g},{:.6g},{},{:.6g},{:.6g},{:.6g},{},{:.6f},{},{},{},{},{}\n",
                file, report::csv_field(cell.lock), cell.threads, cell.base.median, cell.base.min,
                cell.base.max, cell.base.values.size(), cell.other.median, cell.other.min,
                cell.other.max, cell.other.values.size(), cell.effect.ratio,
                cell.effect.interval ? fmt::format("{:.6f}", cell.effect.interval->low) : "",
                cell.effect.interval ? fmt::format("{:.6f}", cell.effect.interval->high) : "",
                analysis::verdict_name(cell.effect.verdict),
                cell.effect.trials_to_settle ? std::to_string(*cell.effect.trials_to_settle) : "",
                report::csv_field(c.comparison.caveat));
        // Mismatched cells stay in the data, so a script sees them too.
        for (const auto& m : c.comparison.only_in_base)
            out += fmt::format("{},{},{},,,,,,,,,,,,only in base,,\n", file,
                               report::csv_field(m.lock), m.threads);
        for (const auto& m : c.comparison.only_in_other)
            out += fmt::format("{},{},{},,,,,,,,,,,,only in new,,\n", file,
                               report::csv_field(m.lock), m.threads);
    }
    return out;
}

}  // namespace

int compare_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    po::options_description o("Options");
    // clang-format off
    o.add_options()
        ("help,h", "show this help")
        ("format,f", po::value<std::string>()->default_value("table"),
         "table, markdown (for a mailing list or issue), json or csv")
        ("output,o", po::value<std::string>(), "write to this file instead of standard output")
        ("confidence", po::value<std::string>()->default_value("0.95"),
         "family-wise confidence of the intervals (Bonferroni over the cells), 0.5 to 0.999")
        ("equivalence", po::value<std::string>()->default_value("2%"),
         "equivalence band: ratios within 1 +- this are equivalent (2%, 5%, 0.05)");
    // clang-format on
    po::options_description operands;
    operands.add_options()("files", po::value<std::vector<std::string>>());
    // Removed with the bootstrap; still recognised, so the error can say why (below).
    operands.add_options()("resamples", po::value<std::string>())("seed", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("files", -1);
    const auto vm = parse_arguments(args, o, "compare", operands, positional);
    if (vm.count("help")) {
        std::cout
            << "Usage: lockprof compare BASE.json NEW.json [NEW2.json ...] [options]\n\n"
               "Compares the throughput of result files (--output) cell by cell (lock,\n"
               "threads) with BASE: each run's median acquires/s and spread over trials,\n"
               "the ratio NEW/BASE (geometric means), its confidence interval and a verdict:\n"
               "faster or slower (interval outside the --equivalence band), equivalent\n"
               "(inside it) or inconclusive (with the trials that would likely settle it);\n"
               "fewer than 3 trials per side give no interval. Warns above the table when\n"
               "builds, CPUs or workloads differ, and a verdict from builds or machines that\n"
               "differ says it is not like-for-like. See docs/reports.md.\n\n"
            << o;
        return 0;
    }
    for (const char* removed : {"resamples", "seed"})
        if (vm.count(removed))
            throw UsageError(fmt::format(
                "compare: --{} was removed: verdicts no longer come from a bootstrap but from a "
                "Welch t interval on the trials' log acquires/s, which resamples nothing and "
                "gives the same answer every time (docs/reports.md); drop --{}{}",
                removed, removed,
                std::string_view(removed) == "resamples" ? ", and set the level with --confidence"
                                                         : ""));
    const auto files =
        vm.count("files") ? vm["files"].as<std::vector<std::string>>() : std::vector<std::string>{};
    if (files.size() < 2)
        throw UsageError(
            "compare: needs a base and at least one new result file: lockprof compare BASE.json "
            "NEW.json");
    const std::string format = vm["format"].as<std::string>();
    if (format != "table" && format != "markdown" && format != "json" && format != "csv")
        throw UsageError(fmt::format(
            "compare: --format '{}' is not a format; use table, markdown, json or csv", format));
    analysis::VerdictOptions options;
    const std::string confidence = vm["confidence"].as<std::string>();
    try {
        std::size_t used = 0;
        options.confidence = std::stod(confidence, &used);
        if (used != confidence.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
        throw UsageError(fmt::format("--confidence: '{}' is not a number; try 0.95", confidence));
    }
    if (!(options.confidence >= 0.5 && options.confidence <= 0.999))
        throw UsageError("--confidence: must be between 0.5 and 0.999; try 0.95");
    options.equivalence = analysis::parse_equivalence(vm["equivalence"].as<std::string>());
    if (vm.count("output")) check_output(vm["output"].as<std::string>(), "output");

    // Read everything first: a bad file fails before any output.
    std::vector<Loaded> loaded;
    for (const auto& file : files) loaded.push_back({file, report::read_result(file)});
    std::vector<Compared> compared;
    for (std::size_t i = 1; i < loaded.size(); ++i)
        compared.push_back(
            {&loaded[i], analysis::compare_runs(loaded[0].run, loaded[i].run, options)});

    std::string text;
    if (format == "table") text = render_text(loaded[0], compared);
    if (format == "markdown") text = render_markdown(loaded[0], compared);
    if (format == "json") text = render_json(loaded[0], compared, options);
    if (format == "csv") {
        text = render_csv(compared);
        // CSV has no place for prose: warnings go to stderr so they are still seen.
        for (const auto& c : compared)
            for (const auto& w : c.comparison.warnings)
                fmt::print(stderr, "lockprof: warning: {}: {}\n", c.other->file, w.message);
    }
    if (vm.count("output"))
        write_output(vm["output"].as<std::string>(), text);
    else
        std::cout << text;
    return 0;
}

}  // namespace lockprof::cli
