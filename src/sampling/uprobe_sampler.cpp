#include "lockprof/sampling/uprobe_sampler.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <utility>

#include "lockprof/arch/call_abi.hpp"
#include "lockprof/arch/unwind_registers.hpp"
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
// At a return, the return value register alone (s_lock returns how many times it slept).
constexpr std::uint64_t kReturnType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
// An entry with its stack.
constexpr std::uint64_t kStackType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

// The stack events' buffer: about 32 records, at most 128 pages (512 KiB).
std::size_t stack_ring_pages(std::uint32_t stack_size) {
    const std::size_t wanted = 32 * (std::size_t{stack_size} + 512);
    std::size_t pages = 8;
    while (pages * page_size() < wanted && pages < 128) pages *= 2;
    return pages;
}

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

// A command's events are inherited by what it starts and begin counting at its exec; a
// running thread's stay disabled until their buffer is in place (open_all enables them): a
// hit before that would be counted by the kernel but written nowhere, without a loss record.
void set_inheritance(perf_event_attr& attr, bool inherited) {
    if (inherited) {
        attr.inherit = 1;
        attr.enable_on_exec = 1;
    }
}

}  // namespace

UprobeSampler::UprobeSampler(const pmu::UprobePmu& pmu, std::vector<UprobeTarget> targets,
                             std::uint32_t stack_size)
    : pmu_(pmu), targets_(std::move(targets)), stack_size_(stack_size) {}

UprobeSampler::~UprobeSampler() {
    for (int fd : extra_fds_) ::close(fd);
    rings_.clear();  // their events' descriptors: before tracefs_ removes the definitions
    stack_rings_.clear();
}

perf_event_attr UprobeSampler::probe_attr(std::size_t target, bool return_probe,
                                          bool inherited) const {
    perf_event_attr attr = inherited ? pmu::trace_uprobe_attr(static_cast<std::uint64_t>(
                                           trace_ids_.at(target)[return_probe ? 1 : 0]))
                                     : pmu::uprobe_attr(pmu_, targets_[target].path,
                                                        targets_[target].file_offset, return_probe);
    // The samplers' clock, so a sample's time falls within the calls the probes saw (the
    // recorder gives samples in a probed function back the caller a uretprobe hides).
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    return attr;
}

bool UprobeSampler::prepare_inheritance(std::string& why) {
    if (!tracefs_) {
        tracefs_ = pmu::TraceUprobes::open(why);
        if (!tracefs_) return false;
    }
    trace_ids_.resize(targets_.size(), {-1, -1});
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        if (unusable_.count(i) || trace_ids_[i][0] >= 0) continue;
        for (bool ret : {false, true}) {
            std::string refused;
            const long id =
                tracefs_->define(targets_[i].path, targets_[i].file_offset, ret, refused);
            if (id < 0) {
                unusable_.insert(i);
                refusals_[i] = fmt::format("--spin: cannot probe {} in {}: {}",
                                           targets_[i].function, targets_[i].path, refused);
                notes_.insert(refusals_[i]);
                break;
            }
            trace_ids_[i][ret ? 1 : 0] = id;
        }
    }
    return true;
}

int UprobeSampler::open_all(pid_t pid, int cpu, bool inherited, std::size_t& failed,
                            std::size_t from) {
    const auto& abi = arch::call_abi();
    const std::size_t first_event = events_.size();
    std::vector<Event> added;
    auto close_added = [&](std::size_t from) {
        for (std::size_t i = from; i < added.size(); ++i) ::close(added[i].fd);
    };
    for (std::size_t i = from; i < targets_.size(); ++i) {
        if (unusable_.count(i)) continue;
        for (bool ret : {false, true}) {
            perf_event_attr attr = probe_attr(i, ret, inherited);
            attr.sample_type = ret ? kReturnType : kEntryType;
            if (ret) attr.sample_regs_user = abi.return_regs_user;
            if (!ret) {
                attr.sample_regs_user = abi.sample_regs_user;
                if (abi.return_address_on_stack) {
                    attr.sample_type |= PERF_SAMPLE_STACK_USER;
                    attr.sample_stack_user = kStackBytes;
                }
            }
            set_inheritance(attr, inherited);
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
    if (stack_size_) open_stacks(pid, cpu, inherited, from);
    if (!inherited) enable(first_event);
    return 0;
}

// A running thread's events, once every buffer they write to is mapped and every id known:
// the kernel's counts and the records then cover the same calls. Returns first, so that an
// entry recorded has its return recorded too.
void UprobeSampler::enable(std::size_t first_event) {
    for (bool returns : {true, false})
        for (std::size_t i = first_event; i < events_.size(); ++i)
            if (events_[i].is_return == returns) ioctl(events_[i].fd, PERF_EVENT_IOC_ENABLE, 0);
}

// The stack events of one thread (CPU), in a buffer of their own. They are an extra: when
// they cannot be opened or mapped, the entries and returns are kept and a note says why.
void UprobeSampler::open_stacks(pid_t pid, int cpu, bool inherited, std::size_t from) {
    std::vector<Event> added;
    for (std::size_t i = from; i < targets_.size(); ++i) {
        if (unusable_.count(i)) continue;
        perf_event_attr attr = probe_attr(i, false, inherited);
        attr.sample_type = kStackType;
        attr.sample_period = 1;  // every entry, as far as the buffer has room
        attr.sample_regs_user = arch::unwind_registers().sample_regs_user;
        attr.sample_stack_user = stack_size_;
        set_inheritance(attr, inherited);
        const int fd = pmu::open_event(attr, -1, pid, cpu);
        if (fd < 0) {
            notes_.insert(fmt::format(
                "spin: no call stacks for {} in {}: {}", targets_[i].function, targets_[i].path,
                pmu::explain_uprobe_error(-fd, targets_[i].function, targets_[i].path)));
            continue;
        }
        added.push_back({fd, i, false, true});
    }
    if (added.empty()) return;
    std::string problem;
    auto ring = map_ring_buffer(added.front().fd, problem, stack_ring_pages(stack_size_));
    if (!problem.empty()) notes_.insert("spin: call stacks: " + problem);
    if (!ring) {
        for (std::size_t i = 1; i < added.size(); ++i) ::close(added[i].fd);
        return;
    }
    std::size_t kept = 1;
    for (std::size_t i = 1; i < added.size(); ++i) {
        if (ioctl(added[i].fd, PERF_EVENT_IOC_SET_OUTPUT, added.front().fd) == 0) {
            added[kept++] = added[i];
        } else {
            ::close(added[i].fd);
        }
    }
    added.resize(kept);
    stack_rings_.push_back(std::move(ring));
    for (std::size_t i = 0; i < added.size(); ++i) {
        std::uint64_t id = 0;
        if (ioctl(added[i].fd, PERF_EVENT_IOC_ID, &id) == 0) ids_[id] = events_.size();
        events_.push_back(added[i]);
        if (i > 0) extra_fds_.push_back(added[i].fd);
    }
}

void UprobeSampler::refuse(std::size_t target, int error) {
    if (!unusable_.insert(target).second) return;
    refusals_[target] =
        pmu::explain_uprobe_error(error, targets_[target].function, targets_[target].path);
    notes_.insert(refusals_[target]);
}

void UprobeSampler::check_targets(std::size_t from) {
    for (std::size_t i = from; i < targets_.size(); ++i) {
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

int UprobeSampler::attach_task(pid_t tid, std::size_t& failed, std::size_t from) {
    return open_all(tid, -1, false, failed, from);
}

std::size_t UprobeSampler::add_targets(std::vector<UprobeTarget> targets) {
    const std::size_t first = targets_.size();
    for (auto& t : targets) targets_.push_back(std::move(t));
    check_targets(first);
    return first;
}

int UprobeSampler::attach_inherited(pid_t pid, const std::vector<int>& cpus, std::size_t& failed) {
    std::string why;
    if (trace_ids_.size() != targets_.size() && !prepare_inheritance(why)) {
        notes_.insert("spin: " + why);
        failed = 0;
        return EOPNOTSUPP;
    }
    keep_probes_in_every_process(cpus.empty() ? 0 : cpus.front());
    for (int cpu : cpus)
        if (const int error = open_all(pid, cpu, true, failed)) return error;
    return 0;
}

// The kernel decides per process whether a probe's breakpoint stays in its memory, from the
// processes its events are attached to, and with events inherited by a command's threads and
// children that decision sometimes drops the breakpoint from a forked or exec'd process for a
// while: 0.5-3.5% of the calls of the command's children went uncounted in a third of the runs
// here, with `perf stat -e probe_x:f -- CMD` too. One system-wide event per probe, disabled so
// it counts nothing, makes the kernel keep every breakpoint (docs/record.md, "Spin probes on a
// command").
void UprobeSampler::keep_probes_in_every_process(int cpu) {
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        if (unusable_.count(i)) continue;
        for (bool ret : {false, true}) {
            perf_event_attr attr = probe_attr(i, ret, true);
            attr.sample_period = 0;
            const int fd = pmu::open_event(attr, -1, -1, cpu);
            if (fd >= 0) {
                extra_fds_.push_back(fd);
            } else {
                notes_.insert(fmt::format(
                    "spin: {}: the kernel may miss some calls in the command's children (the "
                    "system-wide event that keeps its probes in every process was refused: {})",
                    targets_[i].function, std::strerror(-fd)));
            }
        }
    }
}

std::optional<UprobeHit> UprobeSampler::read_hit(const unsigned char* body, std::size_t size,
                                                 bool& stack_record) const {
    const auto& abi = arch::call_abi();
    const auto& unwind = arch::unwind_registers();
    Reader r{body, size};
    std::uint64_t id = 0, pid_tid = 0, time = 0;
    if (!r.u64(id) || !r.u64(pid_tid) || !r.u64(time)) return std::nullopt;
    const auto it = ids_.find(id);
    if (it == ids_.end()) return std::nullopt;
    const Event& event = events_[it->second];
    stack_record = event.is_stack;
    UprobeHit hit;
    hit.probe = event.probe;
    hit.is_return = event.is_return;
    hit.pid = static_cast<std::uint32_t>(pid_tid & 0xffffffffu);
    hit.tid = static_cast<std::uint32_t>(pid_tid >> 32);
    hit.time_ns = time;
    if (event.is_stack) {
        // The unwinder's registers, then the stack copy: a record that does not hold them
        // whole is dropped (its entry is recorded apart anyway).
        std::uint64_t regs_abi = 0;
        if (!r.u64(regs_abi) || regs_abi != PERF_SAMPLE_REGS_ABI_64) return std::nullopt;
        hit.user_regs.resize(unwind.sampled);
        for (auto& reg : hit.user_regs)
            if (!r.u64(reg)) return std::nullopt;
        std::uint64_t stack_size = 0;
        if (!r.u64(stack_size) || stack_size == 0 || r.left < stack_size + 8) return std::nullopt;
        std::uint64_t dyn = 0;
        std::memcpy(&dyn, r.p + stack_size, 8);
        hit.user_stack.assign(r.p, r.p + std::min(stack_size, dyn));
        hit.is_stack = true;
        hit.regs =
            arch::select_registers(unwind.sample_regs_user, hit.user_regs, abi.sample_regs_user);
        hit.return_address = arch::return_address(abi, hit.regs, hit.user_stack);
    } else if (!event.is_return) {
        std::uint64_t regs_abi = 0;
        if (!r.u64(regs_abi)) return std::nullopt;
        if (regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
            hit.regs.resize(abi.registers);
            for (auto& reg : hit.regs)
                if (!r.u64(reg)) return std::nullopt;
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
    } else {
        std::uint64_t regs_abi = 0, value = 0;
        if (r.u64(regs_abi) && regs_abi != PERF_SAMPLE_REGS_ABI_NONE && r.u64(value))
            hit.return_value = arch::return_value(abi, std::span<const std::uint64_t>(&value, 1));
    }
    return hit;
}

std::vector<UprobeHit> UprobeSampler::drain() {
    std::vector<UprobeHit> out;
    std::vector<std::shared_ptr<RingBuffer>> all = rings_;
    all.insert(all.end(), stack_rings_.begin(), stack_rings_.end());
    for (auto& ring : all) {
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
                bool stack_record = false;
                if (auto hit = read_hit(body, size, stack_record))
                    out.push_back(std::move(*hit));
                else if (!stack_record)
                    ++ring->unreadable;
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
        if (e.is_stack) continue;  // the same entries again
        std::uint64_t value = 0;
        if (::read(e.fd, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) continue;
        (e.is_return ? out[e.probe].returns : out[e.probe].entries) += value;
    }
    return out;
}

std::uint64_t UprobeSampler::lost() const {
    return total_of(rings_, &RingBuffer::lost);
}

std::uint64_t UprobeSampler::unreadable() const {
    return total_of(rings_, &RingBuffer::unreadable);
}

std::uint64_t UprobeSampler::found_full() const {
    return total_of(rings_, &RingBuffer::found_full);
}

std::uint64_t UprobeSampler::stacks_lost() const {
    return total_of(stack_rings_, &RingBuffer::lost);
}

}  // namespace lockprof::sampling
