#include "lockprof/sampling/perf_record.hpp"

#include <linux/perf_event.h>

#include <bit>

namespace lockprof::sampling {
namespace {

// Reads consecutive fields of a record body; once a field does not fit, every later read
// gives 0 and `complete` turns false.
class Cursor {
  public:
    Cursor(const unsigned char* data, std::size_t size) : data_(data), size_(size) {}

    std::uint64_t u64() {
        std::uint64_t v = 0;
        if (take(8)) std::memcpy(&v, data_ + at_ - 8, 8);
        return v;
    }
    // Two u32 in one u64 slot (pid/tid, cpu/reserved).
    void u32_pair(std::uint32_t& a, std::uint32_t& b) {
        if (!take(8)) return;
        std::memcpy(&a, data_ + at_ - 8, 4);
        std::memcpy(&b, data_ + at_ - 4, 4);
    }
    bool skip(std::uint64_t bytes) { return take(bytes); }
    std::size_t left() const { return complete_ ? size_ - at_ : 0; }
    const unsigned char* here() const { return data_ + at_; }
    bool complete() const { return complete_; }
    void truncated() { complete_ = false; }

  private:
    bool take(std::uint64_t bytes) {
        if (!complete_ || bytes > size_ - at_) {
            complete_ = false;
            return false;
        }
        at_ += static_cast<std::size_t>(bytes);
        return true;
    }
    const unsigned char* data_;
    std::size_t size_;
    std::size_t at_ = 0;
    bool complete_ = true;
};

// Skips a PERF_SAMPLE_READ value laid out as `read_format` says (a group's size comes from its
// member count, read from the record).
void skip_read(Cursor& c, std::uint64_t read_format) {
    const std::uint64_t per_value =
        1 + ((read_format & PERF_FORMAT_ID) ? 1 : 0) + ((read_format & PERF_FORMAT_LOST) ? 1 : 0);
    const std::uint64_t times = ((read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 1 : 0) +
                                ((read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 1 : 0);
    if (read_format & PERF_FORMAT_GROUP) {
        const std::uint64_t nr = c.u64();
        // nr comes from the record: bound it by what is left before multiplying.
        if (nr > c.left() / 8 || !c.skip(times * 8) || nr * per_value > c.left() / 8) {
            c.truncated();
            return;
        }
        c.skip(nr * per_value * 8);
    } else {
        c.skip((times + per_value) * 8);
    }
}

}  // namespace

SampleFields decode_sample(const RecordLayout& layout, const unsigned char* body,
                           std::size_t size) {
    SampleFields s;
    Cursor c(body, size);
    const std::uint64_t t = layout.sample_type;
    if (t & PERF_SAMPLE_IDENTIFIER) s.identifier = c.u64();
    if (t & PERF_SAMPLE_IP) s.ip = c.u64();
    if (t & PERF_SAMPLE_TID) c.u32_pair(s.pid, s.tid);
    if (t & PERF_SAMPLE_TIME) s.time = c.u64();
    if (t & PERF_SAMPLE_ADDR) s.addr = c.u64();
    if (t & PERF_SAMPLE_ID) s.id = c.u64();
    if (t & PERF_SAMPLE_STREAM_ID) s.stream_id = c.u64();
    if (t & PERF_SAMPLE_CPU) {
        std::uint32_t reserved = 0;
        c.u32_pair(s.cpu, reserved);
    }
    if (t & PERF_SAMPLE_PERIOD) s.period = c.u64();
    if (t & PERF_SAMPLE_READ) skip_read(c, layout.read_format);
    if (t & PERF_SAMPLE_CALLCHAIN) {
        const std::uint64_t nr = c.u64();
        const std::uint64_t fits = c.left() / 8;
        s.chain = c.here();
        s.chain_size = nr < fits ? nr : fits;
        if (nr > fits) c.truncated();
        c.skip(s.chain_size * 8);
    }
    if (t & PERF_SAMPLE_RAW) {
        // {u32 size; char data[size]}, padded so the record stays 8-byte aligned.
        std::uint32_t raw_size = 0;
        if (c.left() >= 4) std::memcpy(&raw_size, c.here(), 4);
        c.skip(4);
        c.skip(raw_size);
    }
    if (t & PERF_SAMPLE_BRANCH_STACK) {
        s.complete = c.complete();
        return s;
    }
    if (t & PERF_SAMPLE_REGS_USER) {
        s.regs_abi = c.u64();
        if (s.regs_abi != 0) {
            const auto count = static_cast<std::uint64_t>(std::popcount(layout.sample_regs_user));
            if (count > c.left() / 8) {
                c.truncated();
            } else {
                s.regs = c.here();
                s.regs_count = count;
                c.skip(count * 8);
            }
        }
    }
    if (t & PERF_SAMPLE_STACK_USER) {
        const std::uint64_t size = c.u64();
        if (size > c.left()) {
            c.truncated();
        } else if (size != 0) {
            s.stack = c.here();
            c.skip(size);
            const std::uint64_t dyn = c.u64();
            s.stack_size = size;
            s.stack_dyn_size = dyn < size ? dyn : size;
        }
    }
    s.complete = c.complete();
    return s;
}

std::size_t sample_id_size(const RecordLayout& layout) {
    if (!layout.sample_id_all) return 0;
    const std::uint64_t t = layout.sample_type;
    return 8 *
           std::popcount(t & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                              PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER));
}

bool decode_sample_id(const RecordLayout& layout, const unsigned char* body, std::size_t size,
                      SampleId& out) {
    const std::size_t trailer = sample_id_size(layout);
    if (trailer > size) return false;
    Cursor c(body + size - trailer, trailer);
    const std::uint64_t t = layout.sample_type;
    SampleId id;
    if (t & PERF_SAMPLE_TID) c.u32_pair(id.pid, id.tid);
    if (t & PERF_SAMPLE_TIME) id.time = c.u64();
    if (t & PERF_SAMPLE_ID) id.id = c.u64();
    if (t & PERF_SAMPLE_STREAM_ID) id.stream_id = c.u64();
    if (t & PERF_SAMPLE_CPU) {
        std::uint32_t reserved = 0;
        c.u32_pair(id.cpu, reserved);
    }
    if (t & PERF_SAMPLE_IDENTIFIER) id.identifier = c.u64();
    out = id;
    return true;
}

long sample_id_offset(std::uint64_t t) {
    if (t & PERF_SAMPLE_IDENTIFIER) return 0;
    if (!(t & PERF_SAMPLE_ID)) return -1;
    return 8 * std::popcount(
                   t & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
}

long side_band_id_offset_from_end(std::uint64_t t) {
    if (t & PERF_SAMPLE_IDENTIFIER) return 8;
    if (!(t & PERF_SAMPLE_ID)) return -1;
    return 8 + 8 * std::popcount(t & (PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU));
}

bool decode_side_band(std::uint32_t type, std::uint16_t misc, const RecordLayout& layout,
                      const unsigned char* body, std::size_t size, SideBand& out) {
    std::size_t name_offset = 0;
    SideBand e;
    Cursor c(body, size);
    if (type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2) {
        e.kind = SideBand::Kind::mmap;
        c.u32_pair(e.pid, e.tid);
        e.address = c.u64();
        e.length = c.u64();
        e.file_offset = c.u64();
        name_offset = 32;
        if (type == PERF_RECORD_MMAP2) {
            // {maj, min, ino, ino_generation} or, with MISC_MMAP_BUILD_ID, {build_id_size,
            // reserved[3], build_id[20]}; then prot, flags.
            if (size >= 64 && (misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
                e.build_id_size = body[32] <= 20 ? body[32] : 20;
                std::memcpy(e.build_id, body + 36, 20);
            }
            c.skip(24);
            std::uint32_t flags = 0;
            c.u32_pair(e.prot, flags);
            name_offset = 64;
        }
    } else if (type == PERF_RECORD_COMM) {
        e.kind = SideBand::Kind::comm;
        c.u32_pair(e.pid, e.tid);
        name_offset = 8;
        e.exec = (misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
    } else if (type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT) {
        e.kind = type == PERF_RECORD_FORK ? SideBand::Kind::fork : SideBand::Kind::exit;
        c.u32_pair(e.pid, e.ppid);
        c.u32_pair(e.tid, e.ptid);
        c.u64();  // time; the trailer's is the one used
    } else {
        return false;
    }
    const std::size_t trailer = sample_id_size(layout);
    if (!c.complete() || size < trailer || (name_offset && size < name_offset + trailer))
        return false;
    if (name_offset) {
        const auto* name = reinterpret_cast<const char*>(body + name_offset);
        e.name = std::string_view(name, strnlen(name, size - trailer - name_offset));
    }
    decode_sample_id(layout, body, size, e.sample_id);
    out = e;
    return true;
}

}  // namespace lockprof::sampling
