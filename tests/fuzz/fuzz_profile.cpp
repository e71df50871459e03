// INI profiles (`lockprof --profile FILE`, src/cli/profile.cpp): the key check and Boost's config
// parser, on keys of the kinds run's options have (strings, switches, defaults) and names like
// theirs, including a [section] one.
#include <string>

#include <boost/program_options.hpp>

#include "cli/profile.hpp"
#include "fuzz_support.hpp"

namespace po = boost::program_options;

namespace {

const po::options_description& profile_keys() {
    static const po::options_description keys = [] {
        po::options_description o;
        o.add_options()("lock", po::value<std::string>()->default_value("tas"))(
            "threads", po::value<std::string>()->default_value("1,2"))(
            "duration", po::value<std::string>())("trials", po::value<std::string>())(
            "acquires", po::value<std::string>())("critical-ns", po::value<std::string>())(
            "parallel-ns", po::value<std::string>())("shared-lines", po::value<std::string>())(
            "delay", po::value<std::string>())("latency", po::bool_switch())(
            "kernel", po::bool_switch())("event", po::value<std::string>())(
            "sample", po::bool_switch())("output", po::value<std::string>())(
            "report.threads", po::value<std::string>());
        return o;
    }();
    return keys;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    lockprof::fuzz::refusals_only([&] {
        po::variables_map vm;
        const char* argv[] = {"lockprof", "--threads=4"};  // the command line's value stays
        po::store(po::parse_command_line(2, argv, profile_keys()), vm);
        lockprof::cli::load_profile_text(lockprof::fuzz::text(data, size), "fuzz.ini",
                                         profile_keys(), vm);
        po::notify(vm);
        lockprof::fuzz::check(vm["threads"].as<std::string>() == "4",
                              "the command line wins over the profile");
    });
    return 0;
}
