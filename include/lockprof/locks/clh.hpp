// clh: Craig, Landin & Hagersten queue lock. Each waiter spins on its predecessor's node; on
// release a thread leaves its node to the successor and recycles its predecessor's node.
//
// lock:   mark our node busy, swap it into the tail, wait until the predecessor's node is free.
// unlock: mark our node free (releasing the successor) and adopt the predecessor's node.
// Nodes change hands, so each lives on the heap; every node is always held by exactly one thread
// context or by the lock's tail, and whoever holds it at the end deletes it.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) ClhLock {
    static constexpr std::string_view kName = "clh";
    static constexpr std::string_view kDescription =
        "queue lock: each waiter spins on its predecessor's node (Craig, Landin, Hagersten)";
    static constexpr DelayMask kDelays = kWaitDelays;

    struct alignas(arch::kFalseSharingRange) Node {
        std::atomic<std::uint32_t> busy{0};
    };
    struct Context {
        Context() : mine(new Node) {}
        ~Context() { delete mine; }
        Context(const Context&) = delete;
        Context& operator=(const Context&) = delete;
        Node* mine;
        Node* predecessor = nullptr;
        AttemptStats stats;
    };

    ClhLock() : tail_(new Node) {}
    ~ClhLock() { delete tail_.load(std::memory_order_relaxed); }
    ClhLock(const ClhLock&) = delete;
    ClhLock& operator=(const ClhLock&) = delete;

    bool try_lock(Context& c) {
        Node* current = tail_.load(std::memory_order_acquire);
        if (current->busy.load(std::memory_order_acquire) != 0) return false;
        c.mine->busy.store(1, std::memory_order_relaxed);
        ++c.stats.rmw_attempts;
        if (!tail_.compare_exchange_strong(current, c.mine, std::memory_order_acq_rel,
                                           std::memory_order_relaxed))
            return false;
        c.predecessor = current;
        return true;
    }
    void lock(Context& c) {
        c.mine->busy.store(1, std::memory_order_relaxed);
        ++c.stats.rmw_attempts;
        c.predecessor = tail_.exchange(c.mine, std::memory_order_acq_rel);
        arch::spin_until<D>(
            c.predecessor->busy, [](std::uint32_t v) { return v == 0; }, c.stats.spin_iterations);
    }
    void unlock(Context& c) {
        Node* released = c.mine;
        c.mine = c.predecessor;
        released->busy.store(0, std::memory_order_release);
    }

  private:
    std::atomic<Node*> tail_;
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
