// The perf.data reader (perfdata/) on files built here byte by byte: a minimal valid file folds
// as perf script would fold it (comm from COMM records in time order, mappings from MMAP2,
// kernel names from a kallsyms file), and damaged files (wrong magic, pipe mode, truncated
// header or records, sections past the end, short samples) give one-line UsageErrors or
// counted problems, never a crash or a read past the bytes given.
#include "lockprof/perfdata/perf_data.hpp"

#include <linux/perf_event.h>

#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "support/temp_dir.hpp"

namespace lockprof::perfdata {
namespace {

constexpr std::uint64_t kType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;

struct Bytes {
    std::string s;
    void u64(std::uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
    void u32(std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
    void u16(std::uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); }
    void str(const std::string& text, std::size_t padded) {
        std::string t = text;
        t.resize(padded, '\0');
        s += t;
    }
};

// A record: header then body, with the sample_id trailer {pid, tid, time} for side-band ones.
std::string record(std::uint32_t type, std::uint16_t misc, const std::string& body) {
    Bytes b;
    b.u32(type);
    b.u16(misc);
    b.u16(static_cast<std::uint16_t>(8 + body.size()));
    return b.s + body;
}

std::string trailer(std::uint32_t pid, std::uint32_t tid, std::uint64_t time) {
    Bytes b;
    b.u32(pid);
    b.u32(tid);
    b.u64(time);
    return b.s;
}

std::string comm(std::uint32_t pid, std::uint32_t tid, const std::string& name,
                 std::uint64_t time) {
    Bytes b;
    b.u32(pid);
    b.u32(tid);
    b.str(name, 16);
    return record(PERF_RECORD_COMM, 0, b.s + trailer(pid, tid, time));
}

std::string mmap2(std::uint32_t pid, std::uint64_t start, std::uint64_t len,
                  const std::string& file, std::uint64_t time) {
    Bytes b;
    b.u32(pid);
    b.u32(pid);
    b.u64(start);
    b.u64(len);
    b.u64(0);       // pgoff
    b.str("", 24);  // maj, min, ino, generation
    b.u32(5);       // PROT_READ | PROT_EXEC
    b.u32(2);       // MAP_PRIVATE
    b.str(file, (file.size() + 8) / 8 * 8);
    return record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, b.s + trailer(pid, pid, time));
}

std::string sample(std::uint32_t pid, std::uint32_t tid, std::uint64_t time,
                   std::vector<std::uint64_t> chain) {
    Bytes b;
    b.u64(chain.empty() ? 0 : chain[0] < PERF_CONTEXT_MAX ? chain[0] : chain[1]);
    b.u32(pid);
    b.u32(tid);
    b.u64(time);
    b.u64(1000);  // period
    b.u64(chain.size());
    for (auto a : chain) b.u64(a);
    return record(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, b.s);
}

constexpr auto kKernelMark = static_cast<std::uint64_t>(PERF_CONTEXT_KERNEL);
constexpr auto kUserMark = static_cast<std::uint64_t>(PERF_CONTEXT_USER);

// header | attr (+ ids section) | ids | data | feature sections table | EVENT_DESC.
std::string perf_file(const std::string& data, const std::string& event_name = "cpu-clock") {
    constexpr std::size_t kAttrSize = sizeof(perf_event_attr);
    const std::size_t attrs_at = 104, ids_at = attrs_at + kAttrSize + 16, data_at = ids_at + 8;
    const std::size_t features_at = data_at + data.size();
    Bytes desc;
    desc.u32(1);
    desc.u32(kAttrSize);
    desc.str("", kAttrSize);
    desc.u32(1);  // nr_ids
    desc.u32(16);
    desc.str(event_name, 16);
    desc.u64(7);  // the id
    Bytes f;
    f.str("PERFILE2", 8);
    f.u64(104);
    f.u64(kAttrSize + 16);
    f.u64(attrs_at);
    f.u64(kAttrSize + 16);
    f.u64(data_at);
    f.u64(data.size());
    f.u64(0);
    f.u64(0);
    f.u64(1ull << 12);  // HEADER_EVENT_DESC
    f.u64(0);
    f.u64(0);
    f.u64(0);
    perf_event_attr attr{};
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = kAttrSize;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_type = kType;
    attr.sample_id_all = 1;
    f.s.append(reinterpret_cast<const char*>(&attr), kAttrSize);
    f.u64(ids_at);
    f.u64(8);
    f.u64(7);
    f.s += data;
    f.u64(features_at + 16);
    f.u64(desc.s.size());
    f.s += desc.s;
    return f.s;
}

class PerfDataFold : public ::testing::Test {
  protected:
    void SetUp() override {
        std::ofstream(dir / "kallsyms") << "ffffffff81000000 T _text\n"
                                           "ffffffff81000100 t do_thing\n"
                                           "ffffffff81000100 T __do_thing\n"
                                           "ffffffff81000200 T next_thing\n";
        resolve.kallsyms = (dir / "kallsyms").string();
        resolve.debug_dir = (dir / "no-cache").string();
    }
    std::string fold(const std::string& bytes, exporting::PerfScriptOptions options = {}) {
        report = {};
        const auto stacks =
            perfdata::fold(PerfData::from_bytes(bytes, "t.data"), options, report, resolve);
        return exporting::to_folded_text(stacks);
    }
    test::TempDir dir;
    ResolveOptions resolve;
    exporting::PerfScriptReport report;
};

TEST_F(PerfDataFold, MinimalFileFoldsAsPerfScriptWould) {
    const std::string data =
        // The sample at time 20 is written before the COMM of time 10: replayed in time order,
        // it is named "prog"; the one at time 5, before any COMM, is ":42" as perf names it.
        sample(42, 42, 20,
               {kKernelMark, 0xffffffff81000150, kUserMark, 0x400010, 0x7000000100, 0}) +
        comm(42, 42, "prog", 10) + mmap2(42, 0x7000000000, 0x1000, "/nonexistent/libx.so", 1) +
        sample(42, 42, 5, {kUserMark, 0x400020});
    const auto file = perf_file(data);
    // Of the two kernel symbols at 0x...100, perf keeps the global one, underscores or not.
    const auto text = fold(file);
    EXPECT_EQ(text,
              ":42;[unknown] 1\n"
              "prog;[unknown];[libx.so];[unknown];__do_thing_[k] 1\n");
    EXPECT_EQ(report.samples, 2u);
    EXPECT_EQ(report.skipped, 0u);
    EXPECT_EQ(report.event, "cpu-clock");

    exporting::PerfScriptOptions options;
    options.annotate_kernel = false;
    options.root = exporting::PerfScriptOptions::Root::comm_pid;
    options.weight_by_period = true;
    EXPECT_EQ(fold(file, options),
              ":42-42;[unknown] 1000\n"
              "prog-42;[unknown];[libx.so];[unknown];__do_thing 1000\n");
    // The same samples as a pprof profile, labelled with the process's name.
    const auto profile = perf_data_pprof(PerfData::from_bytes(file, "t.data"), resolve);
    ASSERT_EQ(profile.samples.size(), 2u);
    EXPECT_EQ(profile.samples[0].labels.at(0).key, "process");
    EXPECT_EQ(profile.samples[0].labels.at(0).str, "prog");

    options = {};
    options.event = "cycles";
    fold(file, options);
    EXPECT_EQ(report.folded, 0u);
    EXPECT_EQ(report.other_events, std::vector<std::string>{"cpu-clock"});
}

TEST_F(PerfDataFold, EventNameFromTheEventDescription) {
    const auto file = perf_file(sample(1, 1, 1, {kUserMark, 0x10}), "cpu-clock:u");
    EXPECT_EQ(PerfData::from_bytes(file, "t").events().at(0).name, "cpu-clock:u");
    fold(file);
    EXPECT_EQ(report.event, "cpu-clock");  // modifiers dropped, as the text path drops them
}

// The C library this test runs with, from its own mappings ("" when none is named libc.so.6).
std::string this_libc() {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        const auto slash = line.find('/');
        if (slash != std::string::npos && line.ends_with("/libc.so.6")) return line.substr(slash);
    }
    return {};
}

TEST_F(PerfDataFold, PltStubWithoutASymbolIsNamedAsPerfNamesIt) {
    // glibc calls its own ifuncs (memcpy, strlen...) through PLT stubs whose relocation
    // (R_X86_64_IRELATIVE) names no symbol; perf 6.1 names them "@plt", and a sample there must
    // fold as `perf script | lockprof fold` folds it, not as "[libc.so.6]".
    const std::string libc = this_libc();
    if (libc.empty()) GTEST_SKIP() << "this test process maps no libc.so.6";
    const auto stubs = symbols::plt_stubs(libc);
    const auto unnamed = std::find_if(stubs.begin(), stubs.end(),
                                      [](const symbols::PltStub& s) { return s.name.empty(); });
    if (unnamed == stubs.end())
        GTEST_SKIP() << libc << " has no PLT stub without a symbol (no IRELATIVE relocations)";
    const auto named = std::find_if(stubs.begin(), stubs.end(),
                                    [](const symbols::PltStub& s) { return !s.name.empty(); });
    ASSERT_NE(named, stubs.end());
    const std::uint64_t base = 0x7f0000000000;
    const auto size = std::filesystem::file_size(libc);
    const std::string data = comm(42, 42, "prog", 1) + mmap2(42, base, size, libc, 2) +
                             sample(42, 42, 3, {kUserMark, base + unnamed->file_offset + 4}) +
                             sample(42, 42, 4, {kUserMark, base + named->file_offset + 4});
    const std::string text = fold(perf_file(data));
    EXPECT_NE(text.find("prog;@plt 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("prog;" + symbols::perf_symbol_name(named->name) + "@plt 1\n"),
              std::string::npos)
        << text;
}

void expect_usage_error(const std::string& bytes, const std::string& part) {
    try {
        PerfData::from_bytes(bytes, "bad.data");
        ADD_FAILURE() << "no error for a file that should have '" << part << "'";
    } catch (const UsageError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(part), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        EXPECT_EQ(what.rfind("bad.data: ", 0), 0u) << what;
    }
}

TEST(PerfDataHeader, DamagedHeadersAreOneLineUsageErrors) {
    const auto good = perf_file(sample(1, 1, 1, {kUserMark, 0x10}));
    expect_usage_error("PERF", "too short");
    expect_usage_error("PERFILE2garbag", "too short");
    expect_usage_error(std::string("NOTPERF2") + good.substr(8), "no PERFILE2 magic");
    expect_usage_error(std::string("2ELIFREP") + good.substr(8), "big-endian");
    std::string pipe = good.substr(0, 16);
    pipe.replace(8, 8, std::string("\x10\0\0\0\0\0\0\0", 8));
    expect_usage_error(pipe, "pipe-mode");
    expect_usage_error(good.substr(0, 60), "header of 60 bytes");
    std::string attrs_past_end = good;
    const std::uint64_t far = 1 << 30;
    std::memcpy(attrs_past_end.data() + 24, &far, 8);  // attrs.offset
    expect_usage_error(attrs_past_end, "attribute section");
    std::string tiny_attr = good;
    const std::uint64_t small = 20;
    std::memcpy(tiny_attr.data() + 16, &small, 8);  // attr_size
    expect_usage_error(tiny_attr, "attribute section");
}

// An event description whose attribute size leaves less than its next fields in the section:
// the names come from the section only, never from the bytes after it (a name here; past the
// end of the file, a read out of bounds).
TEST(PerfDataHeader, EventDescriptionIsReadFromItsSectionOnly) {
    std::string file = perf_file(sample(1, 1, 1, {kUserMark, 0x10}), "cpu-clock:u");
    const std::size_t table = file.size() - (40 + sizeof(perf_event_attr)) - 16;
    std::uint64_t desc_at = 0;
    std::memcpy(&desc_at, file.data() + table, 8);
    ASSERT_EQ(desc_at, table + 16);
    const std::uint64_t section_size = 16;  // nr, attr_size and 8 bytes of the attribute
    std::memcpy(file.data() + table + 8, &section_size, 8);
    const std::uint32_t attr_size = 12;
    std::memcpy(file.data() + desc_at + 4, &attr_size, 4);
    const std::uint32_t no_ids = 0, name_size = 8;  // after the section: a description
    std::memcpy(file.data() + desc_at + 20, &no_ids, 4);
    std::memcpy(file.data() + desc_at + 24, &name_size, 4);
    std::memcpy(file.data() + desc_at + 28, "outside\0", 8);
    EXPECT_EQ(PerfData::from_bytes(file, "t").events().at(0).name, "cpu-clock");
}

TEST_F(PerfDataFold, DamagedRecordsAreProblemsOrStrictErrors) {
    const std::string good = sample(1, 1, 1, {kUserMark, 0x10});
    // A record claiming more bytes than the data section has.
    std::string overlong = sample(1, 1, 2, {kUserMark, 0x20});
    const std::uint16_t big = 4000;
    std::memcpy(overlong.data() + 6, &big, 2);
    auto file = perf_file(good + overlong);
    EXPECT_EQ(fold(file), ":1;[unknown] 1\n");
    EXPECT_EQ(report.skipped, 1u);
    ASSERT_EQ(report.problems.size(), 1u);
    EXPECT_NE(report.problems[0].find("claims 4000 bytes"), std::string::npos);
    exporting::PerfScriptOptions strict;
    strict.strict = true;
    EXPECT_THROW(fold(file, strict), UsageError);

    // A record smaller than its own header.
    std::string tiny = good;
    const std::uint16_t four = 4;
    std::memcpy(tiny.data() + 6, &four, 2);
    fold(perf_file(good + tiny));
    EXPECT_EQ(report.skipped, 1u);

    // A sample whose call chain claims more entries than it holds.
    std::string short_chain = sample(1, 1, 3, {kUserMark, 0x30});
    const std::uint64_t many = 1000;
    std::memcpy(short_chain.data() + 8 + 32, &many, 8);
    fold(perf_file(short_chain));
    EXPECT_EQ(report.skipped, 1u);
    EXPECT_EQ(report.samples, 1u);
}

TEST_F(PerfDataFold, EveryTruncationOfAFileIsReadSafely) {
    const auto file = perf_file(comm(3, 3, "p", 1) + sample(3, 3, 2, {kUserMark, 0x10, 0x20}) +
                                mmap2(3, 0x1000, 0x1000, "/x", 3));
    for (std::size_t n = 0; n <= file.size(); ++n) {
        try {
            fold(file.substr(0, n));
        } catch (const UsageError& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        }
    }
    const auto whole = PerfData::from_bytes(file, "t");
    EXPECT_FALSE(whole.truncated());
    // Cut inside the data section: the records before the cut are still folded.
    const auto cut = file.substr(0, 104 + sizeof(perf_event_attr) + 16 + 8 + 40 + 20);
    EXPECT_TRUE(PerfData::from_bytes(cut, "t").truncated());
    fold(cut);
    EXPECT_EQ(report.skipped, 1u);
}

TEST(PerfDataMagic, RecognisesOnlyTheMagic) {
    EXPECT_TRUE(looks_like_perf_data("PERFILE2xxxx"));
    EXPECT_FALSE(looks_like_perf_data("PERFILE"));
    EXPECT_FALSE(looks_like_perf_data("prog 123 1.0: cpu-clock:"));
}

}  // namespace
}  // namespace lockprof::perfdata
