// The annotation's acquire path (attribution/annotate.hpp) on this test binary's own
// measured_loop<PthreadSpinLock<...>, false>, which acquires by calling libc's
// pthread_spin_lock through its PLT stub: samples in the stub, in libc's function and, on
// aarch64, in the outline-atomics helper that function calls (code no symbol names in Debian's
// stripped libc) are all acquiring.
#include "lockprof/attribution/annotate.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/common/files.hpp"
#include "lockprof/attribution/phases.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "support/sanitizers.hpp"

namespace lockprof::attribution {
namespace {

struct Code {
    std::uint64_t loop = 0;    // measured_loop's first instruction (the harness), runtime
    std::uint64_t plt = 0;     // the pthread_spin_lock@plt stub it calls, runtime
    std::uint64_t lock = 0;    // libc's pthread_spin_lock, runtime
    std::uint64_t helper = 0;  // what that calls into no symbol's start, runtime; 0 if nothing
};

// Finds the code above, or says why it cannot.
std::optional<Code> find_code(const symbols::SymbolResolver& resolver, std::string& why) {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    if (!program_exists(symbols::default_objdump(self))) {
        why = symbols::default_objdump(self) + " not found";
        return std::nullopt;
    }
    const auto here = reinterpret_cast<std::uint64_t>(reinterpret_cast<const void*>(&phase_name));
    const std::uint64_t bias = resolver.resolve(here).bias;
    const symbols::Disassembler disassembler;
    Code code;
    for (const auto& f : symbols::function_symbols(self)) {
        // The measured trials' loop, not the verification trials' (Verifying<...>).
        if (!is_measured_loop(f.name) || f.name.find("::PthreadSpinLock<") == std::string::npos ||
            f.name.find(", false>(") == std::string::npos ||
            f.name.find("::Verifying<") != std::string::npos)
            continue;
        code.loop = f.address + bias;
        for (const auto& insn : disassembler.disassemble(self, f.address, f.address + f.size))
            if (insn.is_call() && insn.reference == "pthread_spin_lock@plt" && insn.branch_target)
                code.plt = *insn.branch_target + bias;
        break;
    }
    if (!code.loop || !code.plt) {
        why = "no measured_loop<PthreadSpinLock<...>, false> calling pthread_spin_lock@plt here";
        return std::nullopt;
    }
    code.lock = reinterpret_cast<std::uint64_t>(dlsym(RTLD_DEFAULT, "pthread_spin_lock"));
    const auto lock = resolver.resolve(code.lock);
    if (!lock.symbol.starts_with("pthread_spin_lock")) {
        why = "pthread_spin_lock resolves to '" + lock.symbol +
              "' (a sanitizer's runtime intercepts it), not the C library's";
        return std::nullopt;
    }
    const std::uint64_t start = lock.file_address(lock.symbol_start);
    for (const auto& insn : disassembler.disassemble(lock.module, start, start + lock.symbol_size))
        if (insn.is_call() && insn.branch_target && insn.reference.find('+') != std::string::npos)
            code.helper = *insn.branch_target + lock.bias;
    return code;
}

const HotFunction* named(const CellAnnotation& a, std::string_view name) {
    const auto it = std::find_if(a.functions.begin(), a.functions.end(),
                                 [&](const HotFunction& f) { return f.name.starts_with(name); });
    return it == a.functions.end() ? nullptr : &*it;
}

CellAnnotation annotate(const symbols::SymbolResolver& resolver,
                        const std::vector<std::pair<std::uint64_t, unsigned>>& at) {
    std::vector<measure::RawSample> samples;
    for (const auto& [ip, n] : at)
        for (unsigned i = 0; i < n; ++i) samples.push_back({ip, 1, 0, 1, {}});
    std::vector<const measure::RawSample*> pointers;
    for (const auto& s : samples) pointers.push_back(&s);
    AnnotateOptions options;
    options.top_functions = 8;
    options.min_function_share = 0;
    Annotator annotator(resolver, options);
    return annotator.annotate(pointers, 0);
}

// Skips where the code is not there to annotate.
class AnnotateLockCallees : public ::testing::Test {
  protected:
    void SetUp() override {
#if defined(LOCKPROF_TEST_TSAN)
        GTEST_SKIP() << "TSan intercepts pthread_spin_lock; the other builds check the real call";
#endif
        std::string why;
        code_ = find_code(resolver_, why);
        if (!code_) GTEST_SKIP() << why;
    }
    const symbols::SymbolResolver resolver_ = symbols::SymbolResolver::for_process();
    std::optional<Code> code_;
};

// Before: the stub had no symbol on x86_64 and was "$x" (the mapping symbol at the start of
// .plt) on aarch64, and its samples were not acquiring.
TEST_F(AnnotateLockCallees, PltStubOfTheLocksFunctionIsInTheAcquirePath) {
    const auto& resolver = resolver_;
    const auto& code = code_;
    const auto a = annotate(resolver, {{code->loop, 4}, {code->plt + 4, 2}, {code->lock + 4, 2}});
    for (const auto& f : a.functions) EXPECT_FALSE(f.name.starts_with("$")) << f.name;
    const auto* stub = named(a, "pthread_spin_lock@plt");
    ASSERT_NE(stub, nullptr) << "the stub is not named after pthread_spin_lock";
    EXPECT_DOUBLE_EQ(stub->share, 0.25);
    EXPECT_EQ(stub->short_name, "pthread_spin_lock@plt");
    EXPECT_EQ(
        std::count_if(a.functions.begin(), a.functions.end(),
                      [](const HotFunction& f) { return f.name.starts_with("pthread_spin_lock"); }),
        2)
        << "the stub and libc's function";
    // The stub and libc's function, not the loop's harness.
    EXPECT_DOUBLE_EQ(a.acquire_path_share, 0.5);
    EXPECT_DOUBLE_EQ(a.unresolved_share, 0);
}

// Before: the helper's samples were "[no symbol]" and not acquiring: the call from libc's
// pthread_spin_lock was attributed to no one, and objdump's "<__nss_database_lookup+0x240>"
// named a function the call does not reach.
TEST_F(AnnotateLockCallees, UnnamedHelperTheLocksFunctionCallsIsInTheAcquirePath) {
    const auto& resolver = resolver_;
    const auto& code = code_;
    if (!code->helper)
        GTEST_SKIP() << "this C library's pthread_spin_lock calls no unnamed code (x86_64's "
                        "glibc inlines its atomics; aarch64's calls an outline-atomics helper, "
                        "checked in the aarch64 stage)";
    if (resolver.resolve(code->helper).has_symbol())
        GTEST_SKIP() << "the helper has a symbol here (" << resolver.resolve(code->helper).symbol
                     << "): nothing unnamed to attribute";
    const auto a =
        annotate(resolver,
                 {{code->loop, 4}, {code->plt + 4, 2}, {code->lock + 4, 2}, {code->helper + 4, 2}});
    EXPECT_DOUBLE_EQ(a.unresolved_share, 0.2);
    EXPECT_DOUBLE_EQ(a.unnamed_acquire_share, 0.2);
    EXPECT_DOUBLE_EQ(a.acquire_path_share, 0.6);
    // Unnamed code far from the helper stays unattributed.
    const auto far =
        annotate(resolver, {{code->loop, 4}, {code->lock + 4, 2}, {code->helper + 4096 + 4, 2}});
    if (!resolver.resolve(code->helper + 4096 + 4).has_symbol()) {
        EXPECT_DOUBLE_EQ(far.unnamed_acquire_share, 0);
        EXPECT_DOUBLE_EQ(far.acquire_path_share, 0.25);
    }
}

// pthread_spin_unlock, which the measured loop calls only from its release, is the release:
// before, its samples belonged to no phase, and on x86_64 its function was named
// "pthread_spin_init" (an alias at its address), which no call of the loop names.
TEST_F(AnnotateLockCallees, FunctionCalledOnlyToReleaseIsTheRelease) {
    const auto unlock = reinterpret_cast<std::uint64_t>(dlsym(RTLD_DEFAULT, "pthread_spin_unlock"));
    ASSERT_NE(unlock, 0u);
    const auto a = annotate(resolver_, {{code_->loop, 4}, {unlock, 2}});
    const auto* f = named(a, "pthread_spin_unlock");
    ASSERT_NE(f, nullptr) << "pthread_spin_unlock is named otherwise: " << a.functions.back().name;
    if (a.phases_without_lines) GTEST_SKIP() << "built without line information: no release";
    const auto release = std::find_if(a.phase_shares.begin(), a.phase_shares.end(),
                                      [](const auto& p) { return p.first == LoopPhase::release; });
    ASSERT_NE(release, a.phase_shares.end());
    EXPECT_DOUBLE_EQ(release->second, 2.0 / 6.0);
    EXPECT_DOUBLE_EQ(a.acquire_path_share, 0);
}

}  // namespace
}  // namespace lockprof::attribution
