// The program of the report that found `record --spin -- CMD` breaking pthread_create (issue
// 36), in its own shape: two threads increment a counter under a test-and-set lock whose
// contended path is the noinline my_lock_slow(); it checks pthread_create and prints the
// count. `twelve_line_spin THREADS ITERATIONS`; exit 1 when a thread cannot start or the count
// is wrong. Built -O2 -g, as the report's `cc -O2 -g -pthread`.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>

static volatile int lock_word;
static long counter, iterations;
extern "C" __attribute__((noinline)) void my_lock_slow(volatile int* l) {
    while (__sync_lock_test_and_set(l, 1))
        while (*l) {
        }
}
static inline void my_spin_lock(volatile int* l) {
    if (__sync_lock_test_and_set(l, 1)) my_lock_slow(l);
}
static void* worker(void*) {
    for (long i = 0; i < iterations; i++) {
        my_spin_lock(&lock_word);
        *static_cast<volatile long*>(&counter) = counter + 1;
        __sync_lock_release(&lock_word);
    }
    return nullptr;
}
int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 2;
    iterations = argc > 2 ? std::atol(argv[2]) : 200000;
    pthread_t t[64];
    for (int i = 0; i < n && i < 64; i++)
        if (const int e = pthread_create(&t[i], nullptr, worker, nullptr)) {
            std::printf("pthread_create: %d\n", e);
            return 1;
        }
    for (int i = 0; i < n && i < 64; i++) pthread_join(t[i], nullptr);
    std::printf("counter=%ld (expected %ld)\n", counter, n * iterations);
    return counter != n * iterations;
}
