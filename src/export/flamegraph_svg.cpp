#include "lockprof/export/flamegraph_svg.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "flamegraph_script.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/export/utf8.hpp"
#include "lockprof/export/xml.hpp"

namespace lockprof::exporting {
namespace {

constexpr double kXPad = 10;
constexpr std::uint32_t kNone = UINT32_MAX;
constexpr std::size_t kMaxVanishedListed = 20;

// --- the frame tree --------------------------------------------------------------------------

struct Node {
    std::uint32_t name = 0;
    std::uint32_t parent = kNone;
    std::uint32_t depth = 0;
    std::uint64_t after = 0;   // inclusive weight in the graph drawn (AFTER for a diff)
    std::uint64_t before = 0;  // inclusive weight in BEFORE (diff only)
    std::vector<std::uint32_t> children;
};

// A prefix tree over frames. Names are views into the FoldedStacks keys, which outlive it.
class Tree {
  public:
    Tree() {
        names_.push_back("all");
        nodes_.emplace_back();
    }

    void add(std::string_view stack, std::uint64_t weight, bool is_before) {
        std::uint32_t node = 0;
        bump(node, weight, is_before);
        std::size_t start = 0;
        while (start <= stack.size()) {
            auto end = stack.find(';', start);
            if (end == std::string_view::npos) end = stack.size();
            node = child(node, intern(stack.substr(start, end - start)));
            bump(node, weight, is_before);
            start = end + 1;
        }
    }

    // Children sorted by name (as flamegraph.pl does), so layout does not depend on input order.
    void sort_children() {
        for (auto& n : nodes_)
            std::sort(n.children.begin(), n.children.end(), [this](auto a, auto b) {
                return names_[nodes_[a].name] < names_[nodes_[b].name];
            });
    }

    const Node& node(std::uint32_t i) const { return nodes_[i]; }
    std::string_view name(const Node& n) const { return names_[n.name]; }
    std::size_t size() const { return nodes_.size(); }

    std::string path(std::uint32_t i) const {
        std::vector<std::string_view> parts;
        for (; i != 0; i = nodes_[i].parent) parts.push_back(names_[nodes_[i].name]);
        std::string out;
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
            if (!out.empty()) out += ';';
            out += *it;
        }
        return out;
    }

  private:
    static void bump_value(Node& n, std::uint64_t w, bool is_before) {
        (is_before ? n.before : n.after) += w;
    }
    void bump(std::uint32_t i, std::uint64_t w, bool is_before) {
        bump_value(nodes_[i], w, is_before);
    }

    std::uint32_t intern(std::string_view name) {
        auto [it, inserted] =
            name_ids_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
        if (inserted) names_.push_back(name);
        return it->second;
    }

    std::uint32_t child(std::uint32_t parent, std::uint32_t name) {
        const std::uint64_t key = (std::uint64_t{parent} << 32) | name;
        auto [it, inserted] =
            child_ids_.try_emplace(key, static_cast<std::uint32_t>(nodes_.size()));
        if (inserted) {
            Node n;
            n.name = name;
            n.parent = parent;
            n.depth = nodes_[parent].depth + 1;
            nodes_.push_back(std::move(n));
            nodes_[parent].children.push_back(it->second);
        }
        return it->second;
    }

    std::vector<std::string_view> names_;
    std::unordered_map<std::string_view, std::uint32_t> name_ids_;
    std::vector<Node> nodes_;
    std::unordered_map<std::uint64_t, std::uint32_t> child_ids_;
};

// --- text helpers ----------------------------------------------------------------------------

std::string escaped(std::string_view s) {
    std::string out;
    escape_xml(out, s);
    return out;
}

// Number of code points, for fitting labels (UTF-8 continuation bytes do not take space).
std::size_t display_length(std::string_view s) {
    std::size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
    return n;
}

// The first `chars` code points of `s`.
std::string_view prefix_chars(std::string_view s, std::size_t chars) {
    std::size_t i = 0;
    for (; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) {
            if (chars == 0) break;
            --chars;
        }
    }
    return s.substr(0, i);
}

std::string with_commas(std::uint64_t v) {
    auto digits = std::to_string(v);
    std::string out;
    const auto n = digits.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0 && (n - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// --- colours ---------------------------------------------------------------------------------

std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 1469598103934665603ull;
    for (char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    // Final avalanche so similar names (f1, f2) get visibly different colours.
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "symbol+0x1c mnemonic": a leaf frame naming the sampled instruction (--leaf=instruction).
bool is_instruction_frame(std::string_view name) {
    auto at = name.rfind("+0x");
    if (at == std::string_view::npos) return false;
    std::size_t i = at + 3, digits = 0;
    while (i < name.size() && std::isxdigit(static_cast<unsigned char>(name[i]))) ++i, ++digits;
    return digits > 0 && i + 1 < name.size() && name[i] == ' ' && name[i + 1] != ' ';
}

struct Rgb {
    int r, g, b;
};

// Stable per frame name (a hash, not the position), in hue families after flamegraph.pl:
// warm for user code, orange for kernel (_[k]), green for JIT (_[j]), aqua for inlined (_[i]),
// purple for instruction leaves, grey for the "all" root.
Rgb frame_colour(std::string_view name, bool is_root) {
    if (is_root) return {200, 200, 200};
    const auto h = fnv1a(name);
    const double v1 = static_cast<double>(h & 0xffff) / 65535.0;
    const double v2 = static_cast<double>((h >> 16) & 0xffff) / 65535.0;
    const double v3 = static_cast<double>((h >> 32) & 0xffff) / 65535.0;
    auto c = [](double v) { return static_cast<int>(std::lround(v)); };
    if (ends_with(name, "_[k]")) return {c(190 + 65 * v1), c(90 + 65 * v1), c(20 * v2)};
    if (ends_with(name, "_[j]")) return {c(50 * v2), c(180 + 60 * v1), c(50 * v3)};
    if (ends_with(name, "_[i]")) return {c(60 + 50 * v1), c(170 + 55 * v1), c(170 + 55 * v1)};
    if (is_instruction_frame(name)) return {c(140 + 50 * v1), c(80 + 40 * v2), c(200 + 55 * v3)};
    return {c(205 + 50 * v3), c(230 * v1), c(55 * v2)};
}

// Diff colour: red grew, blue shrank, intensity = |change| / largest |change| in the graph.
Rgb diff_colour(double delta, double max_delta) {
    if (delta == 0 || max_delta <= 0) return {235, 235, 235};
    const double intensity = std::min(1.0, std::fabs(delta) / max_delta);
    const int fade = static_cast<int>(std::lround(225 * (1 - intensity)));
    return delta > 0 ? Rgb{255, fade, fade} : Rgb{fade, fade, 255};
}

// --- layout and output -----------------------------------------------------------------------

void validate(const SvgOptions& o) {
    if (o.width < 100 || o.width > 1000000)
        throw UsageError(
            fmt::format("flamegraph width {} px is out of range; use 100..1000000", o.width));
    if (!(o.min_width_px >= 0) || !std::isfinite(o.min_width_px))
        throw UsageError(
            fmt::format("--minwidth {} is not a non-negative number of pixels", o.min_width_px));
    if (o.frame_height < 4 || o.frame_height > 200)
        throw UsageError(
            fmt::format("frame height {} px is out of range; use 4..200", o.frame_height));
    if (!(o.font_size > 0) || o.font_size > 100)
        throw UsageError(fmt::format("font size {} is out of range; use (0, 100]", o.font_size));
}

template <typename... T>
void emit(std::string& out, fmt::format_string<T...> format, T&&... args) {
    fmt::format_to(std::back_inserter(out), format, std::forward<T>(args)...);
}

struct Placed {
    std::uint32_t node;
    std::uint64_t offset;  // weight to the left of the frame, in the drawn profile
};

struct Vanished {
    std::string path;
    std::uint64_t before;
};

class Renderer {
  public:
    Renderer(const SvgOptions& o, bool diff) : o_(o), diff_(diff) {}

    std::string render(const Tree& tree, std::uint64_t total_after, std::uint64_t total_before,
                       const std::string& subtitle, const std::vector<Vanished>& vanished,
                       std::size_t vanished_count) {
        tree_ = &tree;
        total_after_ = total_after;
        total_before_ = total_before;
        place_frames();
        measure(subtitle, vanished);
        std::string out;
        out.reserve(placed_.size() * 220 + 16384);
        write_prologue(out, subtitle);
        write_frames(out);
        if (diff_) write_legend(out, vanished, vanished_count);
        emit(out, "</svg>\n");
        return out;
    }

  private:
    // Layout: every frame drawn with its offset, left to right; frames narrower than
    // min_width are left out together with their subtrees.
    void place_frames() {
        placed_.clear();
        max_depth_ = 0;
        if (total_after_ == 0) return;
        const double px_per_unit = (o_.width - 2 * kXPad) / static_cast<double>(total_after_);
        std::vector<Placed> stack{{0, 0}};
        while (!stack.empty()) {
            const auto p = stack.back();
            stack.pop_back();
            const auto& n = tree_->node(p.node);
            if (n.after == 0) continue;  // vanished from AFTER: nothing to draw
            if (static_cast<double>(n.after) * px_per_unit < o_.min_width_px) continue;
            placed_.push_back(p);
            max_depth_ = std::max(max_depth_, n.depth);
            std::uint64_t offset = p.offset;
            // Push in reverse so frames come out left to right (deterministic order).
            std::vector<Placed> kids;
            for (auto c : n.children) {
                kids.push_back({c, offset});
                offset += tree_->node(c).after;
            }
            stack.insert(stack.end(), kids.rbegin(), kids.rend());
        }
    }

    // The vertical layout (title block, frames, legend, details line) and the diff's
    // largest change, which sets full colour intensity.
    void measure(const std::string& subtitle, const std::vector<Vanished>& vanished) {
        max_delta_ = 0;
        if (diff_)
            for (const auto& p : placed_)
                max_delta_ = std::max(max_delta_, std::fabs(delta(p.node)));
        const double fh = o_.frame_height;
        const double fs = o_.font_size;
        top_ = fs * 2 + 36 + (subtitle.empty() ? 0 : fs + 6);
        graph_h_ = placed_.empty() ? fh * 3 : (max_depth_ + 1) * fh;
        const std::size_t legend_lines =
            diff_ ? 1 + (vanished.empty() ? 0 : 1 + vanished.size()) : 0;
        const double legend_h = legend_lines * (fs + 6);
        const double bottom = fs * 2 + 10;
        height_ = top_ + graph_h_ + 10 + legend_h + bottom;
    }

    // The document up to the frames: the <svg> tag with what the script reads, style, script,
    // background, title and subtitle, and the controls.
    void write_prologue(std::string& out, const std::string& subtitle) const {
        const double fs = o_.font_size;
        emit(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
        emit(out,
             "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
             "height=\"{1:.0f}\" viewBox=\"0 0 {0} {1:.0f}\" onload=\"init(evt)\" "
             "data-width=\"{0}\" data-xpad=\"{2}\" data-fontsize=\"{3}\" data-inverted=\"{4}\" "
             "data-generator=\"lockprof\">\n",
             o_.width, height_, kXPad, fs, o_.inverted ? 1 : 0);
        emit(out,
             "<!-- Flame graph written by lockprof (docs/flamegraph.md). Click a frame to zoom, "
             "Reset Zoom or Esc to go back, Search or Ctrl-F to highlight frames. -->\n");
        emit(out,
             "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
             "<stop stop-color=\"{}\" offset=\"5%\"/><stop stop-color=\"{}\" offset=\"95%\"/>"
             "</linearGradient></defs>\n",
             diff_ ? "#f8f8f8" : "#eeeeee", diff_ ? "#e8e8e8" : "#eeeeb0");
        emit(out,
             "<style type=\"text/css\"><![CDATA[{}text {{ font-size: {}px; }}\n#title {{ "
             "font-size: {}px; }}\n]]></style>\n",
             detail::kFlamegraphStyle, fs, fs + 5);
        emit(out, "<script type=\"text/ecmascript\"><![CDATA[{}]]></script>\n",
             detail::kFlamegraphScript);
        emit(out,
             "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"url(#background)\"/>\n");
        emit(out, "<text id=\"title\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", o_.width / 2.0,
             fs + 14, escaped(o_.title));
        if (!subtitle.empty())
            emit(out, "<text id=\"subtitle\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", o_.width / 2.0,
                 2 * fs + 22, escaped(subtitle));
        emit(out, "<text id=\"unzoom\" class=\"hide\" x=\"{}\" y=\"{:.1f}\">Reset Zoom</text>\n",
             kXPad, fs + 14);
        emit(out,
             "<text id=\"search\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">Search</text>\n",
             o_.width - kXPad, fs + 14);
        emit(out, "<text id=\"details\" x=\"{}\" y=\"{:.1f}\"> </text>\n", kXPad, height_ - 8);
        emit(out, "<text id=\"matched\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\"> </text>\n",
             o_.width - kXPad, height_ - 8);
        if (placed_.empty())
            emit(out,
                 "<text id=\"nosamples\" x=\"{:.1f}\" y=\"{:.1f}\" "
                 "text-anchor=\"middle\">{}</text>\n",
                 o_.width / 2.0, top_ + o_.frame_height * 1.5,
                 diff_ ? "no samples in AFTER" : "no samples");
    }

    void write_frames(std::string& out) const {
        emit(out, "<g id=\"frames\">\n");
        for (const auto& p : placed_) write_frame(out, p);
        out += "</g>\n";
    }

    // One frame: its tooltip (weights, and in a diff both sides and the change), its rectangle
    // and as much of its name as fits.
    void write_frame(std::string& out, const Placed& p) const {
        const double fh = o_.frame_height;
        const double fs = o_.font_size;
        const double px_per_unit =
            total_after_ ? (o_.width - 2 * kXPad) / static_cast<double>(total_after_) : 0;
        const auto& n = tree_->node(p.node);
        const auto name = p.node == 0 ? std::string_view("all") : tree_->name(n);
        const double x = kXPad + static_cast<double>(p.offset) * px_per_unit;
        const double w = static_cast<double>(n.after) * px_per_unit;
        const double y = o_.inverted ? top_ + n.depth * fh : top_ + (max_depth_ - n.depth) * fh;
        Rgb colour;
        bool is_new = false;
        out += "<g><title>";
        escape_xml(out, name);
        if (diff_) {
            const double d = delta(p.node);
            colour = diff_colour(d, max_delta_);
            is_new = n.before == 0;
            emit(out, " (after: {} {}, {:.2f}%; before: ", with_commas(n.after), o_.count_name,
                 pct(n.after, total_after_));
            if (is_new)
                emit(out, "0 {}, new in AFTER", o_.count_name);
            else
                emit(out, "{} {}, {:.2f}%", with_commas(n.before), o_.count_name,
                     pct(n.before, total_before_));
            emit(out, "; change {:+.2f} percentage points of total)", d * 100);
        } else {
            colour = frame_colour(name, p.node == 0);
            emit(out, " ({} {}, {:.2f}%)", with_commas(n.after), o_.count_name,
                 pct(n.after, total_after_));
        }
        // The script takes the name as the title up to its last " (".
        emit(out,
             "</title><rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
             "fill=\"rgb({},{},{})\" rx=\"2\" ry=\"2\"{}/>",
             x, y, w, fh - 1, colour.r, colour.g, colour.b,
             is_new ? " class=\"new\" stroke=\"rgb(120,0,0)\" stroke-width=\"1\"" : "");
        emit(out, "<text x=\"{:.2f}\" y=\"{:.1f}\">", x + 3, y + fh / 2 + fs / 2 - 2);
        const double char_w = fs * 0.59;
        const auto chars = static_cast<std::size_t>(std::max(0.0, std::floor((w - 6) / char_w)));
        if (chars >= 3) {
            if (display_length(name) <= chars)
                escape_xml(out, name);
            else {
                escape_xml(out, prefix_chars(name, chars - 2));
                out += "..";
            }
        }
        out += "</text></g>\n";
    }

    // The diff's legend (grew, shrank, new) and the frames that vanished from AFTER.
    void write_legend(std::string& out, const std::vector<Vanished>& vanished,
                      std::size_t vanished_count) const {
        const double fs = o_.font_size;
        double y = top_ + graph_h_ + 10 + fs;
        emit(out, "<g id=\"legend\">\n");
        emit(out,
             "<rect x=\"{0}\" y=\"{1:.1f}\" width=\"{2}\" height=\"{2}\" fill=\"rgb(255,0,0)\"/>"
             "<text x=\"{3}\" y=\"{4:.1f}\">grew</text>"
             "<rect x=\"{5}\" y=\"{1:.1f}\" width=\"{2}\" height=\"{2}\" fill=\"rgb(0,0,255)\"/>"
             "<text x=\"{6}\" y=\"{4:.1f}\">shrank (share of total {7})</text>"
             "<rect x=\"{8}\" y=\"{1:.1f}\" width=\"{2}\" height=\"{2}\" "
             "fill=\"rgb(255,160,160)\" "
             "stroke=\"rgb(120,0,0)\"/><text x=\"{9}\" y=\"{4:.1f}\">outlined: new in "
             "AFTER</text>\n",
             kXPad, y - fs + 2, fs, kXPad + fs + 4, y, kXPad + 80, kXPad + 80 + fs + 4,
             o_.count_name, kXPad + 420, kXPad + 420 + fs + 4);
        if (!vanished.empty()) {
            y += fs + 6;
            emit(out,
                 "<text id=\"vanished-header\" x=\"{}\" y=\"{:.1f}\">Vanished (in BEFORE, not "
                 "in AFTER): {} frame{}{}</text>\n",
                 kXPad, y, vanished_count, vanished_count == 1 ? "" : "s",
                 vanished_count > vanished.size()
                     ? fmt::format(", largest {} shown", vanished.size())
                     : "");
            for (const auto& v : vanished) {
                y += fs + 6;
                emit(out,
                     "<g class=\"vanished\"><rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" "
                     "height=\"{}\" "
                     "fill=\"rgb(0,0,255)\"/><text x=\"{}\" y=\"{:.1f}\">",
                     kXPad, y - fs + 2, fs, fs, kXPad + fs + 4, y);
                escape_xml(out, v.path);
                emit(out, " [before: {} {}, {:.2f}%]</text></g>\n", with_commas(v.before),
                     o_.count_name, pct(v.before, total_before_));
            }
        }
        emit(out, "</g>\n");
    }

    static double pct(std::uint64_t v, std::uint64_t total) {
        return total ? 100.0 * static_cast<double>(v) / static_cast<double>(total) : 0.0;
    }
    static double share(std::uint64_t v, std::uint64_t total) {
        return total ? static_cast<double>(v) / static_cast<double>(total) : 0.0;
    }
    // Change in share of total between BEFORE and AFTER.
    double delta(std::uint32_t i) const {
        if (i == 0) return 0;  // the root is 100% of both by definition
        const auto& n = tree_->node(i);
        return share(n.after, total_after_) - share(n.before, total_before_);
    }

    const SvgOptions& o_;
    bool diff_;
    const Tree* tree_ = nullptr;
    std::uint64_t total_after_ = 0, total_before_ = 0;
    std::vector<Placed> placed_;
    std::uint32_t max_depth_ = 0;
    double max_delta_ = 0;
    double top_ = 0, graph_h_ = 0, height_ = 0;
};

}  // namespace

std::string render_flamegraph_svg(const FoldedStacks& stacks, const SvgOptions& options) {
    validate(options);
    Tree tree;
    for (const auto& [stack, weight] : stacks.stacks()) tree.add(stack, weight, false);
    tree.sort_children();
    return Renderer(options, false).render(tree, stacks.total(), 0, options.subtitle, {}, 0);
}

SvgOptions sampled_flamegraph_options(std::string_view tool, std::string_view subject,
                                      std::string subtitle, const std::string& event) {
    SvgOptions options;
    options.title = fmt::format("{}: {}", tool, subject);
    options.subtitle = std::move(subtitle);
    options.count_name = event == "cpu-clock" ? kCpuTimeUnit : event.empty() ? "samples" : event;
    return options;
}

std::string render_diff_flamegraph_svg(const FoldedStacks& before, const FoldedStacks& after,
                                       const SvgOptions& options) {
    validate(options);
    Tree tree;
    for (const auto& [stack, weight] : after.stacks()) tree.add(stack, weight, false);
    for (const auto& [stack, weight] : before.stacks()) tree.add(stack, weight, true);
    tree.sort_children();

    // Vanished frames: the top-most nodes with BEFORE weight and no AFTER weight (their
    // descendants vanished with them). They cannot get a width from AFTER, so they are listed.
    std::vector<Vanished> vanished;
    std::size_t vanished_count = 0;
    for (std::uint32_t i = 1; i < tree.size(); ++i) {
        const auto& n = tree.node(i);
        if (n.after == 0 && n.before > 0 && (n.parent == 0 || tree.node(n.parent).after > 0)) {
            ++vanished_count;
            vanished.push_back({tree.path(i), n.before});
        }
    }
    std::sort(vanished.begin(), vanished.end(), [](const auto& a, const auto& b) {
        return a.before != b.before ? a.before > b.before : a.path < b.path;
    });
    if (vanished.size() > kMaxVanishedListed) vanished.resize(kMaxVanishedListed);

    std::string subtitle = options.subtitle;
    if (!subtitle.empty()) subtitle += " | ";
    subtitle += fmt::format(
        "widths: AFTER; colour: change in share of total {} (normalised by totals: AFTER {}, "
        "BEFORE {})",
        options.count_name, with_commas(after.total()), with_commas(before.total()));
    return Renderer(options, true)
        .render(tree, after.total(), before.total(), subtitle, vanished, vanished_count);
}

}  // namespace lockprof::exporting
