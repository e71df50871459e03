#include "lockprof/workload/lock_page.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <sstream>
#include <type_traits>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"

namespace lockprof::workload {
namespace {

// A huge page's lines are unmapped, never destroyed one by one.
static_assert(std::is_trivially_destructible_v<SharedLine>);

constexpr std::uint64_t kPagemapPresent = std::uint64_t{1} << 63;
constexpr std::uint64_t kPagemapFrameMask = (std::uint64_t{1} << 55) - 1;

std::size_t round_up(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
}

std::uint64_t base_page_size() {
    const long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<std::uint64_t>(size) : 4096;
}

// A huge page mapping of `bytes` (a multiple of the default huge page size), touched so that
// the pages are there; MAP_FAILED with errno set when the kernel refuses.
void* map_huge(std::size_t bytes) {
    return mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
}

}  // namespace

HugePagePool read_huge_page_pool(const std::filesystem::path& root) {
    HugePagePool pool;
    std::istringstream in(read_all(root / "proc/meminfo"));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string key, unit;
        std::uint64_t value = 0;
        if (!(fields >> key >> value)) continue;
        fields >> unit;
        if (key == "Hugepagesize:")
            pool.page_size = unit == "kB" ? value * 1024 : value;
        else if (key == "HugePages_Total:")
            pool.total = value;
        else if (key == "HugePages_Free:")
            pool.free = value;
    }
    return pool;
}

PhysicalAddress decode_pagemap_entry(std::uint64_t entry, std::uint64_t virtual_address,
                                     std::uint64_t base_page_size) {
    if ((entry & kPagemapPresent) == 0)
        return {std::nullopt,
                "/proc/self/pagemap says the page is not in memory (not faulted in, or swapped)"};
    const std::uint64_t frame = entry & kPagemapFrameMask;
    if (frame == 0)
        return {std::nullopt,
                "/proc/self/pagemap hides page frame numbers from a process without "
                "CAP_SYS_ADMIN; run lockprof as root to record it"};
    return {frame * base_page_size + virtual_address % base_page_size, ""};
}

PhysicalAddress physical_address(const void* address, const std::filesystem::path& pagemap) {
    const int fd = open(pagemap.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return {std::nullopt,
                fmt::format("cannot read {}: {}", pagemap.string(), std::strerror(errno))};
    const auto virtual_address = reinterpret_cast<std::uintptr_t>(address);
    const std::uint64_t page = base_page_size();
    std::uint64_t entry = 0;
    const auto offset = static_cast<off_t>(virtual_address / page * sizeof entry);
    const ssize_t got = pread(fd, &entry, sizeof entry, offset);
    const int error = errno;
    close(fd);
    if (got != static_cast<ssize_t>(sizeof entry))
        return {std::nullopt, fmt::format("cannot read {} at the lock's page: {}", pagemap.string(),
                                          got < 0 ? std::strerror(error) : "short read")};
    return decode_pagemap_entry(entry, virtual_address, page);
}

std::size_t lock_region_bytes(std::size_t lock_size, unsigned line_count) {
    return round_up(lock_size, arch::kFalseSharingRange) +
           std::size_t{line_count} * sizeof(SharedLine);
}

std::string page_size_label(std::uint64_t bytes) {
    constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
    if (bytes >= kGiB && bytes % kGiB == 0) return fmt::format("{} GiB", bytes / kGiB);
    if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
    if (bytes >= kKiB && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
    return fmt::format("{} bytes", bytes);
}

std::string huge_page_refusal(const HugePagePool& pool, std::size_t bytes, int mmap_errno) {
    if (pool.page_size == 0)
        return "--lock-page huge: this kernel offers no hugetlb pages (/proc/meminfo has no "
               "Hugepagesize: built without CONFIG_HUGETLBFS); use --lock-page normal";
    const std::uint64_t needed = (bytes + pool.page_size - 1) / pool.page_size;
    const std::string size = page_size_label(pool.page_size);
    if (pool.total == 0)
        return fmt::format(
            "--lock-page huge: no {} huge pages are reserved (vm.nr_hugepages is 0), and the "
            "lock is only ever put in one from that pool; reserve some as root with `sysctl -w "
            "vm.nr_hugepages=16` and run again",
            size);
    if (pool.free < needed)
        return fmt::format(
            "--lock-page huge: {} free {} huge page{} needed, but {} of the {} reserved {} free "
            "(other programs hold the rest); raise the pool as root with `sysctl -w "
            "vm.nr_hugepages={}` and run again",
            needed, size, needed == 1 ? "" : "s", pool.free, pool.total,
            pool.free == 1 ? "is" : "are", pool.total + needed);
    if (mmap_errno == EINVAL)
        return fmt::format(
            "--lock-page huge: mapping {} {} huge page{} failed ({}) though {} of {} reserved are "
            "free: this kernel, or the emulator lockprof runs under (qemu-user does not pass "
            "MAP_HUGETLB on), refuses hugetlb mappings; use --lock-page normal here",
            needed, size, needed == 1 ? "" : "s", std::strerror(mmap_errno), pool.free, pool.total);
    return fmt::format(
        "--lock-page huge: mapping {} {} huge page{} failed ({}) though {} of {} reserved are "
        "free: they may be on another NUMA node than this CPU's, or a cgroup's hugetlb limit "
        "forbids them; reserve pages on this node (/sys/devices/system/node/node*/hugepages) "
        "or lift the limit",
        needed, size, needed == 1 ? "" : "s", std::strerror(mmap_errno), pool.free, pool.total);
}

LockMemory::LockMemory(LockPage page, std::size_t lock_size, std::size_t lock_align,
                       unsigned line_count)
    : page_(page), lock_align_(lock_align), line_count_(std::max(1u, line_count)) {
    if (page == LockPage::normal) {
        // As before there was a choice: two heap blocks, wherever the allocator puts them.
        lock_ = ::operator new (lock_size, std::align_val_t{lock_align});
        lines_ = new SharedLine[line_count_];
        return;
    }
    const HugePagePool pool = read_huge_page_pool();
    const std::size_t bytes = lock_region_bytes(lock_size, line_count_);
    page_size_ = pool.page_size;
    mapping_bytes_ = pool.page_size > 0 ? round_up(bytes, pool.page_size) : bytes;
    void* mapped = map_huge(mapping_bytes_);
    if (mapped == MAP_FAILED) throw Error(huge_page_refusal(pool, bytes, errno));
    mapping_ = mapped;
    lock_ = mapped;  // page-aligned, so aligned for any lock
    auto* lines =
        static_cast<unsigned char*>(mapped) + round_up(lock_size, arch::kFalseSharingRange);
    lines_ = new (lines) SharedLine[line_count_];
}

LockMemory::LockMemory(LockMemory&& other) noexcept
    : page_(other.page_),
      lock_(std::exchange(other.lock_, nullptr)),
      lock_align_(other.lock_align_),
      lines_(std::exchange(other.lines_, nullptr)),
      line_count_(other.line_count_),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_bytes_(other.mapping_bytes_),
      page_size_(other.page_size_) {}

LockMemory::~LockMemory() {
    if (mapping_) {
        // SharedLine is trivially destructible: the mapping goes with them.
        munmap(mapping_, mapping_bytes_);
        return;
    }
    delete[] lines_;
    if (lock_) ::operator delete (lock_, std::align_val_t{lock_align_});
}

PhysicalAddress LockMemory::physical_address() const {
    if (!mapping_) return {std::nullopt, "the lock is on the heap (--lock-page normal)"};
    return workload::physical_address(mapping_);
}

std::string check_lock_page(LockPage page, std::size_t lock_size, std::size_t lock_align,
                            unsigned line_count) {
    if (page == LockPage::normal) return "";
    try {
        const LockMemory probe(page, lock_size, lock_align, line_count);
        return probe.physical_address().unknown_because;
    } catch (const UsageError&) {
        throw;
    } catch (const Error& e) {
        throw UsageError(e.what());
    }
}

LockPlacement lock_placement(const RunResult& run) {
    LockPlacement placement;
    placement.page = run.spec.work.lock_page;
    for (const auto& cell : run.cells)
        for (const auto& trial : cell.trials) {
            if (!trial.lock_page) continue;
            placement.page_size = trial.lock_page->page_size;
            const auto& address = trial.lock_page->physical_address;
            if (!address)
                placement.address_unknown = true;
            else if (std::find(placement.physical_addresses.begin(),
                               placement.physical_addresses.end(),
                               *address) == placement.physical_addresses.end())
                placement.physical_addresses.push_back(*address);
        }
    return placement;
}

std::string lock_placement_label(const LockPlacement& placement) {
    if (placement.page == LockPage::normal) return "normal (heap)";
    const std::string size =
        placement.page_size > 0 ? page_size_label(placement.page_size) + " " : "";
    const auto& addresses = placement.physical_addresses;
    if (addresses.empty())
        return fmt::format("huge ({}hugetlb page, physical address not recorded)", size);
    std::vector<std::string> hex;
    for (const auto address : addresses) hex.push_back(fmt::format("{:#x}", address));
    if (addresses.size() == 1 && !placement.address_unknown)
        return fmt::format("huge ({}hugetlb page at {})", size, hex.front());
    return fmt::format("huge ({}hugetlb pages at {}: not the same in every trial{})", size,
                       fmt::join(hex, ", "),
                       placement.address_unknown ? ", some not recorded" : "");
}

}  // namespace lockprof::workload
