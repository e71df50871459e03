#include "lockprof/sampling/stacks.hpp"

#include <filesystem>

#include <fmt/format.h>

namespace lockprof::sampling {

MnemonicMap mnemonics_of(const std::vector<HotFunction>& functions) {
    MnemonicMap out;
    for (const auto& f : functions)
        for (const auto& i : f.instructions)
            out.emplace(std::make_pair(f.module, i.instruction.address), i.instruction.mnemonic);
    return out;
}

std::string frame_name(const symbols::Location& location) {
    if (location.has_symbol()) return symbols::short_name(location.symbol);
    if (location.module.empty()) return "[unknown]";
    if (location.module.starts_with('[')) return location.module;  // "[vdso]"
    return "[" + std::filesystem::path(location.module).filename().string() + "]";
}

StackFolder::StackFolder(const symbols::SymbolResolver& resolver, bool instruction_leaf,
                         const MnemonicMap* mnemonics)
    : resolver_(resolver), instruction_leaf_(instruction_leaf), mnemonics_(mnemonics) {}

const std::string& StackFolder::function(std::uint64_t address) {
    auto [it, added] = names_.try_emplace(address);
    if (added) it->second = frame_name(resolver_.resolve(address));
    return it->second;
}

std::string StackFolder::leaf(std::uint64_t ip) const {
    const auto loc = resolver_.resolve(ip);
    std::string out;
    if (loc.has_symbol())
        out = fmt::format("{}+{:#x}", symbols::short_name(loc.symbol), loc.offset);
    else if (!loc.module.empty())
        out = fmt::format("{}+{:#x}", frame_name(loc), loc.file_address(ip));
    else
        out = fmt::format("{:#x}", ip);
    if (mnemonics_)
        if (auto m = mnemonics_->find({loc.module, loc.file_address(ip)}); m != mnemonics_->end())
            out += " " + m->second;
    return out;
}

std::vector<std::string> StackFolder::frames(std::string root, const profiling::RawSample& sample) {
    std::vector<std::string> out;
    out.reserve(sample.callchain.size() + 3);
    out.push_back(std::move(root));
    // Return addresses point after the call; -1 lands inside it.
    for (auto it = sample.callchain.rbegin(); it != sample.callchain.rend(); ++it)
        out.push_back(function(*it - 1));
    out.push_back(function(sample.ip));
    if (instruction_leaf_) out.push_back(leaf(sample.ip));
    return out;
}

}  // namespace lockprof::sampling
