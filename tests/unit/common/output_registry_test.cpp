// The output registry a signal handler reads: which outputs are not in place yet, and removing
// the temporary of the one being written.
#include "lockprof/common/output_registry.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "lockprof/common/output_file.hpp"
#include "support/temp_dir.hpp"

namespace lockprof {
namespace {

// What describe_unwritten() writes, read back through a pipe.
std::string unwritten() {
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    outputs::describe_unwritten(fds[1]);
    close(fds[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
    close(fds[0]);
    return text;
}

std::size_t files_in(const std::filesystem::path& folder) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++n;
    return n;
}

TEST(OutputRegistry, ListsEachOutputUntilItIsInPlace) {
    test::TempDir folder;
    const std::string json = (folder.path / "run.json").string(),
                      csv = (folder.path / "run.csv").string();
    check_output(json, "output");
    check_output(csv, "csv");
    EXPECT_NE(unwritten().find("'" + json + "' (not started)"), std::string::npos);
    outputs::writing(json, folder.path / ".run.json.tmp");
    EXPECT_NE(unwritten().find("'" + json + "' (being written)"), std::string::npos);
    write_output(json, "{}\n");
    const std::string after = unwritten();
    EXPECT_EQ(after.find(json), std::string::npos) << after;
    EXPECT_NE(after.find("'" + csv + "' (not started)"), std::string::npos) << after;
    write_output(csv, "a,b\n");
    EXPECT_EQ(unwritten().find(csv), std::string::npos);
}

TEST(OutputRegistry, AFailedWriteCountsAsNotWritten) {
    test::TempDir folder;
    const std::string target = (folder.path / "missing" / "report.html").string();
    EXPECT_ANY_THROW(write_output(target, "<html></html>\n"));
    EXPECT_NE(unwritten().find("'" + target + "' (not started)"), std::string::npos);
}

TEST(OutputRegistry, RemoveTemporariesLeavesNoHalfWrittenFileBehind) {
    test::TempDir folder;
    const auto target = folder.path / "graph.svg", temporary = folder.path / ".graph.svg.tmp.1";
    outputs::writing(target, temporary);  // as write_output() does, then creates it
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "<svg", 4), 4);
    ::close(fd);
    outputs::remove_temporaries();
    EXPECT_EQ(files_in(folder.path), 0u);
    EXPECT_FALSE(std::filesystem::exists(target));
    outputs::abandoned(target);
}

// What `run` names at its end ("lockprof: wrote run.json"): each file written in place, once,
// in the order first written; not one that failed, not standard output.
TEST(OutputRegistry, WrittenFilesListsEachFileWrittenOnceInOrder) {
    test::TempDir folder;
    const std::string csv = (folder.path / "run.csv").string(),
                      json = (folder.path / "run.json").string(),
                      failed = (folder.path / "missing" / "report.html").string();
    write_output(csv, "a,b\n");
    write_output(json, "{}\n");
    write_output(csv, "a,b\n1,2\n");
    EXPECT_ANY_THROW(write_output(failed, "<html></html>\n"));
    outputs::abandoned(failed);
    std::vector<std::string> ours;
    for (const auto& file : outputs::written_files()) {
        EXPECT_NE(file, "-");
        if (file.rfind(folder.path.string(), 0) == 0) ours.push_back(file);
    }
    EXPECT_EQ(ours, (std::vector<std::string>{csv, json}));
}

}  // namespace
}  // namespace lockprof
