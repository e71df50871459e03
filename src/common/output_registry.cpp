#include "lockprof/common/output_registry.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace lockprof::outputs {
namespace {

enum State : int { kPlanned, kWriting, kWritten };

// One output. The strings are copied once and never freed, so a handler that read a pointer can
// always follow it; a slot is reused only for another target once its output is in place.
struct Slot {
    std::atomic<const char*> target{nullptr};
    std::atomic<const char*> temporary{nullptr};
    std::atomic<int> state{kPlanned};
};

constexpr std::size_t kSlots = 256;
std::array<Slot, kSlots> g_slots;
std::atomic<std::size_t> g_used{0};
std::mutex g_mutex;  // registration only, never taken in a handler
// Every output written in place, in order (written_files()); under g_mutex, never read in a
// handler.
std::vector<std::string> g_written;

// Every string kept, reachable for the process's life (so LeakSanitizer does not call a
// replaced temporary's name a leak) and never destroyed, not even at exit, when a signal may
// still come. Only registration, under g_mutex, adds to it.
std::vector<std::unique_ptr<char[]>>& kept() {
    static auto* all = new std::vector<std::unique_ptr<char[]>>;
    return *all;
}

const char* keep(const std::string& s) {
    auto copy = std::make_unique<char[]>(s.size() + 1);
    std::memcpy(copy.get(), s.c_str(), s.size() + 1);
    const char* kept_copy = copy.get();
    kept().push_back(std::move(copy));
    return kept_copy;
}

// The slot of `target`, created (or a written one reused) when there is none. nullptr when
// every slot holds an output not yet written.
Slot* slot_of(const std::filesystem::path& target) {
    const std::string name = target.string();
    const std::size_t used = g_used.load();
    Slot* reusable = nullptr;
    for (std::size_t i = 0; i < used; ++i) {
        Slot& s = g_slots[i];
        if (name == s.target.load()) return &s;
        if (!reusable && s.state.load() == kWritten) reusable = &s;
    }
    Slot* slot = used < kSlots ? &g_slots[used] : reusable;
    if (!slot) return nullptr;
    slot->state.store(kWritten);  // not listed while it changes hands
    slot->temporary.store(nullptr);
    slot->target.store(keep(name));
    slot->state.store(kPlanned);
    if (used < kSlots) g_used.store(used + 1);
    return slot;
}

void put(int fd, const char* s) noexcept {
    std::size_t left = std::strlen(s);
    while (left > 0) {
        const ssize_t n = ::write(fd, s, left);
        if (n <= 0) return;
        s += n;
        left -= static_cast<std::size_t>(n);
    }
}

}  // namespace

void planned(const std::filesystem::path& target) {
    std::lock_guard lock(g_mutex);
    slot_of(target);
}

void writing(const std::filesystem::path& target, const std::filesystem::path& temporary) {
    std::lock_guard lock(g_mutex);
    if (Slot* s = slot_of(target)) {
        s->temporary.store(temporary.empty() ? nullptr : keep(temporary.string()));
        s->state.store(kWriting);
    }
}

void written(const std::filesystem::path& target) {
    std::lock_guard lock(g_mutex);
    if (Slot* s = slot_of(target)) s->state.store(kWritten);
    const std::string name = target.string();
    if (name != "-" && std::find(g_written.begin(), g_written.end(), name) == g_written.end())
        g_written.push_back(name);
}

std::vector<std::string> written_files() {
    std::lock_guard lock(g_mutex);
    return g_written;
}

void abandoned(const std::filesystem::path& target) {
    std::lock_guard lock(g_mutex);
    if (Slot* s = slot_of(target)) s->state.store(kPlanned);
}

void remove_temporaries() noexcept {
    const std::size_t used = g_used.load();
    for (std::size_t i = 0; i < used; ++i)
        if (g_slots[i].state.load() == kWriting)
            if (const char* temporary = g_slots[i].temporary.load()) ::unlink(temporary);
}

std::size_t describe_unwritten(int fd) noexcept {
    const std::size_t used = g_used.load();
    std::size_t listed = 0;
    for (std::size_t i = 0; i < used; ++i) {
        const int state = g_slots[i].state.load();
        const char* target = g_slots[i].target.load();
        if (state == kWritten || !target) continue;
        put(fd, listed++ ? ", '" : "'");
        put(fd, target);
        put(fd, state == kWriting ? "' (being written)" : "' (not started)");
    }
    return listed;
}

}  // namespace lockprof::outputs
