#include "cli/process_runner.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/interrupts.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/results/result_reader.hpp"

namespace lockprof::cli {
namespace {

// A private folder for the children's results, removed with everything in it.
struct ResultFolder {
    std::filesystem::path path;
    ResultFolder() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "lockprof-processes-XXXXXX");
        if (!mkdtemp(pattern.data()))
            throw Error(fmt::format("--processes: cannot make a temporary folder in {}: {}",
                                    std::filesystem::temp_directory_path().string(),
                                    std::strerror(errno)));
        path = pattern;
    }
    ~ResultFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    ResultFolder(const ResultFolder&) = delete;
    ResultFolder& operator=(const ResultFolder&) = delete;
};

// Starts lockprof itself (/proc/self/exe) with `args`; returns its wait status.
int run_child(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw Error(fmt::format("--processes: fork failed: {}", std::strerror(errno)));
    if (pid == 0) {
        execv("/proc/self/exe", argv.data());
        fmt::print(stderr, "lockprof: --processes: cannot start /proc/self/exe: {}\n",
                   std::strerror(errno));
        std::_Exit(127);
    }
    // Poll, so a signal to lockprof alone (not its process group) still reaches the child.
    bool passed_on = false;
    for (;;) {
        int status = 0;
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) return status;
        if (done < 0 && errno != EINTR)
            throw Error(fmt::format("--processes: waitpid failed: {}", std::strerror(errno)));
        if (!passed_on && interrupts::stop_requested().load()) {
            kill(pid, interrupts::stop_signal().load());
            passed_on = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

void merge(workload::RunResult& run, workload::RunResult&& part, unsigned process, bool first) {
    if (first) {
        run.spec = part.spec;
        run.calibration = part.calibration;
        for (auto& cell : part.cells) {
            workload::CellResult c = cell;
            c.trials.clear();
            c.plain_trials.clear();
            c.overlaps = c.lost_updates = 0;
            c.verification.reset();
            run.cells.push_back(std::move(c));
        }
    }
    if (part.cells.size() != run.cells.size())
        throw Error(fmt::format("--processes: process {} ran {} cells, process 1 ran {}",
                                process + 1, part.cells.size(), run.cells.size()));
    for (std::size_t i = 0; i < part.cells.size(); ++i) {
        auto& to = run.cells[i];
        auto& from = part.cells[i];
        for (auto* trials : {&from.trials, &from.plain_trials})
            for (auto& t : *trials) {
                t.process = process;
                t.trial = process * run.spec.trials + t.trial;
                (trials == &from.trials ? to.trials : to.plain_trials).push_back(std::move(t));
            }
        to.overlaps += from.overlaps;
        to.lost_updates += from.lost_updates;
        if (const auto& v = from.verification) {  // each process verified the cell itself
            workload::Verification& sum =
                to.verification ? *to.verification : to.verification.emplace();
            sum.trials += v->trials;
            sum.acquires += v->acquires;
            sum.wall_ns += v->wall_ns;
            sum.overlaps += v->overlaps;
            sum.lost_updates += v->lost_updates;
        }
    }
    for (auto& note : part.notes)
        if (std::find(run.notes.begin(), run.notes.end(), note) == run.notes.end())
            run.notes.push_back(std::move(note));
    run.interrupted = run.interrupted || part.interrupted;
    if (run.interrupted_by.empty()) run.interrupted_by = part.interrupted_by;
}

}  // namespace

void run_in_processes(const std::vector<std::string>& args, unsigned processes,
                      workload::RunResult& run) {
    const ResultFolder folder;
    const auto notes = run.notes;  // the parent's own (the children repeat them)
    run.cells.clear();
    std::string stall;
    unsigned ran = 0;
    for (unsigned p = 0; p < processes && !interrupts::stop_requested().load(); ++p) {
        const auto file = folder.path / fmt::format("process-{}.json", p);
        std::vector<std::string> child{"lockprof", "run"};
        child.insert(child.end(), args.begin(), args.end());
        child.push_back(fmt::format("--{}={}", kChildResultOption, file.string()));
        const int status = run_child(child);
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        const bool written = std::filesystem::exists(file);
        if (code != 0 && code != 3 && !(code > 128 && written))
            throw Error(
                fmt::format("--processes: process {} of {} {} {}; its stderr above says why", p + 1,
                            processes, WIFEXITED(status) ? "exited with" : "died of signal",
                            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status)));
        if (!written)
            throw Error(
                fmt::format("--processes: process {} of {} wrote no result", p + 1, processes));
        merge(run, results::read_result(file), p, ran == 0);
        ++ran;
        if (code == 3) {
            stall = fmt::format("process {} of {} stalled (its stderr above says where)", p + 1,
                                processes);
            break;
        }
        if (code > 128) break;
    }
    run.spec.processes = processes;
    for (const auto& note : notes)
        if (std::find(run.notes.begin(), run.notes.end(), note) == run.notes.end())
            run.notes.push_back(note);
    const auto wanted = processes * run.spec.trials;
    for (auto& cell : run.cells) {
        cell.complete = cell.trials.size() == wanted;
        cell.stop = cell.complete ? workload::TrialStop::planned : workload::TrialStop::interrupted;
    }
    if (ran < processes && !stall.empty()) throw StallError(stall);
    if (ran < processes) run.interrupted = true;
}

}  // namespace lockprof::cli
