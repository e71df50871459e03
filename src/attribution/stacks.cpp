#include "lockprof/attribution/stacks.hpp"

#include <filesystem>

#include <fmt/format.h>

namespace lockprof::attribution {

MnemonicMap mnemonics_of(const std::vector<HotFunction>& functions) {
    MnemonicMap out;
    for (const auto& f : functions)
        for (const auto& i : f.instructions)
            out.emplace(std::make_pair(f.module, i.instruction.address), i.instruction.mnemonic);
    return out;
}

PhaseMap phases_of(const std::vector<HotFunction>& functions) {
    PhaseMap out;
    for (const auto& f : functions)
        for (const auto& i : f.instructions)
            if (i.phase != LoopPhase::none)
                out.emplace(std::make_pair(f.module, i.instruction.address),
                            PhasedInstruction{i.phase, i.instruction.bytes.size()});
    return out;
}

std::string frame_name(const symbols::Location& location) {
    if (location.has_symbol()) return symbols::short_name(location.symbol);
    if (location.module.empty()) return "[unknown]";
    if (location.module.starts_with('[')) return location.module;  // "[vdso]"
    // fmt, not "[" + name + "]": GCC 12 -O3 warns (-Wrestrict) falsely on that concatenation.
    return fmt::format("[{}]", std::filesystem::path(location.module).filename().string());
}

StackFolder::StackFolder(const symbols::SymbolResolver& resolver, Leaf leaf,
                         const MnemonicMap* mnemonics, const PhaseMap* phases)
    : resolver_(resolver), leaf_(leaf), mnemonics_(mnemonics), phases_(phases) {}

const StackFolder::Frame& StackFolder::frame(std::uint64_t address) {
    auto [it, added] = frames_.try_emplace(address);
    if (!added) return it->second;
    const auto loc = resolver_.resolve(address);
    Frame& f = it->second;
    f.name = frame_name(loc);
    if (leaf_ != Leaf::function && loc.has_symbol() && is_measured_loop(loc.symbol)) {
        if (phases_) f.phase = phase_at(*phases_, loc.module, loc.file_address(address));
        // No line information, no inline chains either (a build without -g): no phase.
        if (f.phase == LoopPhase::none && !resolver_.source_line(address).first.empty())
            f.phase = loop_phase(resolver_.inlined_at(address));
    }
    return f;
}

std::string StackFolder::leaf(std::uint64_t ip, bool with_function) const {
    const auto loc = resolver_.resolve(ip);
    std::string out;
    if (loc.has_symbol())
        out = fmt::format("{}+{:#x}", with_function ? symbols::short_name(loc.symbol) : "",
                          loc.offset);
    else if (!loc.module.empty())
        out = fmt::format("{}+{:#x}", frame_name(loc), loc.file_address(ip));
    else
        out = fmt::format("{:#x}", ip);
    if (mnemonics_)
        if (auto m = mnemonics_->find({loc.module, loc.file_address(ip)}); m != mnemonics_->end())
            out += " " + m->second;
    return out;
}

std::vector<std::string> StackFolder::frames(std::string root, const measure::RawSample& sample) {
    std::vector<std::string> out;
    out.reserve(sample.callchain.size() + 4);
    out.push_back(std::move(root));
    auto push = [&](const Frame& f) {
        out.push_back(f.name);
        if (f.phase != LoopPhase::none) out.emplace_back(phase_name(f.phase));
    };
    // Return addresses point after the call; -1 lands inside it.
    for (auto it = sample.callchain.rbegin(); it != sample.callchain.rend(); ++it)
        push(frame(*it - 1));
    const Frame& sampled = frame(sample.ip);
    push(sampled);
    // Under a phase frame the function is the frame above it: the leaf is "+0x58 xchg".
    if (sampled.phase != LoopPhase::none)
        out.push_back(leaf(sample.ip, false));
    else if (leaf_ == Leaf::instruction)
        out.push_back(leaf(sample.ip, true));
    return out;
}

}  // namespace lockprof::attribution
