// The processes of a recording (src/record/process_table.hpp), alone, under a fake /proc
// (RecordSpec::root): nothing is counted, sampled or probed, so attaching opens nothing and
// the fake ids (above the kernel's pid_max) are never used with the kernel.
#include "record/process_table.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/temp_dir.hpp"

namespace lockprof::record {
namespace {

constexpr pid_t kFakePid = 99999998;

void write_fake_process(const test::TempDir& root, pid_t pid, const std::vector<pid_t>& tids) {
    const std::string dir = "proc/" + std::to_string(pid);
    root.write(dir + "/comm", "fake-server\n");
    root.write(dir + "/status", "Name:\tfake-server\nState:\tS (sleeping)\nUid:\t0\n");
    root.write(dir + "/maps", "00400000-00401000 r-xp 00000000 00:00 0 /fake/bin/server\n");
    for (pid_t tid : tids) root.write(dir + "/task/" + std::to_string(tid) + "/comm", "worker\n");
}

RecordSpec fake_pid_spec(const test::TempDir& root) {
    RecordSpec spec;
    spec.mode = Mode::pid;
    spec.pids = {kFakePid};
    spec.root = root.path.string();
    return spec;
}

struct FakeProcessTable {
    RecordSpec spec;
    RecordResult result;
    Notes notes{result.notes};
    std::optional<sampling::TaskSampler> sampler;
    std::optional<SpinProbes> spin;
    ProcessTable table;
    explicit FakeProcessTable(const test::TempDir& root)
        : spec(fake_pid_spec(root)),
          table(spec, result, notes, sampler, spin, [] { return 1.5; }) {}
};

TEST(RecordProcessTable, AttachesEveryThreadAndThosePollsFindLater) {
    test::TempDir root;
    write_fake_process(root, kFakePid, {kFakePid});
    FakeProcessTable t(root);
    const auto targets = t.table.initial_targets(nullptr);
    ASSERT_EQ(targets.size(), 1u);
    t.table.attach(targets[0]);
    ASSERT_EQ(t.result.processes.size(), 1u);
    const auto& p = t.result.processes[0];
    EXPECT_EQ(p.info.comm, "fake-server");
    EXPECT_EQ(p.seen_at_s, 1.5);
    EXPECT_EQ(p.threads.size(), 1u);
    ASSERT_NE(t.table.modules_of(kFakePid), nullptr);
    EXPECT_EQ(t.table.modules_of(kFakePid)->at(0).path, "/fake/bin/server");

    write_fake_process(root, kFakePid, {kFakePid, kFakePid + 1});  // a thread was born
    t.table.poll();
    ASSERT_EQ(t.result.processes[0].threads.size(), 2u);
    EXPECT_EQ(t.result.processes[0].threads[1].tid, kFakePid + 1);
    EXPECT_TRUE(t.table.any_live());
    EXPECT_FALSE(t.result.processes[0].exited);
}

TEST(RecordProcessTable, AProcessGoneFromProcIsRetiredAsExitedWithItsMappingsKept) {
    test::TempDir root;
    write_fake_process(root, kFakePid, {kFakePid});
    FakeProcessTable t(root);
    t.table.attach(t.table.initial_targets(nullptr).at(0));
    std::filesystem::remove_all(root / ("proc/" + std::to_string(kFakePid)));
    t.table.poll();
    EXPECT_FALSE(t.table.any_live());
    EXPECT_TRUE(t.table.known(kFakePid));
    EXPECT_TRUE(t.result.processes[0].exited);
    EXPECT_NE(t.table.modules_of(kFakePid), nullptr) << "samples still resolve against them";
}

TEST(RecordProcessTable, OnlyACommandsSamplesMakeProcessesKnown) {
    test::TempDir root;
    write_fake_process(root, kFakePid, {kFakePid});
    FakeProcessTable t(root);
    t.table.know_command_process(kFakePid);  // pid mode: not a command's child
    EXPECT_TRUE(t.result.processes.empty());
    t.spec.mode = Mode::command;
    t.table.know_command_process(kFakePid);
    ASSERT_EQ(t.result.processes.size(), 1u);
    EXPECT_TRUE(t.table.any_live());
    EXPECT_TRUE(t.result.processes[0].threads.empty()) << "a command's threads are inherited";
    t.table.know_command_process(kFakePid);  // once
    EXPECT_EQ(t.result.processes.size(), 1u);
}

}  // namespace
}  // namespace lockprof::record
