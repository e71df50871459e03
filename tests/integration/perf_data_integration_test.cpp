// `lockprof fold perf.data` against perf itself: a real `perf record -g` of a C++ program with
// a shared library, named threads, templates, lambdas, operators and libstdc++ code folds to
// exactly what `perf script | lockprof fold` folds, under every option that shapes the stacks;
// `convert perf.data` and `flamegraph perf.data` write what `fold` does, and `convert
// perf.data --pprof` a profile `go tool pprof` reads. Skips, saying why,
// without perf, a C++ compiler, or permission to record.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/cli_runner.hpp"

namespace fs = std::filesystem;
using lockprof::test::read_all;
using lockprof::test::run_lockprof;
using lockprof::test::shell;
using lockprof::test::shell_quote;
using lockprof::test::TempDir;

namespace {

bool have(const std::string& name) {
    return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

// lib_spin is hand-written code with two names and no size (no .size directive), as kernel
// and libc assembly often is: perf sizes symbols before it drops aliases, so the name it prints
// is the last alias in the symbol table, not the one with fewer underscores. (With this
// binutils the table lists lib_spin first.)
constexpr const char* kLibrary = R"(
__attribute__((noinline)) unsigned long lib_work(unsigned long n) {
    unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++) s += i * i;
    return s;
}
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl lib_spin\n.type lib_spin, @function\n"
        ".globl __lib_spin_zz\n.type __lib_spin_zz, @function\n"
        "lib_spin:\n__lib_spin_zz:\n"
        "1: dec %rdi\n jnz 1b\n mov %rdi, %rax\n ret\n");
#else
unsigned long lib_spin(unsigned long n) { return lib_work(n); }
#endif
)";

// Calls into the library go through its PLT stub, which perf names "lib_work@plt", a symbol no
// ELF table holds.
constexpr const char* kProgram = R"CPP(
#include <pthread.h>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
    extern "C" unsigned long lib_work(unsigned long n);
    extern "C" unsigned long lib_spin(unsigned long n);
    volatile unsigned long sink;
    namespace outer::inner {
    template <class T, int N>
    struct Grid {
        __attribute__((noinline)) T walk(T x) const {
            for (int i = 0; i < N * 100; i++) x = x * 3 + i;
            return x;
        }
    };
    }  // namespace outer::inner
    struct Acc {
        unsigned long v = 0;
        __attribute__((noinline)) Acc& operator+=(unsigned long x) {
            for (int i = 0; i < 50; i++) v += x ^ i;
            return *this;
        }
    };
    __attribute__((noinline)) void use_map(int n) {
        std::map<int, std::string> m;
        for (int i = 0; i < n; i++) m[i % 500] += "x";
        sink += m.size();
    }
    __attribute__((noinline)) void run(int rounds) {
        std::function<unsigned long(int)> f = [](int n) {
            unsigned long s = 0;
            for (int i = 0; i < n; i++) s += i * 7;
            return s;
        };
        Acc acc;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 200; i++) acc += i;
            sink += outer::inner::Grid<unsigned long, 3>{}.walk(r) + f(20000) + lib_work(20000) +
                    lib_spin(20000);
            if (r % 50 == 0) use_map(5000);
        }
        sink += acc.v;
    }
    void* worker(void* name) {
        pthread_setname_np(pthread_self(), static_cast<const char*>(name));
        run(6000);
        return nullptr;
    }
    int main() {
        pthread_t a, b;
        pthread_create(&a, nullptr, worker, (void*)"alpha");
        pthread_create(&b, nullptr, worker, (void*)"beta");
        run(6000);
        pthread_join(a, nullptr);
        pthread_join(b, nullptr);
        std::printf("%lu\n", (unsigned long)sink);
    }
)CPP";

class PerfData : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have("perf")) GTEST_SKIP() << "perf not installed (Debian: linux-perf)";
        if (!have("c++")) GTEST_SKIP() << "no C++ compiler to build the profiled program";
        std::ofstream(dir / "work.c") << kLibrary;
        std::ofstream(dir / "prog.cpp") << kProgram;
        auto lib = shell("cc -O1 -fno-omit-frame-pointer -fPIC -shared -o " + d("libwork.so") +
                         " " + d("work.c"));
        ASSERT_EQ(lib.status, 0) << lib.err;
        auto prog = shell("c++ -O2 -fno-omit-frame-pointer -pthread -o " + d("prog") + " " +
                          d("prog.cpp") + " -L" + shell_quote(dir.path.string()) +
                          " -lwork -Wl,-rpath," + shell_quote(dir.path.string()));
        ASSERT_EQ(prog.status, 0) << prog.err;
        auto record = shell("perf record -q -F 2000 -e cpu-clock -g -o " + d("perf.data") + " " +
                            d("prog") + " >/dev/null");
        if (record.status != 0)
            GTEST_SKIP() << "perf record -e cpu-clock failed here (perf_event_paranoid, "
                            "seccomp?): "
                         << record.err.substr(0, 300);
        auto script = shell("perf script -i " + d("perf.data") + " > " + d("perf.txt"));
        ASSERT_EQ(script.status, 0) << script.err.substr(0, 500);
    }
    std::string d(const char* file) const { return shell_quote((dir / file).string()); }
    std::string p(const char* file) const { return (dir / file).string(); }

    TempDir dir;
};

TEST_F(PerfData, FoldEqualsPerfScriptFoldUnderEveryOption) {
    const std::vector<std::vector<std::string>> option_sets = {
        {},
        {"--root", "comm-pid"},
        {"--root", "none", "--weight", "period"},
        {"--no-kernel-suffix"},
        {"--event", "all"},
        {"--event", "cpu-clock", "--strict"},
    };
    for (const auto& options : option_sets) {
        std::string label;
        for (const auto& o : options) label += o + " ";
        auto text_args = std::vector<std::string>{"fold", p("perf.txt"), "-o", p("text.folded")};
        auto data_args = std::vector<std::string>{"fold", p("perf.data"), "-o", p("data.folded")};
        text_args.insert(text_args.end(), options.begin(), options.end());
        data_args.insert(data_args.end(), options.begin(), options.end());
        auto text = run_lockprof(text_args);
        ASSERT_EQ(text.exit_code, 0) << label << text.err;
        auto data = run_lockprof(data_args);
        ASSERT_EQ(data.exit_code, 0) << label << data.err;
        EXPECT_EQ(data.err, "") << label;
        const auto expected = read_all(dir / "text.folded");
        const auto got = read_all(dir / "data.folded");
        EXPECT_EQ(got, expected) << "options: " << label;
        EXPECT_GT(got.size(), 100u) << label;
    }
    // The recording holds what the comparison is meant to cover.
    const auto folded = read_all(dir / "data.folded");
    for (const char* frame : {"alpha;", "beta;", ";lib_work", "lib_spin",
                              "outer::inner::Grid<unsigned long, 3>::walk", "Acc::operator+="})
        EXPECT_NE(folded.find(frame), std::string::npos) << frame << "\n" << folded.substr(0, 3000);
}

TEST_F(PerfData, ConvertAndFlamegraphReadPerfData) {
    ASSERT_EQ(run_lockprof({"fold", p("perf.data"), "-o", p("fold.folded")}).exit_code, 0);
    auto r =
        run_lockprof({"convert", p("perf.data"), "--folded", p("convert.folded"), "--speedscope",
                      p("convert.speedscope.json"), "--flamegraph", p("convert.svg")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_all(dir / "convert.folded"), read_all(dir / "fold.folded"));
    EXPECT_NE(read_all(dir / "convert.speedscope.json").find("speedscope"), std::string::npos);
    EXPECT_NE(read_all(dir / "convert.svg").find("lib_work"), std::string::npos);

    // perf.data on standard input is recognised by its magic too.
    auto piped =
        shell(shell_quote(LOCKPROF_BIN) + " fold < " + d("perf.data") + " > " + d("stdin.folded"));
    ASSERT_EQ(piped.status, 0) << piped.err;
    EXPECT_EQ(read_all(dir / "stdin.folded"), read_all(dir / "fold.folded"));

    r = run_lockprof({"flamegraph", p("perf.data"), "-o", p("direct.svg")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(read_all(dir / "direct.svg").find("<title>lib_work ("), std::string::npos);

    r = run_lockprof({"convert", p("perf.data"), "--pprof", p("perf.pb.gz")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (!have("go")) GTEST_SKIP() << "go not installed (Debian: golang-go): pprof file unread";
    auto top = shell("go tool pprof -top " + d("perf.pb.gz") + " > " + d("top.txt"));
    ASSERT_EQ(top.status, 0) << top.err;
    const auto text = read_all(dir / "top.txt");
    EXPECT_NE(text.find("lib_work"), std::string::npos) << text;
    EXPECT_NE(text.find("Type: cpu"), std::string::npos) << text;
}

}  // namespace
