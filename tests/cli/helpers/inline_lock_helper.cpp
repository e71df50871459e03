// A program whose spin lock is a `static inline` test-and-set lock, inlined into its callers
// (with -O2 -g its code has DW_TAG_inlined_subroutine entries and no symbol of its own), for
// the spin view's inline matching and the missing-debug-info notes (cli/record_test.cpp).
// `inline_lock_helper [MS]`: two threads take and release the lock for MS milliseconds
// (default 1000), holding it for a short critical section; the main thread holds it for the
// first quarter, so the workers spend at least that long in my_spin_lock's wait loop.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace {

std::atomic<int> lock_word{0};
volatile unsigned long counter = 0;
std::atomic<bool> stop{false};

static inline void my_spin_lock(std::atomic<int>& word) {
    while (word.exchange(1, std::memory_order_acquire) != 0) {
        while (word.load(std::memory_order_relaxed) != 0) {
        }
    }
}

static inline void my_spin_unlock(std::atomic<int>& word) {
    word.store(0, std::memory_order_release);
}

void worker() {
    while (!stop.load(std::memory_order_relaxed)) {
        my_spin_lock(lock_word);
        for (int i = 0; i < 50; ++i) counter = counter + 1;
        my_spin_unlock(lock_word);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int ms = argc > 1 ? std::atoi(argv[1]) : 1000;
    // Held for the first quarter, so both workers spin in my_spin_lock even on a machine too
    // busy to run them side by side.
    my_spin_lock(lock_word);
    std::thread a(worker), b(worker);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms / 4));
    my_spin_unlock(lock_word);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms - ms / 4));
    stop = true;
    a.join();
    b.join();
    return 0;
}
