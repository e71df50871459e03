#include "cli/profile.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/arguments.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

void load_profile(const std::string& path, const po::options_description& options,
                  po::variables_map& vm) {
    std::ifstream file(path, std::ios::binary);
    if (!file)
        throw UsageError(fmt::format(
            "--profile: cannot read '{}'; give a path such as profiles/quick.ini", path));
    std::ostringstream text;
    text << file.rdbuf();
    load_profile_text(text.str(), path, options, vm);
}

void load_profile_text(std::string_view text, const std::string& path,
                       const po::options_description& options, po::variables_map& vm) {
    std::istringstream in{std::string(text)};
    std::vector<std::string> known;
    for (const auto& option : options.options()) known.push_back(option->long_name());

    std::string line, section;
    for (int number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        if (line[first] == '[') {
            const auto close = line.find(']', first);
            if (close == std::string::npos)
                throw UsageError(fmt::format("{}:{}: unterminated section header", path, number));
            section = line.substr(first + 1, close - first - 1);
            continue;
        }
        const auto equals = line.find('=');
        if (equals == std::string::npos)
            throw UsageError(fmt::format("{}:{}: expected 'key = value', got '{}'", path, number,
                                         line.substr(first)));
        std::string key = line.substr(first, equals - first);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        if (!section.empty()) key = section + "." + key;
        if (key == "profile")
            throw UsageError(
                fmt::format("{}:{}: a profile cannot include another profile", path, number));
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            const auto suggestion = did_you_mean(key, known);
            throw UsageError(fmt::format(
                "{}:{}: unknown key '{}'{}; keys are the long option "
                "names of `lockprof --help`",
                path, number, key,
                suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion)));
        }
    }
    try {
        std::istringstream config{std::string(text)};
        po::store(po::parse_config_file<char>(config, options), vm);
    } catch (const po::error& e) {
        throw UsageError(fmt::format("{}: {}", path, boost_message(e)));
    }
}

}  // namespace lockprof::cli
