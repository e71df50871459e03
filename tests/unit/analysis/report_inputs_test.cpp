// The explanation's evidence from a sampled run: whether samples are read as naming the
// instruction that caused the event (zero skid) follows what precise_ip means on the CPU that
// ran, not the granted level alone. The folded stacks of a build without -g.
#include "lockprof/analysis/report_inputs.hpp"

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/common/files.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/attribution/acquire_loop.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/results/result_reader.hpp"
#include "support/sanitizers.hpp"
#include "support/temp_dir.hpp"

namespace lockprof::analysis {
namespace {

workload::RunResult sampled_run(const std::string& arch, int precise_ip) {
    workload::RunResult run;
    run.provenance.arch = arch;
    run.spec.locks = {"tas"};
    run.spec.threads = {2};
    run.calibration.ticks_per_ns = 1.0;
    workload::CellResult cell;
    cell.lock = cell.algorithm = "tas";
    cell.threads = 2;
    workload::TrialResult trial;
    trial.wall_ns = 1000;  // a result file's figures are consistent: the threads' window
    for (unsigned i = 0; i < 2; ++i) {
        workload::ThreadResult thread;
        thread.index = i;
        thread.acquires = 1000;
        thread.end_ns = 1000;
        thread.sampled = true;
        if (i == 0) thread.samples.push_back({0x1000, 1, 1, 1, {}, 0});
        trial.threads.push_back(thread);
    }
    cell.trials.push_back(trial);
    run.cells.push_back(cell);
    measure::SamplingInfo info;
    info.sampler = "perf";
    info.event = info.requested_event = "cycles";
    info.frequency = 1000;
    info.precise_ip = precise_ip;
    run.sampling = info;
    return run;
}

// The run as a result file written before "skid" existed (the first arm64 guest runs), read
// back.
workload::RunResult read_back_without_skid(const workload::RunResult& run) {
    auto doc = report::to_json(run, {});
    doc["sampling"].erase("skid");
    return results::result_from_json(doc);
}

bool evidence_is_precise(const workload::RunResult& run) {
    const auto summaries = analysis::summarize(run);
    attribution::RunAttribution attribution;
    attribution.cells.resize(run.cells.size());
    attribution.cells[0].samples = 1;
    const auto evidence = gather_evidence(run, summaries, &attribution);
    EXPECT_EQ(evidence.size(), 1u);
    return !evidence.empty() && evidence[0].precise;
}

TEST(GatherEvidence, Arm64PreciseIpIsNotZeroSkid) {
    // arm64 grants precise_ip 2 on PMUv3 and ignores it: the samples still have skid.
    EXPECT_FALSE(evidence_is_precise(read_back_without_skid(sampled_run("aarch64", 2))));
    // x86 precise_ip 2 is zero skid (PEBS with the IP fix-up, IBS); 1 is constant skid.
    EXPECT_TRUE(evidence_is_precise(read_back_without_skid(sampled_run("x86_64", 2))));
    EXPECT_FALSE(evidence_is_precise(read_back_without_skid(sampled_run("x86_64", 1))));
}

// An instruction of this binary's measured_loop<`lock_class`<...>, false> inside its acquire
// loop as the DWARF rule marks it (an atomic where the loop has one), and one of its release,
// both as runtime addresses; {0, 0} when there is no such loop.
struct LoopAddresses {
    std::uint64_t in_acquire_loop = 0, in_release = 0;
};
LoopAddresses release_test_loop_addresses(const symbols::SymbolResolver& resolver,
                                          const std::string& lock_class) {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    const auto here =
        reinterpret_cast<std::uint64_t>(reinterpret_cast<const void*>(&attribution::attribute));
    const std::uint64_t bias = resolver.resolve(here).bias;
    for (auto& f : symbols::function_symbols(self)) {
        if (!attribution::is_measured_loop(f.name) ||
            f.name.find("Verifying<") != std::string::npos ||
            f.name.find("::" + lock_class + "<") == std::string::npos ||
            f.name.find(", false>(") == std::string::npos)
            continue;
        attribution::HotFunction loop;
        loop.name = f.name;
        LoopAddresses out;
        for (const auto& insn :
             symbols::Disassembler().disassemble(self, f.address, f.address + f.size)) {
            attribution::AnnotatedInstruction ai;
            ai.instruction = insn;
            const auto chain = resolver.inlined_at(insn.address + bias);
            for (const auto& name : chain) ai.in_lock |= attribution::is_lock_function(name);
            if (!out.in_release &&
                attribution::loop_phase(chain) == attribution::LoopPhase::release)
                out.in_release = insn.address + bias;
            loop.instructions.push_back(ai);
        }
        attribution::mark_acquire_loop(loop);
        for (const auto& ai : loop.instructions)
            if (ai.in_acquire_loop && (!out.in_acquire_loop || ai.instruction.is_atomic()))
                out.in_acquire_loop = ai.instruction.address + bias;
        if (out.in_acquire_loop && out.in_release) return out;
    }
    return {};
}

// A run of tas and cas at 2 threads whose samples are 90% in each loop's acquire loop and 10%
// in its release, resolved against `modules`.
workload::RunResult release_test_run(const std::vector<measure::MappedModule>& modules,
                                     const std::vector<LoopAddresses>& loops) {
    workload::RunResult run = sampled_run("x86_64", 0);
    run.cells.clear();
    const std::vector<std::string> locks = {"tas", "cas"};
    for (std::size_t i = 0; i < locks.size(); ++i) {
        workload::CellResult cell;
        cell.lock = cell.algorithm = locks[i];
        cell.threads = 2;
        workload::TrialResult trial;
        workload::ThreadResult thread;
        thread.sampled = true;
        for (int s = 0; s < 100; ++s)
            thread.samples.push_back(
                {s < 90 ? loops[i].in_acquire_loop : loops[i].in_release, 1, 1, 1, {}, 0});
        trial.threads.push_back(thread);
        cell.trials.push_back(trial);
        run.cells.push_back(cell);
    }
    run.sampling->modules = modules;
    return run;
}

// lockprof built without -g (Release, what packagers ship): its folded stacks still end in the
// acquire loop, told apart from the rest of the loop by the annotation's rule, and the
// annotation says once what -g adds. This test binary's own measured loops of tas and cas,
// resolved against a copy stripped of its debug information (its build id kept, so the run's
// mappings point at it as `--binary COPY` does); the same samples resolved against the binary
// with its DWARF keep the full phases.
TEST(FoldedStacks, WithoutDebugInformationTheAcquireLoopIsStillALeaf) {
#if defined(LOCKPROF_TEST_TSAN)
    GTEST_SKIP() << "TSan turns the lock's atomics into calls to its runtime; the real loop's "
                    "code is checked in the other builds";
#endif
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    // The objcopy of the binary's own architecture, named as its objdump is: under qemu-user
    // an aarch64 binary needs aarch64-linux-gnu-objcopy, the host's cannot write it.
    const std::string objdump = symbols::default_objdump(self);
    const std::string objcopy = objdump.substr(0, objdump.rfind("objdump")) + "objcopy";
    for (const std::string& tool : {objdump, objcopy})
        if (!lockprof::program_exists(tool)) GTEST_SKIP() << tool << " not found";
    const auto modules = symbols::process_modules();
    const symbols::SymbolResolver with_dwarf(modules);
    std::vector<LoopAddresses> loops;
    for (const std::string lock_class : {"TasLock", "CasLock"}) {
        loops.push_back(release_test_loop_addresses(with_dwarf, lock_class));
        ASSERT_TRUE(loops.back().in_acquire_loop && loops.back().in_release)
            << "no measured_loop<" << lock_class << "<...>, false> with an acquire loop and a "
            << "release in this binary";
    }
    test::TempDir dir;
    const auto stripped = dir / "lockprof_unit_tests";
    ASSERT_EQ(
        std::system((objcopy + " --strip-debug '" + self.string() + "' '" + stripped.string() + "'")
                        .c_str()),
        0);
    auto without_dwarf = modules;
    ASSERT_GT(
        symbols::redirect_modules(without_dwarf, stripped, symbols::build_id_of(stripped)).mappings,
        0u);
    ASSERT_TRUE(
        symbols::SymbolResolver(without_dwarf).source_line(loops[0].in_release).first.empty())
        << "the stripped copy still has line information";

    const auto run = release_test_run(without_dwarf, loops);
    const auto attributed = attribution::attribute(run, {});
    ASSERT_EQ(attributed.cells.size(), 2u);
    EXPECT_EQ(attributed.notes, std::vector<std::string>{attribution::phases_without_lines_note()});
    const std::string folded = exporting::to_folded_text(
        attribution::folded_stacks(run, attributed, attribution::Leaf::phase), "");
    for (const std::string lock : {"tas", "cas"}) {
        SCOPED_TRACE(lock);
        const std::string cell = lock + "/2t;measured_loop<" + (lock == "tas" ? "Tas" : "Cas");
        const std::regex acquire_loop(
            "(^|\n)" + cell + R"(Lock<[^;\n]*;acquire loop;\+0x[0-9a-f]+ [a-z][^;\n]* 90\n)");
        const std::regex rest("(^|\n)" + cell +
                              R"(Lock<[^;\n]*;rest of loop;\+0x[0-9a-f]+ [a-z][^;\n]* 10\n)");
        EXPECT_TRUE(std::regex_search(folded, acquire_loop)) << folded;
        EXPECT_TRUE(std::regex_search(folded, rest)) << folded;
    }
    const auto& tas = attributed.cells[0];
    EXPECT_TRUE(tas.phases_without_lines);
    EXPECT_EQ(attribution::describe_phases(tas), "acquire loop 90.0%, rest of loop 10.0%");

    // With -g: the full phases, as before, and nothing to say.
    const auto full_run = release_test_run(modules, loops);
    const auto full = attribution::attribute(full_run, {});
    EXPECT_TRUE(full.notes.empty());
    const std::string phased = exporting::to_folded_text(
        attribution::folded_stacks(full_run, full, attribution::Leaf::phase), "");
#if defined(LOCKPROF_TEST_ASAN)
    // ASan's -O1 instrumented loop: its inline chains still give the acquire, but the marked
    // retry loop need not hold the instruction sampled here.
    EXPECT_NE(phased.find(";acquire"), std::string::npos) << phased;
#else
    EXPECT_NE(phased.find(";acquire loop;"), std::string::npos) << phased;
#endif
    EXPECT_NE(phased.find(";release;"), std::string::npos) << phased;
    EXPECT_EQ(phased.find("rest of loop"), std::string::npos) << phased;
}

TEST(GatherEvidence, FollowsTheRecordedSkid) {
    auto run = sampled_run("aarch64", 2);
    run.sampling->skid = measure::Skid::arbitrary;
    EXPECT_FALSE(evidence_is_precise(run));
    run = sampled_run("x86_64", 2);
    run.sampling->skid = measure::Skid::zero;
    EXPECT_TRUE(evidence_is_precise(run));
    run.sampling->skid = measure::Skid::constant;
    EXPECT_FALSE(evidence_is_precise(run));
}

}  // namespace
}  // namespace lockprof::analysis
