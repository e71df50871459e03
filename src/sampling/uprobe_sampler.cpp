#include "lockprof/sampling/uprobe_sampler.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "lockprof/arch/call_abi.hpp"
#include "lockprof/pmu/events.hpp"
#include "sampling/ring_buffer.hpp"

namespace lockprof::sampling {
namespace {

// 128 data pages (512 KiB) per thread or CPU: ~3,000 entry/return pairs between two drains.
constexpr std::size_t kUprobeRingPages = 128;
// The user stack bytes sampled at entry: the return address at [sp] (x86-64).
constexpr std::uint32_t kStackBytes = 16;

constexpr std::uint64_t kEntryType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
constexpr std::uint64_t kReturnType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

struct Reader {
    const unsigned char* p;
    std::size_t left;
    bool u64(std::uint64_t& v) {
        if (left < 8) return false;
        std::memcpy(&v, p, 8);
        p += 8;
        left -= 8;
        return true;
    }
    bool skip(std::size_t n) {
        if (left < n) return false;
        p += n;
        left -= n;
        return true;
    }
};

// Errors that say the probe itself cannot be placed (the same for every task): ENOTSUPP (524,
// the kernel's internal "cannot probe this instruction"), EINVAL, EOPNOTSUPP.
bool probe_refused(int error) {
    return error == 524 || error == EINVAL || error == EOPNOTSUPP;
}

}  // namespace

UprobeSampler::UprobeSampler(const pmu::UprobePmu& pmu, std::vector<UprobeTarget> targets)
    : pmu_(pmu), targets_(std::move(targets)) {}

UprobeSampler::~UprobeSampler() {
    for (int fd : extra_fds_) ::close(fd);
}

int UprobeSampler::open_all(pid_t pid, int cpu, bool inherited, std::size_t& failed) {
    const auto& abi = arch::call_abi();
    std::vector<Event> added;
    auto close_added = [&](std::size_t from) {
        for (std::size_t i = from; i < added.size(); ++i) ::close(added[i].fd);
    };
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        if (unusable_.count(i)) continue;
        for (bool ret : {false, true}) {
            perf_event_attr attr =
                pmu::uprobe_attr(pmu_, targets_[i].path, targets_[i].file_offset, ret);
            attr.sample_type = ret ? kReturnType : kEntryType;
            if (!ret) {
                attr.sample_regs_user = abi.sample_regs_user;
                if (abi.return_address_on_stack) {
                    attr.sample_type |= PERF_SAMPLE_STACK_USER;
                    attr.sample_stack_user = kStackBytes;
                }
            }
            if (inherited) {
                attr.inherit = 1;
                attr.enable_on_exec = 1;
            } else {
                attr.disabled = 0;
            }
            const int fd = pmu::open_event(attr, -1, pid, cpu);
            if (fd < 0 && probe_refused(-fd)) {
                // This function cannot be probed in any task: drop it, keep the others.
                refuse(i, -fd);
                if (ret) {
                    ::close(added.back().fd);
                    added.pop_back();
                }
                break;
            }
            if (fd < 0) {
                failed = i;
                close_added(0);
                return -fd;
            }
            added.push_back({fd, i, ret});
        }
    }
    if (added.empty()) return 0;
    // The first event's buffer takes every other event's records: it must be mapped before
    // they are pointed at it.
    std::string problem;
    auto ring = map_ring_buffer(added.front().fd, problem, kUprobeRingPages);
    if (!problem.empty()) notes_.insert("spin: " + problem);
    if (!ring) {
        close_added(1);  // the first was closed with its ring
        failed = 0;
        return ENOMEM;
    }
    for (std::size_t i = 1; i < added.size(); ++i)
        if (ioctl(added[i].fd, PERF_EVENT_IOC_SET_OUTPUT, added.front().fd) != 0) {
            const int error = errno;
            close_added(1);
            failed = added[i].probe;
            return error;  // ring closes the first
        }
    rings_.push_back(std::move(ring));
    for (std::size_t i = 0; i < added.size(); ++i) {
        std::uint64_t id = 0;
        if (ioctl(added[i].fd, PERF_EVENT_IOC_ID, &id) == 0) ids_[id] = events_.size();
        events_.push_back(added[i]);
        if (i > 0) extra_fds_.push_back(added[i].fd);
    }
    return 0;
}

void UprobeSampler::refuse(std::size_t target, int error) {
    if (!unusable_.insert(target).second) return;
    refusals_[target] =
        pmu::explain_uprobe_error(error, targets_[target].function, targets_[target].path);
    notes_.insert(refusals_[target]);
}

void UprobeSampler::check_targets() {
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        perf_event_attr attr =
            pmu::uprobe_attr(pmu_, targets_[i].path, targets_[i].file_offset, false);
        attr.disabled = 0;
        const int fd = pmu::open_event(attr, -1, 0, -1);
        if (fd >= 0)
            ::close(fd);
        else if (probe_refused(-fd))
            refuse(i, -fd);
    }
}

std::string UprobeSampler::refusal(std::size_t target) const {
    const auto it = refusals_.find(target);
    return it == refusals_.end() ? "" : it->second;
}

int UprobeSampler::attach_task(pid_t tid, std::size_t& failed) {
    return open_all(tid, -1, false, failed);
}

int UprobeSampler::attach_inherited(pid_t pid, const std::vector<int>& cpus, std::size_t& failed) {
    for (int cpu : cpus)
        if (const int error = open_all(pid, cpu, true, failed)) return error;
    return 0;
}

std::vector<UprobeHit> UprobeSampler::drain() {
    const auto& abi = arch::call_abi();
    std::vector<UprobeHit> out;
    for (auto& ring : rings_) {
        ring->for_each_record(
            [&](const perf_event_header& header, const unsigned char* body, std::size_t size) {
                if (header.type == PERF_RECORD_LOST) {
                    if (size >= 16) {
                        std::uint64_t n = 0;
                        std::memcpy(&n, body + 8, 8);
                        ring->lost += n;
                    }
                    return;
                }
                if (header.type != PERF_RECORD_SAMPLE) return;
                Reader r{body, size};
                std::uint64_t id = 0, pid_tid = 0, time = 0;
                if (!r.u64(id) || !r.u64(pid_tid) || !r.u64(time)) return;
                const auto it = ids_.find(id);
                if (it == ids_.end()) return;
                const Event& event = events_[it->second];
                UprobeHit hit;
                hit.probe = event.probe;
                hit.is_return = event.is_return;
                hit.pid = static_cast<std::uint32_t>(pid_tid & 0xffffffffu);
                hit.tid = static_cast<std::uint32_t>(pid_tid >> 32);
                hit.time_ns = time;
                if (!event.is_return) {
                    std::uint64_t regs_abi = 0;
                    if (!r.u64(regs_abi)) return;
                    if (regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
                        hit.regs.resize(abi.registers);
                        for (auto& reg : hit.regs)
                            if (!r.u64(reg)) return;
                    }
                    std::vector<unsigned char> stack;
                    if (abi.return_address_on_stack) {
                        std::uint64_t stack_size = 0;
                        if (r.u64(stack_size) && stack_size > 0 && r.left >= stack_size + 8) {
                            std::uint64_t dyn = 0;
                            std::memcpy(&dyn, r.p + stack_size, 8);
                            stack.assign(r.p, r.p + std::min(stack_size, dyn));
                            r.skip(stack_size + 8);
                        }
                    }
                    hit.return_address = arch::return_address(abi, hit.regs, stack);
                }
                out.push_back(std::move(hit));
            });
    }
    return out;
}

void UprobeSampler::stop() {
    for (const auto& e : events_) ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0);
}

std::vector<UprobeSampler::Counts> UprobeSampler::counts() const {
    std::vector<Counts> out(targets_.size());
    for (const auto& e : events_) {
        std::uint64_t value = 0;
        if (::read(e.fd, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) continue;
        (e.is_return ? out[e.probe].returns : out[e.probe].entries) += value;
    }
    return out;
}

std::uint64_t UprobeSampler::lost() const {
    std::uint64_t total = 0;
    for (const auto& ring : rings_) {
        std::lock_guard guard(ring->mutex);
        total += ring->lost;
    }
    return total;
}

}  // namespace lockprof::sampling
