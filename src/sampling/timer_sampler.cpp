// Timer-signal sampler: for machines where perf_event_open is missing (ENOSYS under
// qemu-user) or denied (seccomp, perf_event_paranoid 3).
//
// Each worker creates a POSIX timer on its own CPU-time clock that signals that same thread
// (SIGEV_THREAD_ID), so samples are spread by CPU time like cpu-clock's. The SIGPROF handler
// only writes into a slot array allocated before the trial: no malloc, no locks, no stdio.
// Linux checks CPU-time timers at the scheduler tick, so the real rate is at most CONFIG_HZ;
// expirations the tick merged are reported as the signal's overrun count and folded into the
// sample's weight, which keeps shares right.
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "lockprof/arch/context.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/sampling/sampler.hpp"

namespace lockprof::sampling {
namespace {

constexpr std::size_t kMaxDepth = 16;
// Without a known trial length (--acquires runs), each thread gets this many slots (~1.3 MB);
// samples beyond it are counted as lost.
constexpr std::size_t kDefaultSlots = 8192;
constexpr std::size_t kMaxSlots = 1u << 20;

struct Slot {
    std::uint64_t ip;
    std::uint64_t time_ns;
    std::uint64_t weight;
    std::uint64_t depth;
    std::uint64_t chain[kMaxDepth];
};

struct ThreadBuffer {
    std::unique_ptr<Slot[]> slots;
    std::size_t capacity = 0;
    std::size_t count = 0;  // written only by this thread's handler
    std::uint64_t lost = 0;
    std::uint64_t period_ns = 0;
    std::uintptr_t stack_low = 0, stack_high = 0;
};

// The handler finds its thread's buffer here. initial-exec: a plain %fs-relative load, no
// lazy TLS allocation that could call malloc inside the handler.
__attribute__((tls_model("initial-exec"))) thread_local ThreadBuffer* t_buffer = nullptr;

std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe (vDSO)
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

extern "C" void on_profiling_signal(int, siginfo_t* info, void* ucontext) {
    const int saved_errno = errno;
    ThreadBuffer* buffer = t_buffer;
    if (buffer) {
        const std::uint64_t overrun = info && info->si_code == SI_TIMER && info->si_overrun > 0
                                          ? static_cast<std::uint64_t>(info->si_overrun)
                                          : 0;
        if (buffer->count < buffer->capacity) {
            Slot& slot = buffer->slots[buffer->count];
            slot.ip = arch::pc_from_ucontext(ucontext);
            slot.time_ns = monotonic_ns();
            slot.weight = (1 + overrun) * buffer->period_ns;
            slot.depth = arch::walk_frame_pointers(arch::frame_pointer_from_ucontext(ucontext),
                                                   buffer->stack_low, buffer->stack_high,
                                                   slot.chain, kMaxDepth);
            std::atomic_signal_fence(std::memory_order_release);
            ++buffer->count;
        } else {
            buffer->lost += 1 + overrun;
        }
    }
    errno = saved_errno;
}

void install_handler() {
    static std::once_flag once;
    static int error = 0;
    std::call_once(once, [] {
        struct sigaction action {};
        action.sa_sigaction = on_profiling_signal;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        if (sigaction(SIGPROF, &action, nullptr) != 0) error = errno;
    });
    if (error)
        throw Error(fmt::format("cannot install the SIGPROF handler for --sampler=timer: {}",
                                std::strerror(error)));
}

class TimerThread : public measure::ThreadInstrument {
  public:
    TimerThread(std::unique_ptr<ThreadBuffer> buffer, timer_t timer, std::uint64_t period_ns)
        : buffer_(std::move(buffer)), timer_(timer), period_ns_(period_ns) {
        t_buffer = buffer_.get();
    }
    ~TimerThread() override {
        disarm();
        timer_delete(timer_);
        // A signal already pending is delivered to this thread and finds no buffer.
        t_buffer = nullptr;
        std::atomic_signal_fence(std::memory_order_seq_cst);
    }
    void start() override {
        itimerspec spec{};
        spec.it_value.tv_sec = static_cast<time_t>(period_ns_ / 1'000'000'000ull);
        spec.it_value.tv_nsec = static_cast<long>(period_ns_ % 1'000'000'000ull);
        spec.it_interval = spec.it_value;
        timer_settime(timer_, 0, &spec, nullptr);
    }
    void stop() override { disarm(); }
    void collect(measure::ThreadMeasurements& result) override {
        // Detach first: no handler writes while we read.
        t_buffer = nullptr;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
        result.sampled = true;
        result.samples.reserve(buffer_->count);
        for (std::size_t i = 0; i < buffer_->count; ++i) {
            const Slot& slot = buffer_->slots[i];
            measure::RawSample s;
            s.ip = slot.ip;
            s.tid = static_cast<std::uint32_t>(tid);
            s.time_ns = slot.time_ns;
            s.weight = slot.weight;
            s.callchain.assign(slot.chain, slot.chain + slot.depth);
            result.samples.push_back(std::move(s));
        }
        result.samples_lost = buffer_->lost;
    }

  private:
    void disarm() {
        itimerspec off{};
        timer_settime(timer_, 0, &off, nullptr);
    }

    std::unique_ptr<ThreadBuffer> buffer_;
    timer_t timer_;
    std::uint64_t period_ns_;
};

class TimerSampler : public Sampler {
  public:
    TimerSampler(std::uint64_t period_ns, std::optional<std::uint64_t> window_ns,
                 measure::SamplingInfo info)
        : period_ns_(period_ns), info_(std::move(info)) {
        // CPU time never exceeds the window; a quarter more plus a few for the ramp.
        slots_ = window_ns
                     ? std::min<std::uint64_t>(kMaxSlots, *window_ns / period_ns_ * 5 / 4 + 16)
                     : kDefaultSlots;
        install_handler();
    }

    const measure::SamplingInfo& info() const override { return info_; }
    std::vector<std::string> notes() const override {
        std::lock_guard guard(mutex_);
        return {notes_.begin(), notes_.end()};
    }

    std::unique_ptr<measure::ThreadInstrument> attach_current_thread(unsigned) override {
        auto buffer = std::make_unique<ThreadBuffer>();
        buffer->slots = std::make_unique<Slot[]>(slots_);
        buffer->capacity = slots_;
        buffer->period_ns = period_ns_;
        pthread_attr_t attr;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            void* stack = nullptr;
            std::size_t size = 0;
            if (pthread_attr_getstack(&attr, &stack, &size) == 0) {
                buffer->stack_low = reinterpret_cast<std::uintptr_t>(stack);
                buffer->stack_high = buffer->stack_low + size;
            }
            pthread_attr_destroy(&attr);
        }
        // Touch every slot now so the handler never takes a page fault on fresh memory.
        std::memset(static_cast<void*>(buffer->slots.get()), 0, sizeof(Slot) * slots_);

        sigevent event{};
        event.sigev_notify = SIGEV_THREAD_ID;
        event.sigev_signo = SIGPROF;
        event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
        timer_t timer{};
        if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0) {
            std::lock_guard guard(mutex_);
            notes_.insert(fmt::format(
                "sampling: a worker thread could not be sampled: timer_create failed ({})",
                std::strerror(errno)));
            return nullptr;
        }
        return std::make_unique<TimerThread>(std::move(buffer), timer, period_ns_);
    }

  private:
    std::uint64_t period_ns_;
    std::uint64_t slots_ = kDefaultSlots;
    measure::SamplingInfo info_;
    mutable std::mutex mutex_;
    std::set<std::string> notes_;
};

}  // namespace

std::unique_ptr<Sampler> make_timer_sampler(std::uint64_t period_ns,
                                            std::optional<std::uint64_t> window_ns,
                                            measure::SamplingInfo info) {
    return std::make_unique<TimerSampler>(period_ns, window_ns, std::move(info));
}

}  // namespace lockprof::sampling
