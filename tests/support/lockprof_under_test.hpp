// The lockprof binary the CLI and integration tests run.
//
// By default it is this build's (LOCKPROF_BUILT_BIN, set by tests/CMakeLists.txt). With
// LOCKPROF_TEST_BIN in the environment the tests run that binary instead: scripts/test.sh runs
// the drivers of its main build against the ASan+UBSan build's lockprof, so that the sanitizer
// stage does not compile the tests' own code a second time (it checks lockprof's code, not the
// drivers'). What the instrumentation changes (generated code, descriptor counts), the tests
// ask of the binary itself (lockprof_bin_has_asan, cli/cli_runner.hpp): its --version prints the
// flags it was compiled with.
#pragma once

#include <cstdlib>

namespace lockprof::test {

inline const char* lockprof_bin() {
    static const char* const bin = [] {
        const char* chosen = std::getenv("LOCKPROF_TEST_BIN");
        return chosen && *chosen ? chosen : LOCKPROF_BUILT_BIN;
    }();
    return bin;
}

}  // namespace lockprof::test

// Where the tests spell the binary: a C string.
#define LOCKPROF_BIN (::lockprof::test::lockprof_bin())
