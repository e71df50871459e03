// Column-aligned text tables for the terminal.
#pragma once

#include <string>
#include <vector>

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

}  // namespace lockprof::report
