// Uprobes defined in tracefs (its `uprobe_events` file) and opened as tracepoint perf events:
// the probes a command inherits (`record --spin -- CMD`).
//
// Why not the uprobe PMU (uprobe.hpp) there: the kernel gives a new thread or process its
// parent's inherited events by creating each again from the parent event's attributes, and a
// uprobe PMU event's config1 is a pointer to the probed file's path, which the kernel then
// reads in the memory of the task that forks: lockprof's pointer, in the command's address
// space. The read fails and so does the fork (clone3 returns EFAULT, pthread_create fails), or
// it reads whatever the command keeps at that address. A tracepoint event's config is a
// number, which copies safely. Seen on Linux 6.1 (arm64) and 6.18 (x86_64).
//
// tracefs is the one mounted (/proc/self/mounts), or else a private mount of its own made with
// fsopen/fsmount and never attached to any folder: nothing stays mounted after lockprof. Every
// probe is defined in a group of this process's own, `lockprof_<pid>`, and removed again by
// the destructor, which must run after every perf event on them is closed; definitions left
// by a lockprof that was killed are removed by the next one.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lockprof::pmu {

class TraceUprobes {
  public:
    // tracefs, or nullptr with `why` saying what is missing (root, tracefs, uprobe_events).
    static std::unique_ptr<TraceUprobes> open(std::string& why);
    ~TraceUprobes();
    TraceUprobes(const TraceUprobes&) = delete;
    TraceUprobes& operator=(const TraceUprobes&) = delete;

    // Defines a uprobe (or, `return_probe`, a uretprobe) on the function at `file_offset` of
    // `path` and returns its tracepoint id, or -errno with `why` saying what the kernel refused.
    long define(const std::string& path, std::uint64_t file_offset, bool return_probe,
                std::string& why);
    // Where tracefs was found, for messages ("a private tracefs mount" or the folder).
    const std::string& where() const { return where_; }
    // Every uprobe defined on the machine (uprobe_events), lockprof's and others'.
    std::string listing() const;

  private:
    TraceUprobes(int root_fd, std::string where);
    void remove_stale();
    bool write_definition(const std::string& line, int& error) const;

    int root_fd_ = -1;
    std::string where_;
    std::string group_;
    std::vector<std::string> defined_;  // "group/event"
};

// Whether a uprobe_events definition can name `path` (the kernel splits a definition at
// whitespace, and takes no quotes).
bool definable_path(const std::string& path);

// The definitions ("group/event") in the text of uprobe_events that lockprof processes made
// and left: those of groups `lockprof_<pid>` where `alive(pid)` is false, or pid is `self` (a
// process of this pid that ran before; this one has defined nothing yet).
std::vector<std::string> stale_definitions(const std::string& uprobe_events, int self,
                                           const std::function<bool(int)>& alive);

}  // namespace lockprof::pmu
