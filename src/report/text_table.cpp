#include "lockprof/report/text_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace lockprof::report {

void TextTable::set_header(std::vector<std::string> header, std::vector<Align> align) {
    header_ = std::move(header);
    align_ = std::move(align);
}

void TextTable::add_row(std::vector<std::string> row) {
    rows_.push_back(std::move(row));
}

std::string TextTable::render(const std::string& indent) const {
    std::vector<std::size_t> width(header_.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    };
    measure(header_);
    for (const auto& row : rows_) measure(row);
    auto line = [&](const std::vector<std::string>& row) {
        std::string out = indent;
        for (std::size_t i = 0; i < width.size(); ++i) {
            const std::string cell = i < row.size() ? row[i] : "";
            const bool right = i < align_.size() && align_[i] == Align::right;
            out += right ? fmt::format("{:>{}}", cell, width[i])
                         : fmt::format("{:<{}}", cell, width[i]);
            if (i + 1 < width.size()) out += "  ";
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out + "\n";
    };
    std::string out = line(header_);
    for (const auto& row : rows_) out += line(row);
    return out;
}

}  // namespace lockprof::report
