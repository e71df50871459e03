// What lockprof's JSON documents call themselves (docs/result-schema.md, "Naming"): the writers
// (report/) put these names there, the readers check them and say what a file is when it is
// not what they read.
#pragma once

namespace lockprof::results {

// Run results (`run -o`): bump kResultSchemaVersion on any incompatible change.
inline constexpr const char* kResultSchemaName = "lockprof.result";
inline constexpr int kResultSchemaVersion = 1;

// Recordings (`record --output`). Those written before the naming rule say "schema":
// "lockprof-record", "version": 1 and hold what version 2 holds: they are still read.
inline constexpr const char* kRecordSchemaName = "lockprof.record";
inline constexpr int kRecordSchemaVersion = 2;
inline constexpr const char* kRecordSchemaNameV1 = "lockprof-record";

}  // namespace lockprof::results
