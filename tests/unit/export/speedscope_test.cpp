// speedscope's file format from folded stacks: one sampled profile per root frame, frames
// shared, samples as frame indices without the root, weights summing to endValue.
#include "lockprof/export/speedscope.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace lockprof::exporting {
namespace {

TEST(Speedscope, OneSampledProfilePerRootWithSharedFrames) {
    FoldedStacks stacks;
    stacks.add({"tas/2t", "worker_main", "measured_loop", "xchg"}, 30);
    stacks.add({"tas/2t", "worker_main", "measured_loop"}, 10);
    stacks.add({"cas/2t", "worker_main", "measured_loop"}, 5);
    stacks.add({"cas/2t"}, 2);
    const auto doc = nlohmann::json::parse(
        to_speedscope(stacks, {"lockprof: tas, cas", "lockprof 0.1.0", "nanoseconds"}));
    EXPECT_EQ(doc.at("$schema"), "https://www.speedscope.app/file-format-schema.json");
    EXPECT_EQ(doc.at("name"), "lockprof: tas, cas");
    EXPECT_EQ(doc.at("exporter"), "lockprof 0.1.0");
    const auto& frames = doc.at("shared").at("frames");
    std::vector<std::string> names;
    for (const auto& f : frames) names.push_back(f.at("name"));
    // Each name once: worker_main and measured_loop are shared by both cells.
    EXPECT_EQ(std::count(names.begin(), names.end(), "worker_main"), 1);
    EXPECT_EQ(std::count(names.begin(), names.end(), "measured_loop"), 1);
    const auto& profiles = doc.at("profiles");
    ASSERT_EQ(profiles.size(), 2u);
    for (const auto& p : profiles) {
        EXPECT_EQ(p.at("type"), "sampled");
        EXPECT_EQ(p.at("unit"), "nanoseconds");
        EXPECT_EQ(p.at("startValue"), 0);
        ASSERT_EQ(p.at("samples").size(), p.at("weights").size());
        std::uint64_t sum = 0;
        for (const auto& w : p.at("weights")) sum += w.get<std::uint64_t>();
        EXPECT_EQ(p.at("endValue").get<std::uint64_t>(), sum);
        for (const auto& sample : p.at("samples"))
            for (const auto& index : sample) EXPECT_LT(index.get<std::size_t>(), frames.size());
    }
    const auto& cas = profiles[0];  // profiles in root-name order
    EXPECT_EQ(cas.at("name"), "cas/2t");
    EXPECT_EQ(cas.at("endValue"), 7);
    const auto& tas = profiles[1];
    EXPECT_EQ(tas.at("name"), "tas/2t");
    EXPECT_EQ(tas.at("endValue"), 40);
    // The root is the profile, not a frame of its samples: the deepest tas stack is 3 frames,
    // leaf last.
    bool found = false;
    for (const auto& sample : tas.at("samples"))
        if (sample.size() == 3) {
            EXPECT_EQ(names.at(sample[0].get<std::size_t>()), "worker_main");
            EXPECT_EQ(names.at(sample[2].get<std::size_t>()), "xchg");
            found = true;
        }
    EXPECT_TRUE(found);
    // A stack of only its root frame is a sample of that frame.
    bool root_only = false;
    for (const auto& sample : cas.at("samples"))
        root_only |= sample.size() == 1 && names.at(sample[0].get<std::size_t>()) == "cas/2t";
    EXPECT_TRUE(root_only);
}

TEST(Speedscope, NoStacksIsAValidEmptyFile) {
    const auto doc = nlohmann::json::parse(to_speedscope({}, {"x", "lockprof", "none"}));
    EXPECT_TRUE(doc.at("profiles").empty());
    EXPECT_TRUE(doc.at("shared").at("frames").empty());
}

}  // namespace
}  // namespace lockprof::exporting
