// Golden tests of the default command: table shape, JSON and CSV content, bad input.
#include <chrono>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

using lockprof::test::run_lockprof;
using lockprof::test::TempDir;

TEST(CliRun, HelpTeachesAndExitsZero) {
    auto r = run_lockprof({"--help"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("Usage:"), std::string::npos);
    EXPECT_NE(r.out.find("--lock"), std::string::npos);
    EXPECT_NE(r.out.find("Examples:"), std::string::npos);
    EXPECT_NE(r.out.find("list-locks"), std::string::npos);
}

TEST(CliRun, VersionNamesBuild) {
    auto r = run_lockprof({"--version"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("lockprof 0."), std::string::npos);
    EXPECT_NE(r.out.find("built with"), std::string::npos);
}

TEST(CliRun, TableHasOneSectionPerThreadCountAndOneRowPerLock) {
    auto r =
        run_lockprof({"--lock=tas,ttas,cas", "--threads=1,2", "--duration=50ms", "--trials=2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Brief (the default): the thread count heads each table's lock column.
    EXPECT_NE(r.out.find("\n  1 thread  delay"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n  2 threads  delay"), std::string::npos) << r.out;
    for (const char* column :
         {"acquires/s", "cpu ns/acq", "rmw/acq", "spins/acq", "fairness", "vs first"})
        EXPECT_NE(r.out.find(column), std::string::npos) << column;
    // Each lock appears once per thread count, the first as the baseline.
    std::size_t baselines = 0, pos = 0;
    while ((pos = r.out.find("baseline", pos)) != std::string::npos) ++baselines, ++pos;
    EXPECT_EQ(baselines, 2u);
    EXPECT_NE(r.out.find("  ttas "), std::string::npos);
    EXPECT_NE(r.out.find("  cas "), std::string::npos);
    EXPECT_TRUE(r.err.empty()) << "no progress output when stderr is not a terminal: " << r.err;
    // Two trials: the comparisons state their limit instead of a verdict or an interval.
    EXPECT_NE(r.out.find("x, too few trials (2 per side)"), std::string::npos) << r.out;
    // One line for the four pairs that share the limit.
    EXPECT_NE(r.out.find("ttas, cas vs tas at 1 and 2 threads: 2 trials per side: too few for an "
                         "interval (at least 3 per side); run --trials 5 or more"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("acquires/s: geometric mean of trials; vs first: their ratio at 98.75% "
                         "(Bonferroni over 4)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("within noise"), std::string::npos) << r.out;

    // --verbose: the sections, columns and sentences in full.
    r = run_lockprof(
        {"--lock=tas,ttas,cas", "--threads=1,2", "--duration=20ms", "--trials=2", "--verbose"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\n1 thread\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n2 threads\n"), std::string::npos) << r.out;
    for (const char* column : {"  ns/acq", "ticks/acq", "context_switches/acq"})
        EXPECT_NE(r.out.find(column), std::string::npos) << column << "\n" << r.out;
    EXPECT_NE(r.out.find("ttas vs tas at 1 thread: 2 trials per side: too few for an interval "
                         "(at least 3 per side); run --trials 5 or more"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("vs first: verdicts: ratio of geometric means"), std::string::npos);
    EXPECT_NE(r.out.find("(Bonferroni: 95% over 4 comparisons)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("build: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("lock page normal (heap), pin none"), std::string::npos) << r.out;
}

TEST(CliRun, JsonAndCsvCarryResultsAndProvenance) {
    TempDir dir;
    auto r = run_lockprof({"--lock=tas,cas", "--threads=2", "--acquires=2000", "--trials=2",
                           "--latency", "--output", (dir / "r.json").string(), "--csv",
                           (dir / "r.csv").string(), "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << "--quiet prints no table";
    // Each file written is named once, at the end, on stderr (--quiet is about the table).
    EXPECT_EQ(r.err, "lockprof: wrote " + (dir / "r.json").string() + "\nlockprof: wrote " +
                         (dir / "r.csv").string() + "\n");
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(dir / "r.json"));
    EXPECT_EQ(doc["schema"], "lockprof.result");
    EXPECT_EQ(doc["schema_version"], 1);
    EXPECT_FALSE(doc["interrupted"].get<bool>());
    for (const char* key : {"cpu_model", "kernel", "perf_event_paranoid", "vm_hint", "compiler",
                            "compiler_flags", "build_type", "assertions", "lockprof_version",
                            "git_revision", "command_line", "timestamp_utc"})
        EXPECT_TRUE(doc["provenance"].contains(key)) << key;
    EXPECT_NE(doc["provenance"]["command_line"].get<std::string>().find("--acquires=2000"),
              std::string::npos);
    ASSERT_EQ(doc["cells"].size(), 2u);
    const auto& cell = doc["cells"][1];
    EXPECT_EQ(cell["lock"], "cas");
    EXPECT_EQ(cell["lost_updates"], 0);
    EXPECT_EQ(cell["overlaps"], 0);
    EXPECT_EQ(cell["trials"][0]["threads"][0]["overlaps"], 0);
    // One verification trial per cell, of the measured trials' shape, kept apart from them.
    ASSERT_TRUE(cell["verification"].is_object()) << cell.dump();
    EXPECT_EQ(cell["verification"]["trials"], 1);
    EXPECT_EQ(cell["verification"]["acquires"], 4000);
    EXPECT_EQ(cell["verification"]["overlaps"], 0);
    EXPECT_EQ(cell["verification"]["lost_updates"], 0);
    EXPECT_EQ(cell["trials"].size(), 2u);
    EXPECT_EQ(cell["trials"][0]["threads"].size(), 2u);
    EXPECT_EQ(cell["trials"][0]["threads"][0]["acquires"], 2000);
    EXPECT_TRUE(cell["summary"].contains("latency_ns"));
    EXPECT_GT(cell["summary"]["acquires_per_second"]["median"].get<double>(), 0);
    EXPECT_EQ(cell["summary"]["comparison"]["baseline"], "tas");

    const std::string csv = lockprof::test::read_all(dir / "r.csv");
    EXPECT_EQ(csv.substr(0, csv.find('\n')).substr(0, 40),
              std::string("lock,algorithm,flavour,delay,threads,tri"));
    EXPECT_EQ(lockprof::test::count_lines(csv), 3);  // header + 2 cells
    EXPECT_NE(csv.find("\ncas,cas,,"), std::string::npos) << csv;
}

// Every file a run writes, its own and its extensions' (plot, HTML report, folded stacks,
// flamegraph, pprof, samples), is named once on stderr after the table and all the outputs;
// stdout carries only the table, and "-" (stdout) is not a file to name (issue 30).
TEST(CliRun, EveryFileWrittenIsNamedOnceAfterTheRun) {
    TempDir dir;
    const std::vector<std::pair<std::string, std::string>> files{
        {"--output", "r.json"},           {"--plot", "r.svg"},           {"--report", "r.html"},
        {"--folded", "r.folded"},         {"--flamegraph", "flame.svg"}, {"--pprof", "r.pb.gz"},
        {"--samples-out", "samples.json"}};
    std::vector<std::string> args{"--lock=tas", "--threads=1", "--duration=50ms",
                                  "--trials=1", "--csv",       "-"};
    for (const auto& [option, name] : files) {
        args.push_back(option);
        args.push_back((dir / name).string());
    }
    const auto r = run_lockprof(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& [option, name] : files) {
        const std::string line = "lockprof: wrote " + (dir / name).string() + "\n";
        EXPECT_TRUE(std::filesystem::exists(dir / name)) << option;
        EXPECT_EQ(lockprof::test::occurrences(r.err, line), 1) << option << ":\n" << r.err;
    }
    EXPECT_EQ(r.err.find("wrote -"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("wrote"), std::string::npos) << "stdout keeps the table: " << r.out;
    EXPECT_NE(r.out.find("lock,algorithm,flavour"), std::string::npos) << "--csv - on stdout";
    // The lines close stderr, after every output: nothing but them from the first on.
    const std::string tail = r.err.substr(r.err.find("lockprof: wrote "));
    EXPECT_EQ(lockprof::test::occurrences(tail, "\n"), static_cast<int>(files.size())) << tail;
}

// On a terminal (a pseudo-terminal from script(1)), the progress line of a sweep of more than
// a few seconds says the time left, rewritten in place, and is cleared before the outputs; with
// stderr a file or pipe there is none (CliRun.TableHasOneSectionPerThreadCountAndOneRowPerLock).
TEST(CliRun, ProgressOnATerminalSaysTheTimeLeft) {
    if (lockprof::test::find_program({"script"}).empty())
        GTEST_SKIP() << "script (util-linux) is not installed: no pseudo-terminal to run on";
    TempDir dir;
    // 0.2 s verifying, then 5 trials of 1 s: more than kShowTimeLeftFrom (5 s).
    const std::string run = lockprof::test::shell_quote(LOCKPROF_BIN) +
                            " --lock=tas --threads=1 --duration=1s --trials=5 --quiet --output " +
                            lockprof::test::shell_quote((dir / "r.json").string()) + " >/dev/null";
    const auto r =
        lockprof::test::shell("script -qec " + lockprof::test::shell_quote(run) + " /dev/null");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("\r\033[K[0/5, about "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("s left] checking exclusion: tas with 1 thread"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\r\033[K[1/5, about "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\r\033[K[5/5, about "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("s left] tas with 1 thread, trial 5/5"), std::string::npos) << r.out;
    // Cleared before the file's line: the terminal's last line is not the progress.
    EXPECT_NE(r.out.find("\r\033[Klockprof: wrote "), std::string::npos) << r.out;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(dir / "r.json"));
    EXPECT_EQ(doc.dump().find("left]"), std::string::npos);
}

TEST(CliRun, DataPlacementIsRecordedAndShown) {
    TempDir dir;
    auto r = run_lockprof({"--lock=tas", "--threads=2", "--acquires=2000", "--trials=1",
                           "--data=same-line", "--output", (dir / "r.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("on 1 shared line on the lock's line"), std::string::npos) << r.out;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(dir / "r.json"));
    EXPECT_EQ(doc["config"]["data"], "same-line");
    EXPECT_EQ(doc["cells"][0]["lost_updates"], 0);
    EXPECT_EQ(doc["cells"][0]["overlaps"], 0);
    // The table says what proved exclusion, in one line.
    EXPECT_NE(r.out.find("exclusion: no second holder in 4000 checked acquires (a verification "
                         "trial before the measured ones)"),
              std::string::npos)
        << r.out;
    r = run_lockprof({"--lock=tas", "--threads=1", "--acquires=100", "--trials=1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("on 1 shared line apart from the lock"), std::string::npos) << r.out;
    r = run_lockprof({"--help"});
    EXPECT_NE(r.out.find("--data"), std::string::npos);
    EXPECT_NE(r.out.find("lockhammer"), std::string::npos) << "--help explains the comparison";
}

// The pin mode is read back from result files, so compare can warn when two runs differ in it.
TEST(CliRun, ResultFilesKeepThePinSoCompareWarns) {
    TempDir dir;
    const auto base = (dir / "base.json").string(), pinned = (dir / "pinned.json").string();
    for (const auto& [file, pin] : {std::pair{base, "none"}, std::pair{pinned, "0"}}) {
        auto r = run_lockprof({"--lock=tas", "--threads=1", "--duration=20ms", "--trials=2",
                               std::string("--pin=") + pin, "--quiet", "--output", file});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    auto r = run_lockprof({"compare", base, pinned});
    EXPECT_NE((r.out + r.err).find("workload.pin differs (base: 'none', new: 'list')"),
              std::string::npos)
        << r.out << r.err;
}

TEST(CliRun, ProfilesLoadAndTheCommandLineWins) {
    auto r = run_lockprof({"--profile", std::string(LOCKPROF_SOURCE_DIR) + "/profiles/quick.ini",
                           "--threads=1", "--trials=1", "--duration=20ms"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\n  1 thread "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\n  2 threads "), std::string::npos) << "--threads overrides profile";
}

TEST(CliRun, ShippedProfilesAreValid) {
    // Every profile shipped, so a new one cannot rely on what lockprof refuses (a duration
    // without its unit, issue 30).
    std::size_t profiles = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(LOCKPROF_SOURCE_DIR) + "/profiles")) {
        if (entry.path().extension() != ".ini") continue;
        ++profiles;
        const std::string profile = entry.path().string();
        // Parse and plan each profile without running it: an impossible --watchdog value is
        // checked after the profile, so exit 2 with the watchdog message proves it loaded.
        auto r = run_lockprof({"--profile", profile, "--watchdog=1ms"});
        EXPECT_EQ(r.exit_code, 2) << profile;
        EXPECT_NE(r.err.find("--watchdog: at least 100ms"), std::string::npos)
            << profile << ": " << r.err;
    }
    EXPECT_GE(profiles, 5u);
}

TEST(CliRun, AProfileDurationWithoutItsUnitIsRefused) {
    TempDir dir;
    const auto path = (dir / "bare.ini").string();
    std::ofstream(path) << "lock = tas\nthreads = 1\nduration = 100\n";
    auto r = run_lockprof({"--profile", path});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--duration: '100' has no unit; write e.g. 100ms or 100s"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

struct BadInput {
    std::vector<std::string> args;
    std::string message;
};

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, OneLineExitTwo) {
    auto r = run_lockprof(GetParam().args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("lockprof: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliBadInput,
    ::testing::Values(
        BadInput{{"--lock=tsa"}, "unknown lock 'tsa' (did you mean 'tas'?); known locks: tas,"},
        BadInput{{"--lock=tas,,cas"}, "empty entry"}, BadInput{{"--threads="}, "--threads"},
        BadInput{{"--threads=0"}, "0 is not a thread count"},
        BadInput{{"--threads=1,x"}, "'x' is not a number"},
        BadInput{{"--duration=-1s"}, "is negative"},
        BadInput{{"--duration=5parsecs"}, "unknown unit"},
        BadInput{{"--duration=0"}, "must be longer than 0"},
        // A bare number once meant seconds without a word (issue 30): every duration option.
        BadInput{{"--duration=100"}, "--duration: '100' has no unit; write e.g. 100ms or 100s"},
        BadInput{{"--duration", "100"}, "--duration: '100' has no unit"},
        BadInput{{"--warmup=200"}, "--warmup: '200' has no unit; write e.g. 200ms or 200s"},
        BadInput{{"--watchdog=10"}, "--watchdog: '10' has no unit; write e.g. 10ms or 10s"},
        BadInput{{"--acquires=-3"}, "--acquires"}, BadInput{{"--trials=0"}, "at least 1"},
        BadInput{{"--equivalence=50%"}, "--equivalence: '50%' is out of range"},
        BadInput{{"--equivalence=2"}, "write 2% or a fraction like 0.02"},
        BadInput{{"--delay=sleepy"}, "unknown policy 'sleepy'"},
        BadInput{{"--data=elsewhere"},
                 "--data: unknown placement 'elsewhere'; choose same-line or separate"},
        BadInput{{"--read-fraction=-0.1"}, "--read-fraction: -0.1 is outside 0 to 1"},
        BadInput{{"--read-fraction=1.5"}, "--read-fraction: 1.5 is outside 0 to 1"},
        BadInput{{"--read-fraction=abc"}, "--read-fraction: 'abc' is not a number"},
        BadInput{{"--pin=99999"}, "not available"}, BadInput{{"--frobnicate"}, "unknown option"},
        BadInput{{"--thread=2"}, "did you mean '--threads'"},
        BadInput{{"frobnicate"}, "unknown command 'frobnicate'"},
        BadInput{{"--profile=/nonexistent.ini"}, "cannot read"},
        BadInput{{"--output=/nonexistent-dir/r.json"}, "does not exist"}));

// --read-fraction end to end: the split table, the note for a lock without a shared mode (once,
// under the table), and the result file's per-thread reads and mix seeds.
TEST(CliRun, ReadFractionSplitsReadsAndNotesExclusiveOnlyLocks) {
    TempDir dir;
    const auto json_path = (dir / "r.json").string();
    auto r = run_lockprof({"--lock=rw-cas,tas", "--threads=2", "--acquires=2000", "--trials=1",
                           "--read-fraction=0.5", "--output", json_path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("reads/s"), std::string::npos) << r.out;
    const std::string note =
        "note: --read-fraction 0.5: tas has no shared mode and took every acquire exclusive";
    EXPECT_NE(r.out.find(note), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(note), r.out.rfind(note)) << "one note: " << r.out;
    std::ifstream in(json_path);
    const auto doc = nlohmann::json::parse(in);
    EXPECT_EQ(doc["config"]["read_fraction"], 0.5);
    std::uint64_t reads = 0;
    for (const auto& t : doc["cells"][0]["trials"][0]["threads"]) {
        reads += t["read_acquires"].get<std::uint64_t>();
        EXPECT_NE(t["mix_seed"].get<std::uint64_t>(), 0u);
    }
    EXPECT_GT(reads, 0u);
    EXPECT_LT(reads, 4000u);
    for (const auto& t : doc["cells"][1]["trials"][0]["threads"]) EXPECT_EQ(t["read_acquires"], 0);
}

TEST(CliRun, UnknownProfileKeyNamesFileAndLine) {
    TempDir dir;
    const auto path = (dir / "bad.ini").string();
    std::ofstream(path) << "lock = tas\n# note\nthreds = 2\n";
    auto r = run_lockprof({"--profile", path});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(path + ":3: unknown key 'threds' (did you mean 'threads'?)"),
              std::string::npos)
        << r.err;
}

TEST(CliRun, UnwritableOutputLeavesNothingBehind) {
    TempDir dir;
    std::filesystem::create_directory(dir / "ro");
    std::filesystem::permissions(
        dir / "ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    if (access((dir / "ro").c_str(), W_OK) == 0)
        GTEST_SKIP() << "running with CAP_DAC_OVERRIDE (root): cannot make a folder unwritable";
    auto r = run_lockprof({"--output", (dir / "ro" / "r.json").string(), "--threads=1"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(std::filesystem::is_empty(dir / "ro"));
}

TEST(CliRun, OutputIsADirectoryIsRefused) {
    TempDir dir;
    auto r = run_lockprof({"--output", dir.path.string(), "--threads=1"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
}

TEST(CliRun, SigintWritesWhatFinishedAndExits130) {
    TempDir dir;
    const auto json = (dir / "r.json").string();
    // Many short trials (20 s in all); interrupt after some have finished: the four
    // verification trials take the first 0.4 s, and a loaded machine starts slowly.
    const std::string command =
        lockprof::test::shell_quote(LOCKPROF_BIN) +
        " --lock=tas,cas --threads=1,2 --duration=100ms --trials=50 --quiet --output " +
        lockprof::test::shell_quote(json) + " 2>" +
        lockprof::test::shell_quote((dir / "err").string()) +
        " & pid=$!; sleep 3; kill -INT $pid; wait $pid; echo $? > " +
        lockprof::test::shell_quote((dir / "rc").string());
    ASSERT_EQ(std::system(("bash -c " + lockprof::test::shell_quote(command)).c_str()), 0);
    EXPECT_EQ(std::stoi(lockprof::test::read_all(dir / "rc")), 130);
    EXPECT_NE(lockprof::test::read_all(dir / "err").find("interrupted"), std::string::npos);
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(json));
    EXPECT_TRUE(doc["interrupted"].get<bool>());
    std::size_t trials = 0;
    for (const auto& cell : doc["cells"]) trials += cell["trials"].size();
    EXPECT_GT(trials, 0u);
    EXPECT_LT(trials, 200u);
    EXPECT_FALSE(doc["cells"][0]["complete"].get<bool>());
}

TEST(CliRun, OversubscriptionReportsEveryThread) {
    TempDir dir;
    const auto start = std::chrono::steady_clock::now();
    // 200 ms: most of the run is 1024 threads on few CPUs draining after the window (5-6 s
    // here); a 1 s window added its second and nothing the test checks.
    auto r = run_lockprof({"--lock=tas", "--threads=1024", "--duration=200ms", "--trials=1",
                           "--quiet", "--output", (dir / "r.json").string()});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(dir / "r.json"));
    EXPECT_EQ(doc["cells"][0]["trials"][0]["threads"].size(), 1024u);
    // A hang guard with a generous margin, not a performance assertion.
    EXPECT_LT(seconds, 60) << "1024 threads for 200 ms took " << seconds << " s";
}

TEST(CliRun, TrialsAutoStopsEachCellAndSaysWhy) {
    TempDir dir;
    auto r = run_lockprof({"--lock=tas,ttas", "--threads=1", "--duration=20ms", "--trials", "auto",
                           "--max-time", "2s", "--output", (dir / "r.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("trials auto: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" cells settled"), std::string::npos) << r.out;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(dir / "r.json"));
    EXPECT_EQ(doc["config"]["trials"], 3) << "the minimum per cell";
    EXPECT_EQ(doc["config"]["trials_auto"]["max_time_ns"], 2'000'000'000);
    ASSERT_EQ(doc["cells"].size(), 2u);
    for (const auto& cell : doc["cells"]) {
        const std::string reason = cell["stop"]["reason"];
        EXPECT_TRUE(reason == "settled" || reason == "budget") << reason;
        EXPECT_EQ(cell["stop"]["trials"], cell["trials"].size());
        EXPECT_GE(cell["trials"].size(), 3u);
        EXPECT_TRUE(cell["complete"].get<bool>());
        EXPECT_EQ(cell["summary"]["precision"]["narrow"].get<bool>(), reason == "settled");
    }
    // The file reads back: compare and report accept a run whose cells have their own counts.
    auto c = run_lockprof({"compare", (dir / "r.json").string(), (dir / "r.json").string()});
    EXPECT_EQ(c.exit_code, 0) << c.err;
}

TEST(CliRun, TrialsAutoUsageErrorsAreOneLineAndExitTwo) {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases{
        {{"--max-time", "2s"}, "--max-time: only with --trials auto"},
        {{"--trials", "5", "--max-time", "2s"}, "--trials 5 runs exactly 5"},
        {{"--trials", "auto"}, "--trials auto: needs --max-time"},
        {{"--trials", "auto", "--max-time", "0"}, "--max-time: must be longer than 0"},
        {{"--trials", "auto", "--max-time", "soon"}, "--max-time"},
        {{"--trials", "auto", "--max-time", "30"}, "--max-time: '30' has no unit; write e.g. 30ms"},
        {{"--trials", "many"}, "--trials takes a count (5) or auto (with --max-time)"},
    };
    for (const auto& c : cases) {
        auto args = c.args;
        args.insert(args.begin(), {"--lock=tas", "--threads=1", "--acquires=100"});
        const auto r = run_lockprof(args);
        EXPECT_EQ(r.exit_code, 2) << c.says;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
        EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST(CliRun, SigintDuringTrialsAutoKeepsEachCellsFinishedTrials) {
    TempDir dir;
    const auto json = (dir / "r.json").string();
    // A budget of an hour: only the signal ends it (or every cell settling, which 2 threads on
    // this shared machine do not).
    const std::string command =
        lockprof::test::shell_quote(LOCKPROF_BIN) +
        " --lock=tas,cas --threads=2 --duration=50ms --trials auto --max-time 3600s --quiet "
        "--output " +
        lockprof::test::shell_quote(json) + " 2>" +
        lockprof::test::shell_quote((dir / "err").string()) +
        " & pid=$!; sleep 3; kill -INT $pid; wait $pid; echo $? > " +
        lockprof::test::shell_quote((dir / "rc").string());
    ASSERT_EQ(std::system(("bash -c " + lockprof::test::shell_quote(command)).c_str()), 0);
    const int rc = std::stoi(lockprof::test::read_all(dir / "rc"));
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(json));
    std::size_t trials = 0, interrupted = 0;
    for (const auto& cell : doc["cells"]) {
        trials += cell["trials"].size();
        EXPECT_EQ(cell["stop"]["trials"], cell["trials"].size());
        const bool stopped = cell["stop"]["reason"] == "interrupted";
        interrupted += stopped;
        EXPECT_EQ(cell["complete"].get<bool>(), !stopped);
    }
    if (interrupted == 0) GTEST_SKIP() << "every cell settled before the signal";
    EXPECT_EQ(rc, 130);
    EXPECT_TRUE(doc["interrupted"].get<bool>());
    EXPECT_GT(trials, 0u);
    auto c = run_lockprof({"compare", json, json});
    EXPECT_EQ(c.exit_code, 0) << c.err;
}

TEST(CliRun, ProcessesRunTheTrialsInSeveralProcessesAndSaySo) {
    TempDir dir;
    auto r =
        run_lockprof({"--lock=tas,ttas", "--threads=1", "--acquires=2000", "--trials=3",
                      "--processes", "2", "--no-counters", "--output", (dir / "r.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("3 trials in each of 2 processes"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("trials of 2 processes pooled"), std::string::npos) << r.out;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(dir / "r.json"));
    EXPECT_EQ(doc["config"]["processes"], 2);
    ASSERT_EQ(doc["cells"].size(), 2u);
    for (const auto& cell : doc["cells"]) {
        ASSERT_EQ(cell["trials"].size(), 6u);
        EXPECT_TRUE(cell["complete"].get<bool>());
        for (unsigned i = 0; i < 6; ++i) {
            EXPECT_EQ(cell["trials"][i]["trial"], i);
            EXPECT_EQ(cell["trials"][i]["process"], i / 3) << "3 trials from each process";
        }
    }
    EXPECT_EQ(doc["cells"][1]["summary"]["comparison"]["resampled_over"], "trials");
    EXPECT_EQ(doc["cells"][1]["summary"]["comparison"]["processes"], 2);
    auto c = run_lockprof({"compare", (dir / "r.json").string(), (dir / "r.json").string()});
    EXPECT_EQ(c.exit_code, 0) << c.err;

    // From 3 processes on, the verdict resamples over processes.
    r = run_lockprof({"--lock=tas,ttas", "--threads=1", "--acquires=500", "--trials=3",
                      "--processes=3", "--no-counters", "--output", (dir / "r3.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("resampled over 3 processes"), std::string::npos) << r.out;
    r = run_lockprof({"report", (dir / "r3.json").string(), "--verbose"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("resampled over 3 processes (each process's trials pooled into its "
                         "geometric mean"),
              std::string::npos)
        << r.out;
    const auto three = nlohmann::json::parse(lockprof::test::read_all(dir / "r3.json"));
    EXPECT_EQ(three["cells"][1]["trials"].size(), 9u);
    EXPECT_EQ(three["cells"][1]["summary"]["comparison"]["resampled_over"], "processes");
}

TEST(CliRun, ProcessesUsageErrorsAreOneLineAndExitTwo) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"--processes", "0"}, "--processes: must be at least 1"},
        {{"--processes", "2", "--trials", "auto", "--max-time", "1s"},
         "--processes: not with --trials auto"},
        {{"--processes", "2", "--sample"}, "--processes: not with --sample"},
    };
    for (const auto& [extra, says] : cases) {
        std::vector<std::string> args{"--lock=tas", "--threads=1", "--acquires=100"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_lockprof(args);
        EXPECT_EQ(r.exit_code, 2) << says;
        EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
        EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
    }
}

TEST(CliRun, SigintDuringProcessesKeepsTheFinishedTrials) {
    TempDir dir;
    const auto json = (dir / "r.json").string();
    // The signal goes to lockprof alone; it passes it on to the process running.
    const std::string command =
        lockprof::test::shell_quote(LOCKPROF_BIN) +
        " --lock=tas,cas --threads=1 --duration=100ms --trials=20 --processes 3 --no-counters "
        "--quiet --output " +
        lockprof::test::shell_quote(json) + " 2>" +
        lockprof::test::shell_quote((dir / "err").string()) +
        " & pid=$!; sleep 2.5; kill -INT $pid; wait $pid; echo $? > " +
        lockprof::test::shell_quote((dir / "rc").string());
    ASSERT_EQ(std::system(("bash -c " + lockprof::test::shell_quote(command)).c_str()), 0);
    EXPECT_EQ(std::stoi(lockprof::test::read_all(dir / "rc")), 130);
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(json));
    EXPECT_TRUE(doc["interrupted"].get<bool>());
    std::size_t trials = 0;
    for (const auto& cell : doc["cells"]) {
        trials += cell["trials"].size();
        EXPECT_FALSE(cell["complete"].get<bool>());
        EXPECT_EQ(cell["stop"]["reason"], "interrupted");
    }
    EXPECT_GT(trials, 0u);
    EXPECT_LT(trials, 120u);
    auto c = run_lockprof({"compare", json, json});
    EXPECT_EQ(c.exit_code, 0) << c.err;
}
