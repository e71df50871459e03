#include "lockprof/analysis/hosts.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/number_format.hpp"
#include "lockprof/workload/provenance.hpp"

namespace lockprof::analysis {

// Named, not anonymous: unity batches (LOCKPROF_UNITY_BUILD) share one anonymous namespace.
namespace hosts_detail {

const CellSummary* find_cell(const Host& host, const std::string& lock, unsigned threads) {
    for (const auto& s : host.summaries)
        if (s.cell && s.cell->lock == lock && s.cell->threads == threads && s.trials > 0) return &s;
    return nullptr;
}

// "aarch64, LSE", "x86_64".
std::string atomics_label(const workload::Provenance& p) {
    const auto lse = workload::lse_label(p);
    return lse.empty() ? p.arch : fmt::format("{}, {}", p.arch, lse);
}

// The CPU as a short distinguishing word: the model, else the MIDR's part, else the arch.
std::string cpu_word(const workload::Provenance& p) {
    if (!p.cpu_model.empty()) return p.cpu_model;
    if (const auto at = p.midr.find("part "); at != std::string::npos)
        return p.midr.substr(at, p.midr.find(' ', at + 5) - at);
    return atomics_label(p);
}

// The name of an unnamed file at `level` of detail: the hostname; with the CPU; with the
// architecture and LSE (qemu-user runs of one machine differ only there); with both.
std::string name_at(const workload::Provenance& p, int level) {
    switch (level) {
        case 0:
            return host_name(p);
        case 1:
            return host_name(p) + "/" + cpu_word(p);
        case 2:
            return host_name(p) + "/" + atomics_label(p);
        default:
            return fmt::format("{}/{}/{}", host_name(p), cpu_word(p), atomics_label(p));
    }
}

// Distinct names: given names are kept as they are (a clash among them is a usage error); an
// unnamed file gets the least detail that tells it from the others (name_at), then "#2", "#3".
void name_hosts(std::vector<HostInput>& inputs, std::vector<Host>& hosts) {
    std::map<std::string, std::size_t> given;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].name.empty()) continue;
        if (auto [at, fresh] = given.emplace(inputs[i].name, i); !fresh)
            throw UsageError(fmt::format(
                "report: two files are named '{}' ({} and {}); give each host its own name",
                inputs[i].name, inputs[at->second].file, inputs[i].file));
    }
    std::vector<std::string> names(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].name.empty()) {
            names[i] = inputs[i].name;
            continue;
        }
        const auto& p = inputs[i].run.provenance;
        for (int level = 0; level < 4; ++level) {
            names[i] = name_at(p, level);
            bool clash = given.count(names[i]) > 0;
            for (std::size_t j = 0; j < inputs.size() && !clash; ++j)
                clash = j != i && inputs[j].name.empty() &&
                        name_at(inputs[j].run.provenance, level) == names[i];
            if (!clash) break;
        }
    }
    std::set<std::string> taken;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const auto& p = inputs[i].run.provenance;
        std::string name = names[i];
        for (unsigned n = 2; taken.count(name); ++n) name = fmt::format("{}#{}", names[i], n);
        taken.insert(name);
        Host h;
        h.name = name;
        const std::string atomics = atomics_label(p);
        h.label =
            name.find(atomics) == std::string::npos ? fmt::format("{} ({})", name, atomics) : name;
        h.file = inputs[i].file;
        h.run = &inputs[i].run;
        hosts.push_back(std::move(h));
    }
}

// Locks in every file, in the first file's order; the others said as absent.
void common_locks(HostsComparison& out) {
    std::vector<std::string> all_locks;  // first-seen order: the first file's locks first
    for (const auto& h : out.hosts)
        for (const auto& s : h.summaries)
            if (s.cell &&
                std::find(all_locks.begin(), all_locks.end(), s.cell->lock) == all_locks.end())
                all_locks.push_back(s.cell->lock);
    for (const auto& lock : all_locks) {
        std::vector<std::string> missing;
        for (const auto& h : out.hosts) {
            const bool has = std::any_of(h.summaries.begin(), h.summaries.end(), [&](auto& s) {
                return s.cell && s.cell->lock == lock && s.trials > 0;
            });
            if (!has) missing.push_back(h.name);
        }
        if (missing.empty())
            out.locks.push_back(lock);
        else
            out.absent.push_back(
                missing.size() == 1
                    ? fmt::format("{}: not in {}'s file", lock, missing[0])
                    : fmt::format("{}: not in the files of {}", lock, fmt::join(missing, "; ")));
    }
}

// "faster", or "faster at 2 and 4 threads, equivalent at 1 thread".
std::string row_verdicts(const std::vector<HostPairCell>& cells) {
    std::vector<std::pair<std::string, std::vector<unsigned>>> groups;
    for (const auto& c : cells) {
        if (!c.effect) continue;
        const std::string v = verdict_name(c.effect->verdict);
        auto at = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == v; });
        if (at == groups.end()) {
            groups.push_back({v, {}});
            at = groups.end() - 1;
        }
        at->second.push_back(c.threads);
    }
    if (groups.empty()) return "no cells to compare";
    if (groups.size() == 1) return groups[0].first;
    std::vector<std::string> parts;
    for (const auto& [verdict, threads] : groups) {
        std::vector<std::string> counts;
        for (auto t : threads) counts.push_back(std::to_string(t));
        std::string list = counts.back();
        if (counts.size() > 1) {
            counts.pop_back();
            list = fmt::format("{} and {}", fmt::join(counts, ", "), list);
        }
        parts.push_back(fmt::format("{} at {} thread{}", verdict, list,
                                    threads.size() == 1 && threads[0] == 1 ? "" : "s"));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}

bool decided(Verdict v) {
    return v == Verdict::faster || v == Verdict::slower || v == Verdict::equivalent;
}

// Where the most common decided verdict holds, where another was decided, where none was.
void conclude(const HostsComparison& out, HostPair& pair) {
    std::map<std::string, unsigned> votes;
    std::vector<std::string> order;
    for (const auto& row : pair.rows)
        for (const auto& c : row.cells)
            if (c.effect && decided(c.effect->verdict)) {
                const std::string v = verdict_name(c.effect->verdict);
                if (!votes.count(v)) order.push_back(v);
                ++votes[v];
            }
    const std::string head = fmt::format("{} vs {}", pair.other, pair.base);
    if (order.empty()) {
        pair.summary = fmt::format(
            "{}: no host settled it (every cell inconclusive or short of trials); more trials "
            "(--trials 10, or --trials auto) would",
            head);
        return;
    }
    std::string best = order[0];
    for (const auto& v : order)
        if (votes[v] > votes[best]) best = v;
    pair.conclusion = best;
    std::vector<std::string> holds, differs;
    std::vector<std::pair<std::string, std::vector<std::string>>> unsettled;  // by verdicts
    for (const auto& row : pair.rows) {
        bool any = false, other = false;
        for (const auto& c : row.cells)
            if (c.effect && decided(c.effect->verdict)) {
                any = true;
                other |= verdict_name(c.effect->verdict) != best;
            }
        const std::string& label = out.hosts[row.host].label;
        if (!any) {
            auto at = std::find_if(unsettled.begin(), unsettled.end(),
                                   [&](auto& u) { return u.first == row.verdicts; });
            if (at == unsettled.end()) at = unsettled.insert(unsettled.end(), {row.verdicts, {}});
            at->second.push_back(label);
        } else if (other || row.verdicts != best) {
            (other ? differs : holds).push_back(fmt::format("{}: {}", label, row.verdicts));
        } else {
            holds.push_back(label);
        }
    }
    // Sentences between the groups, semicolons between hosts (their labels hold commas).
    std::string s = fmt::format("{}: {} on {}.", head, best, fmt::join(holds, "; "));
    if (!differs.empty()) s += fmt::format(" Not on {}.", fmt::join(differs, "; "));
    for (auto& [verdicts, labels] : unsettled) {
        verdicts[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(verdicts[0])));
        s += fmt::format(" {} on {}.", verdicts, fmt::join(labels, "; "));
    }
    pair.summary = s;
}

void compare_pairs(HostsComparison& out) {
    if (out.locks.size() < 2) return;
    // Each host's family: every comparison it makes for the report.
    for (auto& h : out.hosts)
        for (std::size_t l = 1; l < out.locks.size(); ++l)
            for (auto t : out.threads)
                if (find_cell(h, out.locks[0], t) && find_cell(h, out.locks[l], t)) ++h.family;
    for (std::size_t l = 1; l < out.locks.size(); ++l) {
        HostPair pair;
        pair.base = out.locks[0];
        pair.other = out.locks[l];
        for (std::size_t i = 0; i < out.hosts.size(); ++i) {
            const Host& h = out.hosts[i];
            HostPairRow row;
            row.host = i;
            for (auto t : out.threads) {
                HostPairCell cell;
                cell.threads = t;
                const auto* base = find_cell(h, pair.base, t);
                const auto* other = find_cell(h, pair.other, t);
                if (base && other)
                    cell.effect = compare_trials(base->verdict_values, other->verdict_values,
                                                 out.options, std::max<std::size_t>(1, h.family));
                row.cells.push_back(std::move(cell));
            }
            row.verdicts = row_verdicts(row.cells);
            pair.rows.push_back(std::move(row));
        }
        conclude(out, pair);
        out.pairs.push_back(std::move(pair));
    }
}

// The file's lock flavours: "default", "llsc, lse".
std::string flavours(const workload::RunResult& run) {
    std::vector<std::string> names;
    for (const auto& c : run.cells) {
        const std::string f = c.flavour.empty() ? "default" : c.flavour;
        if (std::find(names.begin(), names.end(), f) == names.end()) names.push_back(f);
    }
    return fmt::format("{}", fmt::join(names, ", "));
}

// The hardware events a run counted in some cell, "" when none.
std::string counted_events(const std::vector<CellSummary>& summaries) {
    std::vector<std::string> names;
    for (const auto& s : summaries)
        for (const auto& e : s.events)
            if (e.counted && std::find(names.begin(), names.end(), e.event) == names.end())
                names.push_back(e.event);
    return fmt::format("{}", fmt::join(names, ", "));
}

void provenance_rows(HostsComparison& out) {
    struct Field {
        const char* field;
        const char* label;
        std::function<std::string(const Host&)> value;
        const char* why;  // "" : a difference is shown, not singled out
    };
    const auto p = [](const Host& h) -> const workload::Provenance& { return h.run->provenance; };
    const std::vector<Field> fields = {
        {"hostname", "hostname", [&](auto& h) { return p(h).hostname; }, ""},
        {"arch", "architecture", [&](auto& h) { return p(h).arch; }, ""},
        {"cpu_model", "CPU", [&](auto& h) { return p(h).cpu_model; }, ""},
        {"midr", "MIDR (implementer, part)",
         [&](auto& h) { return p(h).midr.empty() ? std::string("-") : p(h).midr; }, ""},
        {"logical_cpus", "logical CPUs", [&](auto& h) { return std::to_string(p(h).logical_cpus); },
         ""},
        {"lse", "LSE atomics",
         [&](auto& h) {
             const auto lse = workload::lse_atomics(p(h));
             return lse ? std::string(*lse ? "yes" : "no") : std::string("n/a (not aarch64)");
         },
         "LSE atomics change how every lock's read-modify-write executes: CAS beats TAS on "
         "LL/SC, not with LSE"},
        {"flavours", "lock flavours", [&](auto& h) { return flavours(*h.run); },
         "the flavour picks the atomics compiled into the loop (@llsc, @lse, @outline)"},
        {"vm_hint", "VM or emulator",
         [&](auto& h) { return p(h).vm_hint.empty() ? std::string("none") : p(h).vm_hint; },
         "a VM adds steal time and hides the PMU; an emulator's timings are not silicon's"},
        {"pmu", "PMU events counted",
         [&](auto& h) {
             const std::string e = counted_events(h.summaries);
             return e.empty() ? std::string("none") : e;
         },
         ""},
        {"kernel", "kernel", [&](auto& h) { return p(h).kernel; }, ""},
        {"compiler", "compiler", [&](auto& h) { return p(h).compiler; },
         "a different compiler generates different code for the same lock"},
        {"compiler_flags", "compiler flags", [&](auto& h) { return p(h).compiler_flags; },
         "flags (-O level, -march, outline atomics) change the generated code"},
        {"build_type", "build type", [&](auto& h) { return p(h).build_type; },
         "the optimisation level differs"},
        {"assertions", "assertions", [&](auto& h) { return p(h).assertions ? "ON" : "off"; },
         "assert-enabled numbers are not representative (the 2020 thread's mistake); rebuild "
         "with NDEBUG (CMAKE_BUILD_TYPE=Release or RelWithDebInfo)"},
        {"cpufreq", "frequency governor, boost",
         [&](auto& h) {
             return fmt::format("{}, {}",
                                p(h).cpufreq_governor.empty() ? "unknown" : p(h).cpufreq_governor,
                                p(h).cpu_boost.empty() ? "unknown" : p(h).cpu_boost);
         },
         ""},
        {"lockprof_version", "lockprof",
         [&](auto& h) { return fmt::format("{} ({})", p(h).lockprof_version, p(h).git_revision); },
         ""},
        {"workload", "workload",
         [&](auto& h) {
             const auto& s = h.run->spec;
             return fmt::format("{} trials of {}, critical {} ns, parallel {} ns", s.trials,
                                s.duration_ns ? fmt::format("{} ms", *s.duration_ns / 1e6)
                                              : fmt::format("{} acquires/thread",
                                                            s.acquires_per_thread.value_or(0)),
                                s.work.critical_ns, s.work.parallel_ns);
         },
         ""},
    };
    for (const auto& f : fields) {
        HostField row;
        row.field = f.field;
        row.label = f.label;
        for (const auto& h : out.hosts) row.values.push_back(f.value(h));
        row.differs = std::any_of(row.values.begin(), row.values.end(),
                                  [&](auto& v) { return v != row.values[0]; });
        const bool assertions_on =
            row.field == "assertions" &&
            std::find(row.values.begin(), row.values.end(), "ON") != row.values.end();
        row.explains = *f.why && (row.differs || assertions_on);
        if (row.explains) row.why = f.why;
        out.provenance.push_back(std::move(row));
    }
    // The mistake that fooled the thread comes first, naming the hosts.
    std::vector<std::string> asserting;
    for (const auto& h : out.hosts)
        if (p(h).assertions) asserting.push_back(h.name);
    if (!asserting.empty())
        out.warnings.push_back(fmt::format(
            "assertions are ON in {}: {} numbers are not representative (the 2020 thread's "
            "mistake); rebuild with NDEBUG and run again",
            asserting.size() == 1 ? asserting[0] + "'s build"
                                  : fmt::format("the builds of {}", fmt::join(asserting, "; ")),
            asserting.size() == 1 ? "its" : "their"));
    std::set<std::string> versions;
    for (const auto& h : out.hosts) versions.insert(p(h).lockprof_version);
    if (versions.size() > 1) {
        std::vector<std::string> each;
        for (const auto& h : out.hosts)
            each.push_back(fmt::format("{} {}", h.name, p(h).lockprof_version));
        out.warnings.push_back(fmt::format(
            "the files come from different lockprof versions ({}): the measured loop or its "
            "accounting may have changed between them; read with care",
            fmt::join(each, ", ")));
    }
}

// Per host, the pairs' locks at its largest thread count: what its PMU counted, or why not.
void gather_evidence(HostsComparison& out) {
    for (std::size_t i = 0; i < out.hosts.size(); ++i) {
        const Host& h = out.hosts[i];
        HostEvidence ev;
        ev.host = i;
        for (auto t : out.threads)
            for (const auto& lock : out.locks)
                if (find_cell(h, lock, t)) ev.threads = std::max(ev.threads, t);
        for (const auto& lock : out.locks) {
            const auto* s = find_cell(h, lock, ev.threads);
            if (!s) continue;
            std::vector<std::string> figures;
            for (const auto& e : s->events)
                if (e.counted)
                    figures.push_back(
                        fmt::format("{} {}/acquire", e.event, format_figure(e.per_acquire.median)));
            for (const auto& d : s->derived)
                figures.push_back(fmt::format("{} {}", d.label,
                                              d.percent
                                                  ? fmt::format("{:.1f}%", d.value.median * 100)
                                                  : format_figure(d.value.median)));
            if (!figures.empty())
                ev.lines.push_back(fmt::format("{}: {}", lock, fmt::join(figures, ", ")));
        }
        for (const auto& note : h.run->notes)
            if (note.find("not counted") != std::string::npos) {
                ev.not_counted = note;
                break;
            }
        if (ev.lines.empty()) {
            if (ev.not_counted.empty())
                ev.not_counted = h.run->notes.empty() && h.summaries.empty()
                                     ? "no cells"
                                     : "no hardware event was counted in this file (a run with "
                                       "--no-counters, or counters the kernel refused)";
        }
        out.evidence.push_back(std::move(ev));
    }
}

}  // namespace hosts_detail

using namespace hosts_detail;

std::string host_name(const workload::Provenance& provenance) {
    return provenance.hostname.empty() ? std::string("unnamed host") : provenance.hostname;
}

std::vector<std::string> host_differences(const workload::Provenance& a,
                                          const workload::Provenance& b) {
    std::vector<std::string> out;
    if (a.hostname != b.hostname) out.emplace_back("hostname");
    if (a.arch != b.arch) out.emplace_back("arch");
    if (a.cpu_model != b.cpu_model) out.emplace_back("cpu_model");
    if (a.midr != b.midr) out.emplace_back("midr");
    if (a.lse != b.lse) out.emplace_back("lse");
    if (a.logical_cpus != b.logical_cpus) out.emplace_back("logical_cpus");
    return out;
}

HostsComparison compare_hosts(std::vector<HostInput>& inputs, const VerdictOptions& options) {
    if (inputs.size() < 2)
        throw UsageError(
            "report: a cross-host report needs two or more result files: lockprof report "
            "A.json B.json [...] -o hosts.html");
    HostsComparison out;
    out.options = options;
    name_hosts(inputs, out.hosts);
    std::set<unsigned> threads;
    for (auto& h : out.hosts) {
        h.summaries = summarize(*h.run, options);
        for (const auto& s : h.summaries)
            if (s.cell && s.trials > 0) threads.insert(s.cell->threads);
    }
    out.threads.assign(threads.begin(), threads.end());
    common_locks(out);
    compare_pairs(out);
    provenance_rows(out);
    gather_evidence(out);
    return out;
}

}  // namespace lockprof::analysis
