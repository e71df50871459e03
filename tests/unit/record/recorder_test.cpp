// Replaying the kernel's task events (mmap, comm, fork) into the mappings of a command's
// processes: what lets samples of children that ended before /proc/PID/maps was read resolve.
#include "lockprof/record/recorder.hpp"

#include <gtest/gtest.h>

namespace lockprof::record {
namespace {

using Kind = sampling::TaskEvent::Kind;

sampling::TaskEvent mmap_event(pid_t pid, std::uint64_t time, std::uint64_t address,
                               std::uint64_t offset, std::string path) {
    sampling::TaskEvent e;
    e.kind = Kind::mmap;
    e.pid = e.tid = pid;
    e.time_ns = time;
    e.address = address;
    e.length = 0x1000;
    e.file_offset = offset;
    e.name = std::move(path);
    return e;
}

sampling::TaskEvent comm_event(pid_t pid, pid_t tid, std::uint64_t time, std::string name,
                               bool exec) {
    sampling::TaskEvent e;
    e.kind = Kind::comm;
    e.pid = pid;
    e.tid = tid;
    e.time_ns = time;
    e.name = std::move(name);
    e.exec = exec;
    return e;
}

sampling::TaskEvent fork_event(pid_t pid, pid_t parent, std::uint64_t time) {
    sampling::TaskEvent e;
    e.kind = Kind::fork;
    e.pid = e.tid = pid;
    e.parent = parent;
    e.time_ns = time;
    return e;
}

TEST(ReplayTaskEvents, MappingsStartAtTheFileStartAndOnlyFilesAndTheVdsoCount) {
    const auto out = replay_task_events({
        mmap_event(10, 1, 0x401000, 0x1000, "/usr/bin/app"),
        mmap_event(10, 2, 0x7f0000002000, 0x2000, "/usr/lib/libc.so.6"),
        mmap_event(10, 3, 0x7f0000100000, 0, "//anon"),
        mmap_event(10, 4, 0x7fff00000000, 0, "[vdso]"),
    });
    const auto& modules = out.at(10).modules;
    ASSERT_EQ(modules.size(), 3u);
    EXPECT_EQ(modules[0].path, "/usr/bin/app");
    EXPECT_EQ(modules[0].start, 0x400000u);  // address - file offset: where the file starts
    EXPECT_EQ(modules[0].end, 0x402000u);
    EXPECT_EQ(modules[0].offset, 0u);
    EXPECT_EQ(modules[0].permissions, "r-xp");
    EXPECT_EQ(modules[1].start, 0x7f0000000000u);
    EXPECT_EQ(modules[2].path, "[vdso]");
}

TEST(ReplayTaskEvents, ExecStartsOverAndForkCopiesTheParentInTimeOrder) {
    // Given out of order, as buffers of different CPUs deliver them.
    const auto out = replay_task_events({
        mmap_event(11, 40, 0x500000, 0, "/usr/bin/child"),
        comm_event(11, 11, 30, "child", true),
        fork_event(11, 10, 20),
        comm_event(10, 10, 5, "parent", true),
        mmap_event(10, 10, 0x400000, 0, "/usr/bin/parent"),
        fork_event(10, 10, 50),  // a new thread in 10: not a process
        comm_event(10, 12, 60, "worker-thread", false),
    });
    ASSERT_EQ(out.at(10).modules.size(), 1u);
    EXPECT_EQ(out.at(10).modules[0].path, "/usr/bin/parent");
    EXPECT_EQ(out.at(10).comm, "parent");  // a thread's rename is not the process's name
    ASSERT_EQ(out.at(11).modules.size(), 1u);
    EXPECT_EQ(out.at(11).modules[0].path, "/usr/bin/child");  // the parent's went at exec
    EXPECT_EQ(out.at(11).comm, "child");
}

TEST(ReplayTaskEvents, AForkedChildThatNeverExecsHasItsParentsMappings) {
    const auto out = replay_task_events({
        mmap_event(10, 1, 0x400000, 0, "/usr/bin/server"),
        comm_event(10, 10, 0, "server", true),
        fork_event(20, 10, 2),
    });
    ASSERT_EQ(out.at(20).modules.size(), 1u);
    EXPECT_EQ(out.at(20).modules[0].path, "/usr/bin/server");
    EXPECT_EQ(out.at(20).comm, "server");
}

TEST(ReplayTaskEvents, ANewMappingReplacesWhatItOverlaps) {
    const auto out = replay_task_events({
        mmap_event(10, 1, 0x7f0000000000, 0, "/usr/lib/plugin-a.so"),
        mmap_event(10, 2, 0x7f0000000000, 0, "/usr/lib/plugin-b.so"),  // dlclose, dlopen
    });
    ASSERT_EQ(out.at(10).modules.size(), 1u);
    EXPECT_EQ(out.at(10).modules[0].path, "/usr/lib/plugin-b.so");
}

}  // namespace
}  // namespace lockprof::record
