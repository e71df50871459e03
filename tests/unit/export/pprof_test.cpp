#include "lockprof/export/pprof.hpp"

#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "unit/export/pprof_test_support.hpp"

namespace lockprof::exporting::pprof {
using test::decode;

namespace {

Profile example() {
    Profile p;
    p.sample_types = {{"samples", "count"}, {"cpu", "nanoseconds"}, {"cycles", "count"}};
    p.mappings.push_back(
        {1, 0x400000, 0x500000, 0x1000, "/usr/bin/lockprof", "abcdef12", true, true, true, true});
    p.functions.push_back({1, "TasLock::lock", "_ZN7TasLock4lockEv", "tas.hpp", 20});
    p.functions.push_back({2, "measured_loop", "", "loop.hpp", 0});
    // An instruction of TasLock::lock inlined into measured_loop, and a caller in no mapping.
    p.locations.push_back({1, 1, 0x401234, {{1, 30}, {2, 72}}});
    p.locations.push_back({2, 0, 0xffffffff81000000, {{2, 0}}});
    p.samples.push_back({{1, 2},
                         {1, 1000, 5000},
                         {Label::text("lock", "tas"), Label::number("threads", 2),
                          Label::number("pid", 42, "pid")}});
    p.samples.push_back({{1}, {1, 2000, 9000}, {Label::text("lock", "cas")}});
    p.period_type = {"cycles", "count"};
    p.period = 1'000'000;
    p.time_nanos = 1'700'000'000'000'000'000;
    p.duration_nanos = 200'000'000;
    p.default_sample_type = "cycles";
    p.comments = {"lockprof 0.1.0"};
    return p;
}

TEST(Pprof, EncodesEveryPartOfTheProfile) {
    const auto p = decode(encode_pprof(example()));
    const auto& s = p.string_table();
    ASSERT_GT(s.size(), 0);
    EXPECT_EQ(s[0], "");  // the format requires it
    ASSERT_EQ(p.sample_type_size(), 3);
    EXPECT_EQ(s[p.sample_type(0).type()], "samples");
    EXPECT_EQ(s[p.sample_type(0).unit()], "count");
    EXPECT_EQ(s[p.sample_type(1).type()], "cpu");
    EXPECT_EQ(s[p.sample_type(1).unit()], "nanoseconds");
    EXPECT_EQ(s[p.sample_type(2).type()], "cycles");
    EXPECT_EQ(s[p.default_sample_type()], "cycles");

    ASSERT_EQ(p.sample_size(), 2);
    const auto& first = p.sample(0);
    ASSERT_EQ(first.location_id_size(), 2);
    EXPECT_EQ(first.location_id(0), 1u);
    EXPECT_EQ(first.location_id(1), 2u);
    ASSERT_EQ(first.value_size(), 3);
    EXPECT_EQ(first.value(1), 1000);
    EXPECT_EQ(first.value(2), 5000);
    ASSERT_EQ(first.label_size(), 3);
    EXPECT_EQ(s[first.label(0).key()], "lock");
    EXPECT_EQ(s[first.label(0).str()], "tas");
    EXPECT_EQ(s[first.label(1).key()], "threads");
    EXPECT_EQ(first.label(1).str(), 0);  // numeric: no string
    EXPECT_EQ(first.label(1).num(), 2);
    EXPECT_EQ(first.label(1).num_unit(), 0);
    EXPECT_EQ(s[first.label(2).num_unit()], "pid");
    EXPECT_EQ(s[p.sample(1).label(0).str()], "cas");

    ASSERT_EQ(p.mapping_size(), 1);
    const auto& m = p.mapping(0);
    EXPECT_EQ(m.id(), 1u);
    EXPECT_EQ(m.memory_start(), 0x400000u);
    EXPECT_EQ(m.memory_limit(), 0x500000u);
    EXPECT_EQ(m.file_offset(), 0x1000u);
    EXPECT_EQ(s[m.filename()], "/usr/bin/lockprof");
    EXPECT_EQ(s[m.build_id()], "abcdef12");
    EXPECT_TRUE(m.has_functions() && m.has_filenames() && m.has_line_numbers() &&
                m.has_inline_frames());

    ASSERT_EQ(p.location_size(), 2);
    const auto& inlined = p.location(0);
    EXPECT_EQ(inlined.mapping_id(), 1u);
    EXPECT_EQ(inlined.address(), 0x401234u);
    ASSERT_EQ(inlined.line_size(), 2);  // innermost first
    EXPECT_EQ(inlined.line(0).function_id(), 1u);
    EXPECT_EQ(inlined.line(0).line(), 30);
    EXPECT_EQ(inlined.line(1).function_id(), 2u);
    EXPECT_EQ(inlined.line(1).line(), 72);
    EXPECT_EQ(p.location(1).mapping_id(), 0u);

    ASSERT_EQ(p.function_size(), 2);
    EXPECT_EQ(s[p.function(0).name()], "TasLock::lock");
    EXPECT_EQ(s[p.function(0).system_name()], "_ZN7TasLock4lockEv");
    EXPECT_EQ(s[p.function(0).filename()], "tas.hpp");
    EXPECT_EQ(p.function(0).start_line(), 20);
    EXPECT_EQ(s[p.function(1).system_name()], "measured_loop");  // "" takes the name

    EXPECT_EQ(s[p.period_type().type()], "cycles");
    EXPECT_EQ(s[p.period_type().unit()], "count");
    EXPECT_EQ(p.period(), 1'000'000);
    EXPECT_EQ(p.time_nanos(), 1'700'000'000'000'000'000);
    EXPECT_EQ(p.duration_nanos(), 200'000'000);
    ASSERT_EQ(p.comment_size(), 1);
    EXPECT_EQ(s[p.comment(0)], "lockprof 0.1.0");
}

TEST(Pprof, StoresEachStringOnce) {
    const auto p = decode(encode_pprof(example()));
    std::set<std::string> seen;
    for (const auto& s : p.string_table()) EXPECT_TRUE(seen.insert(s).second) << s;
}

TEST(Pprof, IsGzip) {
    const auto bytes = encode_pprof(example());
    ASSERT_GE(bytes.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
}

TEST(Pprof, RefusesBrokenIds) {
    auto p = example();
    p.samples[0].location_ids.push_back(9);
    EXPECT_THROW(encode_pprof(p), Error);
    p = example();
    p.locations[1].id = 1;
    EXPECT_THROW(encode_pprof(p), Error);
    p = example();
    p.locations[0].lines[0].function_id = 7;
    EXPECT_THROW(encode_pprof(p), Error);
    p = example();
    p.locations[0].mapping_id = 3;
    EXPECT_THROW(encode_pprof(p), Error);
    p = example();
    p.samples[0].values.pop_back();
    EXPECT_THROW(encode_pprof(p), Error);
}

TEST(Pprof, WritesTheFile) {
    const auto path = std::filesystem::temp_directory_path() / "lockprof-pprof-test.pb.gz";
    write_pprof(example(), path);
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(path);
    EXPECT_EQ(decode(bytes).sample_size(), 2);
}

}  // namespace
}  // namespace lockprof::exporting::pprof
