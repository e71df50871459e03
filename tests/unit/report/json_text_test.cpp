// json_text(): what every lockprof JSON file holds, even when a path is not UTF-8.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lockprof/report/json.hpp"

namespace lockprof::report {
namespace {

TEST(JsonText, BytesThatAreNotUtf8BecomeReplacementCharactersInsteadOfFailing) {
    // A command line with an output path in Latin-1 ('\xff'): dump() alone throws.
    const nlohmann::json doc = {{"command_line", "lockprof --output caf\xe9\xff.json"}};
    const std::string text = json_text(doc);
    const auto back = nlohmann::json::parse(text);
    EXPECT_EQ(back.at("command_line"), "lockprof --output caf\uFFFD\uFFFD.json");
    EXPECT_EQ(text.back(), '\n');
}

TEST(JsonText, IndentsAsAsked) {
    EXPECT_EQ(json_text({{"a", 1}}), "{\"a\":1}\n");
    EXPECT_EQ(json_text({{"a", 1}}, 2), "{\n  \"a\": 1\n}\n");
}

}  // namespace
}  // namespace lockprof::report
