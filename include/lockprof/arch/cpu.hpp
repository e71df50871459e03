// Architecture primitives: the ONLY header (with src/arch/) allowed to hold inline asm and
// architecture #ifs. Everything above this layer is written against these functions.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <x86intrin.h>
#define LOCKPROF_ARCH_X86 1
#elif defined(__aarch64__)
#define LOCKPROF_ARCH_AARCH64 1
#else
#error "lockprof supports x86_64 and aarch64"
#endif

namespace lockprof::arch {

// Size of one coherence unit. Locks are aligned to it; per-thread data is padded to
// kFalseSharingRange, which also covers the adjacent-line prefetcher on x86 and the 128-byte
// granule some ARM cores (Apple) use.
inline constexpr std::size_t kCacheLine = 64;
inline constexpr std::size_t kFalseSharingRange = 128;

#if defined(LOCKPROF_ARCH_X86)
inline constexpr std::string_view kArchName = "x86_64";
#else
inline constexpr std::string_view kArchName = "aarch64";
#endif

// What a waiting thread does between two polls of a lock word.
enum class Delay : std::uint8_t {
    none,   // tight loop
    pause,  // x86 PAUSE: yields pipeline resources to the sibling hyperthread
    yield,  // aarch64 YIELD hint
    isb,    // aarch64 ISB: a short, fixed stall (PostgreSQL's SPIN_DELAY on arm64)
    wfe,    // aarch64 WFE on the lock word's exclusive monitor (Linux arm64 spinlock)
};
inline constexpr Delay kAllDelays[] = {Delay::none, Delay::pause, Delay::yield, Delay::isb,
                                       Delay::wfe};

constexpr std::string_view delay_name(Delay d) {
    switch (d) {
        case Delay::none:
            return "none";
        case Delay::pause:
            return "pause";
        case Delay::yield:
            return "yield";
        case Delay::isb:
            return "isb";
        case Delay::wfe:
            return "wfe";
    }
    return "?";
}

// The policy named `name` ("none", "pause", "yield", "isb", "wfe"). Throws UsageError
// "WHERE: unknown policy 'NAME' (did you mean 'isb'?); choose none, pause, yield, isb or wfe".
Delay parse_delay(std::string_view name, std::string_view where);

// Whether this build's CPU architecture has the instruction behind a delay policy.
constexpr bool delay_available(Delay d) {
#if defined(LOCKPROF_ARCH_X86)
    return d == Delay::none || d == Delay::pause;
#else
    return d != Delay::pause;
#endif
}

// The delay a spinning lock uses when the user does not choose: the one the platform's
// production locks use (x86 PAUSE; arm64 ISB, PostgreSQL's SPIN_DELAY from 15.0).
constexpr Delay default_delay() {
#if defined(LOCKPROF_ARCH_X86)
    return Delay::pause;
#else
    return Delay::isb;
#endif
}

// One delay step. Delay::wfe is not a step: it needs a monitored address; see spin_until().
template <Delay D>
inline void spin_delay() {
    if constexpr (D == Delay::pause) {
#if defined(LOCKPROF_ARCH_X86)
        _mm_pause();
#endif
    } else if constexpr (D == Delay::yield) {
#if defined(LOCKPROF_ARCH_AARCH64)
        asm volatile("yield" ::: "memory");
#endif
    } else if constexpr (D == Delay::isb) {
#if defined(LOCKPROF_ARCH_AARCH64)
        asm volatile("isb" ::: "memory");
#endif
    } else {
        // none (and wfe used outside spin_until): keep the compiler from merging loop trips.
        asm volatile("" ::: "memory");
    }
}

#if defined(LOCKPROF_ARCH_AARCH64)
// Load-acquire exclusive: arms this core's exclusive monitor on the word, so a store by another
// core raises the event that ends a following WFE.
inline std::uint32_t load_acquire_exclusive(const std::atomic<std::uint32_t>& word) {
    std::uint32_t value;
    asm volatile("ldaxr %w0, %1" : "=r"(value) : "Q"(word) : "memory");
    return value;
}
#endif

// Spins until done(value) holds for the word's value, counting one spin per poll; returns the
// value that satisfied done. Loads are acquire, so the caller may enter a critical section
// after a successful wait without another fence. With Delay::wfe on aarch64 the core sleeps
// between polls until the word's cache line is written (the Linux arm64 spinlock's wait).
template <Delay D, typename Done>
inline std::uint32_t spin_until(const std::atomic<std::uint32_t>& word, Done done,
                                std::uint64_t& spins) {
#if defined(LOCKPROF_ARCH_AARCH64)
    if constexpr (D == Delay::wfe) {
        std::uint32_t value = word.load(std::memory_order_acquire);
        while (!done(value)) {
            ++spins;
            value = load_acquire_exclusive(word);
            if (done(value)) break;
            asm volatile("wfe" ::: "memory");
            value = word.load(std::memory_order_acquire);
        }
        return value;
    }
#endif
    std::uint32_t value = word.load(std::memory_order_acquire);
    while (!done(value)) {
        ++spins;
        spin_delay<D>();
        value = word.load(std::memory_order_acquire);
    }
    return value;
}

// Tick counter. Not core cycles on either architecture: on x86 the TSC, which on current CPUs
// counts at a constant rate (the nominal frequency) whatever the core's clock does; on aarch64
// the generic timer's virtual count CNTVCT_EL0, a fixed-frequency counter (CNTFRQ_EL0, often
// 25-100 MHz, 1 GHz from ARMv8.6), so one tick can span tens of core cycles and short latencies
// come out quantised. calibrate() measures ticks per nanosecond.
//
// Neither read waits for earlier instructions by itself, so the read that ends an acquire's
// latency could execute before the acquiring atomic has completed: `isb` on aarch64 (as
// lockhammer does) and `lfence` on x86 make it wait.
inline std::uint64_t ticks() {
#if defined(LOCKPROF_ARCH_X86)
    _mm_lfence();
    return __rdtsc();
#else
    std::uint64_t value;
    asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(value)::"memory");
    return value;
#endif
}

// Instructions one trip of burn()'s loop executes: a decrement and a conditional branch back,
// on both architectures (lockhammer's blackhole() loop, `add; cbnz` / `add; jne`). So N
// instructions of work are N / kBurnInstructionsPerTrip trips (`--critical-ins`).
inline constexpr std::uint64_t kBurnInstructionsPerTrip = 2;

// Instructions burn() executes around its loop whatever the trip count: the test that skips
// the loop when there are no trips (aarch64 `cbz`; x86 `test` and `jz`).
#if defined(LOCKPROF_ARCH_X86)
inline constexpr std::uint64_t kBurnEntryInstructions = 2;
#else
inline constexpr std::uint64_t kBurnEntryInstructions = 1;
#endif

// Busy work the optimiser cannot remove, shorten or unroll: `iterations` trips of a loop written
// in assembly, kBurnInstructionsPerTrip instructions each, so a trip count is also an exact
// instruction count (tests/unit/workload/work_loop_disasm_test.cpp reads it back). Each worker
// calibrates it against the clock after pinning (workload/trial.cpp) to turn nanoseconds into
// trips, or takes the trips from an instruction count. The asm runs even for 0 trips, and its
// memory clobber makes it a compiler barrier: loads and stores written before or after it (the
// critical section's data, the exclusion check) stay there.
inline void burn(std::uint64_t iterations) {
#if defined(LOCKPROF_ARCH_X86)
    asm volatile(
        "test %0, %0\n\t"
        "jz 2f\n"
        "1:\n\t"
        "sub $1, %0\n\t"
        "jnz 1b\n"
        "2:"
        : "+r"(iterations)
        :
        : "cc", "memory");
#else
    asm volatile(
        "cbz %x0, 2f\n"
        "1:\n\t"
        "sub %x0, %x0, #1\n\t"
        "cbnz %x0, 1b\n"
        "2:"
        : "+r"(iterations)
        :
        : "memory");
#endif
}

// Everything that uses `value` is computed after this point, and no memory access moves across
// it (an empty asm that claims to change `value` and clobber memory; no instruction is emitted).
// The measured loop calls it right after the release so that latency bookkeeping, which the
// language would let the compiler hoist above a release store, stays out of the critical section.
template <typename T>
inline void compute_after_here(T& value) {
    asm volatile("" : "+r"(value)::"memory");
}

// Full hardware fence (orders everything; used around timing reads).
inline void full_fence() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

// Facts about the CPU this process runs on.
struct CpuIdentity {
    std::string arch;        // "x86_64" / "aarch64"
    std::string model_name;  // human name ("AMD EPYC 7B13", "Neoverse N1", ...)
    std::string vendor;      // x86 vendor id or ARM implementer name
    // aarch64 MIDR fields (0 on x86).
    unsigned implementer = 0, part = 0, variant = 0, revision = 0;
    bool has_lse = false;  // ARMv8.1 atomics (HWCAP_ATOMICS); false on x86
    bool has_spe = false;  // ARM statistical profiling extension exposed as a PMU
    unsigned logical_cpus = 0;
};

// Read from `root`/proc/cpuinfo (the first processor's fields) and `root`/sys (SPE); the root
// is a parameter for tests. LSE comes from the running CPU's hwcaps whatever the root.
CpuIdentity cpu_identity(const std::string& root = "/");

// Human name of an ARM part from the MIDR implementer and part numbers, "" when unknown.
std::string arm_part_name(unsigned implementer, unsigned part);

// Whether the running CPU executes ARMv8.1 LSE atomics (always false off aarch64).
bool cpu_has_lse();

}  // namespace lockprof::arch
