// A recording's samples as a pprof profile (attribution::PprofBuilder, written by export/pprof):
// one address space per group of processes with identical mappings (record::Images), labels
// process (the process's name), pid, tid and thread (the thread's name, when known).
#pragma once

#include "lockprof/export/pprof.hpp"
#include "lockprof/record/analysis.hpp"
#include "lockprof/record/recorder.hpp"

namespace lockprof::record {

// When the sampled event is a clock, each sample's cpu/nanoseconds is its weight; for a
// hardware event it is a share of the thread's (pid/match) or process's (a command) task_clock
// or cpu-clock count, when one was counted (-e task_clock), spread by weight, and 0 otherwise
// (a comment in the profile says so). Duration: the recording's.
exporting::pprof::Profile recording_pprof(const RecordResult& result, const Images& images);
inline exporting::pprof::Profile recording_pprof(const RecordResult& result) {
    return recording_pprof(result, Images(result));
}

}  // namespace lockprof::record
