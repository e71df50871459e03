// The uprobe PMU read from a sysfs tree built in a temporary folder, its attributes, and the
// errors' wording.
#include "lockprof/pmu/uprobe.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace lockprof::pmu {
namespace {

TEST(UprobePmu, ReadsTypeAndRetprobeBit) {
    test::TempDir t;
    const auto dir = t.path / "bus/event_source/devices/uprobe";
    std::filesystem::create_directories(dir / "format");
    std::ofstream(dir / "type") << "9\n";
    std::ofstream(dir / "format/retprobe") << "config:0\n";
    std::string why;
    const auto pmu = uprobe_pmu(why, t.path);
    ASSERT_TRUE(pmu) << why;
    EXPECT_EQ(pmu->type, 9u);
    EXPECT_EQ(pmu->retprobe_bit, 0);

    const std::string path = "/usr/bin/true";
    const auto entry = uprobe_attr(*pmu, path, 0x1234, false);
    EXPECT_EQ(entry.type, 9u);
    EXPECT_EQ(entry.config, 0u);
    EXPECT_EQ(entry.config1, reinterpret_cast<std::uint64_t>(path.c_str()));
    EXPECT_EQ(entry.config2, 0x1234u);
    EXPECT_EQ(entry.sample_period, 1u);
    EXPECT_EQ(uprobe_attr(*pmu, path, 0x1234, true).config, 1u);
}

TEST(UprobePmu, MissingPmuSaysWhy) {
    test::TempDir t;
    std::string why;
    EXPECT_FALSE(uprobe_pmu(why, t.path));
    EXPECT_NE(why.find("no uprobe PMU is registered"), std::string::npos) << why;
}

TEST(UprobePmu, PermissionErrorNamesCapPerfmon) {
    const auto line = explain_uprobe_error(EACCES, "s_lock", "/usr/lib/postgresql/15/bin/postgres");
    EXPECT_NE(line.find("--spin: cannot probe s_lock in /usr/lib/postgresql/15/bin/postgres"),
              std::string::npos)
        << line;
    EXPECT_NE(line.find("CAP_PERFMON"), std::string::npos) << line;
    EXPECT_NE(line.find("perf_event_paranoid"), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_NE(explain_uprobe_error(ENOSYS, "s_lock", "/x").find("ENOSYS"), std::string::npos);
}

}  // namespace
}  // namespace lockprof::pmu
