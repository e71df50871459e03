// Profiles: Boost.Program_options config files (key = value, # comments, [sections] prefix
// keys) naming a whole experiment. Values on the command line win over the profile's.
#pragma once

#include <string>
#include <string_view>

#include <boost/program_options.hpp>

namespace lockprof::cli {

// Checks every key of the file against `options` first (UsageError with file, line and a
// did-you-mean for unknown keys), then stores the values into `vm` without overriding values
// already stored from the command line.
void load_profile(const std::string& path,
                  const boost::program_options::options_description& options,
                  boost::program_options::variables_map& vm);

// load_profile on a profile's text, `path` naming it in messages: the parser itself, which
// load_profile calls after reading the file (and tests/fuzz/fuzz_profile.cpp feeds).
void load_profile_text(std::string_view text, const std::string& path,
                       const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm);

}  // namespace lockprof::cli
