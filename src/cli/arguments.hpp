// Parsing a subcommand's arguments with Boost.Program_options, the same way for every command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

namespace lockprof::cli {

// Whether parse_arguments runs po::notify, or leaves it to a caller that adds values to the map
// first (`run` reads its --profile into it).
enum class Notify { now, later };

// Parses `args` against `options` (what --help lists) and `operands` (hidden options that take
// the positional arguments, as `positional` assigns them: the input file, say).
// Long options must be spelt out in full: Boost's prefix guessing is off for every command, so
// `--sample` never quietly means `--sample-event`, `--thr` is refused rather than read as
// `--threads`, and a new option cannot change what an old command line means.
// A Boost error becomes a one-line UsageError that points at `lockprof COMMAND --help`; an
// unknown option suggests the one option it abbreviates, or else the nearest. `command` ""
// is the default command (`run`): no prefix, pointing at `lockprof --help`.
boost::program_options::variables_map parse_arguments(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& options, std::string_view command,
    const boost::program_options::options_description& operands = {},
    const boost::program_options::positional_options_description& positional = {},
    Notify notify = Notify::now);

// Boost.Program_options' one-line message for `e`, for every UsageError made of one. Boost fills
// its message by replacing each %name% placeholder with its value until none is left, so a value
// that holds its own placeholder (a profile line "%invalid_line%", an option value "%value%")
// made what() loop forever. '%' in the values becomes U+FF05 (a full-width '%') first.
std::string boost_message(const boost::program_options::error& e);

// Adds the options of `from` to `to` one by one, so they list under `to`'s caption: a command
// composes one help group from options it shares with others (pmu_options.hpp and friends).
void add_options_of(boost::program_options::options_description& to,
                    const boost::program_options::options_description& from);

}  // namespace lockprof::cli
