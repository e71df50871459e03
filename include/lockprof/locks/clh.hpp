// clh: Craig, Landin & Hagersten queue lock. Each waiter spins on its predecessor's node; on
// release a thread leaves its node to the successor and recycles its predecessor's node.
//
// lock:     mark our node busy, swap it into the tail, wait until the predecessor's node is free.
// unlock:   mark our node free (releasing the successor) and adopt the predecessor's node.
// try_lock: only if the tail's node is free, compare-and-swap our node into the tail.
//
// Nodes change hands, so the same node returns to the tail again and again. A try_lock that saw
// node N free at the tail and then compared the tail with N alone could succeed after N had been
// re-enqueued, busy, by its new owner: two holders (ABA; 4 threads calling only try_lock found
// over a million in 21 M acquires). So the tail word holds the node's address (48 bits) and, above
// it, how many times that node has been enqueued (16 bits): a re-enqueued node never equals the
// tail value try_lock read, unless the same node went through the tail a multiple of 65536 times
// between try_lock's load and its compare-and-swap.
//
// Nodes belong to the lock: a context takes one at its first acquire, and the lock frees all of
// them when it is destroyed. try_lock reads the busy flag of whatever node it found at the tail,
// which meanwhile may have been adopted by a thread that has exited, so a node must live as long
// as the lock, not only as long as its last holder. A context serves one lock at a time and must
// not be used after that lock is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) ClhLock {
    static constexpr std::string_view kName = "clh";
    static constexpr std::string_view kDescription =
        "queue lock: each waiter spins on its predecessor's node (Craig, Landin, Hagersten)";
    static constexpr std::string_view kRmwNoun = "atomic swaps";
    static constexpr bool kQueue = true;  // each waiter polls its predecessor's node
    static constexpr DelayMask kDelays = kWaitDelays;

    struct alignas(arch::kFalseSharingRange) Node {
        std::atomic<std::uint32_t> busy{0};
        std::uint16_t enqueues = 0;      // written only by the node's current owner
        Node* next_allocated = nullptr;  // the lock's list of every node it handed out
    };
    struct Context {
        Context() = default;
        Context(const Context&) = delete;
        Context& operator=(const Context&) = delete;
        const ClhLock* lock = nullptr;  // whose node `mine` is
        Node* mine = nullptr;
        Node* predecessor = nullptr;
        AttemptStats stats;
    };

    ClhLock() { tail_.store(tagged(allocate()), std::memory_order_relaxed); }
    ~ClhLock() {
        for (Node* n = allocated_.load(std::memory_order_acquire); n != nullptr;) {
            Node* next = n->next_allocated;
            delete n;
            n = next;
        }
    }
    ClhLock(const ClhLock&) = delete;
    ClhLock& operator=(const ClhLock&) = delete;

    bool try_lock(Context& c) {
        Node* mine = own_node(c);
        std::uint64_t seen = tail_.load(std::memory_order_acquire);
        Node* current = node_of(seen);
        if (current->busy.load(std::memory_order_acquire) != 0) return false;
        mine->busy.store(1, std::memory_order_relaxed);
        ++mine->enqueues;
        ++c.stats.rmw_attempts;
        // Succeeds only if the tail still holds `current` from the same enqueue: then `current`
        // has stayed free since we read it, as only a re-enqueue (a new count) makes it busy.
        if (!tail_.compare_exchange_strong(seen, tagged(mine), std::memory_order_acq_rel,
                                           std::memory_order_relaxed))
            return false;
        c.predecessor = current;
        return true;
    }
    void lock(Context& c) {
        Node* mine = own_node(c);
        mine->busy.store(1, std::memory_order_relaxed);
        ++mine->enqueues;
        ++c.stats.rmw_attempts;
        c.predecessor = node_of(tail_.exchange(tagged(mine), std::memory_order_acq_rel));
        arch::spin_until<D>(
            c.predecessor->busy, [](std::uint32_t v) { return v == 0; }, c.stats.spin_iterations);
    }
    void unlock(Context& c) {
        Node* released = c.mine;
        c.mine = c.predecessor;
        released->busy.store(0, std::memory_order_release);
    }

  private:
    static constexpr unsigned kAddressBits = 48;
    static constexpr std::uint64_t kAddressMask = (std::uint64_t{1} << kAddressBits) - 1;
    static_assert(sizeof(std::uintptr_t) == sizeof(std::uint64_t), "clh packs 64-bit addresses");

    static std::uint64_t tagged(Node* node) {
        return reinterpret_cast<std::uintptr_t>(node) |
               (std::uint64_t{node->enqueues} << kAddressBits);
    }
    static Node* node_of(std::uint64_t tail) {
        return reinterpret_cast<Node*>(static_cast<std::uintptr_t>(tail & kAddressMask));
    }

    Node* own_node(Context& c) {
        if (c.lock != this) [[unlikely]] {
            c.lock = this;
            c.mine = allocate();
        }
        return c.mine;
    }
    Node* allocate() {
        Node* node = new Node;
        // x86_64 and aarch64 Linux hand user space 47- or 48-bit addresses unless a program asks
        // for more; the enqueue count needs the bits above.
        if ((reinterpret_cast<std::uintptr_t>(node) & ~kAddressMask) != 0) {
            delete node;
            throw std::length_error("clh: a node address above 2^48 leaves no room for its count");
        }
        node->next_allocated = allocated_.load(std::memory_order_relaxed);
        while (!allocated_.compare_exchange_weak(
            node->next_allocated, node, std::memory_order_release, std::memory_order_relaxed)) {
        }
        return node;
    }

    std::atomic<std::uint64_t> tail_{0};
    std::atomic<Node*> allocated_{nullptr};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
