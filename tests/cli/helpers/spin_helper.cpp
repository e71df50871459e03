// A program with a PostgreSQL-like spinlock slow path for `record --spin` tests: s_lock(lock,
// file, line, func) is called exactly kFirst times from one call site and kSecond times from
// another, each naming itself as PostgreSQL's S_LOCK macro does; lock_slow_path(lock) (no
// call-site arguments) kThird times from one site, whose return address names it. Like
// PostgreSQL's, s_lock returns how many times it "slept": line % 5 here, so 1 per call from the
// first site (line 101) and 4 per call from the second (line 1234).
// `spin_helper [BEFORE_MS [AFTER_MS [PLUGIN]]]`: with BEFORE_MS (default 0) above 0 it waits, at
// most BEFORE_MS, until a recorder attached by pid has probed s_lock or lock_slow_path, and
// then 1 s more (the probes are enabled once their buffers are mapped, which a loaded machine
// once took more than 300 ms to do), so that every call is recorded however long the recorder
// takes to start. It sleeps AFTER_MS (default 300) after
// the calls, so a recorder reads the strings and mappings while the process is alive. With
// PLUGIN (spin_plugin.cpp's library), it then loads it with dlopen, waits likewise until the
// library's own lock_slow_path is probed (at most BEFORE_MS, else 1 s), and runs its
// spin_plugin_run(), before the AFTER_MS sleep.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <string>

#if defined(__GNUC__) && !defined(__clang__)
#define SPIN_HELPER_NOINLINE __attribute__((noinline, noipa, used))
#else
#define SPIN_HELPER_NOINLINE __attribute__((noinline, used))
#endif

namespace {
constexpr int kFirst = 1000;
constexpr int kSecond = 500;
constexpr int kThird = 300;

volatile int lock_a = 0;
volatile int lock_b = 0;
volatile int sink = 0;

// A few microseconds of "spinning", so entry to return takes measurable time.
void spin_a_while() {
    for (int i = 0; i < 2000; ++i) sink = sink + 1;
}
}  // namespace

extern "C" SPIN_HELPER_NOINLINE int s_lock(volatile int* lock, const char* file, int line,
                                           const char* func) {
    spin_a_while();
    *lock = 1 + file[0] + func[0];
    return line % 5;
}

extern "C" SPIN_HELPER_NOINLINE void lock_slow_path(volatile int* lock) {
    spin_a_while();
    *lock = 0;
}

extern "C" SPIN_HELPER_NOINLINE void first_caller() {
    for (int i = 0; i < kFirst; ++i) s_lock(&lock_a, "spin_helper.c", 101, "first_caller");
}

extern "C" SPIN_HELPER_NOINLINE void second_caller() {
    for (int i = 0; i < kSecond; ++i)
        s_lock(&lock_b, "src/backend/access/transam/xlog.c", 1234, "XLogGetLastRemovedSegno");
}

extern "C" SPIN_HELPER_NOINLINE void third_caller() {
    for (int i = 0; i < kThird; ++i) lock_slow_path(&lock_a);
}

namespace {
// Whether the first bytes of the function at `code` differ from what its file holds there:
// the breakpoint a uprobe puts in this process's copy of the page.
bool carries_probe(const void* code) {
    const auto address = reinterpret_cast<std::uintptr_t>(code);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        unsigned long start = 0, end = 0, offset = 0;
        int path_at = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx %*s %lx %*s %*s %n", &start, &end, &offset,
                        &path_at) < 3 ||
            address < start || address >= end || path_at == 0)
            continue;
        std::ifstream file(line.substr(static_cast<std::size_t>(path_at)), std::ios::binary);
        char on_disk[4] = {}, in_memory[4] = {};
        file.seekg(static_cast<std::streamoff>(address - start + offset));
        if (!file.read(on_disk, sizeof on_disk)) return false;
        std::memcpy(in_memory, code, sizeof in_memory);
        return std::memcmp(on_disk, in_memory, sizeof on_disk) != 0;
    }
    return false;
}

// Waits until one of `functions` carries a probe, at most `limit_ms`, then 1 s more.
void wait_for_probe(std::initializer_list<const void*> functions, int limit_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        for (const void* f : functions)
            if (carries_probe(f)) {
                usleep(1'000'000);
                return;
            }
        usleep(1000);
    }
}
}  // namespace

int main(int argc, char** argv) {
    const int before = argc > 1 ? std::atoi(argv[1]) : 0;
    const int after = argc > 2 ? std::atoi(argv[2]) : 300;
    if (before > 0)
        wait_for_probe({reinterpret_cast<const void*>(&s_lock),
                        reinterpret_cast<const void*>(&lock_slow_path)},
                       before);
    first_caller();
    second_caller();
    third_caller();
    if (argc > 3) {
        void* plugin = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
        if (!plugin) return 2;
        auto* run = reinterpret_cast<int (*)()>(dlsym(plugin, "spin_plugin_run"));
        auto* slow_path =
            reinterpret_cast<const void* (*)()>(dlsym(plugin, "spin_plugin_slow_path"));
        if (!run || !slow_path) return 2;
        wait_for_probe({slow_path()}, before > 0 ? before : 1000);
        if (run() <= 0) return 2;
    }
    usleep(static_cast<useconds_t>(after) * 1000);
    return 0;
}
