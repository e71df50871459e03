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

#include "lockprof/sampling/task_sampler.hpp"
#include "lockprof/profiling/data.hpp"

namespace lockprof::sampling {

// 16 data pages (64 KiB) hold ~600 call-chain samples: 0.6 s at the default rate, two orders
// of magnitude more than fill up between two drains.
inline constexpr std::size_t kRingDataPages = 16;

inline std::size_t page_size() {
    return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// The sample layout of every lockprof sampler: IP | TID | TIME | PERIOD | CALLCHAIN.
inline constexpr std::uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                             PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;

// One event's buffer. Whoever drains it (a worker at stop, a drainer thread) holds `mutex`.
struct RingBuffer {
    int fd = -1;
    void* base = nullptr;
    std::size_t mmap_size = 0;
    std::size_t data_size = 0;
    std::mutex mutex;
    std::vector<profiling::RawSample> samples;
    std::vector<TaskEvent> events;  // with attr.mmap/comm/task and sample_id_all
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

    // One record (`body`: the `size` bytes after its header) into samples, events, lost or
    // throttled; record types it does not know are skipped. Public so tests can feed it records.
    void parse(const perf_event_header& header, const unsigned char* body, std::size_t size) {
        const RecordBody record{body, size};
        // Bodies: mmap {pid, tid, addr, len, pgoff, filename[]}, comm {pid, tid, comm[]},
        // fork {pid, ppid, tid, ptid, time}, lost {id, lost}.
        if (header.type == PERF_RECORD_MMAP) {
            parse_side_band(record, header, TaskEvent::Kind::mmap, 32);
        } else if (header.type == PERF_RECORD_COMM) {
            parse_side_band(record, header, TaskEvent::Kind::comm, 8);
        } else if (header.type == PERF_RECORD_FORK) {
            parse_side_band(record, header, TaskEvent::Kind::fork, 24);
        } else if (header.type == PERF_RECORD_LOST) {
            lost += record.u64(1);
        } else if (header.type == PERF_RECORD_THROTTLE) {
            ++throttled;
        } else if (header.type == PERF_RECORD_SAMPLE) {
            samples.push_back(parse_sample(record));
        }
    }

  private:
    // A record's body, read field by field; fields past its end read as 0.
    struct RecordBody {
        const unsigned char* data;
        std::size_t size;
        std::uint64_t u64(std::size_t index) const {
            std::uint64_t v = 0;
            if ((index + 1) * 8 <= size) std::memcpy(&v, data + index * 8, 8);
            return v;
        }
        std::uint32_t u32(std::size_t offset) const {
            std::uint32_t v = 0;
            if (offset + 4 <= size) std::memcpy(&v, data + offset, 4);
            return v;
        }
    };

    // Side-band records end with the sample_id_all trailer of kSampleType: pid, tid, time.
    void parse_side_band(const RecordBody& record, const perf_event_header& header,
                         TaskEvent::Kind kind, std::size_t name_offset) {
        const std::size_t size = record.size;
        if (size < name_offset + 16) return;
        TaskEvent e;
        e.kind = kind;
        e.pid = static_cast<pid_t>(record.u32(0));
        e.tid = static_cast<pid_t>(record.u32(kind == TaskEvent::Kind::fork ? 8 : 4));
        std::memcpy(&e.time_ns, record.data + size - 8, 8);
        if (kind == TaskEvent::Kind::fork) {
            e.parent = static_cast<pid_t>(record.u32(4));
        } else {
            const auto* name = reinterpret_cast<const char*>(record.data + name_offset);
            e.name.assign(name, strnlen(name, size - 16 - name_offset));
        }
        if (kind == TaskEvent::Kind::mmap) {
            e.address = record.u64(1);
            e.length = record.u64(2);
            e.file_offset = record.u64(3);
        }
        e.exec = kind == TaskEvent::Kind::comm && (header.misc & PERF_RECORD_MISC_COMM_EXEC);
        events.push_back(std::move(e));
    }

    // Layout of kSampleType, in the kernel's fixed order: IP, pid/tid, time, period, then the
    // call chain (nr, frames).
    static profiling::RawSample parse_sample(const RecordBody& record) {
        profiling::RawSample s;
        s.ip = record.u64(0);
        std::uint32_t pid_tid[2] = {0, 0};
        if (record.size >= 16) std::memcpy(pid_tid, record.data + 8, 8);
        s.pid = pid_tid[0];
        s.tid = pid_tid[1];
        s.time_ns = record.u64(2);
        s.weight = record.u64(3);
        const std::uint64_t nr = record.u64(4);
        bool skipped_ip = false;
        for (std::uint64_t i = 0; i < nr && (5 + i + 1) * 8 <= record.size; ++i) {
            const std::uint64_t address = record.u64(5 + i);
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

// Maps a ring buffer for the sampling event `fd` (taking ownership of fd), shrinking it when
// locked memory runs out rather than leave the task unsampled. `problem` says what went wrong
// or had to shrink ("" when nothing did); nullptr when no buffer could be mapped (fd closed).
inline std::shared_ptr<RingBuffer> map_ring_buffer(int fd, std::string& problem) {
    auto ring = std::make_shared<RingBuffer>();
    ring->fd = fd;
    for (std::size_t pages = kRingDataPages; pages >= 1; pages /= 2) {
        const std::size_t size = (pages + 1) * page_size();
        void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) continue;
        ring->base = base;
        ring->mmap_size = size;
        ring->data_size = pages * page_size();
        if (pages < kRingDataPages)
            problem = fmt::format(
                "locked-memory limit reached, some ring buffers have {} KiB instead of {} KiB; "
                "raise `ulimit -l` or /proc/sys/kernel/perf_event_mlock_kb if samples are lost",
                ring->data_size / 1024, kRingDataPages * page_size() / 1024);
        return ring;
    }
    problem = fmt::format(
        "mmap of a sampling ring buffer failed ({}); raise `ulimit -l` or "
        "/proc/sys/kernel/perf_event_mlock_kb",
        std::strerror(errno));
    return nullptr;  // ring's destructor closes fd
}

}  // namespace lockprof::sampling
