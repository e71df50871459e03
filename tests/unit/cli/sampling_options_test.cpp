// --call-graph's value: fp, dwarf and dwarf,SIZE accepted; other methods, sizes that are not a
// positive multiple of 8 within the kernel's limit, and junk refused with a UsageError.
#include "cli/sampling_options.hpp"

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"

namespace lockprof::cli {
namespace {

using Method = CallGraphRequest::Method;

TEST(ParseCallGraph, FpAndDwarfWithTheDefaultSize) {
    EXPECT_EQ(parse_call_graph("fp").method, Method::fp);
    const auto dwarf = parse_call_graph("dwarf");
    EXPECT_EQ(dwarf.method, Method::dwarf);
    EXPECT_EQ(dwarf.stack_size, kDefaultDwarfStack);
}

TEST(ParseCallGraph, DwarfWithASize) {
    EXPECT_EQ(parse_call_graph("dwarf,16384").stack_size, 16384u);
    EXPECT_EQ(parse_call_graph("dwarf,8").stack_size, 8u);
    EXPECT_EQ(parse_call_graph("dwarf,65528").stack_size, kMaxDwarfStack);
}

std::string error_of(const std::string& value) {
    try {
        parse_call_graph(value);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

TEST(ParseCallGraph, UnsupportedMethodNamesTheSupportedOnes) {
    const std::string lbr = error_of("lbr");
    EXPECT_NE(lbr.find("'lbr'"), std::string::npos) << lbr;
    EXPECT_NE(lbr.find("fp"), std::string::npos) << lbr;
    EXPECT_NE(lbr.find("dwarf"), std::string::npos) << lbr;
    EXPECT_EQ(lbr.find('\n'), std::string::npos) << lbr;
    EXPECT_FALSE(error_of("").empty());
    EXPECT_FALSE(error_of("fp,8192").empty());
}

TEST(ParseCallGraph, BadSizesAreRefused) {
    for (const char* value : {"dwarf,0", "dwarf,abc", "dwarf,", "dwarf,65536", "dwarf,65529",
                              "dwarf,100", "dwarf,-8", "dwarf,8k", "dwarf,99999999999999"}) {
        const std::string message = error_of(value);
        EXPECT_NE(message.find("multiple of 8"), std::string::npos) << value << ": " << message;
        EXPECT_NE(message.find("65528"), std::string::npos) << value;
    }
}

}  // namespace
}  // namespace lockprof::cli
