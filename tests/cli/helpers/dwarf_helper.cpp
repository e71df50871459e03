// A program whose time is spent under a known chain of calls, main -> dwarf_outer ->
// dwarf_middle -> dwarf_inner, built with -O2 -fomit-frame-pointer (tests/CMakeLists.txt), as
// Debian builds PostgreSQL and glibc: the kernel's frame-pointer walk cannot follow it, an
// unwinder reading .eh_frame (`record --call-graph dwarf`) can.
// `dwarf_helper [MS]`: spins about MS milliseconds (default 300) in dwarf_inner.
#include <time.h>

#include <cstdint>
#include <cstdlib>

#if defined(__GNUC__) && !defined(__clang__)
#define DWARF_HELPER_NOINLINE __attribute__((noinline, noipa, used))
#else
#define DWARF_HELPER_NOINLINE __attribute__((noinline, used))
#endif

namespace {

volatile std::uint64_t sink = 0;

std::uint64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

// Plain arithmetic, the clock read rarely: nearly every sample lands here, not in the vDSO.
extern "C" DWARF_HELPER_NOINLINE std::uint64_t dwarf_inner(std::uint64_t until_ns) {
    std::uint64_t rounds = 0;
    do {
        for (int i = 0; i < 200000; ++i) sink = sink * 3 + static_cast<std::uint64_t>(i);
        ++rounds;
    } while (now_ns() < until_ns);
    return rounds;
}

extern "C" DWARF_HELPER_NOINLINE std::uint64_t dwarf_middle(std::uint64_t until_ns) {
    const std::uint64_t rounds = dwarf_inner(until_ns);
    sink = sink + rounds;
    return rounds + 1;
}

extern "C" DWARF_HELPER_NOINLINE std::uint64_t dwarf_outer(std::uint64_t until_ns) {
    const std::uint64_t rounds = dwarf_middle(until_ns);
    sink = sink + rounds;
    return rounds + 2;
}

int main(int argc, char** argv) {
    const long ms = argc > 1 ? std::atol(argv[1]) : 300;
    const std::uint64_t rounds =
        dwarf_outer(now_ns() + static_cast<std::uint64_t>(ms) * 1'000'000u);
    return rounds > 0 ? 0 : 1;
}
