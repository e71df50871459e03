#include "lockprof/report/run_report.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/number_format.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/locks/catalog.hpp"
#include "lockprof/report/text_table.hpp"
#include "lockprof/workload/lock_page.hpp"
#include "lockprof/workload/provenance.hpp"

namespace lockprof::report {

namespace {

bool counted(const analysis::CellSummary& s, std::string_view event) {
    return std::any_of(s.events.begin(), s.events.end(),
                       [&](const auto& e) { return e.event == event && e.counted; });
}

// Advice to count context switches, for a run that did not.
std::string context_switch_hint(const analysis::CellSummary& s) {
    return counted(s, "context_switches") ? "" : "; --event context_switches counts how often";
}

std::string cpus_text(double cpus) {
    return fmt::format("{:.0f} CPU{}", cpus, cpus == 1 ? "" : "s");
}

analysis::CellRef ref(const analysis::CellSummary& s) {
    return {s.cell->lock, s.cell->threads};
}

// The cause of a low all-run share, as the run's own stop rule makes it.
std::string partial_cause(bool acquire_limited) {
    return acquire_limited
               ? "Unfair locks with --acquires do this; --duration keeps every thread running to "
                 "the end."
               : "With --duration every thread runs to the end, so threads started late or were "
                 "descheduled at the start (other load on this machine).";
}

}  // namespace

std::string cpu_use_note(const analysis::CellSummary& s, unsigned online_cpus) {
    // No CPU time recorded (cpu_ns 0: a result written without it) says nothing.
    if (s.trials == 0 || !s.cell || s.cpus_used.median <= 0) return "";
    const unsigned threads = s.cell->threads;
    const double used = s.cpus_used.median;
    if (online_cpus > 0 && threads > online_cpus)
        return fmt::format(
            "{} with {} threads on {} online CPUs: oversubscribed, the threads ran on {:.2f} "
            "CPUs on average; a descheduled holder stalls every waiter until it runs again "
            "(lock-holder preemption), so these figures are not what {} CPUs would show",
            s.cell->lock, threads, online_cpus, used, threads);
    const double could = online_cpus > 0 ? std::min(threads, online_cpus) : threads;
    // Threads that finished early (partial concurrency) have their own note.
    if (used >= kCpuUseNote * could || s.full_concurrency.median < kFullConcurrencyNote) return "";
    return fmt::format(
        "{} with {} thread{}: the threads ran on only {:.2f} of {:.0f} CPU{} on average; the rest "
        "of the window they were off-CPU ({}), and cpu ns/acq counts only their time on a CPU",
        s.cell->lock, threads, threads == 1 ? "" : "s", used, could, could == 1 ? "" : "s",
        s.sleeps_per_acquire.median > 0
            ? fmt::format("the lock sleeps while it waits: {} times a second per thread",
                          format_table_number(s.sleeps_per_acquire.median *
                                              s.acquires_per_second.median / threads))
            : "descheduled by other load on this machine, or waiting in the kernel" +
                  context_switch_hint(s));
}

namespace {

// Detail::brief: each kind of cell note once, naming its cells and its figure's range.
std::vector<std::string> merged_cell_notes(const std::vector<analysis::CellSummary>& summaries,
                                           unsigned online_cpus, bool acquire_limited) {
    using analysis::CellRef;
    using analysis::cells_text;
    using analysis::figure_range;
    std::vector<CellRef> all;
    for (const auto& s : summaries)
        if (s.cell) all.push_back(ref(s));
    const auto two = [](double v) { return fmt::format("{:.2f}", v); };
    std::vector<std::string> notes;

    // All-run share.
    std::vector<CellRef> partial;
    std::vector<double> shares;
    for (const auto& s : summaries)
        if (!partial_concurrency_note(s, acquire_limited).empty())
            partial.push_back(ref(s)), shares.push_back(100 * s.full_concurrency.median);
    if (!partial.empty())
        notes.push_back(fmt::format(
            "all threads ran at once for only {}% of the trial window in {}; the rest ran with "
            "fewer rivals, so the figures mix contention levels. {}",
            figure_range(shares, [](double v) { return fmt::format("{:.0f}", v); }),
            cells_text(partial, all), partial_cause(acquire_limited)));

    // Oversubscribed, sleeping and off-CPU cells, each kind in one note.
    std::vector<CellRef> over, sleeping;
    std::vector<double> over_used, sleep_used, sleep_rate;
    std::vector<unsigned> order;  // thread counts of off-CPU cells
    std::map<unsigned, std::vector<CellRef>> off;
    std::map<unsigned, std::vector<double>> off_used;
    std::map<unsigned, double> could_use;
    std::string hint;
    for (const auto& s : summaries) {
        if (cpu_use_note(s, online_cpus).empty()) continue;
        const unsigned threads = s.cell->threads;
        const double used = s.cpus_used.median;
        if (online_cpus > 0 && threads > online_cpus) {
            over.push_back(ref(s)), over_used.push_back(used);
        } else if (s.sleeps_per_acquire.median > 0) {
            sleeping.push_back(ref(s)), sleep_used.push_back(used);
            sleep_rate.push_back(s.sleeps_per_acquire.median * s.acquires_per_second.median /
                                 threads);
        } else {
            if (!off.count(threads)) order.push_back(threads);
            off[threads].push_back(ref(s));
            off_used[threads].push_back(used);
            could_use[threads] = online_cpus > 0 ? std::min(threads, online_cpus) : threads;
            if (hint.empty()) hint = context_switch_hint(s);
        }
    }
    if (!over.empty())
        notes.push_back(fmt::format(
            "oversubscribed: {} had more threads than the {} online CPUs and ran on {} CPUs on "
            "average; a descheduled holder stalls every waiter until it runs again (lock-holder "
            "preemption), so these figures are not what that many CPUs would show",
            cells_text(over, all), online_cpus, figure_range(over_used, two)));
    if (!sleeping.empty())
        notes.push_back(fmt::format(
            "{}: the lock sleeps while it waits ({} times a second per thread), so the threads "
            "ran on only {} CPUs on average; cpu ns/acq counts only their time on a CPU",
            cells_text(sleeping, all),
            figure_range(sleep_rate, [](double v) { return format_table_number(v); }),
            figure_range(sleep_used, two)));
    if (!order.empty()) {
        std::vector<std::string> groups;
        for (unsigned threads : order)
            groups.push_back(fmt::format("{} of {} in {}", figure_range(off_used[threads], two),
                                         groups.empty() ? cpus_text(could_use[threads])
                                                        : fmt::format("{:.0f}", could_use[threads]),
                                         cells_text(off[threads], all)));
        std::string joined = groups.front();
        for (std::size_t i = 1; i < groups.size(); ++i)
            joined += (i + 1 == groups.size() ? " and " : ", ") + groups[i];
        notes.push_back(
            fmt::format("off-CPU: threads ran on only {} (other load, or the "
                        "kernel){}; cpu ns/acq counts on-CPU time",
                        joined, hint));
    }
    return notes;
}

// Event columns whose every cell reads 0.00 per acquire: the brief table leaves them out and
// says so in one line.
bool negligible(const analysis::CellSummary& s, const std::string& event) {
    for (const auto& e : s.events)
        if (e.event == event)
            return !e.counted || format_table_number(e.per_acquire.median) == "0.00";
    return true;
}

}  // namespace

std::vector<std::string> cell_notes(const workload::RunResult& run,
                                    const std::vector<analysis::CellSummary>& summaries,
                                    analysis::Detail detail) {
    const unsigned online_cpus = run.provenance.logical_cpus;
    const bool acquire_limited = !run.spec.duration_ns && run.spec.acquires_per_thread;
    std::vector<std::string> notes;
    analysis::StealTally steal;
    if (detail == analysis::Detail::brief)
        notes = merged_cell_notes(summaries, online_cpus, acquire_limited);
    for (const auto& s : summaries) {
        if (detail == analysis::Detail::full)
            for (auto note :
                 {partial_concurrency_note(s, acquire_limited), cpu_use_note(s, online_cpus)})
                if (!note.empty()) notes.push_back(std::move(note));
        if (s.cell) steal.add(*s.cell);
    }
    // One note for the run, not one per cell: a busy host takes from every cell alike.
    if (auto note = analysis::steal_note(steal); !note.empty()) notes.push_back(std::move(note));
    return notes;
}

namespace {

std::vector<std::string> event_names(const std::vector<analysis::CellSummary>& summaries) {
    std::vector<std::string> names;
    for (const auto& s : summaries)
        for (const auto& e : s.events)
            if (std::find(names.begin(), names.end(), e.event) == names.end())
                names.push_back(e.event);
    return names;
}

// Derived metrics (IPC, stxr fail ratio) present in any cell, in first-seen order.
std::vector<const analysis::DerivedMetric*> derived_columns(
    const std::vector<analysis::CellSummary>& summaries) {
    std::vector<const analysis::DerivedMetric*> columns;
    for (const auto& s : summaries)
        for (const auto& d : s.derived)
            if (std::none_of(columns.begin(), columns.end(),
                             [&](const auto* c) { return c->name == d.name; }))
                columns.push_back(&d);
    return columns;
}

const analysis::DerivedMetric* find_derived(const analysis::CellSummary& s,
                                            const std::string& name) {
    for (const auto& d : s.derived)
        if (d.name == name) return &d;
    return nullptr;
}

// " (measured 98.7 ns)", or a range over the cells: what the workers' calibrated work took,
// next to the nanoseconds or instructions asked for. "" when none was asked for or nothing ran.
std::string measured_work(std::uint64_t requested,
                          const std::vector<analysis::CellSummary>& summaries,
                          analysis::Spread analysis::CellSummary::*figure) {
    if (requested == 0) return "";
    double low = 1e300, high = 0;
    for (const auto& s : summaries) {
        if (s.trials == 0) continue;
        low = std::min(low, (s.*figure).median);
        high = std::max(high, (s.*figure).median);
    }
    if (high == 0) return "";
    const std::string from = fmt::format("{:.1f}", low), to = fmt::format("{:.1f}", high);
    return fmt::format(" (measured {} ns)", from == to ? from : from + "-" + to);
}

// "200 ns (measured 201.3 ns)", or with --critical-ins "1000 instructions (measured 310.2 ns)":
// one section's work as asked for, and what it took.
std::string work_label(std::uint64_t ns, const std::optional<std::uint64_t>& instructions,
                       const std::vector<analysis::CellSummary>& summaries,
                       analysis::Spread analysis::CellSummary::*figure) {
    if (instructions)
        return fmt::format("{} instructions{}", *instructions,
                           measured_work(*instructions, summaries, figure));
    return fmt::format("{} ns{}", ns, measured_work(ns, summaries, figure));
}

// "compact", "list", "list from order.txt (--cpu-order)", with ", sched fifo" under SCHED_FIFO.
std::string pin_label(const workload::RunSpec& s) {
    std::string label = workload::pin_mode_name(s.pin.mode);
    if (!s.pin.cpu_order_file.empty())
        label += fmt::format(" {} from {} (--cpu-order)", fmt::join(s.pin.cpus, ","),
                             s.pin.cpu_order_file);
    if (s.sched == workload::SchedPolicy::fifo) label += ", sched fifo";
    return label;
}

}  // namespace

bool exclusion_failed(const workload::RunResult& run) {
    return std::any_of(run.cells.begin(), run.cells.end(),
                       [](const auto& c) { return c.overlaps > 0 || c.lost_updates > 0; });
}

std::string exclusion_summary(const workload::RunResult& run) {
    std::size_t verified = 0, trials = 0;
    std::uint64_t checked = 0;
    std::vector<std::string> failed;
    for (const auto& c : run.cells) {
        if (c.verification)
            ++verified, trials += c.verification->trials, checked += c.verification->acquires;
        if (c.overlaps > 0 || c.lost_updates > 0)
            failed.push_back(
                fmt::format("{} with {} thread{}", c.lock, c.threads, c.threads == 1 ? "" : "s"));
    }
    if (verified == 0 && failed.empty()) return "";
    // One trial per cell, or with --processes one per process.
    const std::string per_cell =
        trials == verified ? "" : fmt::format(" in each of {} processes", run.spec.processes);
    const std::string cells = verified == run.cells.size()
                                  ? (verified == 1 ? "before the measured ones"
                                                   : fmt::format("in each of {} cells", verified))
                                  : fmt::format("in {} of {} cells", verified, run.cells.size());
    if (failed.empty())
        return fmt::format("no second holder in {} checked acquires (a verification trial {}{})",
                           format_si(static_cast<double>(checked)), cells, per_cell);
    return fmt::format(
        "FAILED for {} (see the notes); {} acquires checked, a verification trial {}{}",
        fmt::join(failed, ", "), format_si(static_cast<double>(checked)), cells, per_cell);
}

std::string describe_workload(const workload::RunResult& run,
                              const std::vector<analysis::CellSummary>& summaries,
                              analysis::Detail detail) {
    const auto& s = run.spec;
    std::string stop =
        s.duration_ns
            ? fmt::format("{} per trial", format_duration(static_cast<double>(*s.duration_ns)))
            : fmt::format("{} acquires per thread", s.acquires_per_thread.value_or(0));
    const char* placement =
        s.work.shared_lines == 0 ? ""
        : s.work.data == workload::DataPlacement::same_line
            ? (s.work.shared_lines == 1 ? " on the lock's line" : ", the first on the lock's line")
            : " apart from the lock";
    std::string trials =
        s.max_time_ns ? fmt::format("trials auto (at least {} per cell, --max-time {})", s.trials,
                                    format_duration(static_cast<double>(*s.max_time_ns)))
                      : fmt::format("{} trial{}", s.trials, s.trials == 1 ? "" : "s");
    if (s.processes > 1) trials += fmt::format(" in each of {} processes", s.processes);
    const auto placement_label = workload::lock_placement_label(workload::lock_placement(run));
    // Brief: the lock page and the pinning only where the run changed them.
    const bool brief = detail == analysis::Detail::brief;
    if (brief) {  // "3 trials of 200 ms", not "200.00 ms per trial, 3 trials"
        for (std::size_t at; (at = stop.find(".00 ")) != std::string::npos;) stop.erase(at, 3);
        if (s.duration_ns && !s.max_time_ns && s.processes <= 1) {
            stop = fmt::format("{} of {}", trials, stop.substr(0, stop.find(" per trial")));
            trials.clear();
        }
    }
    const std::string head = trials.empty() ? stop : stop + ", " + trials;
    const std::string page = brief && s.work.lock_page == workload::LockPage::normal
                                 ? ""
                                 : ", lock page " + placement_label;
    const std::string pin =
        brief && s.pin.mode == workload::PinMode::none && s.sched != workload::SchedPolicy::fifo
            ? ""
            : ", pin " + pin_label(s);
    return fmt::format(
        "{}, critical {} on {} shared line{}{}, parallel {}{}{}{}{}", head,
        work_label(s.work.critical_ns, s.work.critical_instructions, summaries,
                   &analysis::CellSummary::critical_work_ns),
        s.work.shared_lines, s.work.shared_lines == 1 ? "" : "s", placement,
        work_label(s.work.parallel_ns, s.work.parallel_instructions, summaries,
                   &analysis::CellSummary::parallel_work_ns),
        s.work.read_fraction > 0
            ? fmt::format(", read fraction {:g} (seed {})", s.work.read_fraction, s.seed)
            : "",
        page, pin,
        s.warmup_ns ? fmt::format(", warm-up {}", format_duration(static_cast<double>(s.warmup_ns)))
                    : "");
}

OptionalColumns optional_columns(const std::vector<analysis::CellSummary>& summaries) {
    OptionalColumns c;
    for (const auto& s : summaries) {
        c.latency |= s.latency.has_value();
        if (s.trials == 0) continue;
        // Sleeps only where some lock slept: a column of zeros for the others is noise.
        c.sleeps |= s.sleeps_per_acquire.max > 0;
        c.partial |= s.full_concurrency.median < kFullConcurrencyNote;
    }
    return c;
}

std::string partial_concurrency_note(const analysis::CellSummary& s, bool acquire_limited) {
    if (s.trials == 0 || !s.cell || s.full_concurrency.median >= kFullConcurrencyNote) return "";
    return fmt::format(
        "{} with {}: all threads ran at once for only {:.0f}% of the trial window; the rest ran "
        "with fewer rivals (threads that {}started late), so its figures mix contention levels. "
        "{}",
        s.cell->lock, threads_text(s.cell->threads), 100 * s.full_concurrency.median,
        acquire_limited ? "finished their acquires early or " : "", partial_cause(acquire_limited));
}

namespace {

// "lockprof 0.1.0 (abc123) on x86_64 ..., build: ..., workload: ...": what ran, on what.
// Brief: the build type on the first line, the compiler and kernel only with --verbose (the
// JSON keeps them), the workload without the defaults it did not change.
std::string table_header(const workload::RunResult& run,
                         const std::vector<analysis::CellSummary>& summaries,
                         analysis::Detail detail) {
    const auto& p = run.provenance;
    const std::string_view lse = workload::lse_label(p);
    const bool brief = detail == analysis::Detail::brief;
    std::string out;
    out += fmt::format("lockprof {} ({}{}) on {} {}, {} CPUs{}{}\n", p.lockprof_version,
                       p.git_revision, brief ? ", " + p.build_type : "", p.arch, p.cpu_model,
                       p.logical_cpus, lse.empty() ? "" : fmt::format(", {}", lse),
                       p.vm_hint.empty() ? "" : ", VM: " + p.vm_hint);
    if (!brief || p.assertions)
        out += fmt::format("build: {} {}{}; kernel {}\n", p.compiler, p.build_type,
                           p.assertions ? ", ASSERTIONS ON (numbers not representative)" : "",
                           p.kernel);
    out += "workload: " + describe_workload(run, summaries, detail) + "\n";
    if (std::string exclusion = exclusion_summary(run); !exclusion.empty())
        out += "exclusion: " + exclusion + "\n";

    return out;
}

// The columns every table of the run shows, and which optional ones.
struct TableLayout {
    std::vector<std::string> events;
    std::vector<const analysis::DerivedMetric*> derived;
    OptionalColumns columns;
    std::vector<std::string> header;
    std::vector<TextTable::Align> align;
    bool brief = false;
    bool perturbation = false;  // the observer-effect check ran: the instr/plain column
};

TableLayout table_layout(const std::vector<analysis::CellSummary>& summaries,
                         analysis::Detail detail) {
    const bool brief = detail == analysis::Detail::brief;
    TableLayout layout;
    layout.events = event_names(summaries);
    // Brief: no column that reads 0.00 in every row (the notes name them).
    if (brief)
        std::erase_if(layout.events, [&](const std::string& event) {
            return std::all_of(summaries.begin(), summaries.end(), [&](const auto& s) {
                return s.trials == 0 || negligible(s, event);
            });
        });
    layout.brief = brief;
    layout.columns = optional_columns(summaries);
    const auto& [any_sleeps, any_partial, any_latency] = layout.columns;
    auto& header = layout.header;
    auto& align = layout.align;
    const auto& events = layout.events;

    // Brief: ns/acq is 1e9 / acquires/s of the same window, and ticks/acq the same window
    // counted by the tick counter; --verbose shows both.
    using A = TextTable::Align;
    if (brief) {
        header = {"lock", "delay", "acquires/s", "spread", "cpu ns/acq", "rmw/acq", "spins/acq"};
        align = {A::left, A::left, A::right, A::right, A::right, A::right, A::right};
    } else {
        header = {"lock",       "delay",     "acquires/s", "spread",   "ns/acq",
                  "cpu ns/acq", "ticks/acq", "rmw/acq",    "spins/acq"};
        align = {A::left,  A::left,  A::right, A::right, A::right,
                 A::right, A::right, A::right, A::right};
    }
    if (any_sleeps) header.push_back("sleeps/acq"), align.push_back(A::right);
    header.push_back("fairness");
    align.push_back(A::right);
    if (any_partial) header.push_back("all-run"), align.push_back(A::right);
    if (any_latency)
        for (const char* h : {"p50", "p99", "p99.9", "max"})
            header.push_back(h), align.push_back(A::right);
    for (const auto& e : events) header.push_back(e + "/acq"), align.push_back(A::right);
    layout.derived = derived_columns(summaries);
    for (const auto* d : layout.derived) header.push_back(d->label), align.push_back(A::right);
    layout.perturbation = analysis::any_perturbation(summaries);
    if (layout.perturbation) header.push_back("instr/plain"), align.push_back(A::left);
    header.push_back("vs first");
    align.push_back(A::left);

    return layout;
}

// One cell's row: its figures in the layout's columns, then how it compares with the first lock.
std::vector<std::string> table_row(const analysis::CellSummary& s, const TableLayout& layout) {
    const auto& [any_sleeps, any_partial, any_latency] = layout.columns;
    const auto& events = layout.events;
    const auto& derived = layout.derived;
    std::vector<std::string> row = {s.cell->lock, std::string(arch::delay_name(s.cell->delay))};
    if (s.trials == 0) {
        row.push_back("not run");
        return row;
    }
    // The geometric mean `vs first` compares (summary.hpp), so its ratio is of figures shown.
    row.push_back(format_si(s.throughput > 0 ? s.throughput : s.acquires_per_second.median));
    row.push_back(analysis::spread_text(s.acquires_per_second, "1 trial"));
    if (!layout.brief) row.push_back(format_table_number(s.wall_ns_per_acquire.median));
    row.push_back(format_table_number(s.cpu_ns_per_acquire.median));
    if (!layout.brief) row.push_back(format_table_number(s.ticks_per_acquire.median));
    row.push_back(format_table_number(s.rmw_per_acquire.median));
    row.push_back(format_table_number(s.spins_per_acquire.median));
    if (any_sleeps) row.push_back(format_table_number(s.sleeps_per_acquire.median));
    row.push_back(fmt::format("{:.3f}", s.jain.median));
    if (any_partial) row.push_back(fmt::format("{:.0f}%", 100 * s.full_concurrency.median));
    if (any_latency) {
        if (s.latency) {
            for (double v :
                 {s.latency->p50_ns, s.latency->p99_ns, s.latency->p999_ns, s.latency->max_ns})
                row.push_back(format_duration(v));
        } else {
            for (int i = 0; i < 4; ++i) row.push_back("-");
        }
    }
    for (const auto& name : events) {
        auto it = std::find_if(s.events.begin(), s.events.end(),
                               [&](const auto& e) { return e.event == name; });
        if (it == s.events.end())
            row.push_back("-");
        else if (!it->counted)
            row.push_back("not counted");
        else
            row.push_back(format_table_number(it->per_acquire.median) +
                          (it->running_fraction < 0.999
                               ? fmt::format(" ({:.0f}%)", 100 * it->running_fraction)
                               : ""));
    }
    for (const auto* column : derived) {
        const auto* d = find_derived(s, column->name);
        if (!d)
            row.push_back("-");
        else if (d->percent)
            row.push_back(fmt::format("{:.1f}%", 100 * d->value.median));
        else
            row.push_back(fmt::format("{:.2f}", d->value.median));
    }
    if (layout.perturbation)
        row.push_back(s.perturbation ? analysis::perturbation_text(*s.perturbation) : "-");
    if (!s.comparison)
        row.push_back("baseline");
    else
        row.push_back(analysis::effect_text(s.comparison->effect));
    if (!s.cell->complete) row.back() += " [incomplete]";
    if (s.cell->overlaps || s.cell->lost_updates) row.back() += " [EXCLUSION FAILED]";
    return row;
}

// --read-fraction > 0: each cell's acquires split into shared (reads) and exclusive (writes),
// with each kind's latency when --latency measured it.
std::string read_write_split(const std::vector<analysis::CellSummary>& summaries, bool latency) {
    std::vector<std::string> header = {"threads", "lock", "reads/s", "writes/s", "read share"};
    using A = TextTable::Align;
    std::vector<A> align = {A::right, A::left, A::right, A::right, A::right};
    if (latency)
        for (const char* h : {"read p50", "read p99", "write p50", "write p99"})
            header.push_back(h), align.push_back(A::right);
    TextTable table;
    table.set_header(header, align);
    for (const auto& s : summaries) {
        if (s.trials == 0 || !s.read_acquires) continue;
        const double all = std::max(s.acquires.median, 1.0);
        std::vector<std::string> row = {
            std::to_string(s.cell->threads), s.cell->lock,
            format_si(s.read_acquires_per_second->median),
            format_si(s.write_acquires_per_second->median),
            fmt::format("{:.1f}%", 100 * s.read_acquires->median / all)};
        if (latency)
            for (const auto* l : {&s.read_latency, &s.write_latency}) {
                row.push_back(*l ? format_duration((*l)->p50_ns) : "-");
                row.push_back(*l ? format_duration((*l)->p99_ns) : "-");
            }
        table.add_row(row);
    }
    return "\nreads and writes (acquires taken shared and exclusive; medians over trials)\n" +
           table.render("  ");
}

}  // namespace

namespace {

// The acquire of tas, cas and their kin is an exclusive load/store pair on ARMv8.0 (LL/SC),
// where a failed store-exclusive retries: the difference the 2020 thread measured. A CPU with
// locked read-modify-writes (x86) has no such retry, which a run comparing them should say once.
std::string llsc_note(const workload::RunResult& run) {
    // x86 only: arm (ldrex/strex) and riscv (lr/sc) have LL/SC of their own.
    const std::string& arch = run.provenance.arch;
    const bool x86 = arch == "x86_64" || arch == "i386" || arch == "i686";
    if (!x86) return "";
    std::vector<std::string> sensitive;
    for (const auto& c : run.cells)
        if (c.algorithm != "empty" && !locks::is_flavour_independent(c.algorithm) &&
            std::find(sensitive.begin(), sensitive.end(), c.lock) == sensitive.end())
            sensitive.push_back(c.lock);
    if (sensitive.size() < 2) return "";
    return fmt::format(
        "{} has no LL/SC: no lock here retries a store-exclusive as on ARMv8.0 (docs/aarch64.md)",
        run.provenance.arch);
}

// The legend under the tables: every column in full (--verbose), or what a reader needs to
// read the figures and the `vs first` ratio.
std::string legend(const OptionalColumns& columns, analysis::Detail detail) {
    // Brief: the method line (summary.hpp's verdict_notes) says what acquires/s is.
    if (detail == analysis::Detail::brief) return "";
    std::string out = fmt::format(
        "acquires/s: geometric mean of the trials (the figure `vs first` divides); {}; ns/acq: "
        "wall time / acquires;\ncpu ns/acq: CPU time of all threads / acquires; ticks/acq: the "
        "tick counter (x86 TSC, aarch64\ngeneric timer; not core cycles) over the window / "
        "acquires; rmw/acq: atomic read-modify-writes per acquire;\nspins/acq: polls of a held "
        "lock per acquire; fairness: Jain's index of per-thread acquires (1 = equal);\nevery "
        "per-acquire column: the median over trials.\n",
        analysis::kSpreadDefinition);
    if (columns.sleeps)
        out +=
            "sleeps/acq: times a waiter gave up its CPU (pg-slock's pg_usleep, event-mutex's event "
            "waits) per acquire.\n";
    if (columns.partial)
        out +=
            "all-run: share of the trial window in which every thread was running the loop "
            "(median over trials).\n";
    return out;
}

}  // namespace

std::string render_table(const workload::RunResult& run,
                         const std::vector<analysis::CellSummary>& summaries,
                         analysis::Detail detail) {
    std::string out = table_header(run, summaries, detail);
    const TableLayout layout = table_layout(summaries, detail);
    const auto& [any_sleeps, any_partial, any_latency] = layout.columns;
    std::map<unsigned, TextTable> tables;
    std::vector<unsigned> order;
    for (const auto& s : summaries) {
        const unsigned threads = s.cell->threads;
        if (!tables.count(threads)) {
            tables[threads].set_header(layout.header, layout.align);
            order.push_back(threads);
        }
        tables[threads].add_row(table_row(s, layout));
    }
    for (unsigned threads : order) {
        if (layout.brief) {
            // The thread count heads the lock column: one line per table fewer.
            auto header = layout.header;
            header[0] = threads_text(threads);
            auto& table = tables[threads];
            table.set_header(header, layout.align);
            // Each table's header line sets it apart: no blank line between them.
            if (threads == order.front()) out += '\n';
            out += table.render("  ");
            continue;
        }
        out += fmt::format("\n{}\n", threads_text(threads));
        out += tables[threads].render("  ");
    }
    if (run.spec.work.read_fraction > 0) out += read_write_split(summaries, any_latency);
    out += '\n';
    out += legend(layout.columns, detail);
    if (layout.brief && analysis::comparison_count(summaries) == 0)
        out += fmt::format("acquires/s: geometric mean of the trials; {}\n",
                           analysis::kSpreadDefinition);
    if (layout.brief && any_sleeps)
        out += "sleeps/acq: times a waiter gave up its CPU per acquire.\n";
    if (layout.brief && any_partial)
        out += "all-run: share of the window in which every thread ran the loop.\n";
    for (const auto& line : analysis::verdict_notes(summaries, detail)) out += line + "\n";
    for (const auto& line : analysis::perturbation_notes(summaries, detail)) out += line + "\n";
    if (layout.brief) {
        // The event columns the brief table left out.
        std::vector<std::string> hidden;
        for (const auto& event : event_names(summaries))
            if (std::find(layout.events.begin(), layout.events.end(), event) == layout.events.end())
                hidden.push_back(event);
        if (!hidden.empty())
            out += fmt::format(
                "note: {}: under 0.005 per acquire in every cell (--verbose: "
                "the column{})\n",
                fmt::join(hidden, ", "), hidden.size() == 1 ? "" : "s");
    }
    for (const auto& note : cell_notes(run, summaries, detail)) out += "note: " + note + "\n";
    if (auto note = llsc_note(run); !note.empty()) out += "note: " + note + "\n";
    for (const auto& note : run.notes) out += "note: " + note + "\n";
    if (run.interrupted)
        out += fmt::format("INTERRUPTED{}: results above cover only the trials that finished.\n",
                           run.interrupted_by.empty() ? "" : " (" + run.interrupted_by + ")");
    return out;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string render_csv(const workload::RunResult& run,
                       const std::vector<analysis::CellSummary>& summaries) {
    (void)run;
    const auto events = event_names(summaries);
    std::string out =
        "lock,algorithm,flavour,delay,threads,trials,complete,lost_updates,"
        "acquires_per_second,acquires_per_second_min,acquires_per_second_max,"
        "wall_ns_per_acquire,cpu_ns_per_acquire,ticks_per_acquire,rmw_per_acquire,"
        "spins_per_acquire,jain_index,min_max_ratio,coefficient_of_variation,"
        "latency_p50_ns,latency_p99_ns,latency_p99_9_ns,latency_max_ns,"
        "baseline,throughput_ratio,verdict,"
        // Added after the columns above, whose positions scripts may rely on.
        "overlaps,critical_work_ns,parallel_work_ns,sleeps_per_acquire,full_concurrency,"
        "interval_low,interval_high,"
        // The observer-effect check (instrumented / plain acquires/s); empty without it.
        "perturbation_ratio,perturbation_low,perturbation_high,perturbation_verdict";
    for (const auto& e : events)
        out += ",event_" + e + "_per_acquire,event_" + e + "_running_fraction";
    const auto derived = derived_columns(summaries);
    for (const auto* d : derived) out += ",derived_" + d->name;
    out += "\n";
    const auto columns = static_cast<std::size_t>(std::count(out.begin(), out.end(), ',')) + 1;
    for (const auto& s : summaries) {
        const auto& c = *s.cell;
        if (s.trials == 0) {
            // A cell an interrupt or the watchdog kept from running: trials 0 and every figure
            // empty, not a row of zeros a script would read as measured.
            out += fmt::format("{},{},{},{},{},0,{},{}", csv_field(c.lock), csv_field(c.algorithm),
                               csv_field(c.flavour), arch::delay_name(c.delay), c.threads,
                               c.complete ? 1 : 0, c.lost_updates);
            out += std::string(columns - 8, ',') + "\n";
            continue;
        }
        out += fmt::format(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_field(c.lock),
            csv_field(c.algorithm), csv_field(c.flavour), arch::delay_name(c.delay), c.threads,
            s.trials, c.complete ? 1 : 0, c.lost_updates, s.acquires_per_second.median,
            s.acquires_per_second.min, s.acquires_per_second.max, s.wall_ns_per_acquire.median,
            s.cpu_ns_per_acquire.median, s.ticks_per_acquire.median, s.rmw_per_acquire.median,
            s.spins_per_acquire.median, s.jain.median, s.min_max.median, s.cv.median);
        if (s.latency)
            out += fmt::format(",{},{},{},{}", s.latency->p50_ns, s.latency->p99_ns,
                               s.latency->p999_ns, s.latency->max_ns);
        else
            out += ",,,,";
        if (s.comparison)
            out += fmt::format(",{},{},{}", csv_field(s.comparison->baseline),
                               s.comparison->effect.ratio,
                               analysis::verdict_name(s.comparison->effect.verdict));
        else
            out += ",,,";
        out += fmt::format(",{},{},{},{},{}", c.overlaps, s.critical_work_ns.median,
                           s.parallel_work_ns.median, s.sleeps_per_acquire.median,
                           s.full_concurrency.median);
        if (s.comparison && s.comparison->effect.interval)
            out += fmt::format(",{},{}", s.comparison->effect.interval->low,
                               s.comparison->effect.interval->high);
        else
            out += ",,";
        if (s.perturbation) {
            const auto& e = *s.perturbation;
            out += fmt::format(",{},{},{},{}", e.ratio,
                               e.interval ? fmt::format("{}", e.interval->low) : "",
                               e.interval ? fmt::format("{}", e.interval->high) : "",
                               analysis::perturbation_verdict_name(e.verdict));
        } else {
            out += ",,,,";
        }
        for (const auto& name : events) {
            auto it = std::find_if(s.events.begin(), s.events.end(),
                                   [&](const auto& e) { return e.event == name; });
            if (it == s.events.end() || !it->counted)
                out += ",,";
            else
                out += fmt::format(",{},{}", it->per_acquire.median, it->running_fraction);
        }
        for (const auto* column : derived) {
            const auto* d = find_derived(s, column->name);
            out += d ? fmt::format(",{}", d->value.median) : ",";
        }
        out += "\n";
    }
    return out;
}

}  // namespace lockprof::report
