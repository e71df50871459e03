// Column-aligned text tables for the terminal.
#pragma once

#include <string>
#include <vector>

#include "lockprof/common/number_format.hpp"

namespace lockprof::report {

class TextTable {
  public:
    enum class Align { left, right };
    void set_header(std::vector<std::string> header, std::vector<Align> align);
    void add_row(std::vector<std::string> row);
    std::string render(const std::string& indent = "") const;

  private:
    std::vector<std::string> header_;
    std::vector<Align> align_;
    std::vector<std::vector<std::string>> rows_;
};

// The number formatters' earlier names, kept for run_report.cpp and cli/ (lockprof/common/
// number_format.hpp is their home).
inline std::string si(double value) {
    return format_si(value);
}
inline std::string number(double value) {
    return format_table_number(value);
}

}  // namespace lockprof::report
