// Test-only: a sampled run's result file (--samples-out) as a pprof profile, through the
// library (report::read_result, analysis::pprof_profile, exporting::pprof::write_pprof), for
// the `go tool pprof` integration test until the CLI writes pprof files itself.
//   lockprof_pprof_writer SAMPLES.json OUT.pb.gz
#include <cstdio>
#include <exception>

#include "lockprof/analysis/pprof_profile.hpp"
#include "lockprof/export/pprof.hpp"
#include "lockprof/report/json.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s SAMPLES.json OUT.pb.gz\n", argv[0]);
        return 2;
    }
    try {
        const auto run = lockprof::report::read_result(argv[1]);
        const auto profile = lockprof::analysis::pprof_profile(run);
        lockprof::exporting::pprof::write_pprof(profile, argv[2]);
        std::printf("%zu samples\n", profile.samples.size());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lockprof_pprof_writer: %s\n", e.what());
        return 1;
    }
    return 0;
}
