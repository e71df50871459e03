#include "lockprof/workload/cpu_order.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/common/number_format.hpp"

namespace lockprof::workload {

std::vector<int> parse_cpu_order(std::string_view text, const std::string& file, unsigned threads,
                                 const std::vector<int>& online) {
    std::vector<int> order;
    std::map<int, unsigned> line_of;  // CPU -> the line that listed it first
    unsigned line_number = 0;
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t end = text.find('\n', begin);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(begin, end - begin);
        begin = end + 1;
        ++line_number;
        if (const auto hash = line.find('#'); hash != std::string_view::npos)
            line = line.substr(0, hash);
        std::size_t i = 0;
        while (i < line.size()) {
            if (line[i] == ' ' || line[i] == '\t' || line[i] == ',' || line[i] == '\r') {
                ++i;
                continue;
            }
            std::size_t j = i;
            while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != ',' &&
                   line[j] != '\r')
                ++j;
            const std::string_view word = line.substr(i, j - i);
            i = j;
            int cpu = -1;
            const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), cpu);
            if (ec != std::errc() || ptr != word.data() + word.size() || cpu < 0)
                throw UsageError(fmt::format(
                    "--cpu-order: {} line {}: '{}' is not a CPU number; list CPU numbers "
                    "(0 2 1 3), separated by spaces, commas or newlines, # for comments",
                    file, line_number, word));
            if (!std::binary_search(online.begin(), online.end(), cpu))
                throw UsageError(fmt::format(
                    "--cpu-order: {} line {}: CPU {} is not online (online: {}); list only "
                    "CPUs in /sys/devices/system/cpu/online",
                    file, line_number, cpu, fmt::join(online, ",")));
            if (const auto seen = line_of.find(cpu); seen != line_of.end())
                throw UsageError(fmt::format(
                    "--cpu-order: {} line {}: CPU {} is listed twice (first on line {}); each "
                    "worker needs a CPU of its own, so list every CPU once",
                    file, line_number, cpu, seen->second));
            line_of.emplace(cpu, line_number);
            order.push_back(cpu);
        }
    }
    if (order.size() < threads)
        throw UsageError(fmt::format(
            "--cpu-order: {} (lines 1-{}) lists {} CPU(s), fewer than the {} of the "
            "largest --threads count (worker i runs on the i-th CPU); add CPUs or lower --threads",
            file, line_number, order.size(), threads_text(threads)));
    return order;
}

std::vector<int> online_cpus(const std::filesystem::path& root) {
    std::string text = first_line(root / "sys/devices/system/cpu/online");
    if (text.empty()) return {};
    try {
        std::vector<int> cpus = parse_cpu_list(text, "cpu-order");
        std::sort(cpus.begin(), cpus.end());
        return cpus;
    } catch (const UsageError&) {
        return {};
    }
}

std::vector<int> read_cpu_order(const std::filesystem::path& file, unsigned threads,
                                const std::filesystem::path& root) {
    std::ifstream in(file);
    if (!in)
        throw UsageError(
            fmt::format("--cpu-order: cannot read {}: {}; give a text file listing CPU numbers",
                        file.string(), std::error_code(errno, std::generic_category()).message()));
    std::ostringstream text;
    text << in.rdbuf();
    std::vector<int> online = online_cpus(root);
    if (online.empty())
        throw UsageError(fmt::format(
            "--cpu-order: {}: cannot tell which CPUs are online ({} is unreadable); use --pin "
            "with a CPU list instead",
            file.string(), (root / "sys/devices/system/cpu/online").string()));
    return parse_cpu_order(text.str(), file.string(), threads, online);
}

}  // namespace lockprof::workload
