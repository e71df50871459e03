#include "lockprof/analysis/notes.hpp"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace lockprof::analysis {
namespace {

// "a, b and c".
std::string join_and(const std::vector<std::string>& items) {
    if (items.empty()) return "";
    if (items.size() == 1) return items[0];
    std::vector<std::string> head(items.begin(), items.end() - 1);
    return fmt::format("{} and {}", fmt::join(head, ", "), items.back());
}

}  // namespace

std::string cells_text(const std::vector<CellRef>& cells, const std::vector<CellRef>& all) {
    std::vector<unsigned> order;
    std::map<unsigned, std::vector<std::string>> locks;
    for (const auto& c : cells) {
        if (!locks.count(c.threads)) order.push_back(c.threads);
        auto& list = locks[c.threads];
        if (std::find(list.begin(), list.end(), c.lock) == list.end()) list.push_back(c.lock);
    }
    std::vector<std::string> groups;
    for (unsigned threads : order) {
        const auto& list = locks[threads];
        const auto at_count = static_cast<std::size_t>(std::count_if(
            all.begin(), all.end(), [&](const CellRef& c) { return c.threads == threads; }));
        // Thread counts after the first say "all 3 at 2 threads" once the noun is known.
        if (list.size() == at_count && at_count > 1)
            groups.push_back(fmt::format("all {}{} at {}", at_count, groups.empty() ? " cells" : "",
                                         threads_text(threads)));
        else
            groups.push_back(fmt::format("{} at {}", fmt::join(list, ", "), threads_text(threads)));
    }
    return join_and(groups);
}

std::string pairs_text(const std::vector<PairRef>& pairs) {
    // "ttas, cas vs tas" per thread count, then thread counts that name the same pairs together.
    std::vector<unsigned> order;
    std::map<unsigned, std::vector<std::string>> others;
    std::map<unsigned, std::string> baseline;
    for (const auto& p : pairs) {
        if (!others.count(p.threads)) order.push_back(p.threads);
        others[p.threads].push_back(p.other);
        baseline[p.threads] = p.baseline;
    }
    std::vector<std::string> names;
    std::map<std::string, std::vector<unsigned>> threads_of;
    for (unsigned threads : order) {
        const std::string name =
            fmt::format("{} vs {}", fmt::join(others[threads], ", "), baseline[threads]);
        if (!threads_of.count(name)) names.push_back(name);
        threads_of[name].push_back(threads);
    }
    std::vector<std::string> out;
    for (const auto& name : names) {
        const auto& counts = threads_of[name];
        std::vector<std::string> numbers;
        for (unsigned t : counts) numbers.push_back(std::to_string(t));
        out.push_back(fmt::format("{} at {} thread{}", name, join_and(numbers),
                                  counts.size() == 1 && counts[0] == 1 ? "" : "s"));
    }
    return fmt::format("{}", fmt::join(out, "; "));
}

}  // namespace lockprof::analysis
