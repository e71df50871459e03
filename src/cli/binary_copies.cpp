#include "cli/binary_copies.hpp"

#include <unistd.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

void add_binary_option(po::options_description& options) {
    options.add_options()(
        "binary", po::value<std::vector<std::string>>(),
        "a copy of a binary that ran (lockprof itself, a library), to resolve and disassemble "
        "its samples from instead of the path the run recorded; its build id must match "
        "(repeatable)");
}

void use_binary_copies(const po::variables_map& vm, workload::RunResult& run) {
    if (!vm.count("binary")) return;
    if (!run.sampling)
        throw UsageError("--binary: the result holds no sampling mappings to redirect");
    for (const auto& copy : vm["binary"].as<std::vector<std::string>>()) {
        if (access(copy.c_str(), R_OK) != 0)
            throw UsageError(
                fmt::format("--binary: cannot read '{}'; give the path of a copy of the binary "
                            "that ran",
                            copy));
        const auto r =
            symbols::redirect_modules(run.sampling->modules, copy, symbols::build_id_of(copy));
        if (!r.refusal.empty()) throw UsageError(r.refusal);
    }
}

}  // namespace lockprof::cli
