// decode_sample() on the fields after the call chain: PERF_SAMPLE_RAW skipped, the user
// registers of PERF_SAMPLE_REGS_USER and the stack copy of PERF_SAMPLE_STACK_USER (what
// `--call-graph dwarf` asks for), laid out as the kernel writes them, whole and cut short.
#include "lockprof/sampling/perf_record.hpp"

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace lockprof::sampling {
namespace {

constexpr std::uint64_t kDwarfType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN |
                                     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
constexpr std::uint64_t kThreeRegs = 0b1011;  // perf registers 0, 1 and 3

SampleFields decode(const RecordLayout& layout, const std::vector<std::uint64_t>& body,
                    std::size_t bytes) {
    return decode_sample(layout, reinterpret_cast<const unsigned char*>(body.data()), bytes);
}

// ip, {pid, tid}, a call chain of one, three registers, a 16-byte stack of which 12 copied.
std::vector<std::uint64_t> dwarf_body() {
    return {0x401000,
            std::uint64_t{7} << 32 | 7,
            1,
            0x401234,
            PERF_SAMPLE_REGS_ABI_64,
            10,
            11,
            13,
            16,
            0x1111,
            0x2222,
            12};
}

TEST(DecodeSample, RegistersAndStackAfterTheCallChain) {
    const RecordLayout layout{kDwarfType, 0, false, kThreeRegs};
    const auto body = dwarf_body();
    const auto s = decode(layout, body, body.size() * 8);
    EXPECT_TRUE(s.complete);
    EXPECT_EQ(s.ip, 0x401000u);
    ASSERT_EQ(s.chain_size, 1u);
    EXPECT_EQ(s.chain_at(0), 0x401234u);
    EXPECT_EQ(s.regs_abi, static_cast<std::uint64_t>(PERF_SAMPLE_REGS_ABI_64));
    ASSERT_EQ(s.regs_count, 3u);
    EXPECT_EQ(s.regs_at(0), 10u);
    EXPECT_EQ(s.regs_at(2), 13u);
    EXPECT_EQ(s.stack_size, 16u);
    EXPECT_EQ(s.stack_dyn_size, 12u);
    ASSERT_NE(s.stack, nullptr);
    std::uint64_t first = 0;
    std::memcpy(&first, s.stack, 8);
    EXPECT_EQ(first, 0x1111u);
}

TEST(DecodeSample, NoUserRegistersMeansNoRegisterWords) {
    // A kernel thread: ABI_NONE and no registers, then an empty stack (size 0, no dyn_size).
    const RecordLayout layout{kDwarfType, 0, false, kThreeRegs};
    const std::vector<std::uint64_t> body = {0xffff0000, 1, 0, PERF_SAMPLE_REGS_ABI_NONE, 0};
    const auto s = decode(layout, body, body.size() * 8);
    EXPECT_TRUE(s.complete);
    EXPECT_EQ(s.regs_count, 0u);
    EXPECT_EQ(s.regs, nullptr);
    EXPECT_EQ(s.stack_size, 0u);
    EXPECT_EQ(s.stack, nullptr);
}

TEST(DecodeSample, RawDataIsSkippedBeforeTheRegisters) {
    const RecordLayout layout{PERF_SAMPLE_IP | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER, 0, false,
                              0b1};
    // RAW: u32 size 4, 4 bytes of data (one word in all), then ABI and one register.
    const std::vector<std::uint64_t> body = {0x400000, 4 | std::uint64_t{0xabcd} << 32,
                                             PERF_SAMPLE_REGS_ABI_64, 42};
    const auto s = decode(layout, body, body.size() * 8);
    EXPECT_TRUE(s.complete);
    ASSERT_EQ(s.regs_count, 1u);
    EXPECT_EQ(s.regs_at(0), 42u);
}

TEST(DecodeSample, RecordCutShortKeepsNothingPastItsEnd) {
    const RecordLayout layout{kDwarfType, 0, false, kThreeRegs};
    const auto body = dwarf_body();
    // Every length short of the whole record decodes as incomplete and never reports
    // registers or stack bytes beyond the bytes given.
    for (std::size_t words = 0; words < body.size(); ++words) {
        const std::size_t bytes = words * 8;
        const auto s = decode(layout, body, bytes);
        EXPECT_FALSE(s.complete) << words << " words";
        const auto* begin = reinterpret_cast<const unsigned char*>(body.data());
        if (s.regs) {
            EXPECT_LE(s.regs + s.regs_count * 8, begin + bytes) << words;
        }
        if (s.stack) {
            EXPECT_LE(s.stack + s.stack_size, begin + bytes) << words;
        }
    }
}

}  // namespace
}  // namespace lockprof::sampling
