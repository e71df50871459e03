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

namespace lockprof::sampling {
namespace {

constexpr std::size_t kDataPages = 16;
constexpr auto kPollInterval = std::chrono::milliseconds(20);

std::size_t page_size() {
    return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// One thread's event and buffer. The worker (at stop) and the drainer both empty it, so
// draining holds `mutex`.
struct RingBuffer {
    int fd = -1;
    void* base = nullptr;
    std::size_t mmap_size = 0;
    std::size_t data_size = 0;
    std::mutex mutex;
    std::vector<workload::RawSample> samples;
    std::uint64_t lost = 0;
    std::uint64_t throttled = 0;

    ~RingBuffer() { close(); }

    void close() {
        std::lock_guard guard(mutex);
        if (base) munmap(base, mmap_size);
        if (fd >= 0) ::close(fd);
        base = nullptr;
        fd = -1;
    }

    void drain() {
        std::lock_guard guard(mutex);
        if (!base) return;
        auto* meta = static_cast<perf_event_mmap_page*>(base);
        const auto* data = static_cast<const unsigned char*>(base) + meta->data_offset;
        const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
        std::uint64_t tail = meta->data_tail;
        std::vector<unsigned char> record;
        while (tail < head) {
            perf_event_header header;
            copy_out(data, tail, &header, sizeof header);
            if (header.size < sizeof header || tail + header.size > head) break;
            record.resize(header.size);
            copy_out(data, tail, record.data(), header.size);
            parse(header, record.data() + sizeof header, header.size - sizeof header);
            tail += header.size;
        }
        __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
    }

  private:
    // Records may wrap around the end of the data area.
    void copy_out(const unsigned char* data, std::uint64_t position, void* out,
                  std::size_t size) const {
        const std::size_t offset = position % data_size;
        const std::size_t first = std::min(size, data_size - offset);
        std::memcpy(out, data + offset, first);
        std::memcpy(static_cast<unsigned char*>(out) + first, data, size - first);
    }

    void parse(const perf_event_header& header, const unsigned char* body, std::size_t size) {
        auto u64 = [&](std::size_t index) {
            std::uint64_t v = 0;
            if ((index + 1) * 8 <= size) std::memcpy(&v, body + index * 8, 8);
            return v;
        };
        if (header.type == PERF_RECORD_LOST) {
            lost += u64(1);  // {id, lost}
        } else if (header.type == PERF_RECORD_THROTTLE) {
            ++throttled;
        } else if (header.type == PERF_RECORD_SAMPLE) {
            // Layout for IP | TID | TIME | PERIOD | CALLCHAIN, in the kernel's fixed order.
            workload::RawSample s;
            s.ip = u64(0);
            std::uint32_t pid_tid[2] = {0, 0};
            if (size >= 16) std::memcpy(pid_tid, body + 8, 8);
            s.tid = pid_tid[1];
            s.time_ns = u64(2);
            s.weight = u64(3);
            const std::uint64_t nr = u64(4);
            bool skipped_ip = false;
            for (std::uint64_t i = 0; i < nr && (5 + i + 1) * 8 <= size; ++i) {
                const std::uint64_t address = u64(5 + i);
                if (address >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX)) continue;
                // The user call chain starts with the sample IP itself.
                if (!skipped_ip && address == s.ip) {
                    skipped_ip = true;
                    continue;
                }
                skipped_ip = true;
                s.callchain.push_back(address);
            }
            samples.push_back(std::move(s));
        }
    }
};

class PerfSampler;

class PerfThread : public workload::ThreadInstrument {
  public:
    PerfThread(PerfSampler& owner, std::shared_ptr<RingBuffer> ring)
        : owner_(owner), ring_(std::move(ring)) {}
    ~PerfThread() override;
    void start() override { ioctl(ring_->fd, PERF_EVENT_IOC_ENABLE, 0); }
    void stop() override {
        ioctl(ring_->fd, PERF_EVENT_IOC_DISABLE, 0);
        ring_->drain();
    }
    void collect(workload::ThreadResult& result) override {
        std::lock_guard guard(ring_->mutex);
        result.sampled = true;
        result.samples = std::move(ring_->samples);
        result.samples_lost = ring_->lost;
        ring_->samples.clear();
    }

  private:
    PerfSampler& owner_;
    std::shared_ptr<RingBuffer> ring_;
};

class PerfSampler : public Sampler {
  public:
    PerfSampler(const perf_event_attr& attr, workload::SamplingInfo info)
        : attr_(attr), info_(std::move(info)) {
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

    const workload::SamplingInfo& info() const override { return info_; }
    std::vector<std::string> notes() const override {
        std::lock_guard guard(registry_mutex_);
        return {notes_.begin(), notes_.end()};
    }

    std::unique_ptr<workload::ThreadInstrument> attach_current_thread(unsigned) override {
        perf_event_attr attr = attr_;
        const int fd = pmu::open_event(attr);
        if (fd < 0) {
            add_note(fmt::format("sampling: a worker thread could not be sampled: {}",
                                 pmu::explain_open_error(-fd, info_.event)));
            return nullptr;
        }
        auto ring = std::make_shared<RingBuffer>();
        ring->fd = fd;
        // Shrink the buffer when locked memory runs out rather than leave the thread unsampled.
        for (std::size_t pages = kDataPages; pages >= 1; pages /= 2) {
            const std::size_t size = (pages + 1) * page_size();
            void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (base != MAP_FAILED) {
                ring->base = base;
                ring->mmap_size = size;
                ring->data_size = pages * page_size();
                if (pages < kDataPages)
                    add_note(fmt::format(
                        "sampling: locked-memory limit reached, some ring buffers have {} KiB "
                        "instead of {} KiB; raise `ulimit -l` or "
                        "/proc/sys/kernel/perf_event_mlock_kb if samples are lost",
                        ring->data_size / 1024, kDataPages * page_size() / 1024));
                break;
            }
        }
        if (!ring->base) {
            add_note(fmt::format(
                "sampling: a worker thread could not be sampled: mmap of its ring buffer "
                "failed ({}); raise `ulimit -l` or /proc/sys/kernel/perf_event_mlock_kb",
                std::strerror(errno)));
            return nullptr;
        }
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
            for (const auto& ring : snapshot) ring->drain();
            snapshot.clear();
            lock.lock();
        }
    }

    perf_event_attr attr_;
    workload::SamplingInfo info_;
    mutable std::mutex registry_mutex_;
    std::condition_variable registry_changed_;
    std::set<std::shared_ptr<RingBuffer>> rings_;
    std::set<std::string> notes_;
    bool shutting_down_ = false;
    std::thread drainer_;
};

PerfThread::~PerfThread() {
    owner_.detach(ring_);
    ring_->close();
}

}  // namespace

std::unique_ptr<Sampler> make_perf_sampler(const perf_event_attr& attr,
                                           workload::SamplingInfo info) {
    return std::make_unique<PerfSampler>(attr, std::move(info));
}

}  // namespace lockprof::sampling
