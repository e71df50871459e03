// Where a trial's lock and its shared lines live (`--lock-page`): on the heap, as every run did
// before there was a choice, or in one hugetlb page, as lockhammer's -M puts its locks.
//
// Why hugetlb and not transparent huge pages: a MAP_HUGETLB mapping either gets a huge page
// from the pool the administrator reserved (vm.nr_hugepages) or fails, so the run is what it
// says; madvise(MADV_HUGEPAGE) is a hint the kernel may ignore (THP disabled, no contiguous
// memory, khugepaged not yet run) and can split later. And the pool is what makes runs in
// separate processes share a physical page: a freed huge page goes back to the pool's free list
// and the next mapping on that NUMA node usually takes it again, so consecutive runs put the
// lock on the same physical cache line (the same home node of a mesh interconnect), which
// /proc/self/pagemap lets root check. lockhammer (ARM's benchmark) does the same, with
// MAP_HUGETLB of the default size; ARM server users know its `hugeadm`/`nr_hugepages` recipe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/workload/kernel.hpp"
#include "lockprof/workload/results.hpp"
#include "lockprof/workload/spec.hpp"

namespace lockprof::workload {

// The kernel's hugetlb pool of the default huge page size, as /proc/meminfo states it.
struct HugePagePool {
    std::uint64_t page_size = 0;  // Hugepagesize in bytes; 0: no hugetlb support in this kernel
    std::uint64_t total = 0;      // HugePages_Total: the pool (vm.nr_hugepages)
    std::uint64_t free = 0;       // HugePages_Free
};

// Reads `root`/proc/meminfo ("/" normally; a test folder in tests).
HugePagePool read_huge_page_pool(const std::filesystem::path& root = "/");

// The physical address of a virtual one, or why it is not known.
struct PhysicalAddress {
    std::optional<std::uint64_t> address;
    std::string unknown_because;  // when `address` is not set: one clause, "... ; what to do"
};

// One /proc/PID/pagemap entry decoded (bit 63: present, bits 0-54: the page frame number): the
// physical address of `virtual_address` on a page of `base_page_size` bytes. A present page with
// frame number 0 is the kernel hiding frames from a process without CAP_SYS_ADMIN (Linux 4.2
// on), never frame 0: it is reported as unknown, not as address 0.
PhysicalAddress decode_pagemap_entry(std::uint64_t entry, std::uint64_t virtual_address,
                                     std::uint64_t base_page_size);

// The physical address of `address` in this process, read from `pagemap`.
PhysicalAddress physical_address(const void* address,
                                 const std::filesystem::path& pagemap = "/proc/self/pagemap");

// Bytes of the region one trial's lock (`lock_size`) and `line_count` shared lines take in a
// huge page: the lock at the start, the lines from the next kFalseSharingRange boundary.
std::size_t lock_region_bytes(std::size_t lock_size, unsigned line_count);

// Why `bytes` of huge pages could not be had, as one line for the user: what failed, why (the
// pool as /proc/meminfo states it, the mmap error) and what to do (the sysctl to run).
std::string huge_page_refusal(const HugePagePool& pool, std::size_t bytes, int mmap_errno);

// One trial's lock and shared lines, in the memory `--lock-page` asks for. The lock's storage
// is lock_size bytes aligned to lock_align (LoopKernel's figures), constructed by the kernel;
// the lines are constructed here (zero) and destroyed with the memory. Move-only.
class LockMemory {
  public:
    // Throws Error (exit 1) with huge_page_refusal() when the huge page cannot be mapped.
    LockMemory(LockPage page, std::size_t lock_size, std::size_t lock_align, unsigned line_count);
    ~LockMemory();
    LockMemory(LockMemory&& other) noexcept;
    LockMemory& operator=(LockMemory&&) = delete;
    LockMemory(const LockMemory&) = delete;
    LockMemory& operator=(const LockMemory&) = delete;

    void* lock_storage() const { return lock_; }
    SharedLine* lines() const { return lines_; }
    LockPage page() const { return page_; }
    // LockPage::huge: the size of the huge page the lock is at the start of.
    std::uint64_t page_size() const { return page_size_; }
    // LockPage::huge: where that page is in physical memory, when pagemap says.
    PhysicalAddress physical_address() const;

  private:
    LockPage page_;
    void* lock_ = nullptr;
    std::size_t lock_align_ = 0;
    SharedLine* lines_ = nullptr;
    unsigned line_count_ = 0;
    void* mapping_ = nullptr;  // LockPage::huge
    std::size_t mapping_bytes_ = 0;
    std::uint64_t page_size_ = 0;
};

// `--lock-page huge` before any trial: maps and unmaps a region as large as the largest lock
// (`lock_size`, `lock_align`) with `line_count` lines needs. Throws UsageError (exit 2, one
// line: huge_page_refusal()) when it cannot be had; returns why the page's physical address
// will not be recorded ("" when it will). Nothing for LockPage::normal.
std::string check_lock_page(LockPage page, std::size_t lock_size, std::size_t lock_align,
                            unsigned line_count);

// "2 MiB", "64 KiB", "1 GiB": a page size as the reports state it.
std::string page_size_label(std::uint64_t bytes);

// Where a run's locks sat, over all its trials: what the reports state and `compare` compares.
struct LockPlacement {
    LockPage page = LockPage::normal;
    std::uint64_t page_size = 0;                    // huge: the trials' page size (0: no trial)
    std::vector<std::uint64_t> physical_addresses;  // huge: distinct, in trial order
    bool address_unknown = false;                   // huge: some trial's was not recorded
};
LockPlacement lock_placement(const RunResult& run);

// "normal (heap)", "huge (2 MiB hugetlb page at 0x1a4e00000)", "huge (2 MiB hugetlb pages at
// 0x1a4e00000, 0x1a5000000: not the same in every trial)", "huge (2 MiB hugetlb page, physical
// address not recorded)".
std::string lock_placement_label(const LockPlacement& placement);

}  // namespace lockprof::workload
