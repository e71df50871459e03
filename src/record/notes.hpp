// A recording's notes (RecordResult::notes) as its pieces add them: each line once, however
// often it is said (a refusal repeated for every thread of a process).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace lockprof::record {

class Notes {
  public:
    explicit Notes(std::vector<std::string>& lines) : lines_(lines) {}
    void add(std::string line) {
        if (said_.insert(line).second) lines_.push_back(std::move(line));
    }

  private:
    std::vector<std::string>& lines_;
    std::set<std::string> said_;
};

}  // namespace lockprof::record
