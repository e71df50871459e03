#include "lockprof/symbols/kallsyms.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "symbols/perf_rules.hpp"

namespace lockprof::symbols {
namespace {

struct Parsed {
    KernelSymbol symbol;
    char type = 0;
    std::size_t name_length = 0;  // perf compares the name with its "\t[module]" tail
};

int binding(char type) {  // 0 local, 1 global, 2 weak (perf's kallsyms2elf_binding)
    if (type == 'W' || type == 'w') return 2;
    return std::isupper(static_cast<unsigned char>(type)) ? 1 : 0;
}

// perf's choose_best_symbol (tools/perf/util/symbol.c) for two symbols at one address, sized
// as symbols__fixup_end left them: true when `b` replaces `a`, the one kept so far.
bool replaces(const Parsed& a, const Parsed& b) {
    const bool za = a.symbol.end == a.symbol.start, zb = b.symbol.end == b.symbol.start;
    if (za != zb) return za;
    const int wa = binding(a.type) == 2, wb = binding(b.type) == 2;
    if (wa != wb) return wa;
    const int ga = binding(a.type) == 1, gb = binding(b.type) == 1;
    if (ga != gb) return gb;
    const auto ua = perf_rules::leading_underscores(a.symbol.name),
               ub = perf_rules::leading_underscores(b.symbol.name);
    if (ua != ub) return ub < ua;
    return b.name_length > a.name_length;
}

}  // namespace

KernelSymbols KernelSymbols::parse(std::string_view text) {
    std::vector<Parsed> parsed;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        std::uint64_t address = 0;
        const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), address, 16);
        const auto at = static_cast<std::size_t>(end - line.data());
        if (ec != std::errc() || at + 3 > line.size() || line[at] != ' ' || line[at + 2] != ' ')
            continue;
        const char type = line[at + 1];
        const char upper = static_cast<char>(std::toupper(static_cast<unsigned char>(type)));
        if (upper != 'T' && upper != 'W' && upper != 'D' && upper != 'B') continue;
        std::string_view rest = line.substr(at + 3);
        if (rest.empty() || rest.front() == '$' || address == 0) continue;
        Parsed p;
        p.type = type;
        p.name_length = rest.size();
        if (const auto tab = rest.find('\t'); tab != std::string_view::npos) {
            auto module = rest.substr(tab + 1);
            if (module.starts_with('[') && module.ends_with(']'))
                p.symbol.module = std::string(module.substr(1, module.size() - 2));
            rest = rest.substr(0, tab);
        }
        p.symbol.name = std::string(rest);
        p.symbol.start = address;
        parsed.push_back(std::move(p));
    }
    std::stable_sort(parsed.begin(), parsed.end(), [](const Parsed& a, const Parsed& b) {
        return a.symbol.start < b.symbol.start;
    });
    // perf sizes the symbols before it drops aliases (symbols__fixup_end, then
    // symbols__fixup_duplicate): each one ends where the next begins, so every alias but the
    // last at an address is empty, and an empty symbol loses to one with a size. The name perf
    // prints for an address with aliases is therefore the last of them in /proc/kallsyms
    // ("__pi_memcpy" after "memcpy" and "__memcpy"); the other rules decide only between
    // symbols both empty or both sized.
    constexpr std::uint64_t kPage = 4096;
    for (std::size_t i = 0; i < parsed.size(); ++i) {
        auto& s = parsed[i].symbol;
        if (i + 1 == parsed.size())
            s.end = (s.start + kPage - 1) / kPage * kPage + kPage;
        else if (s.module.empty() != parsed[i + 1].symbol.module.empty())
            s.end = (s.start + kPage + kPage - 1) / kPage * kPage;  // the end of the next page
        else
            s.end = parsed[i + 1].symbol.start;
    }
    std::vector<Parsed> kept;
    for (auto& p : parsed) {
        if (!kept.empty() && kept.back().symbol.start == p.symbol.start) {
            if (replaces(kept.back(), p)) kept.back() = std::move(p);
            continue;
        }
        kept.push_back(std::move(p));
    }
    KernelSymbols out;
    for (auto& p : kept) out.symbols_.push_back(std::move(p.symbol));
    return out;
}

const KernelSymbol* KernelSymbols::find(std::uint64_t address) const {
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                               [](std::uint64_t a, const KernelSymbol& s) { return a < s.start; });
    if (it == symbols_.begin()) return nullptr;
    --it;
    return address < it->end ? &*it : nullptr;
}

}  // namespace lockprof::symbols
