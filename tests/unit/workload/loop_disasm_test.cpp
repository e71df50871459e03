// The measured loop, read from this binary's own code with GNU objdump.
//
// With --latency the loop must hold the lock exactly as long as without it. The histogram is
// recorded after the release, so between the lock's atomic and the release store there is no
// call and no store that the throughput loop does not also have.
//
// The acquire loops of tas, ttas, cas, ttas-cas, ticket and pg-slock, and the wait loops of
// qspinlock's and osq's slow paths, keep their attempt counts in registers: no stack memory and
// no store but the lock's own atomic while a waiter spins (issue 29: a closure over the context
// put four loads and stores into every spin).
//
// Checked for tas in every flavour this build compiles (x86: native; aarch64: native, llsc, lse,
// outline) and every delay tas accepts here. The atomic is xchg on x86, and on aarch64 the
// store-exclusive of an ldaxr/stxr pair, swpa, or the call to libgcc's __aarch64_swp4_acq
// (outline atomics); the release store is the store of 0 to the lock word on x86 and stlr on
// aarch64.
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/attribution/phases.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "support/sanitizers.hpp"

using namespace lockprof;
using symbols::FunctionCode;
using symbols::Instruction;

namespace {

bool starts(const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
}

// x86 AT&T: the memory operand an instruction writes, "" when it writes none.
std::string x86_store_target(const Instruction& i) {
    for (std::string_view reads_only : {"cmp", "test", "nop", "bt", "prefetch", "lea", "ucomi",
                                        "comi", "call", "j", "push", "pop", "xchg"})
        if (starts(i.mnemonic, reads_only)) return "";
    const auto comma = i.operands.rfind(',');
    const std::string last = comma == std::string::npos ? i.operands : i.operands.substr(comma + 1);
    return last.find('(') != std::string::npos ? last : "";
}

bool is_call(const Instruction& i) {
    if constexpr (arch::kArchName == "x86_64") return starts(i.mnemonic, "call");
    return i.mnemonic == "bl" || i.mnemonic == "blr";
}

bool is_store(const Instruction& i) {
    if constexpr (arch::kArchName == "x86_64") return !x86_store_target(i).empty();
    return starts(i.mnemonic, "st");
}

// The instructions that make tas's acquire: an atomic on the lock word.
bool is_lock_atomic(const Instruction& i) {
    if constexpr (arch::kArchName == "x86_64")
        return i.mnemonic == "xchg" && i.operands.find('(') != std::string::npos;
    return starts(i.mnemonic, "stxr") || starts(i.mnemonic, "swp") ||
           (i.mnemonic == "bl" && starts(i.reference, "__aarch64_swp"));
}

// The memory operand of the x86 exchange, "(%r14)" in "xchg %r10d,(%r14)".
std::string x86_memory_operand(const Instruction& i) {
    const auto open = i.operands.find('(');
    auto start = i.operands.rfind(',', open);
    start = start == std::string::npos ? 0 : start + 1;
    return i.operands.substr(start, i.operands.find(')', open) + 1 - start);
}

struct CriticalSection {
    std::vector<Instruction> code;  // after the lock's atomic, before the release store
    bool found = false;
};

// From the last atomic on the lock word before the release store up to that store, in address
// order (the retry path of a failed attempt may be laid out elsewhere; it rejoins before the
// critical section).
CriticalSection critical_section(const FunctionCode& f) {
    CriticalSection section;
    const auto& code = f.instructions;
    std::size_t atomic = code.size();
    std::string word;
    for (std::size_t i = 0; i < code.size(); ++i) {
        if (is_lock_atomic(code[i])) {
            atomic = i;
            if constexpr (arch::kArchName == "x86_64") word = x86_memory_operand(code[i]);
            continue;
        }
        if (atomic == code.size()) continue;
        const bool release = arch::kArchName == "x86_64" ? starts(code[i].mnemonic, "mov") &&
                                                               code[i].operands == "$0x0," + word
                                                         : starts(code[i].mnemonic, "stlr");
        if (!release) continue;
        // The acquire path's own tail (aarch64: the stxr's retry branch) is not critical work.
        std::size_t from = atomic + 1;
        if (from < i && code[from].is_branch()) ++from;
        section.code.assign(code.begin() + static_cast<std::ptrdiff_t>(from),
                            code.begin() + static_cast<std::ptrdiff_t>(i));
        section.found = true;
        return section;
    }
    return section;
}

std::string referenced_listing(const std::vector<Instruction>& code) {
    std::string out;
    for (const auto& i : code)
        out += "    " + i.text() + (i.reference.empty() ? "" : " <" + i.reference + ">") + "\n";
    return out;
}

// measured_loop<TasLock<delay>, latency> of every flavour: key "flavour delay".
std::map<std::string, FunctionCode> tas_loops(bool latency) {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    const symbols::Disassembler disassembler;
    std::map<std::string, FunctionCode> out;
    const std::string suffix = latency ? ", true>(" : ", false>(";
    for (auto& f : symbols::function_symbols(self)) {
        const std::string prefix = "void lockprof::workload::";
        if (!starts(f.name, prefix)) continue;
        const auto ns_end = f.name.find("::measured_loop<lockprof::locks::", prefix.size());
        if (ns_end == std::string::npos) continue;
        const std::string flavour = f.name.substr(prefix.size(), ns_end - prefix.size());
        const std::string lock = "::measured_loop<lockprof::locks::" + flavour + "::TasLock<";
        if (f.name.compare(ns_end, lock.size(), lock) != 0) continue;
        if (f.name.find(suffix) == std::string::npos) continue;
        const auto delay_at = ns_end + lock.size();
        const std::string delay = f.name.substr(delay_at, f.name.find('>', delay_at) - delay_at);
        f.instructions = disassembler.disassemble(self, f.address, f.address + f.size);
        out[flavour + " " + delay] = std::move(f);
    }
    return out;
}

}  // namespace

// Why this binary's own loops cannot be read back here; "" when they can.
std::string cannot_read_the_loops() {
#if defined(LOCKPROF_TEST_TSAN) || defined(LOCKPROF_TEST_ASAN)
    return "sanitizers add calls and shadow accesses to every memory access; the code checked is "
           "the release build's. Runs in the other builds";
#else
    const std::string objdump = symbols::default_objdump("/proc/self/exe");
    return lockprof::program_exists(objdump) ? "" : objdump + " not found";
#endif
}

// A memory operand relative to the stack or frame pointer: a local kept in memory.
bool touches_stack(const Instruction& i) {
    if constexpr (arch::kArchName == "x86_64")
        return i.operands.find("(%rsp") != std::string::npos ||
               i.operands.find("(%rbp") != std::string::npos;
    return i.operands.find("[sp") != std::string::npos ||
           i.operands.find("[x29") != std::string::npos;
}

// A store other than the lock's own atomic (x86 xchg and lock-prefixed instructions; aarch64's
// store-exclusive of an LL/SC pair and the LSE atomics, none of which is an "st" mnemonic but
// stxr/stlxr).
bool stores_beside_the_atomic(const Instruction& i) {
    if (i.is_atomic()) return false;
    if constexpr (arch::kArchName == "x86_64")
        return !starts(i.mnemonic, "lock") && !x86_store_target(i).empty();
    return starts(i.mnemonic, "st") && !starts(i.mnemonic, "stxr") && !starts(i.mnemonic, "stlxr");
}

// Every function of this binary whose demangled name holds `needle` (and, when given, `also`).
std::vector<FunctionCode> functions_named(const std::string& needle, const std::string& also = "") {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    const symbols::Disassembler disassembler;
    std::vector<FunctionCode> out;
    for (auto& f : symbols::function_symbols(self)) {
        if (f.name.find(needle) == std::string::npos) continue;
        if (!also.empty() && f.name.find(also) == std::string::npos) continue;
        f.instructions = disassembler.disassemble(self, f.address, f.address + f.size);
        out.push_back(std::move(f));
    }
    return out;
}

// A loop of a function's code: the back edge's branch, its target (the header), and the
// instructions of the natural loop (those that reach the branch without passing the header),
// in address order. Compilers lay spin paths out of line, after the function's return, and
// branch back: the body is then not the address span between the two.
struct Loop {
    std::size_t header = 0, branch = 0;
    std::vector<std::size_t> body;
};

bool ends_the_path(const Instruction& i) {  // no fall-through: a jump or a return
    const std::string& m = i.mnemonic;
    return m == "b" || m == "br" || starts(m, "ret") || starts(m, "jmp");
}

// Whether every path from the function's entry to `to` passes `header`.
bool dominates(const std::vector<std::vector<std::size_t>>& successors, std::size_t header,
               std::size_t to) {
    if (header == 0) return true;
    std::vector<bool> seen(successors.size(), false);
    std::vector<std::size_t> work{0};
    while (!work.empty()) {
        const std::size_t k = work.back();
        work.pop_back();
        if (k == header || seen[k]) continue;
        if (k == to) return false;
        seen[k] = true;
        for (std::size_t n : successors[k]) work.push_back(n);
    }
    return true;
}

// Every instruction `edges` reach from `from`, not going on past `stop` (which is included).
std::vector<bool> reached(const std::vector<std::vector<std::size_t>>& edges, std::size_t from,
                          std::size_t stop) {
    std::vector<bool> in(edges.size(), false);
    in[stop] = true;
    std::vector<std::size_t> work{from};
    while (!work.empty()) {
        const std::size_t k = work.back();
        work.pop_back();
        if (in[k]) continue;
        in[k] = true;
        for (std::size_t n : edges[k]) work.push_back(n);
    }
    return in;
}

// The natural loop of the back edge branch -> header: the header and every instruction that
// reaches the branch without passing it, and that the header reaches (paths through a call
// that is not an atomic, cut from the graph, are not the loop's: a sleep, not a poll).
void add_natural_loop(const std::vector<std::vector<std::size_t>>& successors,
                      const std::vector<std::vector<std::size_t>>& predecessors, std::size_t header,
                      std::size_t branch, std::vector<Loop>& loops) {
    Loop loop{header, branch, {}};
    const auto to_branch = reached(predecessors, branch, header);
    const auto from_header = reached(successors, header, branch);
    for (std::size_t k = 0; k < successors.size(); ++k)
        if (to_branch[k] && from_header[k]) loop.body.push_back(k);
    loops.push_back(std::move(loop));
}

std::vector<Loop> loops_of(const std::vector<Instruction>& code) {
    std::map<std::uint64_t, std::size_t> index;
    for (std::size_t i = 0; i < code.size(); ++i) index[code[i].address] = i;
    std::vector<std::vector<std::size_t>> predecessors(code.size()), successors(code.size());
    for (std::size_t i = 0; i < code.size(); ++i) {
        // A call ends the path too unless it is an atomic (an outline-atomics helper): what
        // runs past it is not a poll of the lock.
        const bool cut = ends_the_path(code[i]) || (code[i].is_call() && !code[i].is_atomic());
        if (!cut && i + 1 < code.size()) successors[i].push_back(i + 1);
        if (code[i].is_branch() && code[i].branch_target)
            if (auto t = index.find(*code[i].branch_target); t != index.end())
                successors[i].push_back(t->second);
        for (std::size_t n : successors[i]) predecessors[n].push_back(i);
    }
    // What runs only after a cut call is no one's loop: every header would "dominate" it.
    std::vector<bool> live(code.size(), false);
    for (std::vector<std::size_t> work{0}; !work.empty() && !code.empty();) {
        const std::size_t k = work.back();
        work.pop_back();
        if (live[k]) continue;
        live[k] = true;
        for (std::size_t n : successors[k]) work.push_back(n);
    }
    std::vector<Loop> loops;
    for (std::size_t j = 0; j < code.size(); ++j)
        for (std::size_t header : live[j] ? successors[j] : std::vector<std::size_t>{}) {
            // A back edge (a branch or a fall-through) goes to a header that every path to
            // its source passes; a compiler often enters a loop in its middle, so neither the
            // header nor the edge need be where the addresses turn back.
            if (!dominates(successors, header, j)) continue;
            add_natural_loop(successors, predecessors, header, j, loops);
        }
    return loops;
}

std::string referenced_listing(const std::vector<Instruction>& code, const Loop& loop) {
    std::vector<Instruction> body;
    for (std::size_t k : loop.body) body.push_back(code[k]);
    return referenced_listing(body);
}

// This binary's inline chains: which instructions of a measured loop are its inlined lock().
struct InlineChains {
    symbols::SymbolResolver resolver = symbols::SymbolResolver::for_process();
    std::uint64_t bias = 0;
    std::string unavailable;  // why they cannot be read here; "" when they can

    InlineChains() {
        const auto here = reinterpret_cast<std::uint64_t>(
            reinterpret_cast<const void*>(&attribution::phase_name));
        bias = resolver.resolve(here).bias;
        if (resolver.source_line(here).first.empty())
            unavailable =
                "this build has no debug information (-g): the inlined lock() cannot be "
                "told from the loop around it";
    }
    // Whether the instruction is in a lock function's inline chain, as the annotator marks the
    // acquire loop (attribution/acquire_loop.hpp).
    bool in_lock(const Instruction& i) const {
        for (const auto& name : resolver.inlined_at(i.address + bias))
            if (attribution::is_lock_function(name)) return true;
        return false;
    }
};

// Expects no loop of `f` to touch stack memory or store beside the lock's atomic: every loop,
// or with `lock_only` those of the inlined lock() (branch and target both in its inline chain).
// `what` names the loops in the failure. Returns how many loops it checked.
unsigned expect_loops_in_registers(const FunctionCode& f, const InlineChains& chains,
                                   bool lock_only, std::string_view what) {
    SCOPED_TRACE(f.name);
    unsigned loops = 0;
    const auto& code = f.instructions;
    for (const auto& loop : loops_of(code)) {
        if (lock_only && (!chains.in_lock(code[loop.header]) || !chains.in_lock(code[loop.branch])))
            continue;
        ++loops;
        for (std::size_t k : loop.body)
            EXPECT_FALSE(touches_stack(code[k]) || stores_beside_the_atomic(code[k]))
                << what << " touches memory the lock does not: " << code[k].text() << "\n"
                << referenced_listing(code, loop);
    }
    return loops;
}

// The loops of the inlined lock() in measured_loop<Lock<...>, latency> of every flavour, delay
// and latency setting.
TEST(MeasuredLoopCode, AcquireLoopsKeepTheirCountsInRegisters) {
    if (const std::string why = cannot_read_the_loops(); !why.empty()) GTEST_SKIP() << why;
    const InlineChains chains;
    if (!chains.unavailable.empty()) GTEST_SKIP() << chains.unavailable;
    for (const char* lock :
         {"::TasLock<", "::TtasLock<", "::CasLock<", "::TtasCasLock<", "::TicketLock<"}) {
        unsigned loops = 0;
        const auto functions = functions_named("::measured_loop<lockprof::locks::", lock);
        ASSERT_FALSE(functions.empty()) << "no measured_loop<..." << lock << "...> here";
        for (const auto& f : functions)
            loops += expect_loops_in_registers(f, chains, true, "the acquire loop");
        std::printf("[ LOOP     ] %s: %u acquire loops in %zu measured loops checked\n", lock,
                    loops, functions.size());
        EXPECT_GT(loops, 0u) << lock << ": no loop found in the inlined lock()";
    }
}

// The queue locks wait out of line too: qspinlock's slow_path() and queue() (as the kernel's
// queued_spin_lock_slowpath), osq's wait_in_queue() (wait_next() inlined). Their context's address
// is the call's argument, so a count kept there is a load and a store (x86: an add to memory) in
// every poll; the waits count in registers and add to the context when the call returns. Checked in
// every loop of those functions and of the inlined lock() of the measured loops around them.
TEST(MeasuredLoopCode, QueueLockWaitLoopsKeepTheirCountsInRegisters) {
    if (const std::string why = cannot_read_the_loops(); !why.empty()) GTEST_SKIP() << why;
    const InlineChains chains;
    if (!chains.unavailable.empty()) GTEST_SKIP() << chains.unavailable;
    struct Checked {
        const char* lock;
        std::vector<const char*> slow_paths;
    };
    for (const Checked& checked : {Checked{"::QspinLockT<", {">::slow_path(", ">::queue("}},
                                   Checked{"::OsqLockT<", {">::osq_lock(", ">::wait_in_queue("}}}) {
        unsigned loops = 0, functions_checked = 0;
        for (const auto& f : functions_named("::measured_loop<lockprof::locks::", checked.lock)) {
            loops += expect_loops_in_registers(f, chains, true, "a wait loop");
            ++functions_checked;
        }
        for (const char* member : checked.slow_paths)
            for (const auto& f : functions_named(checked.lock, member))
                if (f.name.find("lockprof::locks::") != std::string::npos) {
                    loops += expect_loops_in_registers(f, chains, false, "a wait loop");
                    ++functions_checked;
                }
        std::printf("[ LOOP     ] %s: %u wait loops in %u functions checked\n", checked.lock, loops,
                    functions_checked);
        EXPECT_GT(loops, 0u) << checked.lock << ": no wait loop found";
    }
}

// pg-slock's spin loop is out of line, in s_lock() as in PostgreSQL: the tightest loop around
// its TAS keeps its counts in registers too, and writes nothing but the TAS.
TEST(MeasuredLoopCode, PgSlockSpinLoopKeepsItsCountsInRegisters) {
    if (const std::string why = cannot_read_the_loops(); !why.empty()) GTEST_SKIP() << why;
    const auto functions = functions_named("::PgSlock<", ">::s_lock(");
    ASSERT_FALSE(functions.empty()) << "no PgSlock<...>::s_lock in this binary";
    for (const auto& f : functions) {
        SCOPED_TRACE(f.name);
        const auto& code = f.instructions;
        std::optional<Loop> tightest;
        for (auto& loop : loops_of(code)) {
            bool atomic = false;
            for (std::size_t k : loop.body) atomic |= code[k].is_atomic();
            if (atomic && (!tightest || loop.body.size() < tightest->body.size()))
                tightest = std::move(loop);
        }
        ASSERT_TRUE(tightest) << "no loop around the TAS";
        for (std::size_t k : tightest->body)
            EXPECT_FALSE(touches_stack(code[k]) || stores_beside_the_atomic(code[k]))
                << "the spin loop touches memory the lock does not: " << code[k].text() << "\n"
                << referenced_listing(code, *tightest);
    }
}

TEST(MeasuredLoopCode, LatencyRecordsOutsideTheCriticalSection) {
    if (const std::string why = cannot_read_the_loops(); !why.empty()) GTEST_SKIP() << why;
    const auto with_latency = tas_loops(true);
    const auto without = tas_loops(false);
    ASSERT_FALSE(with_latency.empty()) << "no measured_loop<TasLock<...>, true> in this binary";
    for (const auto& [key, f] : with_latency) {
        SCOPED_TRACE(key);
        const auto section = critical_section(f);
        ASSERT_TRUE(section.found) << "no lock atomic followed by a release store in " << f.name;
        ASSERT_TRUE(without.count(key)) << "no throughput loop for " << key;
        const auto plain = critical_section(without.at(key));
        ASSERT_TRUE(plain.found) << without.at(key).name;
        unsigned stores = 0, plain_stores = 0;
        for (const auto& i : section.code) {
            EXPECT_FALSE(is_call(i))
                << "a call inside the latency loop's critical section: " << i.text() << " <"
                << i.reference << ">\n"
                << referenced_listing(section.code);
            stores += is_store(i);
        }
        for (const auto& i : plain.code) plain_stores += is_store(i);
        std::printf(
            "[ LOOP     ] tas %s: %zu instructions between the atomic and the release, "
            "%u stores (%u without --latency)\n",
            key.c_str(), section.code.size(), stores, plain_stores);
        EXPECT_LE(stores, plain_stores)
            << "the latency loop stores more while holding the lock than the throughput loop "
               "(histogram updates before the release?)\nwith --latency:\n"
            << referenced_listing(section.code) << "without:\n"
            << referenced_listing(plain.code);
    }
}
