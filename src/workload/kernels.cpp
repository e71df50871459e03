// The flavour translation unit: instantiates the measured loop for every lock and delay policy.
// CMake compiles this file once per ISA flavour with LOCKPROF_FLAVOUR_NS (a namespace name) and
// LOCKPROF_FLAVOUR_NAME (the "@suffix", "" for the default build) defined, plus that flavour's
// -march flags. Keep it free of library code that uses atomics (see workload/kernel.hpp).
#include <iterator>
#include <utility>
#include <vector>

#include "lockprof/workload/runnable_locks.hpp"
#include "lockprof/workload/loop.hpp"

#ifndef LOCKPROF_FLAVOUR_NAME
#define LOCKPROF_FLAVOUR_NAME ""
#endif
#ifndef LOCKPROF_FLAVOUR_NEEDS_LSE
#define LOCKPROF_FLAVOUR_NEEDS_LSE 0
#endif

#define LOCKPROF_CONCAT2(a, b) a##b
#define LOCKPROF_CONCAT(a, b) LOCKPROF_CONCAT2(a, b)

namespace lockprof::workload {
namespace {

template <template <arch::Delay> class L, arch::Delay D>
void fill_delay(RunnableLock& entry) {
    if constexpr ((L<D>::kDelays & locks::delay_bit(D)) != 0 && arch::delay_available(D)) {
        entry.delays |= locks::delay_bit(D);
        entry.kernels[static_cast<std::size_t>(D)][0] = make_kernel<L<D>, false>();
        entry.kernels[static_cast<std::size_t>(D)][1] = make_kernel<L<D>, true>();
    }
}

// Every delay policy arch/ lists (kAllDelays), so a new policy needs no line here.
template <template <arch::Delay> class L, std::size_t... I>
void fill_delays(RunnableLock& entry, std::index_sequence<I...>) {
    (fill_delay<L, arch::kAllDelays[I]>(entry), ...);
}

template <template <arch::Delay> class L>
RunnableLock make_entry() {
    using Probe = L<arch::Delay::none>;
    RunnableLock entry;
    entry.algorithm = std::string(Probe::kName);
    entry.flavour = LOCKPROF_FLAVOUR_NAME;
    entry.name = entry.flavour.empty() ? entry.algorithm : entry.algorithm + "@" + entry.flavour;
    entry.description = std::string(Probe::kDescription);
    entry.excludes = locks::excludes<Probe>();
    entry.shared = locks::has_shared<Probe>();
    entry.flavour_independent = locks::flavour_independent<Probe>();
    entry.needs_lse = LOCKPROF_FLAVOUR_NEEDS_LSE != 0;
    fill_delays<L>(entry, std::make_index_sequence<std::size(arch::kAllDelays)>{});
    return entry;
}

// A flavour-independent lock (pthread, empty) compiles to the same calls in every flavour, so
// only the default build (no "@suffix", no LSE needed) instantiates it; the other flavour units
// compile no kernels for it at all.
constexpr bool kDefaultFlavour = sizeof(LOCKPROF_FLAVOUR_NAME) == 1;

template <template <arch::Delay> class L>
void add_entry(std::vector<RunnableLock>& out) {
    if constexpr (kDefaultFlavour || !locks::flavour_independent<L<arch::Delay::none>>())
        out.push_back(make_entry<L>());
}

template <template <arch::Delay> class... Ls>
void add_all(std::vector<RunnableLock>& out, locks::LockList<Ls...>) {
    (add_entry<Ls>(out), ...);
}

}  // namespace

// Called by catalog.cpp; one such function exists per compiled flavour.
void LOCKPROF_CONCAT(register_flavour_, LOCKPROF_FLAVOUR_NS)(std::vector<RunnableLock>& out) {
    add_all(out, locks::AllLocks{});
}

}  // namespace lockprof::workload
