// --lock-page: the heap or a hugetlb page for a trial's lock and lines, the pool as
// /proc/meminfo states it, pagemap entries decoded (never a false 0), the refusals' wording, and
// a real huge page where this machine's pool can be sized (root; tests/support/huge_page_pool.hpp).
#include "lockprof/workload/lock_page.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/huge_page_pool.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/workload/runnable_locks.hpp"
#include "lockprof/workload/plan.hpp"
#include "lockprof/workload/trial.hpp"

using namespace lockprof;
using namespace lockprof::workload;

namespace {

struct MeminfoRoot {
    std::filesystem::path path;
    explicit MeminfoRoot(const std::string& meminfo) {
        std::string pattern = (std::filesystem::temp_directory_path() / "lockprof-meminfo-XXXXXX");
        path = mkdtemp(pattern.data());
        std::filesystem::create_directories(path / "proc");
        std::ofstream(path / "proc/meminfo") << meminfo;
    }
    ~MeminfoRoot() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

constexpr std::uint64_t kPagemapPresentBit = std::uint64_t{1} << 63;

}  // namespace

TEST(LockPage, ReadsThePoolFromMeminfo) {
    const MeminfoRoot root(
        "MemTotal:       16384000 kB\nHugePages_Total:       8\nHugePages_Free:        5\n"
        "HugePages_Rsvd:        0\nHugepagesize:       2048 kB\n");
    const HugePagePool pool = read_huge_page_pool(root.path);
    EXPECT_EQ(pool.page_size, 2u * 1024 * 1024);
    EXPECT_EQ(pool.total, 8u);
    EXPECT_EQ(pool.free, 5u);
    EXPECT_EQ(read_huge_page_pool(MeminfoRoot("MemTotal: 1 kB\n").path).page_size, 0u);
}

// Bit 63 present, bits 0-54 the frame. Frame 0 of a present page is the kernel hiding frames
// from an unprivileged reader: unknown, with what to do, never address 0.
TEST(LockPage, DecodesPagemapEntriesWithoutAFalseZero) {
    const auto known = decode_pagemap_entry(kPagemapPresentBit | 0x12345, 0x7f0000001234, 4096);
    ASSERT_TRUE(known.address.has_value());
    EXPECT_EQ(*known.address, 0x12345ull * 4096 + 0x234);
    EXPECT_TRUE(known.unknown_because.empty());

    const auto hidden = decode_pagemap_entry(kPagemapPresentBit, 0x7f0000001234, 4096);
    EXPECT_FALSE(hidden.address.has_value());
    EXPECT_NE(hidden.unknown_because.find("CAP_SYS_ADMIN"), std::string::npos);
    EXPECT_NE(hidden.unknown_because.find("run lockprof as root"), std::string::npos);

    const auto absent = decode_pagemap_entry(0x12345, 0x7f0000001234, 4096);
    EXPECT_FALSE(absent.address.has_value());
    EXPECT_NE(absent.unknown_because.find("not in memory"), std::string::npos);
}

TEST(LockPage, AnUnreadablePagemapSaysWhy) {
    int word = 0;
    const auto where = physical_address(&word, "/nonexistent/pagemap");
    EXPECT_FALSE(where.address.has_value());
    EXPECT_NE(where.unknown_because.find("cannot read /nonexistent/pagemap"), std::string::npos);
}

// What failed, why, what to do: the sysctl with a number in it.
TEST(LockPage, RefusalsSayWhatToDo) {
    const std::uint64_t two_mib = 2u << 20;
    const std::string empty = huge_page_refusal({two_mib, 0, 0}, 4096, ENOMEM);
    EXPECT_NE(empty.find("vm.nr_hugepages is 0"), std::string::npos) << empty;
    EXPECT_NE(empty.find("`sysctl -w vm.nr_hugepages=16`"), std::string::npos) << empty;
    EXPECT_NE(empty.find("2 MiB"), std::string::npos) << empty;

    const std::string taken = huge_page_refusal({two_mib, 4, 0}, 4096, ENOMEM);
    EXPECT_NE(taken.find("0 of the 4 reserved are free"), std::string::npos) << taken;
    EXPECT_NE(taken.find("vm.nr_hugepages=5"), std::string::npos) << taken;

    const std::string none = huge_page_refusal({0, 0, 0}, 4096, EINVAL);
    EXPECT_NE(none.find("no hugetlb pages"), std::string::npos) << none;
    EXPECT_NE(none.find("--lock-page normal"), std::string::npos) << none;

    const std::string elsewhere = huge_page_refusal({two_mib, 4, 4}, 4096, ENOMEM);
    EXPECT_NE(elsewhere.find("NUMA node"), std::string::npos) << elsewhere;
    const std::string emulated = huge_page_refusal({two_mib, 4, 4}, 4096, EINVAL);
    EXPECT_NE(emulated.find("qemu-user does not pass MAP_HUGETLB on"), std::string::npos)
        << emulated;
    for (const auto* line : {&empty, &taken, &none, &elsewhere, &emulated})
        EXPECT_EQ(line->find('\n'), std::string::npos) << *line;
}

TEST(LockPage, RegionPutsTheLinesOnTheirOwnLines) {
    EXPECT_EQ(lock_region_bytes(64, 1), arch::kFalseSharingRange + sizeof(SharedLine));
    EXPECT_EQ(lock_region_bytes(200, 4), 2 * arch::kFalseSharingRange + 4 * sizeof(SharedLine));
    EXPECT_EQ(page_size_label(2u << 20), "2 MiB");
    EXPECT_EQ(page_size_label(64u << 10), "64 KiB");
    EXPECT_EQ(page_size_label(1u << 30), "1 GiB");
}

// The default: two heap blocks, aligned as asked, the lines zero.
TEST(LockPage, NormalMemoryIsTheHeap) {
    const LockMemory memory(LockPage::normal, 256, 64, 3);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory.lock_storage()) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory.lines()) % alignof(SharedLine), 0u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(memory.lines()[i].value.load(), 0u);
    EXPECT_FALSE(memory.physical_address().address.has_value());
}

TEST(LockPage, PlacementLabels) {
    LockPlacement p;
    EXPECT_EQ(lock_placement_label(p), "normal (heap)");
    p.page = LockPage::huge;
    p.page_size = 2u << 20;
    p.address_unknown = true;
    EXPECT_EQ(lock_placement_label(p), "huge (2 MiB hugetlb page, physical address not recorded)");
    p.address_unknown = false;
    p.physical_addresses = {0x1a4e00000};
    EXPECT_EQ(lock_placement_label(p), "huge (2 MiB hugetlb page at 0x1a4e00000)");
    p.physical_addresses.push_back(0x1a5000000);
    EXPECT_EQ(lock_placement_label(p),
              "huge (2 MiB hugetlb pages at 0x1a4e00000, 0x1a5000000: not the same in every "
              "trial)");
}

// With an empty pool the plan refuses before any trial: exit 2, the sysctl to run.
TEST(LockPage, PlanRefusesAnEmptyPool) {
    const test::HugePagePoolForTest pool(0);
    if (!pool.usable()) GTEST_SKIP() << pool.why_not();
    RunSpec spec;
    spec.locks = {"tas"};
    spec.threads = {1};
    spec.acquires_per_thread = 10;
    spec.work.lock_page = LockPage::huge;
    try {
        (void)make_plan(spec, Calibration{});
        FAIL() << "an empty pool was not refused";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("sysctl -w vm.nr_hugepages="), std::string::npos)
            << e.what();
    }
}

// A real huge page: the lock at its start, the lines after it on their own lines, the page's
// physical address from pagemap (as root) within the page size's alignment, and a trial that
// records it.
TEST(LockPage, HugePageHoldsTheLockAndItsLines) {
    const test::HugePagePoolForTest pool(2);
    if (!pool.usable()) GTEST_SKIP() << pool.why_not();
    const HugePagePool state = read_huge_page_pool();
    ASSERT_GT(state.page_size, 0u);
    // The pool is the host kernel's; an emulator in between may not take the flag.
    void* probe = mmap(nullptr, state.page_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (probe == MAP_FAILED && errno == EINVAL)
        GTEST_SKIP() << "MAP_HUGETLB refused with EINVAL though the pool has pages: an emulator "
                        "(qemu-user does not pass the flag on)";
    ASSERT_NE(probe, MAP_FAILED) << std::strerror(errno);
    munmap(probe, state.page_size);
    {
        const LockMemory memory(LockPage::huge, 256, 64, 4);
        const auto start = reinterpret_cast<std::uintptr_t>(memory.lock_storage());
        EXPECT_EQ(start % state.page_size, 0u);
        EXPECT_EQ(memory.page_size(), state.page_size);
        const auto lines = reinterpret_cast<std::uintptr_t>(memory.lines());
        EXPECT_EQ(lines - start, 2 * arch::kFalseSharingRange);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(memory.lines()[i].value.load(), 0u);
        const auto where = memory.physical_address();
        ASSERT_TRUE(where.address.has_value()) << where.unknown_because;  // root: visible
        EXPECT_NE(*where.address, 0u);
        EXPECT_EQ(*where.address % state.page_size, 0u) << std::hex << *where.address;
        EXPECT_LT(read_huge_page_pool().free, state.free) << "no pool page was taken";
    }
    EXPECT_EQ(read_huge_page_pool().free, state.free) << "the page did not go back to the pool";

    TrialSpec spec;
    spec.threads = 2;
    spec.acquires_per_thread = 1000;
    spec.delay = arch::Delay::none;
    spec.work.lock_page = LockPage::huge;
    RunControl control;
    const TrialOutcome outcome = run_trial(*find_lock("ticket"), spec, control);
    ASSERT_TRUE(outcome.result.lock_page.has_value());
    EXPECT_EQ(outcome.result.lock_page->page_size, state.page_size);
    ASSERT_TRUE(outcome.result.lock_page->physical_address.has_value())
        << outcome.physical_address_unknown;
    EXPECT_EQ(outcome.lost_updates, 0u);
    EXPECT_EQ(outcome.overlaps, 0u);
}
