// The perf ring buffer's record parser (src/sampling/ring_buffer.hpp) on synthetic records laid
// out as the kernel writes them for kSampleType, fed to parse() directly and through drain()
// from a ring whose data area a record wraps.
#include "sampling/ring_buffer.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace lockprof::sampling {
namespace {

// A record: header plus body, built from 64-bit words (u32 pairs packed by the caller).
struct Record {
    perf_event_header header{};
    std::vector<std::uint64_t> body;

    std::vector<unsigned char> bytes() const {
        std::vector<unsigned char> out(sizeof header + body.size() * 8);
        std::memcpy(out.data(), &header, sizeof header);
        std::memcpy(out.data() + sizeof header, body.data(), body.size() * 8);
        return out;
    }
};

Record make_record(std::uint32_t type, std::vector<std::uint64_t> body) {
    Record r;
    r.header.type = type;
    r.header.misc = 0;
    r.header.size = static_cast<std::uint16_t>(sizeof(perf_event_header) + body.size() * 8);
    r.body = std::move(body);
    return r;
}

std::uint64_t pid_tid(std::uint32_t pid, std::uint32_t tid) {
    return static_cast<std::uint64_t>(tid) << 32 | pid;  // {u32 pid, u32 tid}, little-endian
}

// IP | TID | TIME | PERIOD | CALLCHAIN, in the kernel's order.
Record sample_record(std::uint64_t ip, std::uint32_t pid, std::uint32_t tid, std::uint64_t time,
                     std::uint64_t period, std::vector<std::uint64_t> callchain) {
    std::vector<std::uint64_t> body = {ip, pid_tid(pid, tid), time, period, callchain.size()};
    body.insert(body.end(), callchain.begin(), callchain.end());
    return make_record(PERF_RECORD_SAMPLE, std::move(body));
}

void feed(RingBuffer& ring, const Record& r) {
    ring.parse(r.header, reinterpret_cast<const unsigned char*>(r.body.data()), r.body.size() * 8);
}

constexpr auto kUser = static_cast<std::uint64_t>(PERF_CONTEXT_USER);

TEST(RingBufferParse, SampleFieldsAndCallchain) {
    RingBuffer ring;
    // The user chain as the kernel gives it: context marker, the IP itself, the callers, and
    // the 0 a frame-pointer walk ends on.
    feed(ring,
         sample_record(0x401000, 10, 11, 123456, 7, {kUser, 0x401000, 0x402000, 0x403000, 0}));
    ASSERT_EQ(ring.samples.size(), 1u);
    const auto& s = ring.samples[0];
    EXPECT_EQ(s.ip, 0x401000u);
    EXPECT_EQ(s.pid, 10u);
    EXPECT_EQ(s.tid, 11u);
    EXPECT_EQ(s.time_ns, 123456u);
    EXPECT_EQ(s.weight, 7u);
    EXPECT_EQ(s.callchain, (std::vector<std::uint64_t>{0x402000, 0x403000}));
    EXPECT_EQ(ring.lost, 0u);
}

// --call-graph dwarf: the registers and the stack copy after the call chain are kept in the
// sample, the copy cut to the bytes the kernel could copy (dyn_size); a register set of another
// ABI (none, 32-bit) keeps neither.
TEST(RingBufferParse, DwarfSamplesKeepTheirRegistersAndStackCopy) {
    RingBuffer ring;
    ring.layout = {kSampleType | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 0, false,
                   0b1011};  // three registers
    // ip, pid/tid, time, period, an empty chain; abi 64, 3 registers; stack of 16 bytes of
    // which 12 copied, then dyn_size.
    feed(ring, make_record(PERF_RECORD_SAMPLE,
                           {0x401000, pid_tid(1, 2), 5, 1, 0, PERF_SAMPLE_REGS_ABI_64, 10, 11, 13,
                            16, 0x0807060504030201, 0x100f0e0d0c0b0a09, 12}));
    ASSERT_EQ(ring.samples.size(), 1u);
    const auto& s = ring.samples[0];
    EXPECT_EQ(s.user_regs, (std::vector<std::uint64_t>{10, 11, 13}));
    ASSERT_EQ(s.user_stack.size(), 12u);
    EXPECT_EQ(s.user_stack[0], 1);
    EXPECT_EQ(s.user_stack[11], 12);
    EXPECT_TRUE(s.callchain.empty());
    EXPECT_EQ(ring.stack_bytes, 12u);
    // A kernel thread's sample: ABI none, no registers, and a stack size of 0.
    feed(ring, make_record(PERF_RECORD_SAMPLE,
                           {0x402000, pid_tid(1, 3), 6, 1, 0, PERF_SAMPLE_REGS_ABI_NONE, 0}));
    ASSERT_EQ(ring.samples.size(), 2u);
    EXPECT_TRUE(ring.samples[1].user_regs.empty());
    EXPECT_TRUE(ring.samples[1].user_stack.empty());
    // A 32-bit task's registers are not what the unwinder reads.
    feed(ring, make_record(PERF_RECORD_SAMPLE, {0x403000, pid_tid(1, 4), 7, 1, 0,
                                                PERF_SAMPLE_REGS_ABI_32, 1, 2, 3, 0}));
    ASSERT_EQ(ring.samples.size(), 3u);
    EXPECT_TRUE(ring.samples[2].user_regs.empty());
}

TEST(RingBufferParse, OnlyTheFirstFrameEqualToTheIpIsSkipped) {
    RingBuffer ring;
    // A chain that does not start with the IP keeps its first frame; a recursive caller at the
    // IP's address later in the chain is a frame.
    feed(ring, sample_record(0x5000, 1, 1, 0, 1, {0x6000, 0x5000}));
    ASSERT_EQ(ring.samples.size(), 1u);
    EXPECT_EQ(ring.samples[0].callchain, (std::vector<std::uint64_t>{0x6000, 0x5000}));
}

TEST(RingBufferParse, CallchainLongerThanTheRecordStopsAtItsEnd) {
    RingBuffer ring;
    Record r = sample_record(0x5000, 1, 2, 3, 4, {0x6000, 0x7000});
    r.body[4] = 100;  // nr claims 100 frames, the record holds 2
    feed(ring, r);
    ASSERT_EQ(ring.samples.size(), 1u);
    EXPECT_EQ(ring.samples[0].callchain, (std::vector<std::uint64_t>{0x6000, 0x7000}));
}

TEST(RingBufferParse, LostRecordsAddUp) {
    RingBuffer ring;
    feed(ring, make_record(PERF_RECORD_LOST, {/*id*/ 1, /*lost*/ 5}));
    feed(ring, make_record(PERF_RECORD_LOST, {1, 12}));
    EXPECT_EQ(ring.lost, 17u);
    EXPECT_TRUE(ring.samples.empty());
}

TEST(RingBufferParse, UnknownRecordTypeIsSkipped) {
    RingBuffer ring;
    feed(ring, make_record(0x7777, {1, 2, 3, 4, 5}));
    feed(ring, make_record(PERF_RECORD_THROTTLE, {1, 2, 3}));
    EXPECT_TRUE(ring.samples.empty());
    EXPECT_TRUE(ring.events.empty());
    EXPECT_EQ(ring.lost, 0u);
    EXPECT_EQ(ring.throttled, 1u);
}

// A ring as perf mmaps it: one metadata page, then `data_size` bytes of data.
class SyntheticRing {
  public:
    explicit SyntheticRing(std::size_t data_size) {
        ring.mmap_size = page_size() + data_size;
        ring.data_size = data_size;
        ring.base = mmap(nullptr, ring.mmap_size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (ring.base == MAP_FAILED) ring.base = nullptr;
        meta()->data_offset = page_size();
        meta()->data_size = data_size;
    }
    // ring's destructor unmaps base (fd stays -1).

    perf_event_mmap_page* meta() { return static_cast<perf_event_mmap_page*>(ring.base); }

    // Starts the ring at `position` (tail = head = position, as after earlier drains).
    void start_at(std::uint64_t position) { meta()->data_tail = meta()->data_head = position; }

    // Writes `r` at the head, wrapping at the end of the data area, and advances the head.
    void write(const Record& r) {
        auto* data = static_cast<unsigned char*>(ring.base) + page_size();
        const auto bytes = r.bytes();
        for (std::size_t i = 0; i < bytes.size(); ++i)
            data[(meta()->data_head + i) % ring.data_size] = bytes[i];
        meta()->data_head += bytes.size();
    }

    RingBuffer ring;
};

TEST(RingBufferDrain, RecordWrappingTheEndOfTheDataArea) {
    SyntheticRing synthetic(4096);
    ASSERT_NE(synthetic.ring.base, nullptr);
    // The sample's 72 bytes start 24 bytes before the end: its header, IP and pid/tid there,
    // the rest at the start of the data area.
    synthetic.start_at(4096 * 3 - 24);
    synthetic.write(sample_record(0xabc0, 20, 21, 99, 3, {kUser, 0xabc0, 0xdef0}));
    synthetic.write(make_record(0x7777, {0}));  // skipped, the drain goes on
    synthetic.write(make_record(PERF_RECORD_LOST, {1, 4}));
    synthetic.ring.drain();
    ASSERT_EQ(synthetic.ring.samples.size(), 1u);
    const auto& s = synthetic.ring.samples[0];
    EXPECT_EQ(s.ip, 0xabc0u);
    EXPECT_EQ(s.pid, 20u);
    EXPECT_EQ(s.tid, 21u);
    EXPECT_EQ(s.time_ns, 99u);
    EXPECT_EQ(s.weight, 3u);
    EXPECT_EQ(s.callchain, (std::vector<std::uint64_t>{0xdef0}));
    EXPECT_EQ(synthetic.ring.lost, 4u);
    // Everything read was released to the kernel.
    EXPECT_EQ(synthetic.meta()->data_tail, synthetic.meta()->data_head);
}

// The kernel reports what it could not write in a PERF_RECORD_LOST at its next write: a drain
// that finds less than kFullMargin free says the buffer was full, since losses after the last
// write are in no record (CliRecordIntegrity under ASan missed 184 entries with 1 said lost).
TEST(RingBufferDrain, ADrainThatFindsTheBufferFullSaysSo) {
    SyntheticRing synthetic(4096);
    ASSERT_NE(synthetic.ring.base, nullptr);
    synthetic.start_at(0);
    synthetic.write(sample_record(0x1000, 1, 1, 1, 1, {}));
    synthetic.ring.drain();
    EXPECT_EQ(synthetic.ring.found_full, 0u);
    while (synthetic.meta()->data_head - synthetic.meta()->data_tail + RingBuffer::kFullMargin <
           4096)
        synthetic.write(sample_record(0x2000, 1, 1, 2, 1, {}));
    synthetic.ring.drain();
    EXPECT_EQ(synthetic.ring.found_full, 1u);
    synthetic.ring.drain();  // now empty
    EXPECT_EQ(synthetic.ring.found_full, 1u);
}

TEST(RingBufferDrain, IncompleteRecordIsLeftForTheNextDrain) {
    SyntheticRing synthetic(4096);
    ASSERT_NE(synthetic.ring.base, nullptr);
    synthetic.start_at(0);
    synthetic.write(sample_record(0x1000, 1, 1, 1, 1, {}));
    const std::uint64_t complete = synthetic.meta()->data_head;
    synthetic.write(sample_record(0x2000, 1, 1, 2, 1, {}));
    synthetic.meta()->data_head -= 8;  // the kernel has not finished the second one
    synthetic.ring.drain();
    ASSERT_EQ(synthetic.ring.samples.size(), 1u);
    EXPECT_EQ(synthetic.ring.samples[0].ip, 0x1000u);
    EXPECT_EQ(synthetic.meta()->data_tail, complete);
    synthetic.meta()->data_head += 8;
    synthetic.ring.drain();
    ASSERT_EQ(synthetic.ring.samples.size(), 2u);
    EXPECT_EQ(synthetic.ring.samples[1].ip, 0x2000u);
}

}  // namespace
}  // namespace lockprof::sampling
