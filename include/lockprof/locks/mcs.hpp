// mcs: Mellor-Crummey & Scott queue lock. Each waiter spins on a flag in its own queue node, so
// a release touches one waiter's cache line instead of all of them.
//
// lock:     swap our node into the tail; if there was a predecessor, link behind it and wait
//           until it clears our flag.
// try_lock: compare-and-swap our node into an empty tail (a release, like lock()'s swap).
// unlock:   if nobody linked behind us, swing the tail back to empty; otherwise (or if the swing
//           fails because someone is mid-link) wait for the link and clear the successor's flag.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) McsLock {
    static constexpr std::string_view kName = "mcs";
    static constexpr std::string_view kDescription =
        "queue lock: each waiter spins on its own node (Mellor-Crummey & Scott)";
    static constexpr std::string_view kRmwNoun = "atomic swaps";
    static constexpr bool kQueue = true;  // each waiter polls a queue node of its own
    static constexpr DelayMask kDelays = kWaitDelays;

    struct alignas(arch::kFalseSharingRange) Node {
        std::atomic<Node*> next{nullptr};
        std::atomic<std::uint32_t> waiting{0};
    };
    struct Context {
        Node node;
        AttemptStats stats;
    };

    bool try_lock(Context& c) {
        c.node.next.store(nullptr, std::memory_order_relaxed);
        Node* expected = nullptr;
        ++c.stats.rmw_attempts;
        // Release, as lock()'s exchange: next = nullptr must be visible before the node is.
        // Otherwise a successor that finds our node at the tail can link itself in first, and
        // the late nullptr store erases the link: unlock then waits for a link that never comes.
        return tail_.compare_exchange_strong(expected, &c.node, std::memory_order_acq_rel,
                                             std::memory_order_relaxed);
    }
    void lock(Context& c) {
        Node* me = &c.node;
        me->next.store(nullptr, std::memory_order_relaxed);
        me->waiting.store(1, std::memory_order_relaxed);
        ++c.stats.rmw_attempts;
        Node* predecessor = tail_.exchange(me, std::memory_order_acq_rel);
        if (predecessor == nullptr) return;
        predecessor->next.store(me, std::memory_order_release);
        arch::spin_until<D>(
            me->waiting, [](std::uint32_t v) { return v == 0; }, c.stats.spin_iterations);
    }
    void unlock(Context& c) {
        Node* me = &c.node;
        Node* successor = me->next.load(std::memory_order_acquire);
        if (successor == nullptr) {
            Node* expected = me;
            ++c.stats.rmw_attempts;
            if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release,
                                              std::memory_order_relaxed))
                return;
            // A new waiter swapped itself in but has not linked yet: wait for the link.
            while ((successor = me->next.load(std::memory_order_acquire)) == nullptr)
                arch::spin_delay<D == Delay::wfe ? Delay::none : D>();
        }
        successor->waiting.store(0, std::memory_order_release);
    }

  private:
    std::atomic<Node*> tail_{nullptr};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
