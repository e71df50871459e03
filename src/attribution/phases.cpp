#include "lockprof/attribution/phases.hpp"

namespace lockprof::attribution {

namespace phases_detail {

// "ns::name(" or "ns::name<" inside `function`, or `function` starting with "name(" / "name<"
// (DWARF's plain name when the inlined copy has no linkage name).
bool names(std::string_view function, std::string_view ns, std::string_view name) {
    auto followed = [&](std::size_t end) {
        return end < function.size() && (function[end] == '(' || function[end] == '<');
    };
    if (function.starts_with(name) && followed(name.size())) return true;
    if (function.find(ns) == std::string_view::npos) return false;
    for (auto at = function.find(name); at != std::string_view::npos;
         at = function.find(name, at + 1))
        if (at >= 2 && function.substr(at - 2, 2) == "::" && followed(at + name.size()))
            return true;
    return false;
}

}  // namespace phases_detail

using phases_detail::names;

std::string_view phase_name(LoopPhase phase) {
    switch (phase) {
        case LoopPhase::acquire_loop:
            return "acquire loop";
        case LoopPhase::acquire_rest:
            return "acquire (outside the loop)";
        case LoopPhase::acquire:
            return "acquire";
        case LoopPhase::critical:
            return "critical section";
        case LoopPhase::release:
            return "release";
        case LoopPhase::parallel:
            return "parallel work";
        case LoopPhase::harness:
            return "loop harness";
        case LoopPhase::rest_of_loop:
            return "rest of loop";
        case LoopPhase::none:
            break;
    }
    return "";
}

bool is_measured_loop(std::string_view function) {
    return function.find("lockprof::workload::") != std::string_view::npos &&
           names(function, "lockprof::workload::", "measured_loop");
}

bool is_lock_function(std::string_view function) {
    return names(function, "lockprof::locks::", "lock") ||
           names(function, "lockprof::locks::", "try_lock");
}

LoopPhase loop_phase(const std::vector<std::string>& inline_chain) {
    for (auto it = inline_chain.rbegin(); it != inline_chain.rend(); ++it) {
        const std::string_view f = *it;
        if (is_lock_function(f)) return LoopPhase::acquire;
        if (names(f, "lockprof::locks::", "unlock")) return LoopPhase::release;
        if (names(f, "lockprof::workload::", "critical_section")) return LoopPhase::critical;
        if (names(f, "lockprof::workload::", "parallel_work")) return LoopPhase::parallel;
    }
    return LoopPhase::harness;
}

LoopPhase phase_at(const PhaseMap& phases, const std::string& module, std::uint64_t file_address) {
    auto it = phases.upper_bound({module, file_address});
    if (it == phases.begin()) return LoopPhase::none;
    --it;
    const auto& [key, insn] = *it;
    if (key.first != module || file_address >= key.second + insn.size) return LoopPhase::none;
    return insn.phase;
}

}  // namespace lockprof::attribution
