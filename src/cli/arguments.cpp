#include "cli/arguments.hpp"

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"

namespace lockprof::cli {

namespace po = boost::program_options;

namespace {

// The option an unknown `--name[=value]` was meant to be: the only long option that starts
// with it (an abbreviation), else the nearest spelling; "" when nothing is close.
std::string suggestion(const std::string& given, const po::options_description& options) {
    const std::string name = given.substr(0, given.find('='));
    std::vector<std::string> names, started;
    for (const auto& option : options.options()) {
        if (option->long_name().empty()) continue;
        names.push_back("--" + option->long_name());
        if (name.size() > 2 && names.back().rfind(name, 0) == 0) started.push_back(names.back());
    }
    return started.size() == 1 ? started.front() : did_you_mean(name, names);
}

// The values an error_with_option_name substitutes into its message (a protected member, reached
// through a pointer to member formed in a derived class).
struct SubstitutionsOf : po::error_with_option_name {
    static auto member() { return &SubstitutionsOf::m_substitutions; }
};

}  // namespace

std::string boost_message(const po::error& e) {
    const auto* named = dynamic_cast<const po::error_with_option_name*>(&e);
    if (!named) return e.what();
    po::error_with_option_name copy = *named;  // what() caches its message: leave `e` alone
    for (auto& [name, value] : copy.*SubstitutionsOf::member()) {
        std::string safe;
        for (const char c : value)
            safe += c == '%' ? std::string("\xef\xbc\x85") : std::string(1, c);
        value = std::move(safe);
    }
    return copy.what();
}

po::variables_map parse_arguments(const std::vector<std::string>& args,
                                  const po::options_description& options, std::string_view command,
                                  const po::options_description& operands,
                                  const po::positional_options_description& positional,
                                  Notify notify) {
    const std::string prefix = command.empty() ? "" : fmt::format("{}: ", command);
    const std::string help =
        command.empty() ? "`lockprof --help`" : fmt::format("`lockprof {} --help`", command);
    po::options_description all;
    all.add(options).add(operands);
    po::variables_map vm;
    try {
        const int style =
            po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
        po::store(
            po::command_line_parser(args).options(all).positional(positional).style(style).run(),
            vm);
        if (notify == Notify::now) po::notify(vm);
    } catch (const po::unknown_option& e) {
        const std::string name = e.get_option_name();
        const std::string meant = suggestion(name, options);
        throw UsageError(
            fmt::format("{}unknown option '{}'{}; see {}", prefix, name,
                        meant.empty() ? "" : fmt::format(" (did you mean '{}'?)", meant), help));
    } catch (const po::error& e) {
        throw UsageError(fmt::format("{}{}; see {}", prefix, boost_message(e), help));
    }
    return vm;
}

void add_options_of(po::options_description& to, const po::options_description& from) {
    for (const auto& option : from.options()) to.add(option);
}

}  // namespace lockprof::cli
