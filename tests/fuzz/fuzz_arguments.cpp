// Command lines (src/cli/arguments.cpp, parse_arguments: every subcommand's options and operands,
// no prefix guessing). The input is the argument list, one argument per line; the options are of
// the kinds the subcommands declare.
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "fuzz_support.hpp"

namespace po = boost::program_options;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const po::options_description options = [] {
        po::options_description o("Options");
        o.add_options()("help,h", "show this help")(
            "threads,t", po::value<std::string>()->default_value("1"))("sample", po::bool_switch())(
            "sample-event", po::value<std::string>())("sample-period", po::value<std::string>())(
            "output,o", po::value<std::string>())("event,e", po::value<std::string>())(
            "strict-events", po::bool_switch());
        return o;
    }();
    static const po::options_description operands = [] {
        po::options_description o;
        o.add_options()("file", po::value<std::vector<std::string>>());
        return o;
    }();
    static const po::positional_options_description positional = [] {
        po::positional_options_description p;
        p.add("file", 2);
        return p;
    }();
    std::vector<std::string> args;
    const std::string_view input = lockprof::fuzz::text(data, size);
    std::size_t pos = 0;
    while (pos <= input.size() && args.size() < 64) {
        const std::size_t eol = std::min(input.find('\n', pos), input.size());
        args.emplace_back(input.substr(pos, eol - pos));
        pos = eol + 1;
    }
    lockprof::fuzz::refusals_only([&] {
        (void)lockprof::cli::parse_arguments(args, options, size % 2 ? "compare" : "", operands,
                                             positional);
    });
    return 0;
}
