// Whether this machine lets the tests place uprobes (`record --spin`, UprobeSampler): a uprobe
// PMU, perf_event_open itself (qemu-user has none), and root; and whether perf_event_open
// works at all.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace lockprof::test {

// Why perf_event_open cannot be used here at all, "" when it can (a software event opens).
inline std::string perf_events_unavailable() {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0)
        return std::string("perf_event_open fails here (") + std::strerror(errno) +
               "; qemu-user answers ENOSYS)";
    close(static_cast<int>(fd));
    return "";
}

// Why uprobes cannot be used here, "" when they can.
inline std::string uprobes_unavailable() {
    if (!std::filesystem::exists("/sys/bus/event_source/devices/uprobe/type"))
        return "no uprobe PMU is registered (/sys/bus/event_source/devices/uprobe)";
    if (auto why = perf_events_unavailable(); !why.empty()) return why;
    if (geteuid() != 0) return "uprobes need root or CAP_PERFMON; the tests run as a user";
    return "";
}

}  // namespace lockprof::test
