#include "lockprof/export/speedscope.hpp"

#include <map>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockprof::exporting {

namespace {

std::vector<std::string_view> split_frames(std::string_view stack) {
    std::vector<std::string_view> frames;
    for (std::size_t start = 0;;) {
        const std::size_t end = stack.find(';', start);
        frames.push_back(stack.substr(start, end - start));
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    return frames;
}

struct SampledProfile {
    nlohmann::json samples = nlohmann::json::array();
    nlohmann::json weights = nlohmann::json::array();
    std::uint64_t total = 0;
};

}  // namespace

std::string to_speedscope(const FoldedStacks& stacks, const SpeedscopeOptions& options) {
    nlohmann::json frames = nlohmann::json::array();
    std::map<std::string, std::size_t, std::less<>> frame_index;
    const auto index_of = [&](std::string_view name) {
        auto it = frame_index.find(name);
        if (it == frame_index.end()) {
            it = frame_index.emplace(std::string(name), frames.size()).first;
            frames.push_back({{"name", it->first}});
        }
        return it->second;
    };
    std::map<std::string, SampledProfile> profiles;  // by root frame, in name order
    for (const auto& [stack, weight] : stacks.stacks()) {
        if (weight == 0) continue;
        const auto names = split_frames(stack);
        auto& profile = profiles[std::string(names.front())];
        nlohmann::json sample = nlohmann::json::array();
        for (std::size_t i = names.size() == 1 ? 0 : 1; i < names.size(); ++i)
            sample.push_back(index_of(names[i]));
        profile.samples.push_back(std::move(sample));
        profile.weights.push_back(weight);
        profile.total += weight;
    }
    nlohmann::json out_profiles = nlohmann::json::array();
    for (auto& [name, p] : profiles)
        out_profiles.push_back({{"type", "sampled"},
                                {"name", name},
                                {"unit", options.unit},
                                {"startValue", 0},
                                {"endValue", p.total},
                                {"samples", std::move(p.samples)},
                                {"weights", std::move(p.weights)}});
    const nlohmann::json doc = {
        {"$schema", "https://www.speedscope.app/file-format-schema.json"},
        {"shared", {{"frames", std::move(frames)}}},
        {"profiles", std::move(out_profiles)},
        {"name", options.name},
        {"activeProfileIndex", 0},
        {"exporter", options.exporter},
    };
    return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace lockprof::exporting
