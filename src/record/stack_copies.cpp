// The stack copies a recording holds until it unwinds them (stack_copies.hpp).
#include "record/stack_copies.hpp"

#include <algorithm>
#include <utility>

namespace lockprof::record {
namespace {

const std::vector<measure::MappedModule> kNoModules;

}  // namespace

StackCopies::StackCopies(std::vector<measure::RawSample>& samples,
                         std::optional<SpinRecording>& spin, ModulesOf modules_of,
                         std::size_t budget)
    : samples_(samples),
      spin_(spin),
      modules_of_(std::move(modules_of)),
      budget_(budget),
      threshold_(budget) {}

void StackCopies::hold_spin_stack(std::size_t hit, std::size_t bytes) {
    held_bytes_ += bytes;
    pending_spin_stacks_.push_back(hit);
}

void StackCopies::replace_spin_stack(std::size_t hit, std::size_t old_bytes, std::size_t new_bytes,
                                     bool was_unwound) {
    held_bytes_ -= std::min(held_bytes_, old_bytes);
    held_bytes_ += new_bytes;
    if (was_unwound) pending_spin_stacks_.push_back(hit);
}

void StackCopies::unwind(bool all) {
    const std::size_t held = unwind_samples(all);
    held_bytes_ = held + unwind_spin_stacks(all);
}

void StackCopies::unwind_if_over_budget() {
    if (held_bytes_ <= threshold_) return;
    unwind(false);
    threshold_ = held_bytes_ + budget_;
}

// Returns the bytes still held.
std::size_t StackCopies::unwind_samples(bool all) {
    std::size_t held = 0;
    for (std::size_t i = first_unwound_; i < samples_.size(); ++i) {
        auto& sample = samples_[i];
        if (sample.user_regs.empty()) continue;
        const auto* modules = modules_of_(sample.pid);
        if (modules || all)
            unwinder_.unwind(sample, modules ? *modules : kNoModules);
        else
            held += sample.user_stack.size();
    }
    if (held == 0) first_unwound_ = samples_.size();
    return held;
}

// Returns the bytes still held.
std::size_t StackCopies::unwind_spin_stacks(bool all) {
    if (!spin_) return 0;
    std::size_t held = 0;
    auto& hits = spin_->hits;
    std::vector<std::size_t> still_pending;
    for (const std::size_t i : pending_spin_stacks_) {
        auto& h = hits[i];
        if (h.user_regs.empty()) continue;
        const auto* modules = modules_of_(h.pid);
        if (!modules && !all) {
            held += h.user_stack.size();
            still_pending.push_back(i);
            continue;
        }
        auto chain =
            spin_unwinder_.unwind(h.user_regs, h.user_stack, modules ? *modules : kNoModules);
        // The caller's frame comes first, from the return address read at entry (what the
        // unwinder finds there too, unless the stack copy is too short for it).
        if (h.return_address && (chain.empty() || chain.front() != *h.return_address))
            chain.insert(chain.begin(), *h.return_address);
        h.callchain = std::move(chain);
        h.user_regs = {};
        h.user_stack = {};
    }
    pending_spin_stacks_ = std::move(still_pending);
    return held;
}

}  // namespace lockprof::record
