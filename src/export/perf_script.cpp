#include "lockprof/export/perf_script.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"

namespace lockprof::exporting {
namespace {

using std::string_view;

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

string_view trim(string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

bool all_digits(string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

bool all_hex(string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    return true;
}

// "1234" or "1234/1235" (pid/tid).
bool is_pid(string_view s) {
    const auto slash = s.find('/');
    if (slash == string_view::npos) return all_digits(s);
    return all_digits(s.substr(0, slash)) && all_digits(s.substr(slash + 1));
}

// "1129.476852:"
bool is_time(string_view s) {
    if (s.size() < 2 || s.back() != ':') return false;
    s.remove_suffix(1);
    const auto dot = s.find('.');
    return dot != string_view::npos && all_digits(s.substr(0, dot)) &&
           all_digits(s.substr(dot + 1));
}

std::vector<string_view> tokens_of(string_view line, std::vector<string_view>& out) {
    out.clear();
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_space(line[i])) ++i;
        const auto start = i;
        while (i < line.size() && !is_space(line[i])) ++i;
        if (i > start) out.push_back(line.substr(start, i - start));
    }
    return out;
}

struct Header {
    string_view comm;
    string_view id;
    string_view event;         // without modifiers and trailing ':'
    std::uint64_t period = 0;  // 0 = not printed
    string_view inline_frame;  // "ip sym (dso)" after the event when perf ran without -g
};

// Parses a sample header ("comm  tid [cpu] time: period event: [ip sym (dso)]"), returning
// false for anything else. comm may contain spaces; the time token anchors the layout.
bool parse_header(string_view line, std::vector<string_view>& tokens, Header& h) {
    tokens_of(line, tokens);
    if (tokens.size() < 3) return false;
    std::size_t time = 0;
    for (std::size_t i = 2; i < tokens.size(); ++i)
        if (is_time(tokens[i])) {
            time = i;
            break;
        }
    std::size_t pid = 0, after = 0;
    if (time) {
        pid = time - 1;
        if (tokens[pid].front() == '[' && tokens[pid].back() == ']') --pid;  // [cpu]
        if (pid == 0 || !is_pid(tokens[pid])) return false;
        after = time + 1;
    } else {
        for (std::size_t i = 1; i < tokens.size(); ++i)
            if (is_pid(tokens[i])) {
                pid = i;
                break;
            }
        if (!pid) return false;
        after = pid + 1;
    }
    std::size_t event = 0;
    for (std::size_t i = after; i < tokens.size(); ++i) {
        const auto t = tokens[i];
        if (t.front() == '[' && t.back() == ']') continue;  // [cpu] when time is not printed
        if (all_digits(t)) {
            std::from_chars(t.data(), t.data() + t.size(), h.period);
            continue;
        }
        if (t.size() > 1 && t.back() == ':') {
            event = i;
            break;
        }
        return false;
    }
    if (!event) return false;
    h.comm = string_view(tokens[0].data(),
                         static_cast<std::size_t>(tokens[pid - 1].data() + tokens[pid - 1].size() -
                                                  tokens[0].data()));
    h.id = tokens[pid];
    auto ev = tokens[event];
    ev.remove_suffix(1);
    h.event = ev.substr(0, ev.find(':'));  // "cpu-clock:pppH" -> "cpu-clock"
    const auto* rest = tokens[event].data() + tokens[event].size();
    h.inline_frame =
        trim(string_view(rest, static_cast<std::size_t>(line.data() + line.size() - rest)));
    return true;
}

struct Frame {
    string_view address_text;  // hex, parsed only when the module does not settle kernel/user
    string_view symbol;
    string_view module;
};

// "ffffffff81775b9a elf_load+0x28a ([kernel.kallsyms])"; the module is the last balanced
// parenthesised group, so "(/tmp/x (deleted))" stays whole.
bool parse_frame(string_view line, Frame& f) {
    line = trim(line);
    const auto space = line.find_first_of(" \t");
    if (space == string_view::npos) return false;
    const auto address = line.substr(0, space);
    if (!all_hex(address) || address.size() > 16) return false;
    f.address_text = address;
    auto rest = trim(line.substr(space + 1));
    f.module = {};
    if (!rest.empty() && rest.back() == ')') {
        int depth = 0;
        for (std::size_t i = rest.size(); i-- > 0;) {
            if (rest[i] == ')') ++depth;
            if (rest[i] == '(' && --depth == 0) {
                if (i == 0 || is_space(rest[i - 1])) {
                    f.module = rest.substr(i + 1, rest.size() - i - 2);
                    rest = trim(rest.substr(0, i));
                }
                break;
            }
        }
    }
    // Strip the "+0x1c" offset perf prints since Linux 4.8.
    if (const auto plus = rest.rfind("+0x");
        plus != string_view::npos && plus > 0 && all_hex(rest.substr(plus + 3)))
        rest = rest.substr(0, plus);
    f.symbol = rest;
    return true;
}

bool is_kernel(const Frame& f) {
    if (const int k = kernel_by_module(f.module); k >= 0) return k == 1;
    std::uint64_t address = 0;
    std::from_chars(f.address_text.data(), f.address_text.data() + f.address_text.size(), address,
                    16);
    return is_kernel_address(address);
}

// Appends `s` to `out` as sanitize_frame() makes a frame name: ';', control characters and
// invalid UTF-8 rewritten, so every folded line is one the folded reader takes back. Names that
// are plain printable ASCII without ';' (nearly all) are appended as they are.
void append_clean(std::string& out, string_view s) {
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);   // "sym +0x10": "sym"
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);  // as sanitize_frame()
    const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c >= 0x20 && c < 0x7f && c != ';';
    });
    if (plain)
        out.append(s);
    else
        out += sanitize_frame(s);
}

// Appends the folded name of a frame to `out` (append_clean), unknown symbols named after their
// module, kernel frames suffixed.
void append_frame(std::string& out, string_view symbol, string_view module, bool kernel,
                  bool annotate_kernel) {
    if (symbol.empty() || symbol == "[unknown]") {
        if (module.empty() || module == "[unknown]") {
            out += "[unknown]";
        } else {
            auto base = module;
            if (const auto slash = base.rfind('/'); slash != string_view::npos)
                base = base.substr(slash + 1);
            if (base.empty()) {
                out += "[unknown]";
            } else if (base.starts_with('[') && base.ends_with(']')) {
                append_clean(out, base);
            } else {
                out += '[';
                append_clean(out, base);
                out += ']';
            }
        }
    } else {
        append_clean(out, symbol);
    }
    if (module == "inlined")
        out += "_[i]";
    else if (annotate_kernel && kernel)
        out += "_[k]";
}

// Reads lines in large blocks; views stay valid until the next call.
class LineReader {
  public:
    explicit LineReader(std::istream& in) : in_(in), buffer_(1 << 20) {}

    bool next(string_view& line) {
        while (true) {
            const auto* start = buffer_.data() + begin_;
            const auto* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
            if (nl) {
                line = string_view(start, static_cast<std::size_t>(nl - start));
                begin_ += line.size() + 1;
                return true;
            }
            if (eof_) {
                if (begin_ == end_) return false;
                line = string_view(start, end_ - begin_);
                begin_ = end_;
                return true;
            }
            // Keep the partial line, grow if one line fills the whole buffer.
            std::memmove(buffer_.data(), start, end_ - begin_);
            end_ -= begin_;
            begin_ = 0;
            if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
            in_.read(buffer_.data() + end_, static_cast<std::streamsize>(buffer_.size() - end_));
            const auto got = static_cast<std::size_t>(in_.gcount());
            end_ += got;
            if (got == 0 || !in_) eof_ = true;
            if (in_.bad()) throw Error("reading perf script input failed; check the file");
        }
    }

  private:
    std::istream& in_;
    std::vector<char> buffer_;
    std::size_t begin_ = 0, end_ = 0;
    bool eof_ = false;
};

}  // namespace

int kernel_by_module(string_view module) {
    if (module.starts_with("[kernel.") || module == "[vmlinux]" ||
        module.starts_with("[guest.kernel"))
        return 1;
    // Kernel modules print as "[name]"; vsyscall is a user-visible page in the kernel half.
    if (module.starts_with('/') || module == "[vsyscall]") return 0;
    return -1;
}

PerfSampleFolder::PerfSampleFolder(const std::string& filename, const PerfScriptOptions& options,
                                   PerfScriptReport& report)
    : filename_(filename), options_(options), report_(report), chosen_(options.event) {}

PerfSampleFolder::~PerfSampleFolder() = default;

void PerfSampleFolder::start_sample(string_view comm, string_view id, string_view event,
                                    std::uint64_t period) {
    finish_sample();
    in_sample_ = true;
    ++report_.samples;
    if (chosen_.empty()) chosen_ = std::string(event);
    use_sample_ = chosen_ == "all" || event == chosen_;
    if (!use_sample_) {
        ++report_.other_event;
        if (others_.find(event) == others_.end()) others_.emplace(event);
        return;
    }
    weight_ = options_.weight_by_period && period ? period : 1;
    root_.clear();
    if (options_.root != PerfScriptOptions::Root::none) {
        append_clean(root_, comm);
        if (options_.root == PerfScriptOptions::Root::comm_pid) {
            root_ += '-';
            root_ += id;
        }
    }
    frame_text_.clear();
    frame_ends_.clear();
}

void PerfSampleFolder::add_frame(string_view symbol, string_view module, bool kernel) {
    if (!use_sample_) return;
    append_frame(frame_text_, symbol, module, kernel, options_.annotate_kernel);
    frame_ends_.push_back(frame_text_.size());
}

void PerfSampleFolder::finish_sample() {
    if (!in_sample_) return;
    in_sample_ = false;
    if (!use_sample_) return;
    stack_.clear();
    stack_ += root_;
    for (std::size_t i = frame_ends_.size(); i-- > 0;) {
        const std::size_t begin = i == 0 ? 0 : frame_ends_[i - 1];
        if (!stack_.empty()) stack_ += ';';
        stack_.append(frame_text_, begin, frame_ends_[i] - begin);
    }
    if (stack_.empty()) return;  // no process frame and no callchain: nothing to place
    // The total (the flamegraph's 100%) must stay a count: periods can be up to 2^64-1.
    if (weight_ > std::numeric_limits<std::uint64_t>::max() - total_) {
        problem(report_.lines,
                fmt::format("sample period {} takes the total over 2^64-1; left out", weight_), "");
        return;
    }
    total_ += weight_;
    ++report_.folded;
    if (auto it = counts_.find(string_view(stack_)); it != counts_.end())
        it->second += weight_;
    else
        counts_.emplace(stack_, weight_);
}

void PerfSampleFolder::problem(std::size_t where, const std::string& why,
                               std::string_view strict_hint) {
    auto text = fmt::format("{}:{}: {}", filename_, where, why);
    if (options_.strict) throw UsageError(text + std::string(strict_hint));
    ++report_.skipped;
    if (report_.problems.size() < kMaxReportedProblems) report_.problems.push_back(text);
}

FoldedStacks PerfSampleFolder::result() {
    finish_sample();
    report_.event = chosen_;
    report_.other_events.assign(others_.begin(), others_.end());
    FoldedStacks folded;
    for (const auto& [st, w] : counts_) folded.add_line(st, w);
    return folded;
}

FoldedStacks fold_perf_script(std::istream& in, const std::string& filename,
                              const PerfScriptOptions& options, PerfScriptReport& report) {
    PerfSampleFolder folder(filename, options, report);
    LineReader reader(in);
    std::vector<string_view> tokens;
    string_view line;
    Header header;
    Frame frame;
    while (reader.next(line)) {
        ++report.lines;
        const auto content = trim(line);
        if (content.empty()) {
            folder.finish_sample();
            continue;
        }
        if (content.front() == '#') continue;  // perf script --header comments
        // perf indents callchain entries with a tab; headers never start with one.
        if (line.front() != '\t' && parse_header(line, tokens, header)) {
            folder.start_sample(header.comm, header.id, header.event, header.period);
            if (!header.inline_frame.empty() && parse_frame(header.inline_frame, frame))
                folder.add_frame(frame.symbol, frame.module, is_kernel(frame));
            continue;
        }
        if (folder.in_sample() && parse_frame(content, frame)) {
            folder.add_frame(frame.symbol, frame.module, is_kernel(frame));
            continue;
        }
        folder.problem(report.lines,
                       folder.in_sample()
                           ? "unrecognised line in a sample (expected 'ADDRESS SYMBOL (MODULE)')"
                           : "unrecognised line (expected a sample header 'COMM PID TIME: "
                             "EVENT:')",
                       "; is this `perf script` output? (run without --strict to skip such "
                       "lines)");
    }
    // Not one sample among lines that are not perf script: the wrong file, an error rather
    // than an empty profile. Empty input (or only comments) stays an empty profile.
    if (report.samples == 0 && report.skipped > 0)
        throw UsageError(fmt::format(
            "{}: none of its {} lines is `perf script` output ({}); give the text `perf script` "
            "prints",
            filename, report.lines, report.problems.front()));
    return folder.result();
}

}  // namespace lockprof::exporting
