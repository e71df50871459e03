// Every kernel carries the address of its lock's out-of-line acquire path (acquire_probe), and
// the symbol resolver names it: what `list-locks --disasm` disassembles.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "lockprof/symbols/resolver.hpp"
#include "lockprof/workload/runnable_locks.hpp"

namespace lockprof::workload {
namespace {

TEST(AcquireProbe, EveryKernelResolvesToItsLocksProbe) {
    const auto resolver = symbols::SymbolResolver::for_process();
    unsigned checked = 0;
    for (const auto& lock : lock_catalog()) {
        for (auto d : arch::kAllDelays) {
            if (!lock.accepts(d)) continue;
            const void* probe = lock.kernel(d, false).acquire_probe;
            ASSERT_NE(probe, nullptr) << lock.name;
            EXPECT_EQ(lock.kernel(d, true).acquire_probe, probe) << lock.name;
            const auto at = resolver.resolve(reinterpret_cast<std::uintptr_t>(probe));
            ASSERT_TRUE(at.has_symbol()) << lock.name;
            EXPECT_EQ(at.offset, 0u) << lock.name << ": " << at.symbol;
            EXPECT_GT(at.symbol_size, 0u) << lock.name;
            // void lockprof::workload::native::acquire_probe<lockprof::locks::native::TasLock<
            //     (lockprof::arch::Delay)1> >(...)
            EXPECT_NE(at.symbol.find("::acquire_probe<lockprof::locks::"), std::string::npos)
                << lock.name << ": " << at.symbol;
            const std::string delay =
                "(lockprof::arch::Delay)" + std::to_string(static_cast<int>(d));
            const std::size_t named = at.symbol.find(delay);
            ASSERT_NE(named, std::string::npos) << lock.name << ": " << at.symbol;
            EXPECT_FALSE(std::isdigit(static_cast<unsigned char>(at.symbol[named + delay.size()])))
                << lock.name << ": " << at.symbol;
            ++checked;
        }
    }
    EXPECT_GT(checked, 0u);
}

// Two delays of one lock are two instantiations: two probes.
TEST(AcquireProbe, DelaysHaveTheirOwnProbe) {
    const auto* tas = find_lock("tas");
    ASSERT_NE(tas, nullptr);
    ASSERT_TRUE(tas->accepts(arch::Delay::none));
    ASSERT_TRUE(tas->accepts(arch::default_delay()));
    EXPECT_NE(tas->kernel(arch::Delay::none, false).acquire_probe,
              tas->kernel(arch::default_delay(), false).acquire_probe);
}

}  // namespace
}  // namespace lockprof::workload
