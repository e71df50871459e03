// Command-line front end: subcommand dispatch and the shared error-to-exit-code policy.
#pragma once

#include <string>
#include <vector>

namespace lockprof::cli {

// A subcommand receives its arguments (without the program and subcommand names) and the
// full argv for provenance. Returns the process exit code; throws lockprof::Error on failure.
struct Command {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>& args, const std::vector<std::string>& argv);
    // run and record: SIGINT/SIGTERM stop the measurement and everything is written
    // (interrupts::MeasurementScope, held from before the options are parsed).
    bool measures = false;
};

// All subcommands, in the order `lockprof --help` lists them.
const std::vector<Command>& commands();

int main(int argc, char** argv);

// The subcommands (one file each in src/cli/).
int run_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int list_locks_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int annotate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int convert_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int events_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int doctor_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int flamegraph_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int fold_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int report_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int record_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int compare_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);

}  // namespace lockprof::cli
