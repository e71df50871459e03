// perf_event sampler: one ring buffer per worker thread, emptied by a background drainer.
//
// Why a drainer thread: a worker cannot empty its own buffer without code in the measured
// loop, and a buffer big enough to hold a whole trial (1000 Hz x 2 s x ~100 bytes, per thread)
// would exceed the locked-memory allowance (perf_event_mlock_kb, RLIMIT_MEMLOCK) for non-root
// users once there are many threads. So each buffer is small (64 KiB), the kernel wakes the
// drainer when one is a quarter full (wakeup_watermark), and the drainer also polls every
// 20 ms. A 64 KiB buffer holds ~600 samples, 0.6 s at the default rate: two orders of
// magnitude more than it fills between polls. If the kernel still finds a buffer full it drops
// samples and writes PERF_RECORD_LOST, which we add up and report.
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "lockprof/pmu/events.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/symbols/unwinder.hpp"
#include "sampling/ring_buffer.hpp"

namespace lockprof::sampling {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);
// Stack copies a thread may hold before they are unwound (--call-graph dwarf): 64 MiB is ~8000
// samples of 8 KiB, 8 s at the default rate.
constexpr std::size_t kHeldStackBytes = std::size_t{64} << 20;

class PerfSampler;

class PerfThread : public measure::ThreadInstrument {
  public:
    PerfThread(PerfSampler& owner, std::shared_ptr<RingBuffer> ring)
        : owner_(owner), ring_(std::move(ring)) {}
    ~PerfThread() override;
    void start() override { ioctl(ring_->fd, PERF_EVENT_IOC_ENABLE, 0); }
    void stop() override {
        ioctl(ring_->fd, PERF_EVENT_IOC_DISABLE, 0);
        ring_->drain();
    }
    void collect(measure::ThreadMeasurements& result) override;

  private:
    PerfSampler& owner_;
    std::shared_ptr<RingBuffer> ring_;
};

class PerfSampler : public Sampler {
  public:
    PerfSampler(const perf_event_attr& attr, measure::SamplingInfo info)
        : attr_(attr), info_(std::move(info)) {
        // --call-graph dwarf: lockprof's own mappings, read before anything is unwound. libdwfl
        // maps the files it reads into this process, and a later /proc/self/maps would list
        // those copies as mappings of the libraries, at addresses where they do not run.
        if (attr_.sample_type & PERF_SAMPLE_STACK_USER) info_.modules = symbols::process_modules();
        drainer_ = std::thread([this] { drain_loop(); });
    }
    ~PerfSampler() override {
        {
            std::lock_guard guard(registry_mutex_);
            shutting_down_ = true;
        }
        registry_changed_.notify_all();
        drainer_.join();
    }

    // Read before the run and after it, never while workers unwind.
    const measure::SamplingInfo& info() const override { return info_; }
    std::vector<std::string> notes() const override {
        std::lock_guard guard(registry_mutex_);
        return {notes_.begin(), notes_.end()};
    }

    std::unique_ptr<measure::ThreadInstrument> attach_current_thread(unsigned) override {
        perf_event_attr attr = attr_;
        const int fd = pmu::open_event(attr);
        if (fd < 0) {
            add_note(fmt::format("sampling: a worker thread could not be sampled: {}",
                                 pmu::explain_open_error(-fd, info_.event)));
            return nullptr;
        }
        std::string problem;
        auto ring = map_ring_buffer(fd, problem, ring_data_pages(attr_));
        if (ring) ring->layout = layout_of(attr_);
        if (!ring) {
            add_note("sampling: a worker thread could not be sampled: " + problem);
            return nullptr;
        }
        if (!problem.empty()) add_note("sampling: " + problem);
        {
            std::lock_guard guard(registry_mutex_);
            rings_.insert(ring);
        }
        registry_changed_.notify_all();
        return std::make_unique<PerfThread>(*this, std::move(ring));
    }

    void detach(const std::shared_ptr<RingBuffer>& ring) {
        std::lock_guard guard(registry_mutex_);
        rings_.erase(ring);
    }

    // Unwinds the stack copies `ring` holds (its mutex held) into their call chains, against
    // lockprof's own mappings as read before the run: they do not change while workers run.
    void unwind(RingBuffer& ring) {
        if (ring.stack_bytes == 0) return;
        std::lock_guard guard(unwind_mutex_);
        for (auto& sample : ring.samples) unwinder_.unwind(sample, info_.modules);
        ring.stack_bytes = 0;
        const auto& stats = unwinder_.stats();
        std::lock_guard info_guard(registry_mutex_);
        info_.unwound = stats.stacks;
        info_.unwound_without_callers = stats.without_callers;
        info_.unwind_seconds = stats.seconds;
    }

  private:
    void add_note(std::string note) {
        std::lock_guard guard(registry_mutex_);
        notes_.insert(std::move(note));
    }

    void drain_loop() {
        std::unique_lock lock(registry_mutex_);
        while (!shutting_down_) {
            if (rings_.empty()) {
                registry_changed_.wait(lock);
                continue;
            }
            std::vector<std::shared_ptr<RingBuffer>> snapshot(rings_.begin(), rings_.end());
            lock.unlock();
            std::vector<pollfd> fds;
            // fd under the ring's lock: a worker may be closing its ring right now.
            for (const auto& ring : snapshot) {
                std::lock_guard ring_guard(ring->mutex);
                fds.push_back({ring->fd, POLLIN, 0});
            }
            poll(fds.data(), fds.size(), static_cast<int>(kPollInterval.count()));
            for (const auto& ring : snapshot) {
                ring->drain();
                // A long trial's stack copies would grow without bound: past the budget, they
                // are unwound now, while the thread may still be measured (said in a note).
                std::lock_guard ring_guard(ring->mutex);
                if (ring->stack_bytes > kHeldStackBytes) {
                    unwind(*ring);
                    add_note(fmt::format(
                        "sampling: a thread's stack copies passed {} MiB during its measurement "
                        "and were unwound then, on lockprof's drainer thread, beside the "
                        "workers; lower --sample-freq or --call-graph dwarf,SIZE to unwind only "
                        "after it",
                        kHeldStackBytes >> 20));
                }
            }
            snapshot.clear();
            lock.lock();
        }
    }

    perf_event_attr attr_;
    measure::SamplingInfo info_;  // registry_mutex_: unwinding updates its figures
    std::mutex unwind_mutex_;     // the unwinder
    symbols::UnwinderCache unwinder_;
    mutable std::mutex registry_mutex_;
    std::condition_variable registry_changed_;
    std::set<std::shared_ptr<RingBuffer>> rings_;
    std::set<std::string> notes_;
    bool shutting_down_ = false;
    std::thread drainer_;
};

void PerfThread::collect(measure::ThreadMeasurements& result) {
    std::lock_guard guard(ring_->mutex);
    // --call-graph dwarf: the thread's measurement is over, its stacks are unwound now (the
    // other workers of a timed trial stop at the same time).
    owner_.unwind(*ring_);
    result.sampled = true;
    result.samples = std::move(ring_->samples);
    result.samples_lost = ring_->lost;
    ring_->samples.clear();
}

PerfThread::~PerfThread() {
    owner_.detach(ring_);
    ring_->close();
}

}  // namespace

std::unique_ptr<Sampler> make_perf_sampler(const perf_event_attr& attr,
                                           measure::SamplingInfo info) {
    return std::make_unique<PerfSampler>(attr, std::move(info));
}

}  // namespace lockprof::sampling
