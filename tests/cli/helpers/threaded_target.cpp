// A target that checks its own results, for the tests that every `record` mode leaves the
// program it records unchanged (cli/record_integrity_test.cpp). Each round it
//   - starts --threads threads with pthread_create, each taking a test-and-set lock
//     --iterations times and counting under it; every tenth acquire goes through
//     target_lock_slow(), the lock's out-of-line path (the function `record --spin` probes),
//     so each thread makes exactly iterations / 10 such calls whatever the contention;
//   - forks a child that does the same and exits with its own verdict;
//   - starts a second child that execs this program again with --exec-child (the same work);
//   - with --plugin, calls spin_plugin_run() of that library (spin_plugin.cpp), loaded with
//     dlopen in the first round;
// and checks that every pthread_create, fork and exec succeeded, that the count is exact and
// that both children exited 0. The main thread also calls target_lock_slow() kMainCalls times
// a round, so a recorder attached by pid sees calls in threads it attached at the start.
// It prints "threaded_target: ok: ..." and exits 0, or "threaded_target: FAILED: ..." and
// exits 3: a recorder that changed its behaviour shows here, whatever it reports itself.
//   threaded_target [--rounds N] [--threads T] [--iterations I] [--pause-ms P]
//                   [--plugin LIB] [--ready FILE] [--until FILE]
// --ready FILE is created once the program runs; with --until FILE it keeps doing rounds, at
// least N, until FILE exists (at most 60 s), so a recorder can attach in the middle.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#if defined(__GNUC__) && !defined(__clang__)
#define TARGET_NOINLINE __attribute__((noinline, noipa, used))
#else
#define TARGET_NOINLINE __attribute__((noinline, used))
#endif

namespace {

constexpr int kMainCalls = 20;

struct Options {
    int rounds = 3;
    int threads = 4;
    long iterations = 20000;
    int pause_ms = 0;
    std::string plugin, ready, until;
    bool exec_child = false;
};

std::atomic<int> lock_word{0};
long counter = 0;  // guarded by lock_word

[[noreturn]] void fail(const std::string& what) {
    std::printf("threaded_target: FAILED: %s\n", what.c_str());
    std::fflush(stdout);
    std::_Exit(3);
}

}  // namespace

extern "C" TARGET_NOINLINE void target_lock_slow(std::atomic<int>* lock) {
    while (lock->exchange(1, std::memory_order_acquire) != 0)
        while (lock->load(std::memory_order_relaxed) != 0) {
        }
}

namespace {

void lock(std::atomic<int>* word, long i) {
    if (i % 10 == 0) {
        target_lock_slow(word);
        return;
    }
    while (word->exchange(1, std::memory_order_acquire) != 0)
        while (word->load(std::memory_order_relaxed) != 0) {
        }
}

void unlock(std::atomic<int>* word) {
    word->store(0, std::memory_order_release);
}

struct Work {
    long iterations = 0;
};

void* worker(void* arg) {
    const long iterations = static_cast<Work*>(arg)->iterations;
    for (long i = 0; i < iterations; ++i) {
        lock(&lock_word, i);
        // Read and written through a volatile access, so the compiler cannot keep the count
        // in a register across the lock (DESIGN.md: GCC hoists plain globals out of such loops).
        *static_cast<volatile long*>(&counter) = *static_cast<volatile long*>(&counter) + 1;
        unlock(&lock_word);
    }
    return nullptr;
}

// One process's share of a round: threads, counted exactly.
void threads_round(const Options& o) {
    const long before = counter;
    std::vector<pthread_t> threads(static_cast<std::size_t>(o.threads));
    Work work{o.iterations};
    for (auto& t : threads)
        if (const int error = pthread_create(&t, nullptr, worker, &work))
            fail(std::string("pthread_create: ") + std::strerror(error));
    for (long i = 0; i < kMainCalls; ++i) {
        target_lock_slow(&lock_word);
        unlock(&lock_word);
    }
    for (auto& t : threads)
        if (const int error = pthread_join(t, nullptr))
            fail(std::string("pthread_join: ") + std::strerror(error));
    const long expected = before + o.threads * o.iterations;
    if (counter != expected)
        fail("counter " + std::to_string(counter) + ", expected " + std::to_string(expected));
}

void wait_ok(pid_t child, const char* what) {
    int status = 0;
    if (waitpid(child, &status, 0) != child)
        fail(std::string("waitpid of the ") + what + ": " + std::strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail(std::string("the ") + what + " ended with status " + std::to_string(status));
}

// A child that runs this program again with --exec-child: the same work after an exec.
pid_t start_exec_child(const Options& o, const std::string& self) {
    std::fflush(stdout);
    const pid_t child = fork();
    if (child < 0) fail(std::string("fork: ") + std::strerror(errno));
    if (child == 0) {
        const std::string threads = std::to_string(o.threads);
        const std::string iterations = std::to_string(o.iterations);
        execl(self.c_str(), self.c_str(), "--exec-child", "--threads", threads.c_str(),
              "--iterations", iterations.c_str(), static_cast<char*>(nullptr));
        std::printf("threaded_target: FAILED: exec %s: %s\n", self.c_str(), std::strerror(errno));
        std::fflush(stdout);
        std::_Exit(3);
    }
    return child;
}

void round(const Options& o, const std::string& self, void*& plugin) {
    std::fflush(stdout);
    const pid_t forked = fork();
    if (forked < 0) fail(std::string("fork: ") + std::strerror(errno));
    if (forked == 0) {
        threads_round(o);
        std::_Exit(0);
    }
    const pid_t execd = start_exec_child(o, self);
    threads_round(o);
    wait_ok(forked, "forked child");
    wait_ok(execd, "exec'd child");
    if (!o.plugin.empty()) {
        if (!plugin) plugin = dlopen(o.plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!plugin) fail(std::string("dlopen: ") + dlerror());
        auto* run = reinterpret_cast<int (*)()>(dlsym(plugin, "spin_plugin_run"));
        if (!run || run() <= 0) fail("spin_plugin_run");
    }
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) fail(a + " needs a value");
            return argv[++i];
        };
        if (a == "--rounds")
            o.rounds = std::atoi(value().c_str());
        else if (a == "--threads")
            o.threads = std::atoi(value().c_str());
        else if (a == "--iterations")
            o.iterations = std::atol(value().c_str());
        else if (a == "--pause-ms")
            o.pause_ms = std::atoi(value().c_str());
        else if (a == "--plugin")
            o.plugin = value();
        else if (a == "--ready")
            o.ready = value();
        else if (a == "--until")
            o.until = value();
        else if (a == "--exec-child")
            o.exec_child = true;
        else
            fail("unknown argument " + a);
    }
    if (o.iterations % 10 != 0) fail("--iterations must be a multiple of 10");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    if (o.exec_child) {
        threads_round(o);
        return 0;
    }
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    if (!o.ready.empty()) std::ofstream(o.ready) << getpid() << "\n";
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    void* plugin = nullptr;
    int done = 0;
    while (done < o.rounds || (!o.until.empty() && !std::filesystem::exists(o.until) &&
                               std::chrono::steady_clock::now() < give_up)) {
        round(o, self, plugin);
        ++done;
        if (o.pause_ms > 0) usleep(static_cast<useconds_t>(o.pause_ms) * 1000);
    }
    std::printf(
        "threaded_target: ok: %d rounds of %d threads x %ld acquires in 3 processes each "
        "(itself, a forked and an exec'd child), counts exact%s\n",
        done, o.threads, o.iterations, o.plugin.empty() ? "" : ", plugin called");
    return 0;
}
