#include "lockprof/workload/sched.hpp"

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"

namespace lockprof::workload {
namespace {

std::string fifo_refusal(int error) {
    if (error == EPERM) {
        rlimit limit{};
        const bool rtprio = getrlimit(RLIMIT_RTPRIO, &limit) == 0 && limit.rlim_cur > 0;
        return fmt::format(
            "--sched fifo: the kernel refused SCHED_FIFO (EPERM: it needs root or CAP_SYS_NICE{}"
            "; in a container the cgroup may grant no real-time time, cpu.rt_runtime_us); run "
            "as root, `setcap cap_sys_nice+ep lockprof`, or drop --sched fifo",
            rtprio ? ", and priority 1 is above this process's RLIMIT_RTPRIO"
                   : ", or a real-time limit, `ulimit -r`, of at least 1");
    }
    return fmt::format("--sched fifo: the kernel refused SCHED_FIFO ({}); drop --sched fifo",
                       std::strerror(error));
}

}  // namespace

void check_fifo_allowed() {
    int error = 0;
    std::thread probe([&error] {
        sched_param param{};
        param.sched_priority = kFifoWorkerPriority;
        error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
    });
    probe.join();
    if (error != 0) throw UsageError(fifo_refusal(error));
}

MachineLoad read_machine_load(unsigned cpus, const std::filesystem::path& root) {
    MachineLoad load;
    load.cpus = cpus;
    load.load_average = -1;
    const std::string text = first_line(root / "proc/loadavg");
    try {
        if (!text.empty()) load.load_average = std::stod(text);
    } catch (const std::exception&) {
        load.load_average = -1;
    }
    return load;
}

std::vector<std::string> fifo_warnings(const MachineLoad& load, unsigned threads) {
    std::vector<std::string> out;
    if (load.load_average < 0) {
        out.push_back(
            "--sched fifo: /proc/loadavg is unreadable, so whether other work runs here is "
            "unknown; FIFO spinners take their CPUs from everything else");
        return out;
    }
    const double idle = static_cast<double>(load.cpus) - load.load_average;
    if (load.load_average >= 1.0 || idle < static_cast<double>(threads))
        out.push_back(fmt::format(
            "--sched fifo: this machine is in use (load average {:.2f} on {} CPUs, about {:.0f} "
            "idle for {} threads): FIFO spinners starve the other work on their CPUs, and that "
            "work, preempted while it holds what the run needs, can stall the run itself",
            load.load_average, load.cpus, idle < 0 ? 0.0 : idle, threads));
    return out;
}

void check_fifo_oversubscription(unsigned threads, unsigned cpus, bool force) {
    if (threads <= cpus || force) return;
    throw UsageError(fmt::format(
        "--sched fifo: {} threads on {} CPU(s): a FIFO thread spinning on a lock never gives "
        "its CPU to the holder it waits for, so the lock livelocks (only the kernel's real-time "
        "throttling, kernel.sched_rt_runtime_us, lets the holder run); use at most {} threads, "
        "or add --force to measure that",
        threads, cpus, cpus));
}

FifoScope::FifoScope(SchedPolicy policy, int priority) {
    if (policy != SchedPolicy::fifo) return;
    sched_param old{};
    if (pthread_getschedparam(pthread_self(), &old_policy_, &old) != 0)
        throw Error("--sched fifo: cannot read this thread's scheduling policy");
    old_priority_ = old.sched_priority;
    sched_param param{};
    param.sched_priority = priority;
    if (const int error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); error != 0)
        throw Error(fifo_refusal(error));
    active_ = true;
}

FifoScope::~FifoScope() {
    if (!active_) return;
    sched_param old{};
    old.sched_priority = old_priority_;
    pthread_setschedparam(pthread_self(), old_policy_, &old);
}

}  // namespace lockprof::workload
