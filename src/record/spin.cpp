#include "lockprof/record/spin.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/symbols/elf_lookup.hpp"
#include "lockprof/attribution/stacks.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace lockprof::record {
namespace {

// clang-format off
constexpr KnownSlowPath kKnown[] = {
    {.function = "s_lock", .owner = "PostgreSQL",
     .meaning = "a contended spinlock acquisition: s_lock() runs only after the inlined first "
                "test-and-set failed; entry to return is the time spent spinning and sleeping "
                "(perform_spin_delay) until the lock was taken; its result is how many times "
                "perform_spin_delay slept (pg_usleep), counted as sleeps",
     .arguments = SpinArguments::pg_s_lock,
     .returns = SpinReturns::pg_delays},
    {.function = "pthread_spin_lock", .owner = "glibc",
     .meaning = "every pthread_spin_lock() call, contended or not (glibc's whole lock is this "
                "function); entry to return is the time to acquire",
     .arguments = SpinArguments::lock_only},
    {.function = "__lll_lock_wait", .owner = "glibc",
     .meaning = "a contended pthread_mutex_lock(): the futex wait after the inlined atomic "
                "failed; entry to return includes the time asleep in the kernel",
     .arguments = SpinArguments::lock_only},
};
// clang-format on

constexpr std::size_t kMaxString = 256;
constexpr std::size_t kLocksKept = 8;

}  // namespace

std::span<const KnownSlowPath> known_slow_paths() {
    return kKnown;
}

const KnownSlowPath* find_slow_path(std::string_view function) {
    for (const auto& k : kKnown)
        if (function == k.function) return &k;
    return nullptr;
}

std::vector<std::string> spin_binaries(const std::string& exe,
                                       const std::vector<measure::MappedModule>& modules) {
    std::vector<std::string> out;
    auto add = [&](const std::string& path) {
        if (path.empty() || !path.starts_with('/')) return;
        if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
    };
    add(exe);
    for (const auto& m : modules)
        if (m.path != symbols::kVdso) add(m.path);
    return out;
}

namespace {

// The definitions of `functions` (empty: the known slow paths) in the ELF files among
// `binaries`; `missing` is called with each requested function found nowhere, the ELF files
// searched and the stripped ones among them.
using MissingFunction = std::function<void(const std::string&, const std::vector<std::string>&,
                                           const std::set<std::string>&)>;
SpinPlan search_spin(const std::vector<std::string>& functions,
                     const std::vector<std::string>& binaries, const MissingFunction& missing) {
    SpinPlan plan;
    // Only ELF files are searched (a process also maps locale archives and caches).
    for (const auto& path : binaries) {
        symbols::ElfImage image;
        if (symbols::elf_image(path, image)) plan.searched.push_back(path);
    }
    const std::vector<std::string>& elf_files = plan.searched;
    std::vector<std::string> wanted = functions;
    const bool defaults = wanted.empty();
    if (defaults)
        for (const auto& k : kKnown) wanted.emplace_back(k.function);
    std::set<std::string> stripped;
    for (const auto& function : wanted) {
        bool found = false;
        for (const auto& path : elf_files) {
            const auto search = symbols::find_function(path, function);
            if (search.readable && !search.has_symtab) stripped.insert(path);
            if (!search.found) continue;
            found = true;
            SpinProbe probe;
            probe.function = function;
            probe.path = path;
            probe.address = search.found->address;
            probe.file_offset = search.found->file_offset;
            const auto* known = find_slow_path(function);
            probe.arguments = known ? known->arguments : SpinArguments::lock_only;
            probe.returns = known ? known->returns : SpinReturns::nothing;
            plan.probes.push_back(std::move(probe));
        }
        if (!found && !defaults && missing) missing(function, elf_files, stripped);
    }
    return plan;
}

}  // namespace

SpinPlan plan_spin(const std::vector<std::string>& functions,
                   const std::vector<std::string>& binaries) {
    auto refuse = [](const std::string& function, const std::vector<std::string>& elf_files,
                     const std::set<std::string>& stripped) {
        std::string why;
        if (!stripped.empty())
            why = fmt::format(
                "; stripped (no .symtab, only exported functions searched): {}; install "
                "their debug symbols (a -dbgsym package) to find static functions",
                fmt::join(stripped, ", "));
        throw UsageError(
            fmt::format("--spin: no function {} in the target's binaries (searched {}: {}){}",
                        function, elf_files.size(), fmt::join(elf_files, ", "), why));
    };
    SpinPlan plan = search_spin(functions, binaries, refuse);
    const std::vector<std::string>& elf_files = plan.searched;
    if (plan.probes.empty()) {
        std::vector<std::string> names;
        for (const auto& k : kKnown) names.emplace_back(k.function);
        throw UsageError(fmt::format(
            "--spin: none of the known slow paths ({}) is in the target's binaries (searched "
            "{}: {}); name the functions to probe: --spin FUNC[,FUNC]",
            fmt::join(names, ", "), elf_files.size(), fmt::join(elf_files, ", ")));
    }
    return plan;
}

SpinPlan extend_spin(const std::vector<std::string>& functions,
                     const std::vector<std::string>& binaries) {
    return search_spin(functions, binaries, nullptr);
}

std::optional<std::string> read_process_string(pid_t pid, std::uint64_t address) {
    if (address == 0) return std::nullopt;
    std::string out;
    char buffer[64];
    while (out.size() < kMaxString) {
        iovec local{buffer, sizeof buffer};
        iovec remote{reinterpret_cast<void*>(address + out.size()), sizeof buffer};
        const ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n <= 0) {
            // The last chunk may cross into an unmapped page: read it byte by byte.
            local.iov_len = remote.iov_len = 1;
            if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != 1) return std::nullopt;
            if (buffer[0] == '\0') return out;
            out += buffer[0];
            continue;
        }
        for (ssize_t i = 0; i < n; ++i) {
            if (buffer[i] == '\0') return out;
            out += buffer[i];
        }
    }
    return out;
}

std::optional<std::string> read_mapped_string(const std::vector<measure::MappedModule>& modules,
                                              std::uint64_t address) {
    // The load bias of each file from one of its mappings, then the address's file offset
    // through the file's own segments: its read-only data may not be among the mappings kept.
    std::set<std::string> tried;
    for (const auto& m : modules) {
        if (m.path == symbols::kVdso || !tried.insert(m.path).second) continue;
        symbols::ElfImage image;
        if (!symbols::elf_image(m.path, image)) continue;
        std::optional<std::uint64_t> bias;
        for (const auto& seg : image.segments)
            if (m.offset >= seg.offset && m.offset < seg.offset + std::max(seg.filesz, 1ul)) {
                bias = m.start - (seg.vaddr + (m.offset - seg.offset));
                break;
            }
        if (!bias || address < *bias) continue;
        const auto offset = symbols::file_offset_of(image, address - *bias);
        if (!offset) continue;
        std::ifstream in(m.path, std::ios::binary);
        in.seekg(static_cast<std::streamoff>(*offset));
        std::string out;
        char c = 0;
        while (out.size() < kMaxString && in.get(c) && c != '\0') out += c;
        if (in) return out;
    }
    return std::nullopt;
}

namespace {

using ResolverOf = std::function<const symbols::SymbolResolver*(std::uint32_t)>;

// One call site's entries as they are counted.
struct SiteTally {
    SpinSite site;
    std::map<std::uint64_t, std::uint64_t> locks;  // address -> entries
    std::set<std::uint32_t> pids;
    std::map<std::vector<std::string>, std::uint64_t> stacks;  // frames -> samples
};
using SiteTallies = std::map<std::string, SiteTally>;  // by describe_site()'s key

std::vector<SpinFunction> probed_functions(const SpinRecording& recording) {
    std::vector<SpinFunction> out;
    for (std::size_t i = 0; i < recording.probes.size(); ++i) {
        SpinFunction f;
        f.function = recording.probes[i].function;
        f.path = recording.probes[i].path;
        f.refused = recording.probes[i].refused;
        if (i < recording.kernel_entries.size()) f.kernel_entries = recording.kernel_entries[i];
        out.push_back(std::move(f));
    }
    return out;
}

// Each thread's hits in time order (a command's per-CPU buffers interleave).
std::vector<const SpinHit*> hits_by_thread(const SpinRecording& recording) {
    std::vector<const SpinHit*> hits;
    for (const auto& h : recording.hits) hits.push_back(&h);
    std::stable_sort(hits.begin(), hits.end(), [](const SpinHit* a, const SpinHit* b) {
        return std::tie(a->pid, a->tid, a->time_ns) < std::tie(b->pid, b->tid, b->time_ns);
    });
    return hits;
}

// A site its return address names: resolved to a caller and line where symbols say.
void describe_return_site(const SpinHit& h, const symbols::SymbolResolver* resolver,
                          std::string& key, SpinSite& s) {
    // The call is the instruction before the return address.
    const auto where = resolver ? resolver->resolve(*h.return_address - 1) : symbols::Location{};
    s.module = where.module;
    s.file = where.source_file;
    s.line = where.source_line;
    if (where.has_symbol()) {
        s.caller = symbols::short_name(where.symbol);
        const std::uint64_t offset = *h.return_address - where.symbol_start;
        s.site = s.file.empty() ? fmt::format("{}+{:#x}", s.caller, offset)
                                : fmt::format("{}:{} {}", base_name(s.file), s.line, s.caller);
        key = fmt::format("{}\n{}\n{}+{}", h.probe, where.module, where.symbol, offset);
        return;
    }
    const std::uint64_t address =
        where.module.empty() ? *h.return_address : where.file_address(*h.return_address);
    s.site = where.module.empty() ? fmt::format("[unknown] {:#x}", address)
                                  : fmt::format("[{}]+{:#x}", base_name(where.module), address);
    key = fmt::format("{}\n{}\n{:#x}", h.probe, where.module, address);
}

// The site of an entry, and the key that groups entries of one call site.
std::pair<std::string, SpinSite> describe_site(const SpinRecording& recording, const SpinHit& h,
                                               const ResolverOf& resolver_of) {
    const SpinProbe& probe = recording.probes[h.probe];
    SpinSite s;
    s.function = probe.function;
    std::string key;
    if (probe.arguments == SpinArguments::pg_s_lock && (!h.file.empty() || h.line)) {
        s.file = h.file;
        s.line = h.line;
        s.caller = h.func;
        s.site = fmt::format("{}:{} {}", base_name(h.file), h.line, h.func);
        key = fmt::format("{}\n{}\n{}\n{}", h.probe, h.file, h.line, h.func);
    } else if (h.return_address) {
        describe_return_site(h, resolver_of(h.pid), key, s);
    } else {
        s.site = "[unknown caller]";
        key = fmt::format("{}\n?", h.probe);
    }
    return {std::move(key), std::move(s)};
}

// Each entry counted at its site, and timed by the return that pairs with it (per thread and
// function, innermost first).
void pair_entries_with_returns(const SpinRecording& recording,
                               const std::vector<const SpinHit*>& hits,
                               const ResolverOf& resolver_of, SiteTallies& sites,
                               SpinProfile& out) {
    std::map<std::pair<std::uint32_t, std::size_t>,
             std::vector<std::pair<const SpinHit*, SiteTally*>>>
        open;  // (tid, probe) -> entries not yet returned, innermost last
    for (const SpinHit* h : hits) {
        if (h->is_stack) continue;  // the same calls as entries, sampled with their stacks
        const auto key = std::make_pair(h->tid, h->probe);
        if (!h->is_return) {
            auto [site_key, described] = describe_site(recording, *h, resolver_of);
            auto [it, added] = sites.try_emplace(site_key);
            if (added) it->second.site = std::move(described);
            SiteTally& site = it->second;
            ++site.site.entries;
            ++site.locks[h->lock];
            site.pids.insert(h->pid);
            ++out.functions[h->probe].entries;
            ++out.entries;
            open[key].emplace_back(h, &site);
            continue;
        }
        auto it = open.find(key);
        if (it == open.end() || it->second.empty()) continue;  // entered before the recording
        auto [entry, site] = it->second.back();
        it->second.pop_back();
        const double ns = static_cast<double>(h->time_ns - entry->time_ns);
        ++site->site.timed;
        site->site.total_ns += ns;
        site->site.max_ns = std::max(site->site.max_ns, ns);
        out.functions[h->probe].total_ns += ns;
        out.total_ns += ns;
        ++out.timed;
        if (recording.probes[h->probe].returns == SpinReturns::pg_delays && h->return_value) {
            // s_lock's int result, in the low half of the register.
            const auto sleeps = static_cast<std::uint32_t>(*h->return_value);
            site->site.sleeps = site->site.sleeps.value_or(0) + sleeps;
            auto& f = out.functions[h->probe];
            f.sleeps = f.sleeps.value_or(0) + sleeps;
            out.sleeps = out.sleeps.value_or(0) + sleeps;
        }
    }
}

// The sampled stacks, each to the site its entry is at (a stack whose entry was not recorded,
// lost to a full buffer, has no site and is left out). Returns how many were left out.
std::uint64_t add_sampled_stacks(const SpinRecording& recording,
                                 const std::vector<const SpinHit*>& hits,
                                 const ResolverOf& resolver_of, SiteTallies& sites,
                                 SpinProfile& out) {
    std::uint64_t unmatched = 0;
    for (const SpinHit* h : hits) {
        if (!h->is_stack) continue;
        auto it = sites.find(describe_site(recording, *h, resolver_of).first);
        if (it == sites.end()) {
            ++unmatched;
            continue;
        }
        const auto* resolver = resolver_of(h->pid);
        std::vector<std::string> frames;
        for (auto a = h->callchain.rbegin(); a != h->callchain.rend(); ++a)
            frames.push_back(resolver ? attribution::frame_name(resolver->resolve(*a - 1))
                                      : "[unknown]");
        ++it->second.stacks[frames];
        ++out.stack_samples;
    }
    return unmatched;
}

// The sites as the profile gives them: by total time, then entries.
std::vector<SpinSite> finished_sites(SiteTallies& sites) {
    std::vector<SpinSite> out;
    for (auto& [key, s] : sites) {
        SpinSite site = std::move(s.site);
        for (auto& [frames, samples] : s.stacks) site.stacks.push_back({frames, samples});
        std::stable_sort(site.stacks.begin(), site.stacks.end(),
                         [](const auto& a, const auto& b) { return a.samples > b.samples; });
        site.mean_ns = site.timed ? site.total_ns / static_cast<double>(site.timed) : 0;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> locks(s.locks.begin(), s.locks.end());
        std::stable_sort(locks.begin(), locks.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
        site.distinct_locks = locks.size();
        for (std::size_t i = 0; i < locks.size() && i < kLocksKept; ++i)
            site.locks.push_back(locks[i].first);
        site.processes = s.pids.size();
        out.push_back(std::move(site));
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.entries > b.entries;
    });
    return out;
}

// What the figures leave out: entries not timed, records lost.
void note_missing_records(const SpinRecording& recording, SpinProfile& out) {
    if (out.entries > out.timed)
        out.notes.push_back(fmt::format(
            "spin: {} of {} entries had not returned when the recording ended (or their return "
            "was lost); they are counted but not timed",
            out.entries - out.timed, out.entries));
    for (const auto& f : out.functions)
        if (f.kernel_entries > f.entries)
            out.notes.push_back(fmt::format(
                "spin: {} in {}: the kernel counted {} entries, {} were recorded ({} lost to "
                "full buffers, or in flight when the probes stopped); per-site figures are from "
                "those recorded",
                f.function, f.path, f.kernel_entries, f.entries, f.kernel_entries - f.entries));
    if (recording.lost)
        out.notes.push_back(
            fmt::format("spin: {} probe records were lost (ring buffers full)", recording.lost));
    // The kernel says how many records it could not write in a record of its own, at its next
    // write to that buffer: losses after the last one are in no count.
    if (recording.found_full)
        out.notes.push_back(fmt::format(
            "spin: the probe buffers were found full {} time{}: the kernel reports a buffer's "
            "losses only when it next writes there, so calls lost just before the probes "
            "stopped are in no lost-record count",
            recording.found_full, recording.found_full == 1 ? "" : "s"));
    if (recording.unreadable)
        out.notes.push_back(fmt::format(
            "spin: {} probe records could not be read (not in the layout lockprof asked the "
            "kernel for); their calls are missing from the figures: please report this",
            recording.unreadable));
}

// --call-graph dwarf: what the call stacks leave out.
void note_missing_stacks(const SpinRecording& recording, std::uint64_t unmatched,
                         SpinProfile& out) {
    std::uint64_t without_stack = 0;
    for (const auto& site : out.sites)
        if (site.stacks.empty() && site.timed) ++without_stack;
    if (without_stack)
        out.notes.push_back(fmt::format(
            "spin: {} call site{} had no stack recorded (their stack records were lost to "
            "full buffers): {} keep{} the caller alone in --spin-folded/--spin-flamegraph",
            without_stack, without_stack == 1 ? "" : "s", without_stack == 1 ? "it" : "they",
            without_stack == 1 ? "s" : ""));
    if (recording.stacks_lost)
        out.notes.push_back(fmt::format(
            "spin: {} entries' stacks were lost (their buffers full); the entries are all "
            "counted, each site's stacks are a sample of those recorded",
            recording.stacks_lost));
    if (unmatched)
        out.notes.push_back(fmt::format(
            "spin: {} stacks had no recorded entry to go with and are left out", unmatched));
    if (recording.stacks_unwound_without_callers)
        out.notes.push_back(
            fmt::format("spin: {} stacks could not be unwound past the caller (no call frame "
                        "information where they stopped, or a stack copy too short: raise "
                        "--call-graph dwarf,SIZE)",
                        recording.stacks_unwound_without_callers));
}

}  // namespace

SpinProfile analyse_spin(const SpinRecording& recording, const ResolverOf& resolver_of_pid) {
    SpinProfile out;
    out.searched = recording.searched;
    out.stack_size = recording.stack_size;
    out.stacks_seen = recording.stacks_seen;
    out.functions = probed_functions(recording);
    const ResolverOf resolver_of = [&](std::uint32_t pid) -> const symbols::SymbolResolver* {
        return resolver_of_pid ? resolver_of_pid(pid) : nullptr;
    };
    const auto hits = hits_by_thread(recording);
    SiteTallies sites;
    pair_entries_with_returns(recording, hits, resolver_of, sites, out);
    const std::uint64_t unmatched = add_sampled_stacks(recording, hits, resolver_of, sites, out);
    out.sites = finished_sites(sites);
    note_missing_records(recording, out);
    if (recording.stack_size) note_missing_stacks(recording, unmatched, out);
    return out;
}

exporting::FoldedStacks spin_folded(const SpinProfile& profile) {
    exporting::FoldedStacks out;
    for (const auto& site : profile.sites) {
        const std::string leaf = fmt::format("{} at {}", site.function, site.site);
        if (site.stacks.empty()) {
            const auto ns = static_cast<std::uint64_t>(site.total_ns + 0.5);
            out.add({site.caller.empty() ? "[unknown caller]" : site.caller, leaf}, ns);
            continue;
        }
        // The site's time over its sampled stacks, in proportion to their samples.
        std::uint64_t samples = 0;
        for (const auto& stack : site.stacks) samples += stack.samples;
        for (const auto& stack : site.stacks) {
            std::vector<std::string> frames = stack.frames;
            if (frames.empty())
                frames.push_back(site.caller.empty() ? "[unknown caller]" : site.caller);
            frames.push_back(leaf);
            const double share = static_cast<double>(stack.samples) / static_cast<double>(samples);
            out.add(frames, static_cast<std::uint64_t>(site.total_ns * share + 0.5));
        }
    }
    return out;
}

}  // namespace lockprof::record
