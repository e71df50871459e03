// The perf ring-buffer record parser (src/sampling/ring_buffer.hpp: RingBuffer::drain and
// RingBuffer::parse), as the samplers run it: the input's bytes are what the kernel wrote into
// the data area of a mapped ring, starting at an offset the first two bytes pick so records
// wrap its end. Everything a complete record holds is parsed; what drain leaves is an
// incomplete last record. The input is also decoded as one sample of the registers-and-stack
// layout `--call-graph dwarf` asks for.
#include <sys/mman.h>

#include <cstring>

#include "fuzz_support.hpp"
#include "sampling/ring_buffer.hpp"

using namespace lockprof;

namespace {

constexpr std::size_t kDataSize = 8192;

sampling::RingBuffer& ring() {
    static sampling::RingBuffer* r = [] {
        auto* ring = new sampling::RingBuffer;
        ring->mmap_size = sampling::page_size() + kDataSize;
        ring->data_size = kDataSize;
        ring->base = mmap(nullptr, ring->mmap_size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (ring->base == MAP_FAILED) std::abort();
        return ring;
    }();
    return *r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    auto& r = ring();
    r.samples.clear();
    r.events.clear();
    r.lost = r.throttled = 0;
    auto* meta = static_cast<perf_event_mmap_page*>(r.base);
    meta->data_offset = sampling::page_size();
    meta->data_size = kDataSize;
    // Earlier drains moved the tail: anywhere in the 64-bit position space, data at tail % size.
    const std::uint64_t tail = (std::uint64_t{data[0]} << 8 | data[1]) * 8 % kDataSize +
                               (data[0] & 1 ? kDataSize * 1000 : 0);
    const std::size_t length = std::min(size - 2, kDataSize);
    auto* area = static_cast<unsigned char*>(r.base) + meta->data_offset;
    for (std::size_t i = 0; i < length; ++i) area[(tail + i) % kDataSize] = data[2 + i];
    meta->data_tail = tail;
    meta->data_head = tail + length;
    r.drain();
    fuzz::check(meta->data_tail >= tail && meta->data_tail <= meta->data_head,
                "drain releases only what it read");
    for (const auto& s : r.samples)
        fuzz::check(s.callchain.size() * 8 <= length, "a call chain fits in its record");
    for (const auto& e : r.events)
        fuzz::check(e.name.size() <= length, "a name fits in its record");
    // The same bytes as one sample body of `--call-graph dwarf`'s layout: the user registers
    // and the stack copy stay inside it.
    constexpr sampling::RecordLayout kDwarf{
        sampling::kSampleType | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 0, false,
        0x1ffffffffu};
    const unsigned char* body = data + 2;
    const auto f = sampling::decode_sample(kDwarf, body, size - 2);
    if (f.regs)
        fuzz::check(f.regs + f.regs_count * 8 <= body + size - 2, "registers fit in the record");
    if (f.stack)
        fuzz::check(f.stack + f.stack_size <= body + size - 2 && f.stack_dyn_size <= f.stack_size,
                    "the stack copy fits in the record");
    return 0;
}
