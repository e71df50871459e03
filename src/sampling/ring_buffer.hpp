// A perf_event sampling ring buffer and its record parser, shared by the run's per-thread
// sampler (perf_sampler.cpp) and record's per-task/per-CPU sampler (task_sampler.cpp).
// Internal to the sampling module.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lockprof/sampling/perf_record.hpp"
#include "lockprof/sampling/task_sampler.hpp"
#include "lockprof/measure/data.hpp"

namespace lockprof::sampling {

// 16 data pages (64 KiB) hold ~600 call-chain samples: 0.6 s at the default rate, two orders
// of magnitude more than fill up between two drains.
inline constexpr std::size_t kRingDataPages = 16;

inline std::size_t page_size() {
    return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// The sample layout of every lockprof sampler: IP | TID | TIME | PERIOD | CALLCHAIN (and with
// --call-graph dwarf REGS_USER | STACK_USER after them).
inline constexpr std::uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                             PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;

// The record layout of a sampling event's buffer: lockprof's kSampleType, with sample_id_all
// (record's side-band records), and with --call-graph dwarf the user registers and stack.
inline RecordLayout layout_of(const perf_event_attr& attr) {
    return {attr.sample_type, attr.read_format, attr.sample_id_all != 0, attr.sample_regs_user};
}

// One event's buffer. Whoever drains it (a worker at stop, a drainer thread) holds `mutex`.
struct RingBuffer {
    int fd = -1;
    void* base = nullptr;
    std::size_t mmap_size = 0;
    std::size_t data_size = 0;
    std::mutex mutex;
    std::vector<measure::RawSample> samples;
    std::vector<TaskEvent> events;  // with attr.mmap/comm/task and sample_id_all
    std::uint64_t lost = 0;
    std::uint64_t throttled = 0;
    // Drains that found it full (less than kFullMargin free). The kernel reports the records it
    // could not write in a PERF_RECORD_LOST at its next write to the buffer; when none follows
    // (the target ended, the events were disabled) those losses are in no record.
    std::uint64_t found_full = 0;
    static constexpr std::uint64_t kFullMargin = 1024;
    // Records of a sampler's own layout (for_each_record's callers) it could not read.
    std::uint64_t unreadable = 0;
    // How its records are laid out (layout_of(attr)); kSampleType with sample_id_all unless
    // set when the buffer is mapped.
    RecordLayout layout{kSampleType, 0, true, 0};
    // Bytes of user stack copies held in `samples`, not yet unwound (--call-graph dwarf).
    std::size_t stack_bytes = 0;

    ~RingBuffer() { close(); }

    void close() {
        std::lock_guard guard(mutex);
        if (base) munmap(base, mmap_size);
        if (fd >= 0) ::close(fd);
        base = nullptr;
        fd = -1;
    }

    void drain() {
        for_each_record([this](const perf_event_header& header, const unsigned char* body,
                               std::size_t size) { parse(header, body, size); });
    }

    // Every whole record written since the last call, to `f(header, body, body size)` (the
    // bytes after the header; a record wrapping the end of the buffer is copied whole first),
    // then the buffer space is given back. Samplers with their own layout parse them there.
    template <class F>
    void for_each_record(F&& f) {
        std::lock_guard guard(mutex);
        if (!base) return;
        auto* meta = static_cast<perf_event_mmap_page*>(base);
        const auto* data = static_cast<const unsigned char*>(base) + meta->data_offset;
        const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
        std::uint64_t tail = meta->data_tail;
        if (meta->data_size && head - tail + kFullMargin >= meta->data_size) ++found_full;
        std::vector<unsigned char> record;
        while (tail < head) {
            perf_event_header header;
            copy_out(data, tail, &header, sizeof header);
            if (header.size < sizeof header || tail + header.size > head) break;
            record.resize(header.size);
            copy_out(data, tail, record.data(), header.size);
            f(header, record.data() + sizeof header, header.size - sizeof header);
            tail += header.size;
        }
        __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
    }

    // One record (`body`: the `size` bytes after its header) into samples, events, lost or
    // throttled; record types it does not know are skipped. Public so tests can feed it records.
    // The layout is perf_record.hpp's, for `layout`.
    void parse(const perf_event_header& header, const unsigned char* body, std::size_t size) {
        if (header.type == PERF_RECORD_LOST) {
            // {id, lost}
            if (size >= 16) {
                std::uint64_t n = 0;
                std::memcpy(&n, body + 8, 8);
                lost += n;
            }
        } else if (header.type == PERF_RECORD_THROTTLE) {
            ++throttled;
        } else if (header.type == PERF_RECORD_SAMPLE) {
            samples.push_back(parse_sample(decode_sample(layout, body, size)));
            stack_bytes += samples.back().user_stack.size();
        } else if (header.type == PERF_RECORD_MMAP || header.type == PERF_RECORD_COMM ||
                   header.type == PERF_RECORD_FORK) {
            SideBand record;
            if (decode_side_band(header.type, header.misc, layout, body, size, record))
                events.push_back(task_event(record));
        }
    }

  private:
    static TaskEvent task_event(const SideBand& r) {
        TaskEvent e;
        e.kind = r.kind == SideBand::Kind::mmap   ? TaskEvent::Kind::mmap
                 : r.kind == SideBand::Kind::comm ? TaskEvent::Kind::comm
                                                  : TaskEvent::Kind::fork;
        e.pid = static_cast<pid_t>(r.pid);
        e.tid = static_cast<pid_t>(r.tid);
        e.parent = static_cast<pid_t>(r.ppid);
        e.time_ns = r.sample_id.time;
        if (r.kind != SideBand::Kind::fork) e.name = std::string(r.name);
        e.address = r.address;
        e.length = r.length;
        e.file_offset = r.file_offset;
        e.exec = r.exec;
        return e;
    }

    // lockprof's samples: the IP, then the call chain without context markers, the 0 a
    // frame-pointer walk ends on, and the first user frame (the IP itself).
    static measure::RawSample parse_sample(const SampleFields& f) {
        measure::RawSample s;
        s.ip = f.ip;
        s.pid = f.pid;
        s.tid = f.tid;
        s.time_ns = f.time;
        s.weight = f.period;
        bool skipped_ip = false;
        for (std::uint64_t i = 0; i < f.chain_size; ++i) {
            const std::uint64_t address = f.chain_at(i);
            // Context markers, and the 0 a frame-pointer walk ends on, are not frames.
            if (address >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX) || address == 0) continue;
            // The user call chain starts with the sample IP itself.
            if (!skipped_ip && address == s.ip) {
                skipped_ip = true;
                continue;
            }
            skipped_ip = true;
            s.callchain.push_back(address);
        }
        // --call-graph dwarf: what the unwinder needs, kept until it runs. Only whole 64-bit
        // register sets (PERF_SAMPLE_REGS_ABI_64): a kernel thread has none, a 32-bit task
        // other registers.
        if (f.regs && f.regs_abi == PERF_SAMPLE_REGS_ABI_64) {
            s.user_regs.resize(f.regs_count);
            for (std::uint64_t i = 0; i < f.regs_count; ++i) s.user_regs[i] = f.regs_at(i);
            if (f.stack) s.user_stack.assign(f.stack, f.stack + f.stack_dyn_size);
        }
        return s;
    }

    // Records may wrap around the end of the data area.
    void copy_out(const unsigned char* data, std::uint64_t position, void* out,
                  std::size_t size) const {
        const std::size_t offset = position % data_size;
        const std::size_t first = std::min(size, data_size - offset);
        std::memcpy(out, data + offset, first);
        std::memcpy(static_cast<unsigned char*>(out) + first, data, size - first);
    }
};

// One counter of every buffer in `rings` (RingBuffer::lost, ...), each read under its mutex.
inline std::uint64_t total_of(const std::vector<std::shared_ptr<RingBuffer>>& rings,
                              std::uint64_t RingBuffer::*counter) {
    std::uint64_t total = 0;
    for (const auto& ring : rings) {
        std::lock_guard guard(ring->mutex);
        total += (*ring).*counter;
    }
    return total;
}

// Maps a ring buffer for the sampling event `fd` (taking ownership of fd), shrinking it when
// locked memory runs out rather than leave the task unsampled. `problem` says what went wrong
// or had to shrink ("" when nothing did); nullptr when no buffer could be mapped (fd closed).
// `data_pages`: the size asked for first, a power of two.
inline std::shared_ptr<RingBuffer> map_ring_buffer(int fd, std::string& problem,
                                                   std::size_t data_pages = kRingDataPages) {
    auto ring = std::make_shared<RingBuffer>();
    ring->fd = fd;
    for (std::size_t pages = data_pages; pages >= 1; pages /= 2) {
        const std::size_t size = (pages + 1) * page_size();
        void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) continue;
        ring->base = base;
        ring->mmap_size = size;
        ring->data_size = pages * page_size();
        if (pages < data_pages)
            problem = fmt::format(
                "locked-memory limit reached, some ring buffers have {} KiB instead of {} KiB; "
                "raise `ulimit -l` or /proc/sys/kernel/perf_event_mlock_kb if samples are lost",
                ring->data_size / 1024, data_pages * page_size() / 1024);
        return ring;
    }
    // One line for the whole failure: why (the limit, when EPERM says it is spent) and what
    // to do. It replaces a shrink message, which would only repeat the cause.
    const int err = errno;
    problem = err == EPERM || err == ENOMEM
                  ? fmt::format(
                        "no ring buffer could be mapped, not even {} KiB ({}): the "
                        "locked-memory limit is spent; raise `ulimit -l` or "
                        "/proc/sys/kernel/perf_event_mlock_kb, or sample fewer threads",
                        2 * page_size() / 1024, std::strerror(err))
                  : fmt::format(
                        "mmap of a sampling ring buffer failed ({}); raise `ulimit -l` "
                        "or /proc/sys/kernel/perf_event_mlock_kb",
                        std::strerror(err));
    return nullptr;  // ring's destructor closes fd
}

}  // namespace lockprof::sampling
