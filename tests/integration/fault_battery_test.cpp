// The fault battery (issue 18, "Faults"; docs/reliability.md, "Fault battery"): SIGINT and
// SIGTERM at random points of a sweep, of `record -- CMD` and of the outputs being written (JSON,
// CSV, HTML report, flamegraph), once, twice and three times, to lockprof alone or to its whole
// process group as a terminal does; recorded commands that exit, exec, fork or ignore SIGTERM;
// output paths with spaces, newlines and bytes that are not UTF-8. After every run each output
// must be absent or complete and valid (JSON parsed back, SVG parsed as XML, the HTML whole, the
// CSV's header and every row complete), no temporary left beside it, every output present after
// one or two signals, and the exit status 130/143 (128 + the first signal) whenever a signal was
// taken while lockprof still ran.
//
// Random points come from one seeded generator per test: LOCKPROF_FAULT_SEED (default 18021)
// and LOCKPROF_FAULT_ROUNDS (default 1; more multiplies every test's iterations). Each run is
// logged as one line ("fault ...") with the seed, what was sent when, and what came back.
// Injection times are random; nothing asserts how long anything took.
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "cli/process.hpp"

namespace lockprof::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::uint64_t seed() {
    const char* s = std::getenv("LOCKPROF_FAULT_SEED");
    return s && *s ? std::strtoull(s, nullptr, 10) : 18021;
}

unsigned rounds() {
    const char* s = std::getenv("LOCKPROF_FAULT_ROUNDS");
    const unsigned n = s && *s ? static_cast<unsigned>(std::strtoul(s, nullptr, 10)) : 1;
    return n ? n : 1;
}

// One generator per test, from the seed and the test's name, so each test replays alone.
std::mt19937_64 generator() {
    const std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    return std::mt19937_64(seed() ^ std::hash<std::string>{}(name));
}

// --- outputs and their checks --------------------------------------------------------------

enum class Kind { run_json, record_json, csv, html, svg };

struct Output {
    Kind kind;
    fs::path path;
};

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Fields of one CSV line, quotes respected; -1 for an unterminated quote.
int csv_fields(const std::string& line) {
    int fields = 1;
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted) ++fields;
    }
    return quoted ? -1 : fields;
}

// "" when the file at `o.path` is complete and valid, else why not.
std::string invalid(const Output& o, const std::string& csv_header) {
    const std::string text = slurp(o.path);
    if (text.empty()) return "empty";
    switch (o.kind) {
        case Kind::run_json:
        case Kind::record_json: {
            json doc;
            try {
                doc = json::parse(text);
            } catch (const std::exception& e) {
                return std::string("JSON does not parse: ") + e.what();
            }
            const char* schema = o.kind == Kind::run_json ? "lockprof.result" : "lockprof.record";
            if (doc.value("schema", "") != schema) return "not a " + std::string(schema);
            if (o.kind == Kind::run_json && !doc.at("cells").is_array()) return "no cells";
            if (doc.at("interrupted").get<bool>() && !doc.at("interrupted_by").is_string())
                return "interrupted without interrupted_by";
            return "";
        }
        case Kind::csv: {
            std::istringstream in(text);
            std::string line;
            std::getline(in, line);
            // The fixed columns are the baseline's (which has none to compare with yet: it sets
            // them); the event columns follow only for events a finished trial counted.
            const std::string fixed = csv_header.substr(0, csv_header.find(",event_"));
            if (line.rfind(fixed, 0) != 0) return "header is '" + line + "'";
            if (line.rfind("lock,", 0) != 0) return "no header";
            const int fields = csv_fields(line);
            while (std::getline(in, line))
                if (csv_fields(line) != fields) return "incomplete row '" + line + "'";
            if (text.back() != '\n') return "last row unterminated";
            return "";
        }
        case Kind::html:
            if (text.rfind("<!DOCTYPE html>", 0) != 0) return "no doctype";
            if (text.size() < 16 || text.compare(text.size() - 16, 16, "</body>\n</html>\n") != 0)
                return "does not end with </body></html>";
            if (occurrences(text, "<svg") != occurrences(text, "</svg>"))
                return "an SVG is cut short";
            return "";
        case Kind::svg: {
            xmlDocPtr doc = xmlReadMemory(
                text.data(), static_cast<int>(text.size()), "out.svg", nullptr,
                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
            if (!doc) return "SVG is not well-formed XML";
            const bool svg =
                xmlDocGetRootElement(doc) &&
                std::string(reinterpret_cast<const char*>(xmlDocGetRootElement(doc)->name)) ==
                    "svg";
            xmlFreeDoc(doc);
            return svg ? "" : "root element is not <svg>";
        }
    }
    return "unknown kind";
}

// Names of leftover temporaries (".NAME.tmp.PID.HEX") in `folder`.
std::vector<std::string> temporaries(const fs::path& folder) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(folder)) {
        const std::string name = e.path().filename().string();
        if (name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string::npos)
            out.push_back(name);
    }
    return out;
}

std::string printable(const std::string& s) {
    std::string out;
    char hex[8];
    for (unsigned char c : s) {
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    return out;
}

// --- signals ---------------------------------------------------------------------------------

const char* signal_name(int signal) {
    return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "?";
}

// When and what to send: 1-3 signals (each SIGINT or SIGTERM), to lockprof or to its group;
// the later ones a random gap after the one before was taken. The first goes
//  - time: a random time after the start (anywhere from the sweep to the write-out);
//  - table: once the write-out has begun, certainly: stdout is a full pipe, so lockprof blocks
//    writing its table (the first thing it writes) until the signals are sent and the pipe is
//    drained, as with a slow reader of its output;
//  - file: when the k-th output's temporary appears (inotify): during that file's write-out, or
//    later on a loaded machine (the log says when it found the run over).
enum class Trigger { time, table, file };

struct Plan {
    std::vector<int> signals;
    bool to_group = false;
    Trigger trigger = Trigger::time;
    int output_k = 1;          // file: the k-th temporary created
    int at_ms = 0;             // time: after start
    std::vector<int> gaps_ms;  // before each later signal

    std::string describe() const {
        std::string s;
        for (std::size_t i = 0; i < signals.size(); ++i) {
            s += i ? fmt_gap(gaps_ms[i - 1]) : std::string();
            s += signal_name(signals[i]);
        }
        s += to_group ? " to the group" : " to lockprof";
        s += trigger == Trigger::file
                 ? " when output #" + std::to_string(output_k) + " is being written"
             : trigger == Trigger::table ? " while it writes its table to a full pipe"
                                         : " at " + std::to_string(at_ms) + " ms";
        return s;
    }
    static std::string fmt_gap(int ms) { return " +" + std::to_string(ms) + "ms "; }
};

// `how_many` signals: mostly one, often two, sometimes three (the abort).
Plan random_plan(std::mt19937_64& rng, int horizon_ms, int outputs, bool allow_group = true) {
    Plan p;
    const int roll = static_cast<int>(rng() % 100);
    const std::size_t n = roll < 55 ? 1 : roll < 88 ? 2 : 3;
    for (std::size_t i = 0; i < n; ++i) p.signals.push_back(rng() % 2 ? SIGINT : SIGTERM);
    for (std::size_t i = 1; i < n; ++i) p.gaps_ms.push_back(static_cast<int>(rng() % 30));
    p.to_group = allow_group && rng() % 3 == 0;
    const int trigger = static_cast<int>(rng() % 100);
    p.trigger = trigger < 40 ? Trigger::time : trigger < 75 ? Trigger::table : Trigger::file;
    if (outputs == 0 && p.trigger == Trigger::file) p.trigger = Trigger::time;
    p.output_k = outputs > 0 ? 1 + static_cast<int>(rng() % outputs) : 1;
    p.at_ms = static_cast<int>(rng() % static_cast<std::uint64_t>(std::max(1, horizon_ms)));
    return p;
}

struct Injected {
    int sent = 0;   // signals sent while lockprof ran
    int taken = 0;  // of those, taken by one of its threads before it ended
};

// Whether the child has ended (a zombie takes signals without effect), without reaping it.
bool ended(const Child& child) {
    siginfo_t info{};
    return waitid(P_PID, child.pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
}

// Waits until the k-th temporary appears in `folder` (inotify), or the child ends.
bool wait_for_temporary(Child& child, const fs::path& folder, int k) {
    const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return false;
    inotify_add_watch(fd, folder.c_str(), IN_CREATE);
    int seen = 0;
    alignas(inotify_event) char buffer[8192];
    while (!ended(child)) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 5) <= 0) continue;
        const ssize_t n = read(fd, buffer, sizeof buffer);
        for (ssize_t at = 0; at < n;) {
            const auto* e = reinterpret_cast<const inotify_event*>(buffer + at);
            if (e->len && std::string(e->name).find(".tmp.") != std::string::npos) ++seen;
            at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        }
        if (seen >= k) {
            close(fd);
            return true;
        }
    }
    close(fd);
    return false;
}

Injected inject(Child& child, const Plan& plan, const fs::path& folder) {
    Injected r;
    if (plan.trigger == Trigger::file) {
        if (!wait_for_temporary(child, folder, plan.output_k)) return r;
    } else if (plan.trigger == Trigger::table) {
        // Blocked writing to the full pipe: the write-out has begun.
        const std::string wchan = "/proc/" + std::to_string(child.pid) + "/wchan";
        if (!wait_for(child, [&] { return slurp(wchan).find("pipe_write") != std::string::npos; }))
            return r;
    } else {
        // The time counts from when lockprof holds SIGINT and SIGTERM: before main() installs
        // its handlers a signal ends a process that has done nothing and written nothing, as
        // for any program (CI once sent one at 0 ms, before the dynamic loader had finished).
        // From then on run and record apply their policy, options not yet parsed included
        // (CI once sent one 5 ms in, while record's options were parsed under ASan, and the
        // cleanup handler of the time killed it).
        if (!wait_for(child, [&] {
                return signal_caught(child.pid, SIGINT) && signal_caught(child.pid, SIGTERM);
            }))
            return r;
        const auto at = Clock::now() + std::chrono::milliseconds(plan.at_ms);
        while (Clock::now() < at && !ended(child))
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (std::size_t i = 0; i < plan.signals.size(); ++i) {
        if (i) std::this_thread::sleep_for(std::chrono::milliseconds(plan.gaps_ms[i - 1]));
        if (ended(child)) break;
        kill(plan.to_group ? -child.pid : child.pid, plan.signals[i]);
        ++r.sent;
        // Taken: no longer pending while lockprof still runs. Two signals sent before the
        // first is taken would merge into one.
        wait_for(child,
                 [&] { return ended(child) || !signal_pending(child.pid, plan.signals[i]); });
        if (!ended(child)) ++r.taken;
    }
    return r;
}

// --- figures -----------------------------------------------------------------------------------

struct Figures {
    int runs = 0, signals = 0, taken = 0, aborts = 0, outputs = 0, failures = 0;
    ~Figures() {
        std::cout << "fault battery figures: seed " << seed() << ", " << runs << " runs, "
                  << signals << " signals sent (" << taken << " taken while lockprof ran), "
                  << aborts << " third-signal aborts, " << outputs << " output files checked, "
                  << failures << " failed runs\n";
    }
};
Figures& figures() {
    static Figures f;
    return f;
}

// --- one run ---------------------------------------------------------------------------------

struct Invocation {
    std::vector<std::string> args;  // after LOCKPROF_BIN
    std::vector<Output> outputs;
    std::string csv_header;
    bool measuring = true;  // run/record (the interrupt policy), else cleanup-and-die
    int normal_exit = 0;    // what it exits with unsignalled (record: overridden by JSON)
};

struct Result {
    Child child;
    std::string err;
    Injected injected;
    bool ok = true;
};

// Runs it with `plan` (or unsignalled), checks everything the battery promises, logs one line.
Result run_and_check(const Invocation& run, const fs::path& folder, const std::optional<Plan>& plan,
                     const std::string& label) {
    Result r;
    std::vector<std::string> args{LOCKPROF_BIN};
    args.insert(args.end(), run.args.begin(), run.args.end());
    const fs::path out = folder.parent_path() / (folder.filename().string() + ".out");
    const fs::path err = folder.parent_path() / (folder.filename().string() + ".err");
    const bool table = plan && plan->trigger == Trigger::table;
    int pipe_fds[2] = {-1, -1};
    if (table) {
        // Its table goes to a pipe filled to capacity, so it blocks there (--quiet would skip it).
        // lockprof's own --quiet, not a recorded command's (after "--").
        const auto end = std::find(args.begin(), args.end(), std::string("--"));
        if (auto q = std::find(args.begin(), end, std::string("--quiet")); q != end) args.erase(q);
        EXPECT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
        fcntl(pipe_fds[1], F_SETFL, O_NONBLOCK);
        const std::string block(4096, 'x');
        while (write(pipe_fds[1], block.data(), block.size()) > 0) {
        }
        fcntl(pipe_fds[1], F_SETFL, 0);  // lockprof's stdout blocks, as a pipe's does
    }
    r.child = Child::start(args, out, err, pipe_fds[1]);
    if (table) close(pipe_fds[1]);
    EXPECT_GT(r.child.pid, 0);
    if (plan) r.injected = inject(r.child, *plan, folder);
    std::thread drain;
    if (table)
        drain = std::thread([fd = pipe_fds[0]] {
            char buffer[65536];
            while (read(fd, buffer, sizeof buffer) > 0) {
            }
            close(fd);
        });
    const bool finished = r.child.wait(std::chrono::seconds(180));
    if (drain.joinable()) drain.join();
    r.err = slurp(err);
    ++figures().runs;
    figures().signals += r.injected.sent;
    figures().taken += r.injected.taken;

    std::vector<std::string> problems;
    auto problem = [&](const std::string& p) { problems.push_back(p); };
    if (!finished) problem("did not finish (hang)");
    const int first = plan && r.injected.sent ? plan->signals[0] : 0;
    const int taken = r.injected.taken;
    const bool aborted = r.err.find("a third time: aborting") != std::string::npos;
    if (aborted) ++figures().aborts;

    // The outputs: absent or whole; all present after at most two signals (or none).
    std::string states;
    std::optional<json> doc;
    for (const auto& o : run.outputs) {
        const bool exists = fs::exists(o.path);
        std::string why = exists ? invalid(o, run.csv_header) : "";
        states +=
            " " + o.path.extension().string() + (exists ? why.empty() ? "=ok" : "=BAD" : "=absent");
        if (exists) ++figures().outputs;
        if (!why.empty()) problem(printable(o.path.filename().string()) + ": " + why);
        const bool must_exist =
            r.child.exited() && !aborted && (!run.measuring ? r.child.exit_code() == 0 : true) &&
            (r.child.exit_code() == 0 || r.child.exit_code() >= 128 || !run.measuring);
        if (!exists && must_exist && run.measuring && taken <= 2)
            problem(printable(o.path.filename().string()) + " missing after " +
                    std::to_string(taken) + " signal(s)");
        if (!exists && !run.measuring && r.child.exited() && r.child.exit_code() == 0)
            problem(printable(o.path.filename().string()) + " missing after exit 0");
        if (exists && why.empty() && (o.kind == Kind::run_json || o.kind == Kind::record_json))
            doc = json::parse(slurp(o.path));
    }
    if (const auto left = temporaries(folder); !left.empty())
        problem("temporary left: " + printable(left.front()));

    // The exit status.
    int normal = run.normal_exit;
    if (doc && doc->contains("exit_status") && doc->at("exit_status").is_number())
        normal = doc->at("exit_status").get<int>();
    if (run.measuring) {
        if (!r.child.exited()) {
            problem("ended by a signal (" + r.child.describe() + "): the handler did not hold");
        } else if (taken == 0) {
            if (r.child.exit_code() != normal && r.child.exit_code() != 128 + first)
                problem("exit " + std::to_string(r.child.exit_code()) + ", expected " +
                        std::to_string(normal));
        } else if (r.child.exit_code() != 128 + first) {
            // A signal taken as lockprof was returning from main changes nothing: then the
            // run is complete and says so.
            const bool complete = doc && !doc->at("interrupted").get<bool>();
            if (!(r.child.exit_code() == normal && complete))
                problem("exit " + std::to_string(r.child.exit_code()) + " after " +
                        signal_name(first) + ", expected " + std::to_string(128 + first));
        }
        if (doc && doc->at("interrupted").get<bool>() && first &&
            doc->at("interrupted_by") != signal_name(first))
            problem("interrupted_by " + doc->at("interrupted_by").dump() + ", first signal " +
                    signal_name(first));
        if (doc && doc->at("interrupted").get<bool>() && r.child.exit_code() != 128 + first)
            problem("JSON says interrupted, exit " + std::to_string(r.child.exit_code()));
        if (taken >= 3 && r.child.exit_code() == 128 + first && !aborted &&
            r.err.find("every output was written") == std::string::npos &&
            r.err.find("wrote the") == std::string::npos)
            problem("three signals: neither an abort nor a finished write-out on stderr");
    } else if (r.injected.sent > 0) {
        // The other commands end as the signal would, after removing their temporary (so a
        // signal that ends them is sent but never seen taken while they ran).
        if (!(r.child.exited() && r.child.exit_code() == 0) && r.child.killed_by() != first)
            problem(r.child.describe() + " after " + signal_name(first));
    } else if (!(r.child.exited() && r.child.exit_code() == 0)) {
        problem(r.child.describe() + " unsignalled");
    }

    std::string line = "fault seed=" + std::to_string(seed()) + " " + label + ": " +
                       (plan ? plan->describe() : std::string("no signal")) + "; sent " +
                       std::to_string(r.injected.sent) + ", taken " + std::to_string(taken) +
                       " -> " + r.child.describe() + ";" + states;
    for (const auto& p : problems) line += "\n    FAILED: " + p;
    std::cout << line << std::endl;
    if (!problems.empty()) {
        ++figures().failures;
        ADD_FAILURE() << line << "\n    stderr: " << r.err;
        r.ok = false;
    }
    return r;
}

// A fresh folder per run.
struct Folders {
    TempDir root;
    int n = 0;
    fs::path next() {
        const fs::path p = root / ("run" + std::to_string(++n));
        fs::create_directory(p);
        return p;
    }
};

std::string csv_header_of(const fs::path& csv) {
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    return line;
}

// Whether --sample works here (perf_event or its fallback).
bool sampling_works() {
    static const bool works = [] {
        TempDir d;
        const auto r =
            run_lockprof({"--lock=tas", "--threads=1", "--duration=10ms", "--trials=1", "--quiet",
                          "--sample", "--annotate-top", "0", "--folded", (d / "f.txt").string()});
        return r.exit_code == 0 && fs::exists(d / "f.txt");
    }();
    return works;
}

// The sweep's outputs in `folder` (names with `stem`).
Invocation sweep_run(const fs::path& folder, bool sampled, const std::string& stem = "r") {
    Invocation run;
    run.args = {"--lock=tas,ttas", "--threads=1,2", "--duration=20ms", "--trials=3", "--quiet"};
    const auto add = [&](const std::string& option, Kind kind, const std::string& ext) {
        run.outputs.push_back({kind, folder / (stem + ext)});
        run.args.push_back(option);
        run.args.push_back((folder / (stem + ext)).string());
    };
    add("--output", Kind::run_json, ".json");
    add("--csv", Kind::csv, ".csv");
    add("--report", Kind::html, ".html");
    if (sampled) {
        run.args.push_back("--sample");
        add("--flamegraph", Kind::svg, ".svg");
    }
    return run;
}

// The run's arguments and outputs moved into `folder`.
Invocation in_folder(const Invocation& run, const fs::path& folder) {
    Invocation here = run;
    const fs::path original = run.outputs.front().path.parent_path();
    for (auto& a : here.args)
        if (a.rfind(original.string() + "/", 0) == 0)
            a = (folder / fs::path(a).filename()).string();
    for (auto& o : here.outputs) o.path = folder / o.path.filename();
    return here;
}

// Runs it clean once: its outputs must be whole, its CSV header is the one every signalled run
// must keep, and how long it took bounds the random points.
int baseline_ms(Invocation& run, Folders& folders, const std::string& label) {
    const fs::path folder = folders.next();
    const Invocation here = in_folder(run, folder);
    const auto start = Clock::now();
    run_and_check(here, folder, std::nullopt, label + " baseline");
    const int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    for (const auto& o : here.outputs)
        if (o.kind == Kind::csv) run.csv_header = csv_header_of(o.path);
    return ms;
}

// --- the battery -----------------------------------------------------------------------------

TEST(FaultBattery, SweepAndItsOutputsSignalledAtRandomPoints) {
    auto rng = generator();
    Folders folders;
    for (bool sampled : {false, true}) {
        if (sampled && !sampling_works()) {
            std::cout << "fault: sampling unavailable here; the flamegraph runs are skipped\n";
            continue;
        }
        Invocation run = sweep_run(folders.root.path, sampled);
        const int horizon = baseline_ms(run, folders, sampled ? "sweep+sample" : "sweep");
        const unsigned n = (sampled ? 4 : 10) * rounds();
        for (unsigned i = 0; i < n; ++i) {
            const fs::path folder = folders.next();
            const Plan plan =
                random_plan(rng, horizon * 6 / 5, static_cast<int>(run.outputs.size()));
            run_and_check(in_folder(run, folder), folder, plan,
                          (sampled ? "sweep+sample #" : "sweep #") + std::to_string(i + 1));
        }
    }
}

// A spinning command for `record`: lockprof's own workload, ending by itself after `trials`.
std::vector<std::string> spinner(int trials) {
    return {LOCKPROF_BIN,      "run",
            "--lock=tas",      "--threads=2",
            "--duration=50ms", "--trials=" + std::to_string(trials),
            "--quiet"};
}

Invocation record_run(const fs::path& folder, const std::vector<std::string>& command,
                      bool sampled) {
    Invocation run;
    run.args = {"record",  "--event",  "task_clock",
                "--quiet", "--output", (folder / "r.json").string()};
    run.outputs.push_back({Kind::record_json, folder / "r.json"});
    if (sampled) {
        run.args.insert(run.args.end(), {"--sample", "--flamegraph", (folder / "r.svg").string()});
        run.outputs.push_back({Kind::svg, folder / "r.svg"});
    }
    run.args.push_back("--");
    run.args.insert(run.args.end(), command.begin(), command.end());
    return run;
}

TEST(FaultBattery, RecordOfACommandSignalledAtRandomPoints) {
    auto rng = generator();
    Folders folders;
    const bool sampled = sampling_works();
    Invocation run = record_run(folders.root.path, spinner(8), sampled);
    const int horizon = baseline_ms(run, folders, "record");
    const unsigned n = 6 * rounds();
    for (unsigned i = 0; i < n; ++i) {
        const fs::path folder = folders.next();
        const Plan plan = random_plan(rng, horizon * 6 / 5, static_cast<int>(run.outputs.size()));
        run_and_check(in_folder(run, folder), folder, plan, "record #" + std::to_string(i + 1));
    }
}

// Recorded commands that exit, exec and fork while recorded, unsignalled and signalled: the
// recording follows them and ends with the command.
TEST(FaultBattery, RecordFollowsACommandThatExitsExecsOrForks) {
    auto rng = generator();
    Folders folders;
    const std::string bin = LOCKPROF_BIN;
    const std::string spin =
        "'" + bin + "' run --lock=tas --threads=1 --duration=50ms --trials=4 --quiet";
    const std::vector<std::pair<std::string, std::string>> commands = {
        {"exits 3", spin + "; exit 3"},
        {"execs", spin + "; exec " + spin},
        {"forks", spin + " & " + spin + "; wait"},
    };
    for (const auto& [what, script] : commands) {
        Invocation run = record_run(folders.root.path, {"/bin/sh", "-c", script}, false);
        run.normal_exit = what == "exits 3" ? 3 : 0;
        const int horizon = baseline_ms(run, folders, "record, command " + what);
        const fs::path folder = folders.next();
        const Plan plan = random_plan(rng, horizon, 1);
        Result r = run_and_check(in_folder(run, folder), folder, plan, "record, command " + what);
        if (what == "forks" && r.injected.taken == 0 && fs::exists(folder / "r.json")) {
            const json doc = json::parse(slurp(folder / "r.json"));
            EXPECT_GE(doc.at("processes").size(), 1u);
        }
    }
    // --pid: the target exits while attached; the recording ends with it.
    {
        const fs::path folder = folders.next();
        Child target = Child::start(spinner(6), folder / "target.out", folder / "target.err");
        ASSERT_GT(target.pid, 0);
        ASSERT_TRUE(
            wait_for(target, [&] { return proc_status_field(target.pid, "Threads") > "1"; }));
        Invocation run;
        run.args = {"record",  "--pid",    std::to_string(target.pid),  "--event", "task_clock",
                    "--quiet", "--output", (folder / "r.json").string()};
        run.outputs.push_back({Kind::record_json, folder / "r.json"});
        Result r = run_and_check(run, folder, std::nullopt, "record --pid, target exits");
        if (r.ok) {
            const json doc = json::parse(slurp(folder / "r.json"));
            EXPECT_TRUE(doc.at("processes").at(0).at("exited").get<bool>());
        }
        target.wait();
    }
}

// A recorded command that ignores SIGTERM and SIGINT: record passes SIGTERM on, then SIGKILL
// after its grace period, says so, and finishes.
TEST(FaultBattery, RecordOfACommandIgnoringSigtermStillFinishes) {
    Folders folders;
    for (const bool group : {false, true}) {
        const fs::path folder = folders.next();
        const std::string ready = (folder / "ready").string();
        Invocation run = record_run(
            folder,
            {"/bin/sh", "-c", "trap '' TERM INT; : > \"$0\"; while :; do sleep 0.05; done", ready},
            false);
        const int signal = group ? SIGINT : SIGTERM;
        // The signal goes once the command runs (the ready file), so it is the command, not
        // lockprof's start, that has to be stopped.
        std::vector<std::string> args{LOCKPROF_BIN};
        args.insert(args.end(), run.args.begin(), run.args.end());
        Child child = Child::start(args, folder / "lp.out", folder / "lp.err");
        ASSERT_TRUE(wait_for(child, [&] { return fs::exists(ready); }));
        kill(group ? -child.pid : child.pid, signal);
        ASSERT_TRUE(child.wait(std::chrono::seconds(120))) << "record did not finish";
        ++figures().runs;
        ++figures().signals;
        ++figures().taken;
        const std::string err = slurp(folder / "lp.err");
        const std::string line =
            "fault seed=" + std::to_string(seed()) +
            " record, command ignoring SIGTERM and SIGINT: " + signal_name(signal) +
            (group ? " to the group" : " to lockprof") + " once it ran -> " + child.describe();
        std::cout << line << std::endl;
        EXPECT_TRUE(child.exited()) << line;
        EXPECT_EQ(child.exit_code(), 128 + signal) << line << "\n" << err;
        EXPECT_NE(err.find("sent it SIGKILL"), std::string::npos) << err;
        ASSERT_TRUE(fs::exists(folder / "r.json")) << err;
        ++figures().outputs;
        EXPECT_EQ(invalid({Kind::record_json, folder / "r.json"}, ""), "");
        EXPECT_TRUE(temporaries(folder).empty());
        if (testing::Test::HasFailure()) ++figures().failures;
    }
}

// `lockprof report` and `lockprof flamegraph` writing: a signal ends them as it would any
// program, after removing the temporary: the output is absent or whole.
TEST(FaultBattery, ReportAndFlamegraphCommandsSignalledWhileWriting) {
    auto rng = generator();
    Folders folders;
    // Inputs: a result file, and a folded file large enough to take a while to draw.
    const fs::path inputs = folders.next();
    ASSERT_EQ(run_lockprof({"--lock=tas,ttas,cas", "--threads=1,2", "--duration=10ms", "--trials=2",
                            "--quiet", "--output", (inputs / "r.json").string()})
                  .exit_code,
              0);
    {
        std::ofstream folded(inputs / "big.folded");
        for (int i = 0; i < 20000; ++i)
            folded << "main;worker" << i % 97 << ";lock" << i % 13 << ";spin" << i << " "
                   << 1 + i % 7 << "\n";
    }
    for (int i = 0; i < static_cast<int>(6 * rounds()); ++i) {
        const fs::path folder = folders.next();
        Invocation run;
        run.measuring = false;
        if (i % 2 == 0) {
            run.args = {"report", (inputs / "r.json").string(), "--output",
                        (folder / "r.html").string()};
            run.outputs.push_back({Kind::html, folder / "r.html"});
        } else {
            run.args = {"flamegraph", (inputs / "big.folded").string(), "--output",
                        (folder / "f.svg").string()};
            run.outputs.push_back({Kind::svg, folder / "f.svg"});
        }
        Plan plan = random_plan(rng, 400, 1, false);
        if (plan.trigger == Trigger::table) plan.trigger = Trigger::time;  // they print no table
        plan.signals.resize(1);
        plan.gaps_ms.clear();
        run_and_check(
            run, folder, plan,
            (i % 2 == 0 ? "report command #" : "flamegraph command #") + std::to_string(i / 2 + 1));
    }
}

// Output names with a space, a newline and bytes that are not UTF-8: written at exactly those
// names, whole, unsignalled and with a signal during the write-out.
TEST(FaultBattery, OutputPathsWithSpacesNewlinesAndNonUtf8Bytes) {
    auto rng = generator();
    Folders folders;
    const std::string stem = "out put\nname\xff\xfe";
    const bool sampled = sampling_works();
    Invocation run = sweep_run(folders.root.path, sampled, stem);
    baseline_ms(run, folders, "odd paths");
    for (int i = 0; i < 2; ++i) {
        const fs::path folder = folders.next();
        Plan plan = random_plan(rng, 1, static_cast<int>(run.outputs.size()));
        plan.trigger = i == 0 ? Trigger::table : Trigger::file;
        plan.signals.resize(std::min<std::size_t>(plan.signals.size(), 2));
        plan.gaps_ms.resize(plan.signals.size() - 1);
        run_and_check(in_folder(run, folder), folder, plan, "odd paths #" + std::to_string(i + 1));
    }
    const fs::path folder = folders.next();
    Invocation record;
    record.args = {"record",  "--event",  "task_clock",
                   "--quiet", "--output", (folder / (stem + ".json")).string(),
                   "--",      "/bin/true"};
    record.outputs.push_back({Kind::record_json, folder / (stem + ".json")});
    run_and_check(record, folder, std::nullopt, "odd paths, record");
}

// --- EIO on a filesystem -----------------------------------------------------------------------

#ifdef LOCKPROF_EIO_FS
constexpr long kFuseMagic = 0x65735546;  // FUSE_SUPER_MAGIC

// A lockprof_eio_fs (tests/integration/helpers/eio_fs.cpp) mounted on a temporary folder for
// the test's life, unmounted (MNT_DETACH) in the destructor whatever the assertions did.
// `skip` says why it could not be mounted.
struct EioMount {
    TempDir dir;
    fs::path root = dir / "mnt";
    pid_t pid = -1;
    std::string skip;

    EioMount(const std::string& mode, const std::vector<std::string>& seeds) {
        if (::access("/dev/fuse", R_OK | W_OK) != 0) {
            skip = "/dev/fuse is missing or not usable here: " + std::string(std::strerror(errno));
            return;
        }
        fs::create_directory(root);
        std::vector<std::string> args = {LOCKPROF_EIO_FS, mode, root.string()};
        args.insert(args.end(), seeds.begin(), seeds.end());
        pid = ::fork();
        if (pid == 0) {
            std::vector<char*> argv;
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            const int quiet = ::open((dir / "fs.log").c_str(), O_WRONLY | O_CREAT, 0644);
            if (quiet >= 0) ::dup2(quiet, STDERR_FILENO);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        // Until the mount is there or the helper gave up (a container without CAP_SYS_ADMIN).
        for (int i = 0; i < 1000; ++i) {
            struct statfs st {};
            if (::statfs(root.c_str(), &st) == 0 && st.f_type == kFuseMagic) return;
            int status = 0;
            if (::waitpid(pid, &status, WNOHANG) == pid) {
                pid = -1;
                skip =
                    "the FUSE filesystem could not be mounted (a container without "
                    "CAP_SYS_ADMIN?): " +
                    read_all(dir / "fs.log");
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        skip = "the FUSE filesystem did not appear within 10 s";
    }
    ~EioMount() {
        if (pid <= 0) return;
        if (::umount2(root.c_str(), MNT_DETACH) != 0)
            std::system(
                ("fusermount3 -u -z " + shell_quote(root.string()) + " 2>/dev/null").c_str());
        for (int i = 0; i < 500; ++i) {  // the helper ends once unmounted
            if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    fs::path operator/(const std::string& name) const { return root / name; }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(root)) out.push_back(e.path().filename());
        std::sort(out.begin(), out.end());
        return out;
    }
};

#define MOUNT_OR_SKIP(m) \
    if (!(m).skip.empty()) GTEST_SKIP() << (m).skip

// One output that fails: exit 1, one stderr line naming it and "Input/output error", and the
// folder as it was (the old file with its old content, no temporary, no partial file).
void expect_eio(const EioMount& m, const std::vector<std::string>& args, const fs::path& out,
                const std::string& label) {
    const auto before = m.names();
    const auto r = run_lockprof(args);
    EXPECT_EQ(r.exit_code, 1) << label << ": " << r.err;
    const std::string line = "cannot write '" + out.string() + "': Input/output error";
    EXPECT_EQ(occurrences(r.err, line), 1) << label << ": " << r.err;
    EXPECT_EQ(occurrences(r.err, "Input/output error"), 1) << label << ": " << r.err;
    EXPECT_EQ(m.names(), before) << label << ": a file was left behind or removed";
    if (fs::exists(out)) {
        EXPECT_EQ(slurp(out), "old\n") << label << ": the old file changed";
    }
}

// Inputs the file-reading commands need, written outside the EIO filesystem.
struct EioInputs {
    TempDir dir;
    fs::path result = dir / "r.json", folded = dir / "f.folded", script = dir / "p.txt";
    EioInputs() {
        EXPECT_EQ(run_lockprof({"--lock=tas", "--threads=1", "--duration=5ms", "--trials=1",
                                "--quiet", "--output", result.string()})
                      .exit_code,
                  0);
        std::ofstream(folded) << "main;worker;lock 3\nmain;other 2\n";
        std::ofstream(script) << "prog 100 1.0: 1 cycles:\n\tffff0001 spin+0x1 (/bin/prog)\n"
                                 "\tffff0002 main+0x2 (/bin/prog)\n\n";
    }
};

// Every kind of output, each alone, into a filesystem whose every write fails with EIO: as a
// new file and over an existing one.
TEST(FaultBattery, EveryOutputOntoAFilesystemFailingWritesWithEio) {
    EioMount m("write", {"old.json=old\n", "old.csv=old\n", "old.html=old\n", "old.svg=old\n"});
    MOUNT_OR_SKIP(m);
    EioInputs in;
    const std::vector<std::string> sweep = {"--lock=tas", "--threads=1", "--duration=5ms",
                                            "--trials=1", "--quiet"};
    const auto run_with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = sweep;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    struct Case {
        std::string label;
        std::vector<std::string> args;
        fs::path out;
    };
    std::vector<Case> cases = {
        {"run --output", run_with({"--output", (m / "r.json").string()}), m / "r.json"},
        {"run --output over a file", run_with({"--output", (m / "old.json").string()}),
         m / "old.json"},
        {"run --csv", run_with({"--csv", (m / "old.csv").string()}), m / "old.csv"},
        {"run --report", run_with({"--report", (m / "old.html").string()}), m / "old.html"},
        {"run --plot", run_with({"--plot", (m / "p.svg").string()}), m / "p.svg"},
        {"report -o",
         {"report", in.result.string(), "-o", (m / "old.html").string()},
         m / "old.html"},
        {"compare -o",
         {"compare", in.result.string(), in.result.string(), "-o", (m / "c.txt").string()},
         m / "c.txt"},
        {"flamegraph -o",
         {"flamegraph", in.folded.string(), "-o", (m / "old.svg").string()},
         m / "old.svg"},
        {"fold -o", {"fold", in.script.string(), "-o", (m / "f.folded").string()}, m / "f.folded"},
        {"record --output",
         {"record", "--event", "task_clock", "--quiet", "--output", (m / "rec.json").string(), "--",
          "/bin/true"},
         m / "rec.json"},
    };
    if (sampling_works()) {
        for (const std::string option :
             {"--samples-out", "--folded", "--flamegraph", "--pprof", "--speedscope"}) {
            const fs::path out = m / ("s" + option.substr(2));
            cases.push_back({"run " + option, run_with({"--sample", option, out.string()}), out});
        }
    } else {
        std::cout << "sampling does not work here: the sampled outputs are not tried\n";
    }
    for (const auto& c : cases) expect_eio(m, c.args, c.out, c.label);
}

// EIO reported late: after part of the file went through (a write cut short, then EIO), only
// at fsync, only at close. The temporary's data reached the filesystem; lockprof must still
// see that the file is not safe and leave the old one.
TEST(FaultBattery, EioAfterSomeBytesAtFsyncOrAtCloseIsNoticed) {
    for (const std::string mode : {"after:100", "fsync", "flush"}) {
        SCOPED_TRACE(mode);
        EioMount m(mode, {"old.json=old\n"});
        MOUNT_OR_SKIP(m);
        for (const std::string name : {"new.json", "old.json"})
            expect_eio(m,
                       {"--lock=tas", "--threads=1", "--duration=5ms", "--trials=1", "--quiet",
                        "--output", (m / name).string()},
                       m / name, mode + ", " + name);
    }
}

// The filesystem itself works: what fails is what the mode says. Without this the tests above
// would pass on a filesystem that fails everything.
TEST(FaultBattery, EioFilesystemWritesWholeFilesWhenNotFailing) {
    EioMount m("after:100000000", {"old.json=old\n"});
    MOUNT_OR_SKIP(m);
    const auto r = run_lockprof({"--lock=tas", "--threads=1", "--duration=5ms", "--trials=1",
                                 "--quiet", "--output", (m / "old.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(invalid({Kind::run_json, m / "old.json"}, ""), "");
    EXPECT_EQ(m.names(), std::vector<std::string>{"old.json"});
}
#else
TEST(FaultBattery, EioOnAFilesystem) {
    GTEST_SKIP() << "libfuse3 was not found at build time (pkg-config fuse3; Debian's "
                    "libfuse3-dev): the EIO filesystem tests are not built";
}
#endif

}  // namespace
}  // namespace lockprof::test
