// `--call-graph fp|dwarf`: which call stacks `record` and sampled runs take, and the usage
// errors around it. The DWARF tests record lockprof_dwarf_helper (built -O2
// -fomit-frame-pointer, as Debian builds PostgreSQL): its hot function sits under
// main -> dwarf_outer -> dwarf_middle, which unwinding .eh_frame reaches and the kernel's
// frame-pointer walk does not. They skip where perf_event sampling does not work.
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace lockprof::test {
namespace {

using nlohmann::json;

// Why perf_event sampling with stack copies does not work here, "" when it does.
std::string stack_sampling_unavailable() {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_freq = 1000;
    attr.freq = 1;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = 1u << 6;  // any register: the kernel checks the mask's validity
    attr.sample_stack_user = 8192;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0)
        return std::string("perf_event sampling with stack copies fails here (") +
               std::strerror(errno) + "; qemu-user answers ENOSYS)";
    close(static_cast<int>(fd));
    return "";
}

// Folded stacks as stack -> weight.
std::map<std::string, std::uint64_t> read_folded(const std::string& text) {
    std::map<std::string, std::uint64_t> out;
    std::istringstream lines(folded_stack_lines(text));
    for (std::string line; std::getline(lines, line);) {
        const auto space = line.rfind(' ');
        if (space == std::string::npos) continue;
        out[line.substr(0, space)] += std::stoull(line.substr(space + 1));
    }
    return out;
}

// The weight of the stacks that contain `frames` ("a;b;c"), and of all stacks.
std::pair<std::uint64_t, std::uint64_t> weight_with(
    const std::map<std::string, std::uint64_t>& folded, const std::string& frames) {
    std::uint64_t with = 0, all = 0;
    for (const auto& [stack, weight] : folded) {
        all += weight;
        if ((";" + stack + ";").find(";" + frames + ";") != std::string::npos) with += weight;
    }
    return {with, all};
}

TEST(CliCallGraph, RecordDwarfReachesTheOuterFunctionsWhereFramePointersStop) {
    if (const auto why = stack_sampling_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir dir;
    const auto dwarf =
        run_lockprof({"record", "--no-counters", "--sample", "--call-graph", "dwarf", "--folded",
                      (dir / "dwarf.folded").string(), "--output", (dir / "dwarf.json").string(),
                      "--", LOCKPROF_DWARF_HELPER, "300"});
    ASSERT_EQ(dwarf.exit_code, 0) << dwarf.err << dwarf.out;
    const auto fp =
        run_lockprof({"record", "--no-counters", "--sample", "--call-graph", "fp", "--folded",
                      (dir / "fp.folded").string(), "--", LOCKPROF_DWARF_HELPER, "300"});
    ASSERT_EQ(fp.exit_code, 0) << fp.err << fp.out;

    const auto unwound = read_folded(read_all(dir / "dwarf.folded"));
    const auto walked = read_folded(read_all(dir / "fp.folded"));
    const auto [chain, all] = weight_with(unwound, "main;dwarf_outer;dwarf_middle;dwarf_inner");
    const auto [inner, ignored] = weight_with(unwound, "dwarf_inner");
    ASSERT_GT(inner, 0u) << read_all(dir / "dwarf.folded");
    // Nearly every sample in dwarf_inner comes with its whole chain up to main (a sample on
    // the first instructions of a call may lack a frame).
    EXPECT_GE(chain * 10, inner * 9) << read_all(dir / "dwarf.folded");
    EXPECT_GT(all, 0u);
    // The frame-pointer walk cannot link these frames: never the callers of dwarf_inner.
    EXPECT_EQ(weight_with(walked, "dwarf_middle;dwarf_inner").first, 0u)
        << read_all(dir / "fp.folded");

    // Said in the report and the JSON.
    EXPECT_NE(dwarf.out.find("call stacks: unwound from 8192-byte stack copies (--call-graph "
                             "dwarf)"),
              std::string::npos)
        << dwarf.out;
    EXPECT_NE(fp.out.find("call stacks: frame pointers"), std::string::npos) << fp.out;
    const json doc = json::parse(read_all(dir / "dwarf.json"));
    EXPECT_EQ(doc["sampling"]["call_graph"], "dwarf");
    EXPECT_EQ(doc["sampling"]["stack_size"], 8192);
    EXPECT_GE(doc["sampling"]["unwound"].get<std::uint64_t>(),
              doc["sampling"]["samples"].get<std::uint64_t>());
}

TEST(CliCallGraph, RunDwarfFoldedStacksHoldTheWorkersFrames) {
    if (const auto why = stack_sampling_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir dir;
    const auto r = run_lockprof({"--lock",
                                 "tas",
                                 "--threads",
                                 "2",
                                 "--duration",
                                 "200ms",
                                 "--trials",
                                 "1",
                                 "--sample",
                                 "--sampler",
                                 "perf",
                                 "--call-graph",
                                 "dwarf,4096",
                                 "--leaf",
                                 "function",
                                 "--folded",
                                 (dir / "run.folded").string(),
                                 "--samples-out",
                                 (dir / "s.json").string(),
                                 "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto folded = read_folded(read_all(dir / "run.folded"));
    const auto all = weight_with(folded, "worker_main").second;
    ASSERT_GT(all, 0u);
    // The measured loop's samples, unwound up through the worker's entry function.
    std::uint64_t in_loop = 0, under_worker = 0;
    for (const auto& [stack, weight] : folded)
        if (stack.find("measured_loop<") != std::string::npos) {
            in_loop += weight;
            if (stack.find("worker_main;") != std::string::npos) under_worker += weight;
        }
    ASSERT_GT(in_loop, 0u) << read_all(dir / "run.folded");
    EXPECT_GE(under_worker * 10, in_loop * 9) << read_all(dir / "run.folded");
    // The worker's caller in glibc is named as a frame-pointer run names it (start_thread where
    // glibc's symbols are installed): the files libdwfl mapped into lockprof to unwind must not
    // read as mappings of the libraries when the run's own samples are resolved.
    const auto fp = run_lockprof({"--lock", "tas", "--threads", "2", "--duration", "200ms",
                                  "--trials", "1", "--sample", "--sampler", "perf", "--leaf",
                                  "function", "--folded", (dir / "fp.folded").string(), "--quiet"});
    ASSERT_EQ(fp.exit_code, 0) << fp.err;
    std::string caller;
    for (const auto& [stack, weight] : read_folded(read_all(dir / "fp.folded"))) {
        const auto at = stack.find(";worker_main;");
        if (at == std::string::npos) continue;
        caller = stack.substr(0, at);
        caller = caller.substr(caller.rfind(';') + 1);
        break;
    }
    ASSERT_FALSE(caller.empty()) << read_all(dir / "fp.folded");
    EXPECT_GT(weight_with(folded, caller + ";worker_main").first, 0u)
        << caller << "\n"
        << read_all(dir / "run.folded");
    const json doc = json::parse(read_all(dir / "s.json"));
    EXPECT_EQ(doc["sampling"]["call_graph"], "dwarf");
    EXPECT_EQ(doc["sampling"]["stack_size"], 4096);
    EXPECT_GT(doc["sampling"]["unwound"].get<std::uint64_t>(), 0u);
    // The unwound chains are kept in the samples file; the copies are not.
    EXPECT_EQ(doc.dump().find("user_stack"), std::string::npos);
}

TEST(CliCallGraph, ImpossibleCombinationsAreOneLineUsageErrors) {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const Case cases[] = {
        {{"--lock", "tas", "--call-graph", "dwarf"}, "nothing takes call stacks without --sample"},
        {{"--lock", "tas", "--sample", "--sampler", "timer", "--call-graph", "dwarf"},
         "--call-graph dwarf needs the perf sampler"},
        {{"--lock", "tas", "--sample", "--call-graph", "lbr"}, "'lbr' is not a call-graph method"},
        {{"--lock", "tas", "--sample", "--call-graph", "dwarf,100"}, "multiple of 8 bytes"},
        {{"--lock", "tas", "--sample", "--call-graph", "fp,8192"}, "fp takes no size"},
        {{"record", "--call-graph", "dwarf", "--", "true"},
         "nothing takes call stacks without --sample or --spin"},
    };
    for (const auto& c : cases) {
        const auto r = run_lockprof(c.args);
        EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
    }
}

TEST(CliCallGraph, HelpTeachesTheOptionForRunAndRecord) {
    for (const auto& args :
         {std::vector<std::string>{"--help"}, std::vector<std::string>{"record", "--help"}}) {
        const auto r = run_lockprof(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.out.find("--call-graph"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("fp|dwarf[,SIZE]"), std::string::npos) << r.out;
    }
}

}  // namespace
}  // namespace lockprof::test
