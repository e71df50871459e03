#include "lockprof/record/analysis.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/attribution/stacks.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace lockprof::record {
namespace {

constexpr std::size_t kSpinInstructions = 5;

// Processes that map the same files at the same addresses resolve alike.
std::string signature(const std::vector<measure::MappedModule>& modules) {
    std::string out;
    for (const auto& m : modules)
        if (m.permissions.find('x') != std::string::npos)
            out += fmt::format("{}@{:x}+{:x};", m.path, m.start, m.offset);
    return out;
}

// `counted[e]`: event e counted in some thread of the recording. A thread that never ran
// while attached has no enabled time and contributes 0 to such an event, not "not counted".
std::vector<CounterTotal> totals_of(
    const std::vector<std::string>& events,
    const std::vector<const std::vector<measure::CounterReading>*>& sets,
    const std::vector<bool>& counted, double seconds) {
    std::vector<CounterTotal> out;
    for (std::size_t e = 0; e < events.size(); ++e) {
        CounterTotal t;
        t.event = events[e];
        if (e < counted.size() && counted[e]) t.value = 0;
        for (const auto* set : sets)
            if (e < set->size())
                if (auto v = measure::scaled_value((*set)[e])) t.value = t.value.value_or(0) + *v;
        if (t.value && seconds > 0) t.per_second = *t.value / seconds;
        out.push_back(std::move(t));
    }
    return out;
}

using FunctionKey = std::pair<std::string, std::string>;  // module, demangled name

}  // namespace

Images::Images(const RecordResult& result) {
    // Samples of processes never seen alive (no mappings) land in a group without modules,
    // and stay unresolved.
    struct Group {
        const std::vector<measure::MappedModule>* modules = nullptr;
        std::vector<const measure::RawSample*> samples;
    };
    // A process's group, and those of the mappings its execs replaced (with when).
    struct Owner {
        std::size_t group = 0;
        std::vector<std::pair<std::uint64_t, std::size_t>> before_exec;
    };
    std::map<std::string, std::size_t> by_signature;
    std::map<pid_t, Owner> owner_of;
    std::vector<Group> groups;
    auto group_of = [&](const std::vector<measure::MappedModule>& modules) {
        auto [it, added] = by_signature.emplace(signature(modules), groups.size());
        if (added) groups.push_back({&modules, {}});
        return it->second;
    };
    for (const auto& p : result.processes) {
        Owner owner{group_of(p.modules), {}};
        for (const auto& earlier : p.before_exec)
            owner.before_exec.emplace_back(earlier.until_ns, group_of(earlier.modules));
        owner_of[p.info.pid] = std::move(owner);
    }
    for (const auto& s : result.samples) {
        auto it = owner_of.find(static_cast<pid_t>(s.pid));
        if (it == owner_of.end()) {
            auto [g, added] = by_signature.emplace("", groups.size());
            if (added) groups.push_back({});
            it = owner_of.emplace(static_cast<pid_t>(s.pid), Owner{g->second, {}}).first;
        }
        // Taken before an exec (a child between its fork and its exec runs its parent's code
        // at its parent's addresses): the mappings that exec replaced. Samples without a time
        // are taken to be the latest.
        std::size_t group = it->second.group;
        for (const auto& [until_ns, earlier] : it->second.before_exec)
            if (s.time_ns != 0 && s.time_ns < until_ns) {
                group = earlier;
                break;
            }
        groups[group].samples.push_back(&s);
    }
    static const std::vector<measure::MappedModule> kNone;
    std::map<std::size_t, std::size_t> image_of_group;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        auto& g = groups[i];
        if (g.samples.empty()) continue;
        const auto& modules = g.modules ? *g.modules : kNone;
        image_of_group[i] = images_.size();
        images_.push_back(
            {std::move(g.samples), !modules.empty(), symbols::SymbolResolver(modules), &modules});
    }
    for (const auto& [sig, group] : by_signature) {
        if (sig.empty() || !groups[group].modules || groups[group].modules->empty()) continue;
        Mappings& m = mappings_[sig];
        m.modules = groups[group].modules;
        if (const auto image = image_of_group.find(group); image != image_of_group.end())
            m.resolver = &images_[image->second].resolver;
    }
    for (const auto& p : result.processes)
        if (const auto m = mappings_.find(signature(p.modules)); m != mappings_.end())
            mappings_of_[p.info.pid] = &m->second;
}

const symbols::SymbolResolver* Images::resolver_of(pid_t pid) const {
    const auto it = mappings_of_.find(pid);
    if (it == mappings_of_.end()) return nullptr;
    const Mappings& m = *it->second;
    if (m.resolver) return m.resolver;
    if (!m.built) m.built = std::make_unique<symbols::SymbolResolver>(*m.modules);
    return m.built.get();
}

std::regex lock_regex(const std::string& pattern) {
    try {
        return std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        throw UsageError(fmt::format(
            "--lock-pattern: '{}' is not a valid regular expression ({}); use alternatives such "
            "as s_lock|spin",
            pattern, e.what()));
    }
}

namespace {

using LockTest = std::function<bool(const std::string&)>;

// Counters: per process (its threads summed, or the command's inherited totals), and overall.
void add_counter_totals(const RecordResult& result, RecordAnalysis& profile) {
    std::vector<const std::vector<measure::CounterReading>*> all;
    std::vector<bool> counted(result.events.size(), false);
    for (const auto& p : result.processes) {
        for (std::size_t e = 0; e < p.inherited.size() && e < counted.size(); ++e)
            counted[e] = counted[e] || p.inherited[e].running_ns > 0;
        for (const auto& t : p.threads)
            for (std::size_t e = 0; e < t.counters.size() && e < counted.size(); ++e)
                counted[e] = counted[e] || t.counters[e].running_ns > 0;
    }
    for (std::size_t i = 0; i < result.processes.size(); ++i) {
        const auto& p = result.processes[i];
        std::vector<const std::vector<measure::CounterReading>*> sets;
        if (!p.inherited.empty()) sets.push_back(&p.inherited);
        for (const auto& t : p.threads)
            if (!t.counters.empty()) sets.push_back(&t.counters);
        if (sets.empty()) continue;
        profile.per_process[i] = totals_of(result.events, sets, counted, result.duration_s);
        all.insert(all.end(), sets.begin(), sets.end());
    }
    profile.totals = totals_of(result.events, all, counted, result.duration_s);
}

// How much of the CPU time task_clock counted the samples of a clock stand for. perf's clock
// samples taken with exclude_kernel drop every tick that lands in the kernel, so a program that
// lives in system calls (a read() loop) leaves few samples and no trace of why; say how much
// went unseen and what sees it. (The timer sampler charges kernel time to the user-space
// instruction that made the call: its samples cover all of it.)
void sampled_time(const RecordResult& result, RecordAnalysis& profile) {
    if (!result.sampling || result.sampling->sampler != "perf") return;
    const std::string& event = result.sampling->event;
    if (event != "cpu-clock" && event != "task-clock") return;
    for (const auto& total : profile.totals)
        if (total.event == "task_clock" && total.value && *total.value > 0)
            profile.sampled_cpu_share = profile.total_weight / *total.value;
    if (!profile.sampled_cpu_share || *profile.sampled_cpu_share >= 0.9) return;
    const double share = *profile.sampled_cpu_share;
    const double cpu_ms = profile.total_weight / share / 1e6;
    const std::string lost = result.samples_lost > 0
                                 ? fmt::format("; {} samples were lost too", result.samples_lost)
                                 : "";
    profile.warnings.push_back(
        result.sampling->kernel
            ? fmt::format("the samples stand for {:.0f}% of the {:.0f} ms of CPU time "
                          "task_clock counted{}",
                          100 * share, cpu_ms, lost)
            : fmt::format("the samples stand for {:.0f}% of the {:.0f} ms of CPU time task_clock "
                          "counted: the other {:.0f}% ran in the kernel (system calls, page "
                          "faults), which user-space sampling does not see{}; --kernel samples "
                          "kernel code too, as [kernel] (needs perf_event_paranoid <= 1 or "
                          "CAP_PERFMON)",
                          100 * share, cpu_ms, 100 * (1 - share), lost));
}

// Samples and their weight, overall and per process.
void count_samples(const RecordResult& result, RecordAnalysis& profile) {
    std::map<pid_t, std::size_t> index_of;
    for (std::size_t i = 0; i < result.processes.size(); ++i)
        index_of[result.processes[i].info.pid] = i;
    for (const auto& s : result.samples) {
        profile.total_weight += static_cast<double>(s.weight);
        ++profile.samples;
        if (auto it = index_of.find(static_cast<pid_t>(s.pid)); it != index_of.end())
            ++profile.samples_per_process[it->second];
    }
}

// Samples per symbol across every image, and the processes each symbol's samples came from.
struct SymbolTally {
    std::map<FunctionKey, SymbolShare> symbols;
    std::map<FunctionKey, std::set<pid_t>> pids_of;
    double unresolved = 0;  // weight no symbol covers

    void add(const Images::Image& image) {
        std::map<std::uint64_t, std::pair<std::uint64_t, double>> at_ip;  // count, weight
        std::map<std::uint64_t, std::set<pid_t>> pids_at;
        for (const auto* s : image.samples) {
            auto& [count, weight] = at_ip[s->ip];
            ++count;
            weight += static_cast<double>(s->weight);
            pids_at[s->ip].insert(static_cast<pid_t>(s->pid));
        }
        for (const auto& [ip, cw] : at_ip) {
            const auto loc = image.resolver.resolve(ip);
            // Code no symbol covers counts per module: "[no symbol] postgres" says where.
            if (!loc.has_symbol()) unresolved += cw.second;
            const FunctionKey key{loc.module, loc.symbol};
            auto& sym = symbols[key];
            if (sym.samples == 0) {
                sym.symbol = loc.symbol;
                sym.short_name = loc.has_symbol()     ? symbols::short_name(loc.symbol)
                                 : loc.module.empty() ? "[unknown]"
                                                      : "[no symbol]";
                sym.module = loc.module;
            }
            sym.samples += cw.first;
            sym.weight += cw.second;
            pids_of[key].insert(pids_at[ip].begin(), pids_at[ip].end());
        }
    }
};

// The spin view's inline matching, as perf --inline: samples in code of a function that does
// not match the lock pattern, whose inline chain holds one that does (a `static inline` lock
// compiled into its callers, visible only through DWARF's inlined subroutines). Each such lock
// is counted once per function it is inlined into, "my_spin_lock (inlined into worker)".
struct InlinedLocks {
    std::map<FunctionKey, SymbolShare> locks;  // by module and short name
    std::map<FunctionKey, std::set<pid_t>> pids_of;
    std::set<std::string> callers;                       // demangled names of the functions
    std::set<std::pair<std::string, std::uint64_t>> at;  // module, file address of their samples

    void add(const Images::Image& image, const LockTest& is_lock) {
        std::map<std::uint64_t, std::vector<const measure::RawSample*>> at_ip;
        for (const auto* s : image.samples) at_ip[s->ip].push_back(s);
        for (const auto& [ip, samples] : at_ip) {
            const auto loc = image.resolver.resolve(ip);
            if (!loc.has_symbol() || is_lock(loc.symbol)) continue;
            const auto chain = image.resolver.inlined_at(ip);  // innermost first
            // The outermost match: the lock its callers call, not what it inlines in turn.
            std::size_t match = chain.size();
            for (std::size_t i = 0; i < chain.size(); ++i)
                if (is_lock(chain[i])) match = i;
            if (match == chain.size()) continue;
            const std::string& caller = match + 1 < chain.size() ? chain[match + 1] : loc.symbol;
            const std::string name =
                fmt::format("{} (inlined into {})", symbols::short_name(chain[match]),
                            symbols::short_name(caller));
            const FunctionKey key{loc.module, name};
            auto& lock = locks[key];
            if (lock.samples == 0) {
                lock.symbol = chain[match];
                lock.short_name = name;
                lock.module = loc.module;
                lock.inlined_into = caller;
            }
            for (const auto* s : samples) {
                ++lock.samples;
                lock.weight += static_cast<double>(s->weight);
                pids_of[key].insert(static_cast<pid_t>(s->pid));
            }
            callers.insert(loc.symbol);
            at.emplace(loc.module, loc.file_address(ip));
        }
    }
};

// Adds one image's annotated functions to `merged`, instruction weights summed per function
// over the images (processes of one program that do not share mappings).
void merge_annotations(const attribution::CellAnnotation& cell,
                       std::map<FunctionKey, attribution::HotFunction>& merged_functions) {
    for (const auto& f : cell.functions) {
        if (f.instructions.empty() && f.error.empty()) continue;
        auto& merged = merged_functions[{f.module, f.name}];
        if (merged.name.empty()) {
            merged = f;
            merged.weight = 0;
            for (auto& i : merged.instructions) i.weight = 0;
        }
        merged.weight += f.weight;
        // Same module, same file addresses, both in address order (objdump's): add the
        // instruction weights up in one pass (a parser function has thousands).
        auto m = merged.instructions.begin();
        for (const auto& i : f.instructions) {
            while (m != merged.instructions.end() && m->instruction.address < i.instruction.address)
                ++m;
            if (m != merged.instructions.end() && m->instruction.address == i.instruction.address)
                m->weight += i.weight;
        }
    }
}

// Hot symbols and annotated functions with their shares of all samples, hottest first.
void rank(RecordAnalysis& profile, SymbolTally& tally,
          std::map<FunctionKey, attribution::HotFunction>& annotated) {
    profile.unresolved_share = tally.unresolved / profile.total_weight;
    for (auto& [key, sym] : tally.symbols) {
        sym.share = sym.weight / profile.total_weight;
        sym.processes = tally.pids_of[key].size();
        profile.hot_symbols.push_back(sym);
    }
    std::sort(profile.hot_symbols.begin(), profile.hot_symbols.end(),
              [](const auto& a, const auto& b) { return a.weight > b.weight; });
    for (auto& [key, f] : annotated) {
        f.share = f.weight / profile.total_weight;
        for (auto& i : f.instructions) i.share = i.weight / profile.total_weight;
        profile.annotated.push_back(std::move(f));
    }
    std::sort(profile.annotated.begin(), profile.annotated.end(),
              [](const auto& a, const auto& b) { return a.weight > b.weight; });
}

// The spin-lock view: the symbols matching the lock pattern, their share, and their hottest
// instructions.
void spin_view(RecordAnalysis& profile, const std::string& pattern, const LockTest& is_lock,
               InlinedLocks& inlined) {
    profile.spin.pattern = pattern;
    double spin_weight = 0;
    for (const auto& sym : profile.hot_symbols)
        if (!sym.symbol.empty() && is_lock(sym.symbol)) {
            profile.spin.symbols.push_back(sym);
            spin_weight += sym.weight;
        }
    for (auto& [key, lock] : inlined.locks) {
        lock.share = lock.weight / profile.total_weight;
        lock.processes = inlined.pids_of[key].size();
        profile.spin.symbols.push_back(lock);
        spin_weight += lock.weight;
    }
    std::stable_sort(profile.spin.symbols.begin(), profile.spin.symbols.end(),
                     [](const auto& a, const auto& b) { return a.weight > b.weight; });
    profile.spin.share = spin_weight / profile.total_weight;
    if (spin_weight <= 0) return;
    for (const auto& f : profile.annotated) {
        const bool whole = is_lock(f.name);
        if (!whole && !inlined.callers.count(f.name)) continue;
        for (const auto& i : f.instructions)
            if (i.weight > 0 && (whole || inlined.at.count({f.module, i.instruction.address})))
                profile.spin.hot_instructions.push_back(
                    {f.short_name, f.module, i.instruction.address, i.instruction.listing_text(),
                     i.weight / spin_weight, i.share});
    }
    auto& hot = profile.spin.hot_instructions;
    std::sort(hot.begin(), hot.end(),
              [](const auto& a, const auto& b) { return a.share > b.share; });
    if (hot.size() > kSpinInstructions) hot.resize(kSpinInstructions);
}

// Keeps the listings of the hottest functions plus the lock functions.
void keep_listings(RecordAnalysis& profile, std::size_t top_functions, const LockTest& is_lock) {
    std::vector<attribution::HotFunction> kept;
    for (std::size_t i = 0; i < profile.annotated.size(); ++i) {
        const bool lock = is_lock(profile.annotated[i].name);
        if (i >= top_functions && !lock) continue;
        kept.push_back(std::move(profile.annotated[i]));
        profile.lock_function.push_back(lock);
    }
    profile.annotated = std::move(kept);
}

void add_warning_once(RecordAnalysis& profile, const std::string& warning) {
    if (std::find(profile.warnings.begin(), profile.warnings.end(), warning) ==
        profile.warnings.end())
        profile.warnings.push_back(warning);
}

// What the instruments took of the targets' CPU time (InstrumentShare).
InstrumentShare instrument_share(const RecordResult& result, const RecordAnalysis& profile) {
    InstrumentShare s;
    const auto& c = *result.calibration;
    if (result.spin) {
        for (const auto entries : result.spin->kernel_entries) s.probe_calls += entries;
        if (c.probe_call) s.probes_ns = c.probe_call->ns * static_cast<double>(s.probe_calls);
    }
    if (result.sampling) {
        s.samples = result.samples.size() + result.samples_lost;
        if (c.sample) s.sampling_ns = c.sample->ns * static_cast<double>(s.samples);
    }
    for (const auto& t : profile.totals)
        if (t.event == "task_clock" && t.value && *t.value > 0) {
            s.target_cpu_ns = *t.value;
            s.target_cpu_source = "task_clock";
        }
    if (!s.target_cpu_ns && result.sampling && result.sampling->event == "cpu-clock" &&
        profile.total_weight > 0) {
        s.target_cpu_ns = profile.total_weight;
        s.target_cpu_source = "cpu-clock samples";
    }
    if (s.target_cpu_ns && (s.probes_ns || s.sampling_ns))
        s.share = (s.probes_ns.value_or(0) + s.sampling_ns.value_or(0)) / *s.target_cpu_ns;
    return s;
}

}  // namespace

RecordAnalysis analyse(const RecordResult& result, const Images& images,
                       const AnalysisOptions& options) {
    RecordAnalysis profile;
    add_counter_totals(result, profile);
    count_samples(result, profile);
    sampled_time(result, profile);
    if (result.calibration) profile.instruments = instrument_share(result, profile);
    if (result.spin) {
        profile.spin_calls = analyse_spin(*result.spin, [&](std::uint32_t pid) {
            return images.resolver_of(static_cast<pid_t>(pid));
        });
    }
    if (profile.samples == 0 || profile.total_weight <= 0) return profile;

    const std::regex locks = lock_regex(options.lock_pattern);
    // The slow paths --spin probed are lock code whatever their names (my_lock_slow).
    std::set<std::string> probed;
    if (result.spin)
        for (const auto& probe : result.spin->probes)
            if (probe.refused.empty()) probed.insert(probe.function);
    const LockTest is_lock = [&](const std::string& name) {
        return probed.count(name) > 0 || std::regex_search(name, locks);
    };
    profile.spin.probed.assign(probed.begin(), probed.end());
    attribution::AnnotateOptions annotate = options.annotate;
    annotate.min_function_share = 0;

    // Functions a matching lock is inlined into are annotated and listed like the lock
    // functions themselves.
    InlinedLocks inlined;
    for (const auto& image : images.all()) inlined.add(image, is_lock);
    const LockTest is_spin_code = [&](const std::string& name) {
        return is_lock(name) || inlined.callers.count(name) > 0;
    };
    annotate.always_annotate = is_spin_code;

    SymbolTally tally;
    std::map<FunctionKey, attribution::HotFunction> annotated;
    for (const auto& image : images.all()) {
        for (const auto& path : image.resolver.changed_modules())
            profile.warnings.push_back(fmt::format(
                "'{}' changed since it was recorded (build id differs): annotation may be wrong",
                path));
        tally.add(image);
        if (!image.has_modules) continue;
        attribution::Annotator annotator(image.resolver, annotate);
        const auto cell = annotator.annotate(image.samples);
        for (const auto& objdump : cell.missing_objdump)
            add_warning_once(profile, attribution::missing_objdump_warning(objdump, true));
        merge_annotations(cell, annotated);
    }
    rank(profile, tally, annotated);
    spin_view(profile, options.lock_pattern, is_lock, inlined);
    keep_listings(profile, options.annotate.top_functions, is_spin_code);
    if (profile.spin.symbols.empty())
        for (const auto& f : profile.annotated)
            if (!attribution::no_line_information_note(f).empty())
                profile.spin.without_debug_info.push_back(f.short_name);
    return profile;
}

exporting::FoldedStacks folded_stacks(const RecordResult& result, const Images& images,
                                      const RecordAnalysis& profile, bool instruction_leaf) {
    exporting::FoldedStacks stacks;
    std::map<pid_t, std::string> name_of;
    for (const auto& p : result.processes)
        name_of[p.info.pid] = p.info.comm.empty() ? std::to_string(p.info.pid) : p.info.comm;
    const auto mnemonics = instruction_leaf ? attribution::mnemonics_of(profile.annotated)
                                            : attribution::MnemonicMap{};
    for (const auto& group : images.all()) {
        attribution::StackFolder folder(
            group.resolver,
            instruction_leaf ? attribution::Leaf::instruction : attribution::Leaf::function,
            &mnemonics);
        for (const auto* s : group.samples) {
            const auto name = name_of.find(static_cast<pid_t>(s->pid));
            stacks.add(
                folder.frames(name != name_of.end() ? name->second : std::to_string(s->pid), *s),
                s->weight);
        }
    }
    return stacks;
}

}  // namespace lockprof::record
