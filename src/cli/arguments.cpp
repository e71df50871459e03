#include "cli/arguments.hpp"

#include <fmt/format.h>

#include "lockprof/common/error.hpp"

namespace lockprof::cli {

namespace po = boost::program_options;

po::variables_map parse_arguments(const std::vector<std::string>& args,
                                  const po::options_description& options, std::string_view command,
                                  const po::options_description& operands,
                                  const po::positional_options_description& positional) {
    po::options_description all;
    all.add(options).add(operands);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw UsageError(
            fmt::format("{}: {}; see `lockprof {} --help`", command, e.what(), command));
    }
    return vm;
}

}  // namespace lockprof::cli
