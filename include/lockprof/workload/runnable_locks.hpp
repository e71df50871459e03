// Every runnable lock: each algorithm of locks/catalog.hpp, per compiled ISA flavour, with its
// measured loop instantiated for every delay policy it accepts.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "lockprof/locks/lock.hpp"
#include "lockprof/workload/kernel.hpp"

namespace lockprof::workload {

inline constexpr std::size_t kDelayCount = std::size(arch::kAllDelays);

struct RunnableLock {
    std::string name;       // what users type: "tas", or "tas@llsc" for a flavour
    std::string algorithm;  // "tas"
    std::string flavour;    // "" for the default build, else "llsc" / "lse" / "outline"
    std::string description;
    locks::DelayMask delays = 0;  // accepted by the algorithm and available on this arch
    bool excludes = true;         // false for `empty`, `lockref`, `refcount`
    bool shared = false;          // has a shared mode (locks::SharedLock): honours --read-fraction
    bool needs_lse = false;       // flavour executes ARMv8.1 atomics
    // The same code in every flavour (glibc's locks, no lock): only the bare name exists.
    bool flavour_independent = false;
    // kernels[delay][latency]: empty where the delay is not accepted.
    std::array<std::array<LoopKernel, 2>, kDelayCount> kernels{};

    bool accepts(arch::Delay d) const { return (delays & locks::delay_bit(d)) != 0; }
    // The delay used when the user names none: the platform default if accepted, else none.
    arch::Delay default_delay() const;
    const LoopKernel& kernel(arch::Delay d, bool latency) const {
        return kernels[static_cast<std::size_t>(d)][latency ? 1 : 0];
    }
};

// The ISA flavours an aarch64 build compiles besides its default one (CMakeLists.txt,
// LOCKPROF_FLAVOURS; the aarch64 build's catalog has exactly these), known in every build so
// that "tas@llsc" in an x86-64 build is told where the flavour exists instead of "unknown lock".
inline constexpr std::array<std::string_view, 3> kAarch64Flavours{"llsc", "lse", "outline"};

// All runnable locks, default flavour first, in catalog order; flavour-independent locks once.
const std::vector<RunnableLock>& lock_catalog();

// The lock named `name`, or nullptr. UsageError for a flavour suffix on a flavour-independent
// lock ("pthread-spin@lse"), which names the bare lock to use instead, and for an aarch64
// flavour in a build without it ("cas@llsc" on x86-64), which says where it exists. Every
// place that resolves a lock name goes through here (`--lock`, `list-locks --disasm`).
const RunnableLock* find_lock(std::string_view name);

}  // namespace lockprof::workload
