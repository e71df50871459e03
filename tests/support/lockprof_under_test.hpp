// The lockprof binary the CLI and integration tests run, and what it was built with.
//
// By default it is this build's (LOCKPROF_BUILT_BIN, set by tests/CMakeLists.txt). With
// LOCKPROF_TEST_BIN in the environment the tests run that binary instead: scripts/test.sh runs
// the drivers of its main build against the ASan+UBSan build's lockprof, so that the sanitizer
// stage does not compile the tests' own code a second time (it checks lockprof's code, not the
// drivers'). What the instrumentation changes (generated code, descriptor counts), the tests
// ask of the binary itself: its --version prints the flags it was compiled with.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace lockprof::test {

inline const char* lockprof_bin() {
    static const char* const bin = [] {
        const char* chosen = std::getenv("LOCKPROF_TEST_BIN");
        return chosen && *chosen ? chosen : LOCKPROF_BUILT_BIN;
    }();
    return bin;
}

// Whether the binary under test is built with AddressSanitizer: its `--version` lists
// -fsanitize=address among its flags. Asked once per test program.
inline bool lockprof_bin_has_asan() {
    static const bool asan = [] {
        std::string command = "'";
        for (const char* c = lockprof_bin(); *c; ++c)
            command += *c == '\'' ? std::string("'\\''") : std::string(1, *c);
        command += "' --version 2>/dev/null";
        std::string text;
        if (FILE* p = ::popen(command.c_str(), "r")) {
            char buffer[512];
            for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, p)) > 0;)
                text.append(buffer, n);
            ::pclose(p);
        }
        return text.find("-fsanitize=address") != std::string::npos;
    }();
    return asan;
}

}  // namespace lockprof::test

// Where the tests spell the binary: a C string.
#define LOCKPROF_BIN (::lockprof::test::lockprof_bin())
