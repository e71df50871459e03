#include "cli/run_extension.hpp"

namespace lockprof::cli {

std::unique_ptr<RunExtension> make_pmu_extension();       // pmu_extension.cpp
std::unique_ptr<RunExtension> make_sampling_extension();  // sampling_extension.cpp
std::unique_ptr<RunExtension> make_report_extension();    // report_extension.cpp

// One line per extension, in the order their outputs appear.
std::vector<std::unique_ptr<RunExtension>> make_run_extensions() {
    std::vector<std::unique_ptr<RunExtension>> all;
    all.push_back(make_pmu_extension());
    all.push_back(make_sampling_extension());
    all.push_back(make_report_extension());  // last: sees what the others added
    return all;
}

}  // namespace lockprof::cli
