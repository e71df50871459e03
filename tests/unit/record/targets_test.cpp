#include "lockprof/record/targets.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "support/temp_dir.hpp"

namespace lockprof::record {
namespace {

namespace fs = std::filesystem;

// A fake /proc with processes given as pid -> (comm, uid, state, threads).
struct FakeProc {
    lockprof::test::TempDir dir;
    const fs::path& root = dir.path;
    void add(pid_t pid, const std::string& comm, uid_t uid = 1000, char state = 'S',
             std::vector<pid_t> threads = {}) {
        const fs::path dir = root / std::to_string(pid);
        fs::create_directories(dir / "task");
        std::ofstream(dir / "comm") << comm << "\n";
        std::ofstream(dir / "status")
            << "Name:\t" << comm << "\nState:\t" << state << " (sleeping)\nUid:\t" << uid << "\t"
            << uid << "\t" << uid << "\t" << uid << "\n";
        if (threads.empty()) threads = {pid};
        for (pid_t tid : threads) {
            fs::create_directories(dir / "task" / std::to_string(tid));
            std::ofstream(dir / "task" / std::to_string(tid) / "comm") << comm << "-t" << tid;
        }
    }
};

TEST(PidList, ParsesAndDropsDuplicates) {
    EXPECT_EQ(parse_pid_list("12, 7,12", "pid"), (std::vector<pid_t>{12, 7}));
}

TEST(PidList, RefusesWhatIsNotAPid) {
    for (const char* bad : {"", "0", "-3", "12x", "abc", "1,,2", "99999999999"})
        EXPECT_THROW(parse_pid_list(bad, "pid"), UsageError) << bad;
}

TEST(NameMatcher, PlainNamesMatchWholeComm) {
    const NameMatcher m("postgres");
    EXPECT_TRUE(m.matches("postgres"));
    EXPECT_FALSE(m.matches("postgres2"));
    EXPECT_FALSE(m.matches("mypostgres"));
}

TEST(NameMatcher, RegexesSearch) {
    const NameMatcher m("^(postgres|pgbench)$");
    EXPECT_TRUE(m.matches("pgbench"));
    EXPECT_FALSE(m.matches("postgresql"));
    EXPECT_TRUE(NameMatcher("post.*").matches("postmaster"));
}

TEST(NameMatcher, RefusesBadPatterns) {
    EXPECT_THROW(NameMatcher("("), UsageError);
    EXPECT_THROW(NameMatcher(""), UsageError);
}

TEST(FakeProcTest, FindsProcessesByNameAndSkipsExcluded) {
    FakeProc proc;
    proc.add(10, "postgres");
    proc.add(11, "postgres");
    proc.add(12, "pgbench");
    proc.add(13, "postgres");
    const auto found = find_processes(NameMatcher("postgres"), 13, proc.root.string());
    EXPECT_EQ(found, (std::vector<pid_t>{10, 11}));
}

TEST(FakeProcTest, ReadsProcessAndTasks) {
    FakeProc proc;
    proc.add(20, "java", 1001, 'S', {20, 23, 21});
    const auto p = read_process(20, proc.root.string());
    ASSERT_TRUE(p);
    EXPECT_EQ(p->comm, "java");
    EXPECT_EQ(p->uid, 1001u);
    EXPECT_EQ(list_tasks(20, proc.root.string()), (std::vector<pid_t>{20, 21, 23}));
    EXPECT_EQ(task_comm(20, 23, proc.root.string()), "java-t23");
}

TEST(FakeProcTest, MissingAndZombieProcessesAreGone) {
    FakeProc proc;
    proc.add(30, "defunct", 0, 'Z');
    EXPECT_FALSE(read_process(30, proc.root.string()));
    EXPECT_FALSE(read_process(31, proc.root.string()));
    EXPECT_TRUE(list_tasks(31, proc.root.string()).empty());
}

TEST(ProcessStatus, StateAndUidFromTheStatusText) {
    const std::string text =
        "Name:\tpostgres\nState:\tS (sleeping)\nUid:\t1000\t1000\t0\t0\n"
        "CapEff:\t000001ffffffffff\n";
    const ProcessStatus s = parse_process_status(text);
    EXPECT_FALSE(s.gone);
    EXPECT_EQ(s.uid, 1000u);
    EXPECT_EQ(status_value(text, "CapEff"), "\t000001ffffffffff");
    EXPECT_EQ(status_value(text, "Cap"), "");
    EXPECT_EQ(status_value("State:\tZ (zombie)", "State"), "\tZ (zombie)");
    EXPECT_TRUE(parse_process_status("State:\tZ (zombie)\n").gone);
    EXPECT_TRUE(parse_process_status("State:\tX (dead)").gone);
    EXPECT_EQ(parse_process_status("").uid, 0u);
}

TEST(RealProc, SeesThisProcess) {
    const auto self = read_process(getpid());
    ASSERT_TRUE(self);
    EXPECT_FALSE(self->exe.empty());
    const auto tasks = list_tasks(getpid());
    EXPECT_NE(std::find(tasks.begin(), tasks.end(), getpid()), tasks.end());
}

TEST(AttachRefusal, AnotherUserWithoutCapPerfmon) {
    ProcessInfo target{42, "postgres", "/usr/lib/postgresql/15/bin/postgres", 0};
    const auto line =
        explain_attach_refusal(target, {.our_uid = 12345, .cap_perfmon = false, .paranoid = 2});
    EXPECT_NE(line.find("cannot attach to 42 (postgres)"), std::string::npos) << line;
    EXPECT_NE(line.find("CAP_PERFMON"), std::string::npos) << line;
    EXPECT_NE(line.find("sudo -u root"), std::string::npos) << line;
    EXPECT_NE(line.find("ptrace_scope does not matter"), std::string::npos) << line;
}

TEST(AttachRefusal, ParanoidAboveTwo) {
    ProcessInfo target{42, "app", "", 1000};
    const auto line =
        explain_attach_refusal(target, {.our_uid = 1000, .cap_perfmon = false, .paranoid = 3});
    EXPECT_NE(line.find("perf_event_paranoid is 3"), std::string::npos) << line;
    EXPECT_NE(line.find("sysctl kernel.perf_event_paranoid=2"), std::string::npos) << line;
}

TEST(AttachRefusal, SameUserPointsAtSecurityModules) {
    ProcessInfo target{42, "app", "", 1000};
    const auto line =
        explain_attach_refusal(target, {.our_uid = 1000, .cap_perfmon = false, .paranoid = 2});
    EXPECT_NE(line.find("security module"), std::string::npos) << line;
}

}  // namespace
}  // namespace lockprof::record
