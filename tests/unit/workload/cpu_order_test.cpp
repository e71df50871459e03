// --cpu-order FILE: the CPUs of the file in its order, and each kind of bad file refused in
// one line naming the file and line.
#include "lockprof/workload/cpu_order.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "lockprof/common/error.hpp"
#include "support/temp_dir.hpp"

using lockprof::UsageError;
using lockprof::workload::online_cpus;
using lockprof::workload::parse_cpu_order;
using lockprof::workload::read_cpu_order;

namespace {

const std::vector<int> kOnline = {0, 1, 2, 3, 4, 5, 6, 7};

// The message of the UsageError `parse` throws, "" when it throws none.
template <typename F>
std::string refusal(F parse) {
    try {
        parse();
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(CpuOrder, KeepsTheFilesOrderAcrossSeparatorsAndComments) {
    EXPECT_EQ(parse_cpu_order("# cores first\n3 1\n\n2,0  # then SMT\n\t5\n", "o.txt", 5, kOnline),
              (std::vector<int>{3, 1, 2, 0, 5}));
}

TEST(CpuOrder, EachBadFileIsOneLineNamingFileAndLine) {
    const struct {
        const char* text;
        unsigned threads;
        const char* message;
    } cases[] = {
        {"0 1\n2 x3\n", 2, "o.txt line 2: 'x3' is not a CPU number"},
        {"0\n-1\n", 1, "o.txt line 2: '-1' is not a CPU number"},
        {"0 1\n\n9\n", 2, "o.txt line 3: CPU 9 is not online (online: 0,1,2,3,4,5,6,7)"},
        {"0 1\n2 1\n", 2, "o.txt line 2: CPU 1 is listed twice (first on line 1)"},
        {"0 1\n2\n", 4, "o.txt (lines 1-2) lists 3 CPU(s), fewer than the 4 threads"},
        {"# nothing\n", 1, "lists 0 CPU(s), fewer than the 1 thread of"},
    };
    for (const auto& c : cases) {
        const std::string message =
            refusal([&] { parse_cpu_order(c.text, "o.txt", c.threads, kOnline); });
        EXPECT_NE(message.find(c.message), std::string::npos) << c.text << " -> " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_EQ(message.rfind("--cpu-order: ", 0), 0u) << message;
    }
}

TEST(CpuOrder, ReadsTheOnlineCpusAndRefusesAMissingFile) {
    lockprof::test::TempDir t;
    t.write("sys/devices/system/cpu/online", "0-2,4\n");
    EXPECT_EQ(online_cpus(t.path), (std::vector<int>{0, 1, 2, 4}));
    const auto file = t.write("order.txt", "4 0\n");
    EXPECT_EQ(read_cpu_order(file, 2, t.path), (std::vector<int>{4, 0}));
    EXPECT_NE(refusal([&] {
                  read_cpu_order(t.write("three.txt", "3\n"), 1, t.path);
              }).find("line 1: CPU 3 is not online (online: 0,1,2,4)"),
              std::string::npos);
    const std::string missing = refusal([&] { read_cpu_order(t.path / "nope.txt", 1, t.path); });
    EXPECT_NE(missing.find("cannot read " + (t.path / "nope.txt").string()), std::string::npos)
        << missing;
}
