// The output files this process means to write and how far each has got, kept where a signal
// handler can read it. The output primitive reports to it (check_output: planned;
// write_output: being written, with its temporary for a replaced file; then in place), so
// lockprof's interrupt handling (src/cli/interrupts)
// can say which outputs an aborted run loses and remove the temporary of the one being written.
// Registration is for the main thread; the two async-signal-safe functions read only atomics
// and strings that are never freed.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace lockprof::outputs {

// An output this process means to write (check_output calls it).
void planned(const std::filesystem::path& target);
// Being written, through `temporary` when it is a replaced file (given before the temporary is
// created); an empty `temporary` for one streamed.
void writing(const std::filesystem::path& target, const std::filesystem::path& temporary);
// In place: renamed over its target.
void written(const std::filesystem::path& target);
// Not written after all (its temporary was removed); it counts as not written again.
void abandoned(const std::filesystem::path& target);

// Every output this process has written in place so far, as its path was given, in the order
// each was first written; "-" (standard output, not a file) is left out. What a command names
// when it says which files it wrote (`run`: "lockprof: wrote run.json" on stderr at the end).
std::vector<std::string> written_files();

// Async-signal-safe. Removes the temporary of every output being written.
void remove_temporaries() noexcept;
// Async-signal-safe. Writes "'a.json' (being written), 'b.csv' (not started)" to `fd` for
// every output planned or being written and not yet in place; returns how many there are.
std::size_t describe_unwritten(int fd) noexcept;

}  // namespace lockprof::outputs
