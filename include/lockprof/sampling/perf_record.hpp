// The layout of perf_event records (PERF_RECORD_*), decoded for any sample_type: what the
// kernel writes into a sampling ring buffer and what a perf.data file's data section holds.
// The run's and record's ring buffers (src/sampling/ring_buffer.hpp, with lockprof's own
// kSampleType) and the perf.data reader (perfdata/) decode records through these functions, so
// there is one parser of the record layout. Every read is bounds-checked against the record:
// a short record decodes as far as it goes and says so, it is never read past.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace lockprof::sampling {

// What decides a record's layout: the event's perf_event_attr fields that shape it.
struct RecordLayout {
    std::uint64_t sample_type = 0;       // PERF_SAMPLE_* bits
    std::uint64_t read_format = 0;       // PERF_FORMAT_* bits (PERF_SAMPLE_READ's layout)
    bool sample_id_all = false;          // side-band records end with the sample_id trailer
    std::uint64_t sample_regs_user = 0;  // PERF_SAMPLE_REGS_USER's register mask
};

// The fields of a PERF_RECORD_SAMPLE up to and including the user stack (the kernel writes
// them in this order; RAW is skipped; after a BRANCH_STACK, whose size depends on the
// event's branch_sample_type, nothing more is decoded; later fields, WEIGHT, DATA_SRC...,
// are not decoded). Fields the layout does not have, or that lie past the record's end, are 0.
struct SampleFields {
    std::uint64_t identifier = 0, ip = 0;
    std::uint32_t pid = 0, tid = 0;
    std::uint64_t time = 0, addr = 0, id = 0, stream_id = 0;
    std::uint32_t cpu = 0;
    std::uint64_t period = 0;
    // The call chain as the kernel wrote it, context markers (PERF_CONTEXT_*) included:
    // `chain_size` entries at `chain` (unaligned; read with chain_at), fewer than the record's
    // count when the record ends first.
    const unsigned char* chain = nullptr;
    std::uint64_t chain_size = 0;
    // PERF_SAMPLE_REGS_USER: the ABI (PERF_SAMPLE_REGS_ABI_NONE, 0, when the task had no user
    // registers, a kernel thread) and `regs_count` registers at `regs` (unaligned; regs_at), in
    // ascending perf register number of RecordLayout::sample_regs_user.
    std::uint64_t regs_abi = 0;
    const unsigned char* regs = nullptr;
    std::uint64_t regs_count = 0;
    // PERF_SAMPLE_STACK_USER: the bytes copied from the user stack pointer up. `stack_size` is
    // the size asked for (sample_stack_user), `stack_dyn_size` how many of them the kernel could
    // copy (the rest is padding).
    const unsigned char* stack = nullptr;
    std::uint64_t stack_size = 0, stack_dyn_size = 0;
    // False when the record ended before a field the layout names (the call chain included).
    bool complete = true;

    std::uint64_t chain_at(std::uint64_t i) const { return word_at(chain, i); }
    std::uint64_t regs_at(std::uint64_t i) const { return word_at(regs, i); }

  private:
    static std::uint64_t word_at(const unsigned char* words, std::uint64_t i) {
        std::uint64_t v = 0;
        std::memcpy(&v, words + i * 8, 8);
        return v;
    }
};

// Decodes the `size` bytes of a sample record's body (after its perf_event_header).
SampleFields decode_sample(const RecordLayout& layout, const unsigned char* body, std::size_t size);

// The sample_id trailer of a side-band record (MMAP, COMM, FORK, ...) with sample_id_all:
// the TID, TIME, ID, STREAM_ID, CPU and IDENTIFIER fields of sample_type, in that order.
struct SampleId {
    std::uint32_t pid = 0, tid = 0;
    std::uint64_t time = 0, id = 0, stream_id = 0;
    std::uint32_t cpu = 0;
    std::uint64_t identifier = 0;
};
// Its size in bytes (0 without sample_id_all).
std::size_t sample_id_size(const RecordLayout& layout);
// Reads the trailer from the end of a body of `size` bytes; false (and `out` untouched) when
// the body is shorter than the trailer.
bool decode_sample_id(const RecordLayout& layout, const unsigned char* body, std::size_t size,
                      SampleId& out);

// Where an event's id sits, so a reader with several events can tell whose record it is
// before it knows the layout (perf's id_pos/is_pos): the byte offset of the id in a sample's
// body, and its distance from the end of a side-band record's body; -1 when sample_type has
// neither PERF_SAMPLE_IDENTIFIER nor PERF_SAMPLE_ID.
long sample_id_offset(std::uint64_t sample_type);
long side_band_id_offset_from_end(std::uint64_t sample_type);

// A task's side-band record: MMAP, MMAP2, COMM, FORK or EXIT.
struct SideBand {
    enum class Kind { mmap, comm, fork, exit };
    Kind kind = Kind::mmap;
    std::uint32_t pid = 0, tid = 0;    // mmap, comm: the task; fork, exit: the new/ended task
    std::uint32_t ppid = 0, ptid = 0;  // fork, exit: the parent
    std::uint64_t address = 0, length = 0, file_offset = 0;  // mmap
    std::uint32_t prot = 0;                                  // MMAP2 only (0 for MMAP)
    // MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID: the file's build id, `build_id_size` bytes.
    unsigned char build_id[20] = {};
    std::uint8_t build_id_size = 0;
    std::string_view name;  // mmap: the file; comm: the new name (views into the record)
    bool exec = false;      // comm: set by an exec
    SampleId sample_id;     // the trailer, when the layout has sample_id_all
};

// Decodes a record of type MMAP, MMAP2, COMM, FORK or EXIT; false for other types and for
// records too short for their fixed fields.
bool decode_side_band(std::uint32_t type, std::uint16_t misc, const RecordLayout& layout,
                      const unsigned char* body, std::size_t size, SideBand& out);

}  // namespace lockprof::sampling
