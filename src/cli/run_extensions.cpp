#include "cli/run_extension.hpp"

namespace lockprof::cli {

// One line per extension, in the order their outputs appear.
std::vector<std::unique_ptr<RunExtension>> make_run_extensions() {
    std::vector<std::unique_ptr<RunExtension>> all;
    return all;
}

}  // namespace lockprof::cli
