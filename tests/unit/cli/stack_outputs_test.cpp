#include "cli/stack_outputs.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/arguments.hpp"
#include "cli/sampling_options.hpp"
#include "lockprof/common/error.hpp"
#include "support/temp_dir.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

// A command line parsed the way `record` parses it: the shared sampling options with the
// stack outputs.
po::variables_map parse(const StackOutputs& stacks, const std::vector<std::string>& args) {
    po::options_description options;
    add_options_of(options, SamplingOptions("sample", 2, "").options());
    add_options_of(options, stacks.options());
    return parse_arguments(args, options, "test");
}

SampledStacks two_stacks() {
    SampledStacks sampled;
    sampled.stacks.add({"main", "spin"}, 3);
    sampled.stacks.add({"main", "work"}, 1);
    sampled.labels.title = "lockprof record: test";
    sampled.profile = [] {
        exporting::pprof::Profile p;
        p.sample_types = {{"samples", "count"}};
        p.functions = {{1, "spin", "", "", 0}};
        p.locations = {{1, 0, 0x1000, {{1, 0}}}};
        p.samples = {{{1}, {3}, {}}};
        return p;
    };
    return sampled;
}

TEST(StackOutputs, EveryRowIsAnOptionThatImpliesSample) {
    const StackOutputs stacks("roots", "sym+0x1c pause");
    const SamplingOptions sampling("sample", 2, "");
    ASSERT_FALSE(stack_outputs().empty());
    for (const auto& output : stack_outputs()) {
        const std::string option = std::string("--") + output.name;
        EXPECT_NE(stacks.options().find_nothrow(output.name, false), nullptr) << option;
        EXPECT_TRUE(sampling.requested(parse(stacks, {option, "out"}))) << option;
    }
    EXPECT_FALSE(sampling.requested(parse(stacks, {})));
}

TEST(StackOutputs, WritesWhatEachRowRendersAndOnlyThose) {
    test::TempDir folder;
    for (const auto& output : stack_outputs()) {
        StackOutputs stacks("roots", "sym+0x1c pause");
        const auto path = folder.path / output.name;
        stacks.read(parse(stacks, {std::string("--") + output.name, path.string()}));
        EXPECT_TRUE(stacks.any());
        int calls = 0;
        stacks.write([&] { return ++calls, two_stacks(); });
        EXPECT_EQ(calls, 1);
        EXPECT_EQ(test::read_all(path), output.render(two_stacks())) << output.name;
        EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder.path),
                                std::filesystem::directory_iterator()),
                  1);
        std::filesystem::remove(path);
    }
}

TEST(StackOutputs, NothingAskedForRendersNothing) {
    StackOutputs stacks("roots", "sym+0x1c pause");
    stacks.read(parse(stacks, {}));
    EXPECT_FALSE(stacks.any());
    EXPECT_FALSE(stacks.instruction_leaf());
    stacks.write([]() -> SampledStacks {
        ADD_FAILURE() << "rendered without an output";
        return {};
    });
}

TEST(StackOutputs, ChecksPathsAndLeafWhenRead) {
    StackOutputs stacks("roots", "sym+0x1c pause");
    for (const auto& output : stack_outputs())
        EXPECT_THROW(
            stacks.read(parse(stacks, {std::string("--") + output.name, "/nonexistent-dir/out"})),
            UsageError)
            << output.name;
    EXPECT_THROW(stacks.read(parse(stacks, {"--leaf", "bogus"})), UsageError);
    stacks.read(parse(stacks, {"--leaf", "instruction"}));
    EXPECT_TRUE(stacks.instruction_leaf());
}

TEST(StackOutputs, HelpNamesEveryRowAndTheCommandsRoots) {
    std::ostringstream printed;
    printed << StackOutputs("the process names", "sym+0x1c pause").options();
    std::string help;  // Boost's wrapping undone
    for (char c : printed.str())
        if (!(std::isspace(static_cast<unsigned char>(c)) && (help.empty() || help.back() == ' ')))
            help += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
    for (const auto& output : stack_outputs())
        EXPECT_NE(help.find(std::string("--") + output.name + " arg"), std::string::npos) << help;
    EXPECT_NE(help.find("the process names"), std::string::npos) << help;
    EXPECT_NE(help.find("sym+0x1c pause"), std::string::npos) << help;
}

}  // namespace
}  // namespace lockprof::cli
