// Parsing a subcommand's arguments with Boost.Program_options, the same way for every command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

namespace lockprof::cli {

// Parses `args` against `options` (what --help lists) and `operands` (hidden options that take
// the positional arguments, as `positional` assigns them: the input file, say). A Boost error
// becomes a one-line UsageError that points at `lockprof COMMAND --help`.
boost::program_options::variables_map parse_arguments(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& options, std::string_view command,
    const boost::program_options::options_description& operands = {},
    const boost::program_options::positional_options_description& positional = {});

}  // namespace lockprof::cli
