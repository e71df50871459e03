// The same atomic instructions as lockprof's uncontended `tas` and `cas`, in a bare loop with
// no harness: the reference the harness overhead is measured against (bench/run-benchmarks.sh).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "lockprof/arch/cpu.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: bare_loop tas|cas SECONDS\n");
        return 2;
    }
    const bool cas = std::strcmp(argv[1], "cas") == 0;
    const double seconds = std::stod(argv[2]);
    alignas(64) static std::atomic<std::uint32_t> word{0};
    alignas(64) static std::atomic<std::uint64_t> line{0};
    std::uint64_t acquires = 0;
    const auto start = std::chrono::steady_clock::now();
    const auto end = start + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        for (int i = 0; i < 1024; ++i) {
            if (cas) {
                std::uint32_t expected = 0;
                while (!word.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                                     std::memory_order_relaxed))
                    expected = 0;
            } else {
                while (word.exchange(1, std::memory_order_acquire) != 0) {
                }
            }
            line.store(line.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            word.store(0, std::memory_order_release);
        }
        acquires += 1024;
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    std::printf("%.3f\n", ns / static_cast<double>(acquires));
    return 0;
}
