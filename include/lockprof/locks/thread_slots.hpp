// ThreadSlots: a lock's table of its waiters' queue nodes, indexed by a small slot number, for the
// kernel's queue locks whose lock word names a waiter by number rather than by address
// (qspinlock's tail, osq's tail). The kernel numbers waiters by CPU and finds a CPU's node in a
// per-CPU array; lockprof's waiters are threads with a node in their Context, so each context
// claims a free slot of the lock it waits on, stores its node's address there, and gives the slot
// back when it is destroyed. Not a lock: qspinlock.hpp and osq.hpp use it.
//
// A slot is claimed once per context and lock (a scan for a free entry, out of the measured
// path's way: the first acquire that needs one) and held for the context's life, so the table
// holds as many slots as there are live contexts on the lock, whatever the thread count. When
// every slot is taken, claim() says so and the lock falls back to something that needs none.
// A context holds a slot of one lock at a time, so it must be destroyed, or move on to another
// lock, while the lock whose slot it holds still exists: giving the slot back writes that lock's
// table (as a pg-slock context folds its estimate back into its lock). The measured loop's
// contexts end before their trial destroys the lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <typename Node, std::uint32_t kCapacity>
class ThreadSlots {
  public:
    static_assert(kCapacity > 0);
    static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};

    ThreadSlots() : nodes_(new std::atomic<Node*>[kCapacity]) {
        for (std::uint32_t i = 0; i < kCapacity; ++i)
            nodes_[i].store(nullptr, std::memory_order_relaxed);
    }
    ThreadSlots(const ThreadSlots&) = delete;
    ThreadSlots& operator=(const ThreadSlots&) = delete;

    // A free slot now holding `node`, or kNoSlot when all kCapacity are taken. The scan starts
    // where the previous claim ended, so N contexts claim in O(N) loads in all, not O(N^2).
    // Out of line: inlined into an acquire, its scan would take registers from the lock's own
    // wait loops there (on aarch64 they spilled around the outline-atomics call).
    [[gnu::noinline]] std::uint32_t claim(Node* node) {
        const std::uint32_t start = hint_.load(std::memory_order_relaxed);
        for (std::uint32_t n = 0; n < kCapacity; ++n) {
            const std::uint32_t slot = (start + n) % kCapacity;
            Node* expected = nullptr;
            // Release: whoever reads the slot after finding its number in the lock word (which
            // the owner publishes later, with release) sees the node's address.
            if (nodes_[slot].load(std::memory_order_relaxed) == nullptr &&
                nodes_[slot].compare_exchange_strong(expected, node, std::memory_order_release,
                                                     std::memory_order_relaxed)) {
                hint_.store((slot + 1) % kCapacity, std::memory_order_relaxed);
                return slot;
            }
        }
        return kNoSlot;
    }
    // Only once no waiter can still find the slot in the lock word: the owner has left the
    // queue (its lock() returned and its unlock() finished) for good.
    void release(std::uint32_t slot) { nodes_[slot].store(nullptr, std::memory_order_release); }

    // Relaxed: the caller read `slot` from the lock word with acquire, after the owner stored
    // the node here and then published the slot (release), so the address is visible.
    Node* node(std::uint32_t slot) const { return nodes_[slot].load(std::memory_order_relaxed); }

  private:
    std::unique_ptr<std::atomic<Node*>[]> nodes_;
    std::atomic<std::uint32_t> hint_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
