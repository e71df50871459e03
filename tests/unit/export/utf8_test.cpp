// UTF-8 validation (export/utf8.hpp) at the edges the standard draws: sequence lengths,
// overlong forms, surrogates, the end of Unicode, truncated and stray continuation bytes.
#include "lockprof/export/utf8.hpp"

#include <string>

#include <gtest/gtest.h>

namespace lockprof::exporting {
namespace {

TEST(Utf8SequenceLength, ValidSequencesOfEachLength) {
    EXPECT_EQ(utf8_sequence_length("a"), 1u);
    EXPECT_EQ(utf8_sequence_length("\x7f"), 1u);
    EXPECT_EQ(utf8_sequence_length("\xc2\x80"), 2u);          // U+0080, the first of two bytes
    EXPECT_EQ(utf8_sequence_length("\xc3\xa9tail"), 2u);      // é, followed by more text
    EXPECT_EQ(utf8_sequence_length("\xe0\xa0\x80"), 3u);      // U+0800
    EXPECT_EQ(utf8_sequence_length("\xe2\x82\xac"), 3u);      // €
    EXPECT_EQ(utf8_sequence_length("\xed\x9f\xbf"), 3u);      // U+D7FF, just below surrogates
    EXPECT_EQ(utf8_sequence_length("\xf0\x90\x80\x80"), 4u);  // U+10000
    EXPECT_EQ(utf8_sequence_length("\xf4\x8f\xbf\xbf"), 4u);  // U+10FFFF, the last code point
}

TEST(Utf8SequenceLength, InvalidSequences) {
    EXPECT_EQ(utf8_sequence_length("\x80"), 0u);              // stray continuation byte
    EXPECT_EQ(utf8_sequence_length("\xc0\x80"), 0u);          // overlong NUL
    EXPECT_EQ(utf8_sequence_length("\xc1\xbf"), 0u);          // overlong
    EXPECT_EQ(utf8_sequence_length("\xe0\x9f\xbf"), 0u);      // overlong three-byte form
    EXPECT_EQ(utf8_sequence_length("\xed\xa0\x80"), 0u);      // U+D800, a surrogate
    EXPECT_EQ(utf8_sequence_length("\xf0\x8f\xbf\xbf"), 0u);  // overlong four-byte form
    EXPECT_EQ(utf8_sequence_length("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
    EXPECT_EQ(utf8_sequence_length("\xf5\x80\x80\x80"), 0u);  // lead byte past F4
    EXPECT_EQ(utf8_sequence_length("\xff"), 0u);
    EXPECT_EQ(utf8_sequence_length("\xe2\x82"), 0u);          // truncated
    EXPECT_EQ(utf8_sequence_length("\xe2\x28\xa1"), 0u);      // second byte not a continuation
    EXPECT_EQ(utf8_sequence_length("\xf0\x90\x80\x28"), 0u);  // fourth byte not a continuation
}

TEST(FirstInvalidUtf8, FindsTheFirstBadByte) {
    EXPECT_EQ(first_invalid_utf8(""), std::string_view::npos);
    EXPECT_EQ(first_invalid_utf8("plain ascii; s_lock"), std::string_view::npos);
    EXPECT_EQ(first_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92"),
              std::string_view::npos);
    EXPECT_EQ(first_invalid_utf8("ab\xffz"), 2u);
    EXPECT_EQ(first_invalid_utf8("\xc3\xa9\xc3"), 2u);  // truncated at the end
    EXPECT_EQ(first_invalid_utf8("x\xed\xa0\x80"), 1u);
    EXPECT_EQ(first_invalid_utf8(std::string("a\0b\x80", 4)), 3u);  // NUL is valid UTF-8
}

}  // namespace
}  // namespace lockprof::exporting
