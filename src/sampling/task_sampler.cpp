#include "lockprof/sampling/task_sampler.hpp"

#include <sys/ioctl.h>

#include <cerrno>
#include <utility>

#include "lockprof/pmu/events.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "sampling/ring_buffer.hpp"

namespace lockprof::sampling {

TaskSampler::TaskSampler(const perf_event_attr& attr, measure::SamplingInfo info)
    : attr_(attr), info_(std::move(info)) {}

TaskSampler::~TaskSampler() = default;

int TaskSampler::add(perf_event_attr attr, pid_t pid, int cpu) {
    const int fd = pmu::open_event(attr, -1, pid, cpu);
    if (fd < 0) return -fd;
    std::string problem;
    auto ring = map_ring_buffer(fd, problem, ring_data_pages(attr));
    if (!problem.empty()) notes_.insert("sampling: " + problem);
    if (!ring) return ENOMEM;
    ring->layout = layout_of(attr);
    rings_.push_back(std::move(ring));
    return 0;
}

int TaskSampler::attach_task(pid_t tid) {
    perf_event_attr attr = attr_;
    // Enabled once its buffer is mapped: a sample taken before would be written nowhere and
    // counted as lost nowhere.
    attr.disabled = 1;
    attr.inherit = 0;
    if (const int error = add(attr, tid, -1)) return error;
    if (ioctl(rings_.back()->fd, PERF_EVENT_IOC_ENABLE, 0) != 0) return errno;
    return 0;
}

int TaskSampler::attach_inherited(pid_t pid, const std::vector<int>& cpus) {
    perf_event_attr attr = attr_;
    attr.disabled = 1;
    attr.enable_on_exec = 1;
    attr.inherit = 1;
    // Processes the command starts may end before their /proc/PID/maps is read; the kernel's
    // records of their executable mappings, names and forks (timed, to replay in order) let
    // their samples resolve anyway, as perf record does.
    attr.mmap = 1;
    attr.comm = 1;
    attr.comm_exec = 1;
    attr.task = 1;
    attr.sample_id_all = 1;
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        int error = add(attr, pid, cpus[i]);
        if (error == EINVAL && i == 0 && attr.comm_exec) {
            // Kernels before 4.3 know no comm_exec; without it an exec reads as a rename.
            attr.comm_exec = 0;
            error = add(attr, pid, cpus[i]);
        }
        if (error) return error;
    }
    return 0;
}

std::vector<measure::RawSample> TaskSampler::drain() {
    std::vector<measure::RawSample> out;
    for (auto& ring : rings_) {
        ring->drain();
        std::lock_guard guard(ring->mutex);
        for (auto& s : ring->samples) out.push_back(std::move(s));
        ring->samples.clear();
        ring->stack_bytes = 0;
        for (auto& e : ring->events) events_.push_back(std::move(e));
        ring->events.clear();
    }
    return out;
}

std::vector<TaskEvent> TaskSampler::take_events() {
    return std::exchange(events_, {});
}

void TaskSampler::stop() {
    for (auto& ring : rings_) {
        std::lock_guard guard(ring->mutex);
        if (ring->fd >= 0) ioctl(ring->fd, PERF_EVENT_IOC_DISABLE, 0);
    }
}

std::uint64_t TaskSampler::lost() const {
    return total_of(rings_, &RingBuffer::lost);
}

}  // namespace lockprof::sampling
