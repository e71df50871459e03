// Replaying the kernel's task events (mmap, comm, fork) into the mappings of a command's
// processes: what lets samples of children that ended before /proc/PID/maps was read (or
// before it was read again) resolve.
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
    // ... and are kept for the child's samples taken before it (its code was the parent's).
    ASSERT_EQ(out.at(11).before_exec.size(), 1u);
    EXPECT_EQ(out.at(11).before_exec[0].until_ns, 30u);
    ASSERT_EQ(out.at(11).before_exec[0].modules.size(), 1u);
    EXPECT_EQ(out.at(11).before_exec[0].modules[0].path, "/usr/bin/parent");
    EXPECT_TRUE(out.at(10).before_exec.empty());  // its exec came before any mapping
}

TEST(ReplayTaskEvents, EveryExecKeepsWhatItReplacedAndAForkStartsWithoutThem) {
    const auto out = replay_task_events({
        comm_event(10, 10, 1, "sh", true),
        mmap_event(10, 2, 0x400000, 0, "/usr/bin/sh"),
        comm_event(10, 10, 3, "env", true),
        mmap_event(10, 4, 0x500000, 0, "/usr/bin/env"),
        comm_event(10, 10, 5, "app", true),
        mmap_event(10, 6, 0x600000, 0, "/usr/bin/app"),
        fork_event(20, 10, 7),
    });
    const auto& earlier = out.at(10).before_exec;
    ASSERT_EQ(earlier.size(), 2u);
    EXPECT_EQ(earlier[0].until_ns, 3u);
    EXPECT_EQ(earlier[0].modules.at(0).path, "/usr/bin/sh");
    EXPECT_EQ(earlier[1].until_ns, 5u);
    EXPECT_EQ(earlier[1].modules.at(0).path, "/usr/bin/env");
    EXPECT_EQ(out.at(20).modules.at(0).path, "/usr/bin/app");
    EXPECT_TRUE(out.at(20).before_exec.empty());
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

measure::MappedModule module(std::string path, std::uint64_t start, std::uint64_t end,
                             std::string permissions) {
    measure::MappedModule m;
    m.path = std::move(path);
    m.start = start;
    m.end = end;
    m.permissions = std::move(permissions);
    return m;
}

// Seen in CI (CliRecord.ShortLivedChildrenAreNamedAndResolved under ASan, 2 runs in 12): a
// child's maps were read while its loader had mapped only the shell and itself; it ended before
// the next read, and its samples in libc were "[unknown]" although the kernel had recorded
// libc's mapping.
TEST(ReplayedMappings, WhatTheSnapshotLacksIsAddedFromTheKernelsRecords) {
    const std::vector<measure::MappedModule> snapshot = {
        module("/usr/bin/dash", 0x1000, 0x5000, "r--p"),
        module("/usr/bin/dash", 0x5000, 0x18000, "r-xp"),
        module("/usr/bin/dash", 0x18000, 0x1e000, "r--p"),
        module("/usr/lib/ld-linux-x86-64.so.2", 0x7f0000100000, 0x7f0000126000, "r-xp"),
    };
    const auto replayed = replay_task_events({
        mmap_event(10, 1, 0x5000, 0x4000, "/usr/bin/dash"),
        mmap_event(10, 2, 0x7f0000100000, 0, "/usr/lib/ld-linux-x86-64.so.2"),
        mmap_event(10, 3, 0x7f0000028000, 0x28000, "/usr/lib/libc.so.6"),
    });
    const auto out = with_replayed_mappings(snapshot, replayed.at(10).modules);
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(out[0].path, "/usr/bin/dash");  // the snapshot's segments stay as they were read
    EXPECT_EQ(out[0].permissions, "r--p");
    EXPECT_EQ(out[1].start, 0x5000u);
    EXPECT_EQ(out[2].end, 0x1e000u);
    EXPECT_EQ(out[3].path, "/usr/lib/libc.so.6");  // only the kernel saw it
    EXPECT_EQ(out[3].start, 0x7f0000000000u);
    EXPECT_EQ(out[3].end, 0x7f0000029000u);
    EXPECT_EQ(out[4].path, "/usr/lib/ld-linux-x86-64.so.2");
}

TEST(ReplayedMappings, AProcessNeverReadHasTheReplayedMappingsAndACompleteReadItsOwn) {
    const auto replayed = replay_task_events({
        mmap_event(10, 1, 0x401000, 0x1000, "/usr/bin/app"),
        mmap_event(10, 2, 0x7f0000002000, 0x2000, "/usr/lib/libc.so.6"),
    });
    const auto& modules = replayed.at(10).modules;
    const auto never_read = with_replayed_mappings({}, modules);
    ASSERT_EQ(never_read.size(), 2u);
    EXPECT_EQ(never_read[0].path, "/usr/bin/app");
    EXPECT_EQ(never_read[1].path, "/usr/lib/libc.so.6");

    const std::vector<measure::MappedModule> complete = {
        module("/usr/bin/app", 0x400000, 0x401000, "r--p"),
        module("/usr/bin/app", 0x401000, 0x402000, "r-xp"),
        module("/usr/lib/libc.so.6", 0x7f0000000000, 0x7f0000002000, "r--p"),
        module("/usr/lib/libc.so.6", 0x7f0000002000, 0x7f0000003000, "r-xp"),
    };
    const auto out = with_replayed_mappings(complete, modules);
    ASSERT_EQ(out.size(), complete.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(out[i].start, complete[i].start) << i;
        EXPECT_EQ(out[i].permissions, complete[i].permissions) << i;
    }
}

}  // namespace
}  // namespace lockprof::record
