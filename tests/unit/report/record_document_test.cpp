// The recording's typed document: a recording with every section written to JSON and read
// back gives the same JSON byte for byte; a version-1 file reads as its version-2 twin; a
// document missing a part the report shows is refused, naming it.
#include "lockprof/report/record_document.hpp"

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/record_report.hpp"

namespace lockprof::report {
namespace {

using nlohmann::json;

// A command recording with every part the document can hold: counters inherited by the
// command, samples with DWARF stacks, an annotated function, the spin view, the instruments'
// cost and --spin's call sites.
std::pair<record::RecordResult, record::RecordAnalysis> full_recording() {
    record::RecordResult r;
    r.provenance.lockprof_version = "9.9";
    r.provenance.git_revision = "abc123";
    r.provenance.arch = "x86_64";
    r.provenance.cpu_model = "Fake CPU";
    r.provenance.logical_cpus = 4;
    r.provenance.perf_event_paranoid = 2;
    r.provenance.cpu_boost = "on";
    r.mode = record::Mode::command;
    r.command = {"pgbench", "-c", "8"};
    r.duration_s = 2.5;
    r.interrupted = true;
    r.interrupted_by = "SIGINT";
    r.exit_status = 130;
    r.events = {"task_clock", "cycles"};
    record::ProcessRecord proc;
    proc.info = {42, "pgbench", "/usr/bin/pgbench", 1000};
    proc.seen_at_s = 0.25;
    proc.problem = "some problem";
    proc.inherited = {{"task_clock", 2000000, 1000, 1000}, {"cycles", 12345678, 1000, 500}};
    proc.threads.push_back({42, "pgbench", {}, true});
    r.processes = {proc};
    r.sampling = measure::SamplingInfo{};
    r.sampling->sampler = "perf";
    r.sampling->event = "cycles";
    r.sampling->frequency = 999;
    r.sampling->precise_ip = 2;
    r.sampling->skid = measure::Skid::zero;
    r.sampling->precise_note = "PEBS";
    r.sampling->kernel = true;
    r.sampling->call_graph = "dwarf";
    r.sampling->stack_size = 8192;
    r.sampling->unwound = 70;
    r.sampling->unwind_seconds = 0.125;
    r.samples_lost = 3;
    record::SpinProbe probe;
    probe.function = "s_lock";
    probe.path = "/usr/bin/postgres";
    probe.address = 0x4a1230;
    probe.file_offset = 0xa1230;
    r.spin = record::SpinRecording{};
    r.spin->probes = {probe};
    r.calibration = record::InstrumentCalibration{};
    r.calibration->probe_call = sampling::CostEstimate{2000, 1800, 2500, 7, 10500};
    r.calibration->sample_frequency = 20000;
    r.calibration->problems = {"no sampling calibration"};
    r.notes = {"a note"};

    record::RecordAnalysis p = record::analyse(r, record::Images(r), {});
    p.samples = 100;
    p.unresolved_share = 0.125;
    p.sampled_cpu_share = 0.75;
    p.samples_per_process[0] = 100;
    record::SymbolShare sym{
        "s_lock(volatile int*)", "s_lock", "/usr/bin/postgres", 40, 40.5, 0.4, 1, ""};
    p.hot_symbols = {sym};
    attribution::HotFunction f;
    f.name = "s_lock(volatile int*)";
    f.short_name = "s_lock";
    f.module = "/usr/bin/postgres";
    f.share = 0.4;
    f.loop_rule = "backward branch";
    attribution::AnnotatedInstruction insn;
    insn.instruction.address = 0x4a1234;
    insn.instruction.mnemonic = "pause";
    insn.share = 0.3;
    insn.in_acquire_loop = true;
    insn.source = "s_lock.c:12";
    f.instructions = {insn};
    p.annotated = {f};
    p.lock_function = {true};
    p.spin.probed = {"s_lock"};
    p.spin.share = 0.4;
    sym.inlined_into = "worker";
    p.spin.symbols = {sym};
    p.spin.hot_instructions = {{"s_lock", "/usr/bin/postgres", 0x4a1234, "pause", 0.75, 0.3}};
    record::SpinProfile sc;
    record::SpinFunction fn;
    fn.function = "s_lock";
    fn.path = "/usr/bin/postgres";
    fn.entries = 10;
    fn.kernel_entries = 12;
    fn.total_ns = 5000.5;
    fn.sleeps = 2;
    sc.functions = {fn};
    record::SpinSite site;
    site.function = "s_lock";
    site.site = "xlog.c:1234 XLogInsert";
    site.file = "xlog.c";
    site.line = 1234;
    site.caller = "XLogInsert";
    site.module = "/usr/bin/postgres";
    site.entries = 10;
    site.timed = 9;
    site.total_ns = 5000.5;
    site.mean_ns = 555.6;
    site.max_ns = 2000;
    site.sleeps = 2;
    site.locks = {0x7f0010, 0x7f0020};
    site.distinct_locks = 2;
    site.processes = 1;
    for (int i = 0; i < 10; ++i)  // more than the document keeps
        site.stacks.push_back({{"main", "PostgresMain", "XLogInsert"}, 10u - i});
    sc.sites = {site};
    sc.entries = 10;
    sc.timed = 9;
    sc.total_ns = 5000.5;
    sc.sleeps = 2;
    sc.searched = {"/usr/bin/postgres"};
    sc.notes = {"a --spin note"};
    sc.stack_size = 8192;
    sc.stacks_seen = 10;
    sc.stack_samples = 9;
    p.spin_calls = sc;
    record::InstrumentShare share;
    share.probe_calls = 12;
    share.samples = 103;
    share.probes_ns = 24000;
    share.target_cpu_ns = 2e6;
    share.target_cpu_source = "task_clock";
    share.share = 0.012;
    p.instruments = share;
    p.warnings = {"a warning"};
    return {r, p};
}

// Every part written, read back and written again gives the file's bytes.
TEST(RecordDocument, RoundTripsThroughItsJson) {
    const auto [r, p] = full_recording();
    const json written = record_to_json(r, p);
    EXPECT_EQ(written, to_json(record_document(r, p)));
    const std::string text = json_text(written, 1);
    const json file = json::parse(text);
    for (const char* part : {"sampling", "instrument_cost", "spin_calls", "exit_status"})
        ASSERT_FALSE(file.at(part).is_null()) << part;
    ASSERT_EQ(file["spin_calls"]["sites"][0]["stacks"].size(), kRecordSpinStacks);
    const RecordDocument read = record_document_from_json(file);
    EXPECT_EQ(to_json(read), file);
    EXPECT_EQ(json_text(to_json(read), 1), text);
    EXPECT_EQ(read.target.command, r.command);
    EXPECT_EQ(read.exit_status, 130);
    EXPECT_EQ(read.annotations.at(0).instructions.at(0).address, 0x4a1234u);
    EXPECT_EQ(read.spin_calls->functions.at(0).file_offset, 0xa1230u);
    EXPECT_EQ(read.spin_calls->profile.sites.at(0).locks.at(1), 0x7f0020u);
    EXPECT_EQ(read.sampling->info.skid, measure::Skid::zero);
    EXPECT_EQ(read.processes.at(0).inherited_counters.at(1).raw, 12345678u);
    // The report renders the same from the recording and from its file.
    EXPECT_EQ(render_record_html(r, p, "t"), render_record_html(read, "t"));

    // The simple recording of record_report_test: pids, no sampling, no --spin.
    record::RecordResult simple;
    simple.mode = record::Mode::pid;
    simple.pids = {42, 43};
    simple.events = {"task_clock"};
    const json simple_file = json::parse(
        json_text(record_to_json(simple, record::analyse(simple, record::Images(simple), {})), 1));
    EXPECT_EQ(to_json(record_document_from_json(simple_file)), simple_file);
}

// A version-1 file ("schema": "lockprof-record", "version": 1) holds what version 2 holds.
TEST(RecordDocument, ReadsVersionOne) {
    const auto [r, p] = full_recording();
    const json current = record_to_json(r, p);
    json v1 = current;
    v1["schema"] = kRecordSchemaNameV1;
    v1.erase("schema_version");
    v1["version"] = 1;
    EXPECT_EQ(to_json(record_document_from_json(v1)), current);
    v1.erase("version");
    v1["schema_version"] = 1;
    EXPECT_THROW(record_document_from_json(v1), UsageError);
}

std::string refusal(const json& doc) {
    try {
        record_document_from_json(doc);
    } catch (const UsageError& e) {
        return e.what();
    }
    ADD_FAILURE() << "read without an error";
    return "";
}

// A part the report shows, missing, is named; one it does not show takes its default, as in
// recordings written before the part existed.
TEST(RecordDocument, MissingPartIsNamed) {
    const auto [r, p] = full_recording();
    const json doc = record_to_json(r, p);
    for (const auto* where :
         {"/spin_locks", "/spin_locks/summary", "/provenance/kernel", "/sampling/lost",
          "/spin_calls/sites/0/mean_ns", "/annotations/0/instructions/0/listing"}) {
        json edited = doc;
        const auto pointer = json::json_pointer(where);
        edited[pointer.parent_pointer()].erase(pointer.back());
        const std::string message = refusal(edited);
        EXPECT_NE(message.find("not a complete lockprof recording"), std::string::npos) << where;
        EXPECT_NE(message.find("'" + pointer.back() + "'"), std::string::npos)
            << where << ": " << message;
    }
    json wrong = doc;
    wrong["duration_s"] = "long";
    EXPECT_NE(refusal(wrong).find("number"), std::string::npos) << refusal(wrong);
    json older = doc;
    older["provenance"].erase("cpu_boost");
    older.erase("instrument_cost");
    older["sampling"].erase("call_graph");
    const auto read = record_document_from_json(older);
    EXPECT_EQ(read.provenance.cpu_boost, "");
    EXPECT_FALSE(read.instrument_cost);
    EXPECT_EQ(read.sampling->info.call_graph, "fp");
    EXPECT_EQ(refusal({{"schema", "lockprof.result"}}),
              "not a `lockprof record` recording (no \"schema\": \"lockprof.record\")");
}

}  // namespace
}  // namespace lockprof::report
