// The outputs of `lockprof record` from a hand-made recording: the terminal report's header,
// counter table and notes, the spin-lock sentence, and the lockprof-record JSON document.
#include "lockprof/report/record_report.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/record_document.hpp"

namespace lockprof::report {
namespace {

using nlohmann::json;

measure::CounterReading reading(const std::string& event, std::uint64_t raw,
                                std::uint64_t running_ns = 1000) {
    return {event, raw, 1000, running_ns};
}

// Two attached processes: postgres with two threads, and one whose counters never ran.
record::RecordResult recording() {
    record::RecordResult r;
    r.provenance.lockprof_version = "9.9";
    r.provenance.arch = "x86_64";
    r.provenance.cpu_model = "Fake CPU";
    r.provenance.logical_cpus = 4;
    r.mode = record::Mode::pid;
    r.pids = {42, 43};
    r.duration_s = 2;
    r.interrupted = true;
    r.events = {"task_clock", "cycles"};
    record::ProcessRecord pg;
    pg.info = {42, "postgres", "/usr/bin/postgres", 1000};
    pg.threads.push_back(
        {42, "postgres", {reading("task_clock", 2000), reading("cycles", 12000000)}, true});
    pg.threads.push_back(
        {44, "bgworker", {reading("task_clock", 500), reading("cycles", 345678)}, true});
    record::ProcessRecord idle;
    idle.info = {43, "idle", "", 0};
    idle.exited = true;
    idle.threads.push_back(
        {43, "idle", {reading("task_clock", 0, 0), reading("cycles", 0, 0)}, true});
    r.processes = {pg, idle};
    r.notes = {"something the user must know"};
    return r;
}

record::RecordAnalysis profile_of(const record::RecordResult& r) {
    return record::analyse(r, record::Images(r), {});
}

// The HTML report of a recording's JSON, as `lockprof report` reads it.
std::string html_of(const json& doc, const std::string& title) {
    return render_record_html(record_document_from_json(doc), title);
}

TEST(RecordReport, HeaderCounterTableAndNotes) {
    const auto r = recording();
    const std::string text = render_record(r, profile_of(r), 10, 0);
    EXPECT_EQ(text.substr(0, text.find('\n')), "lockprof 9.9 record on x86_64 Fake CPU, 4 CPUs");
    EXPECT_NE(text.find("target: pids: 42,43; recorded 2.00 s (interrupted)\n"), std::string::npos)
        << text;
    // postgres sums its threads; the idle process's counters never ran, so they count 0.
    EXPECT_NE(text.find("  pid  name           threads  task_clock  cycles\n"
                        "   42  postgres             2        2500  12.35M\n"
                        "   43  idle (exited)        1           0       0\n"
                        "       total                         2500  12.35M\n"
                        "       per second                    1250   6.17M\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\nnote: something the user must know\n"), std::string::npos);
    EXPECT_EQ(text.find("Hottest symbols"), std::string::npos);  // not sampled
}

TEST(RecordReport, EventNeverCountedAnywhereSaysSo) {
    auto r = recording();
    for (auto& p : r.processes)
        for (auto& t : p.threads) t.counters[1].running_ns = 0;
    const std::string text = render_record(r, profile_of(r), 10, 0);
    EXPECT_NE(text.find("   42  postgres             2        2500  not counted\n"
                        "   43  idle (exited)        1           0  not counted\n"
                        "       total                         2500  not counted\n"
                        "       per second                    1250\n"),
              std::string::npos)
        << text;
}

TEST(RecordReport, SpinSentence) {
    record::RecordAnalysis p;
    EXPECT_EQ(spin_sentence(p), "no samples");
    p.samples = 10;
    p.spin.pattern = "s_lock";
    EXPECT_EQ(spin_sentence(p), "no samples are in functions matching 's_lock'");
    p.spin.share = 0.12;
    record::SymbolShare s_lock;
    s_lock.short_name = "s_lock";
    p.spin.symbols = {s_lock};
    EXPECT_EQ(spin_sentence(p), "12.0% of samples are in s_lock");
    p.spin.hot_instructions.push_back({"s_lock", "/usr/bin/postgres", 0x1234, "pause", 0.8, 0.096});
    EXPECT_EQ(spin_sentence(p),
              "12.0% of samples are in s_lock, 80.0% of those on `pause` in "
              "s_lock");
    p.spin.hot_instructions.clear();
    for (const char* name : {"a", "b", "c"}) {
        record::SymbolShare more;
        more.short_name = name;
        p.spin.symbols.push_back(more);
    }
    EXPECT_EQ(spin_sentence(p), "12.0% of samples are in s_lock, a, b, ...");
}

TEST(RecordReport, JsonDocument) {
    const auto r = recording();
    const auto doc = record_to_json(r, profile_of(r));
    EXPECT_EQ(doc["schema"], "lockprof.record");
    EXPECT_EQ(doc["schema_version"], kRecordSchemaVersion);
    EXPECT_FALSE(doc.contains("version"));
    EXPECT_EQ(doc["target"]["mode"], "pid");
    EXPECT_EQ(doc["target"]["pids"], nlohmann::json({42, 43}));
    EXPECT_FALSE(doc["target"].contains("match"));
    EXPECT_TRUE(doc["sampling"].is_null());
    EXPECT_TRUE(doc["exit_status"].is_null());
    EXPECT_EQ(doc["interrupted"], true);
    ASSERT_EQ(doc["processes"].size(), 2u);
    const auto& pg = doc["processes"][0];
    EXPECT_EQ(pg["comm"], "postgres");
    EXPECT_EQ(pg["threads"].size(), 2u);
    EXPECT_EQ(pg["threads"][1]["comm"], "bgworker");
    EXPECT_EQ(pg["counters"][1]["event"], "cycles");
    EXPECT_EQ(pg["counters"][1]["value"], 12345678.0);
    EXPECT_EQ(doc["processes"][1]["exited"], true);
    EXPECT_EQ(doc["processes"][1]["threads"][0]["counters"][0]["counted"], false);
    EXPECT_EQ(doc["totals"][0]["per_second"], 1250.0);
    EXPECT_EQ(doc["notes"][0], "something the user must know");
    EXPECT_EQ(doc["spin_locks"]["summary"], "no samples");
}

TEST(RecordReport, SpinSentenceSaysWhatMissingDebugInfoHides) {
    record::RecordAnalysis p;
    p.samples = 10;
    p.spin.pattern = "my_spin_lock";
    p.spin.without_debug_info = {"worker"};
    EXPECT_EQ(spin_sentence(p),
              "no samples are in functions matching 'my_spin_lock', but worker has no line or "
              "inline information (built without -g, or stripped), so a lock inlined into it "
              "cannot be seen; rebuild with -g, which costs nothing at run time");
    p.spin.without_debug_info = {"a", "b", "c", "d"};
    EXPECT_NE(spin_sentence(p).find("but a, b, c, ... have no line"), std::string::npos);
}

// The HTML report holds the recording's sections and its figures as the JSON gives them, and
// is the same page rendered from the document or from its text read back.
TEST(RecordReport, HtmlReportHasTheRecordingsSectionsAndNumbers) {
    const auto r = recording();
    const auto p = profile_of(r);
    const std::string html = render_record_html(r, p, "my title");
    for (const char* id : {"target", "counters", "symbols", "annotation", "spin"})
        EXPECT_NE(html.find(fmt::format("<section id=\"{}\">", id)), std::string::npos) << id;
    EXPECT_EQ(html.find("<section id=\"spin-calls\">"), std::string::npos);  // no --spin
    EXPECT_NE(html.find("<h1>my title</h1>"), std::string::npos);
    EXPECT_NE(html.find("<dd>pids: 42,43</dd>"), std::string::npos);
    EXPECT_NE(html.find("<dd>2.00 s (interrupted)</dd>"), std::string::npos);
    EXPECT_NE(html.find("The recording was interrupted"), std::string::npos);
    EXPECT_NE(html.find("<tr><td>42</td><td>postgres</td><td>2</td><td>2500</td><td>12.35M</td>"
                        "</tr>"),
              std::string::npos)
        << html;
    EXPECT_NE(html.find("<td>per second</td><td></td><td>1250</td><td>6.17M</td>"),
              std::string::npos);
    EXPECT_NE(html.find("The recording was not sampled"), std::string::npos);
    EXPECT_NE(html.find("<li>something the user must know</li>"), std::string::npos);
    EXPECT_EQ(html, html_of(json::parse(json_text(record_to_json(r, p), 1)), "my title"));
}

// The page says how call stacks were taken, as the terminal report does.
TEST(RecordReport, HtmlReportSaysHowCallStacksWereTaken) {
    auto r = recording();
    r.sampling = measure::SamplingInfo{};
    r.sampling->call_graph = "dwarf";
    r.sampling->stack_size = 8192;
    r.sampling->unwound = 7;
    const auto p = profile_of(r);
    EXPECT_NE(render_record_html(r, p, "t").find(
                  "Call stacks: unwound from 8192-byte stack copies (--call-graph dwarf): 7 "
                  "samples in 0.00 s."),
              std::string::npos)
        << render_record_html(r, p, "t");
    r.sampling->call_graph = "fp";
    EXPECT_NE(
        render_record_html(r, profile_of(r), "t").find("Call stacks: frame pointers (the kernel"),
        std::string::npos)
        << render_record_html(r, profile_of(r), "t");
}

TEST(RecordReport, HtmlReportRefusesAnIncompleteRecording) {
    auto doc = record_to_json(recording(), profile_of(recording()));
    doc.erase("spin_locks");
    EXPECT_THROW(html_of(doc, "t"), UsageError);
    doc["schema_version"] = 99;
    try {
        html_of(doc, "t");
        ADD_FAILURE() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("recording schema version 99"), std::string::npos);
    }
}

// Recordings written before the naming rule ("schema": "lockprof-record", "version": 1) hold
// what version 2 holds and render the same; a version-1 header with version 2's key does not.
TEST(RecordReport, RecordingsOfVersionOneStillRender) {
    const auto r = recording();
    auto doc = record_to_json(r, profile_of(r));
    const std::string current = html_of(doc, "t");
    doc["schema"] = kRecordSchemaNameV1;
    doc.erase("schema_version");
    doc["version"] = 1;
    EXPECT_TRUE(is_recording(doc));
    EXPECT_EQ(html_of(doc, "t"), current);
    doc.erase("version");
    doc["schema_version"] = 1;
    EXPECT_THROW(html_of(doc, "t"), UsageError);
}

// A recording edited by hand, or damaged, is refused with the one-line UsageError: an address
// that is not hex (std::stoull threw std::invalid_argument, "internal error: stoull"), and a
// number where the schema has an integer that is real or out of the integer's range (nlohmann's
// conversion is a cast, undefined behaviour out of range). Found by fuzz_record_json.
TEST(RecordReport, HtmlReportRefusesNumbersItCannotHold) {
    auto r = recording();
    r.sampling = measure::SamplingInfo{};
    auto p = profile_of(r);
    attribution::HotFunction f;
    f.name = f.short_name = "s_lock";
    f.instructions.emplace_back();
    p.annotated.push_back(f);
    const json doc = record_to_json(r, p);
    ASSERT_NO_THROW(html_of(doc, "t"));
    const auto refused = [&](const json::json_pointer& where, const json& value) {
        json edited = doc;
        edited[where] = value;
        EXPECT_THROW(html_of(edited, "t"), UsageError) << where << " = " << value;
    };
    refused("/annotations/0/instructions/0/address"_json_pointer, "zz");
    refused("/annotations/0/instructions/0/address"_json_pointer, "0x1ffffffffffffffff");
    refused("/exit_status"_json_pointer, 1e30);
    refused("/exit_status"_json_pointer, 4294967296ull);
    refused("/provenance/logical_cpus"_json_pointer, -1.5);
    refused("/processes/0/pid"_json_pointer, 1e300);
    refused("/sampling/samples"_json_pointer, -1e30);
    refused("/sampling/stack_size"_json_pointer, 1e20);
}

}  // namespace
}  // namespace lockprof::report

namespace lockprof::report {
namespace {

// The instruments' cost in words: each calibrated cost times its count, the share of the
// targets' CPU time, and above 5% a warning naming the instrument that costs most.
TEST(InstrumentsSentence, CostsTimesCountsOverTheTargetsTime) {
    record::InstrumentCalibration c;
    c.probe_call = sampling::CostEstimate{2000, 1800, 2500, 7, 10500};
    c.sample = sampling::CostEstimate{3000, 2900, 3400, 7, 1400};
    record::InstrumentShare s;
    s.probe_calls = 1000;
    s.samples = 100;
    s.probes_ns = 2e6;
    s.sampling_ns = 3e5;
    s.target_cpu_ns = 1e9;
    s.target_cpu_source = "task_clock";
    s.share = 2.3e-3;
    EXPECT_EQ(instruments_sentence(c, s),
              "spin probes 2.00 us a call (1.80 us-2.50 us, 7 rounds) x 1000 calls = 2.00 ms; "
              "sampling 3.00 us a sample (2.90 us-3.40 us, 7 rounds) x 100 samples = 300.00 us: "
              "about 0.2% of the targets' 1.00 s of CPU time (task_clock)");
    EXPECT_EQ(instruments_warning(c, s), "");
    s.probes_ns = 1e8;
    s.share = 0.1003;
    EXPECT_EQ(instruments_warning(c, s),
              "the instruments took about 10.0% of the targets' CPU time, so the program ran "
              "slower than without them: probe fewer functions or calls (--spin FUNC: each "
              "probed call costs 2.00 us)");
    // PostgreSQL under two drive-spinlocks clients on the VM: 431,928 probed calls x 12.00 us
    // = 5.18 s against the backends' 4.94 s of task_clock. The probes ran on that time, so the
    // estimate overstates a hit; no "105.6%" that cannot be.
    s.probes_ns = 5.18e9;
    s.sampling_ns.reset();
    s.target_cpu_ns = 4.94e9;
    s.share = 5.18 / 4.94;
    const std::string over = instruments_sentence(c, s);
    EXPECT_NE(over.find(": more than the targets' 4.94 s of CPU time (task_clock), which their "
                        "real cost cannot be"),
              std::string::npos)
        << over;
    EXPECT_EQ(over.find("104.9%"), std::string::npos) << over;
    EXPECT_EQ(instruments_warning(c, s),
              "the instruments took most of the targets' CPU time (the estimate exceeds it), so "
              "the program ran slower than without them: probe fewer functions or calls (--spin "
              "FUNC: each probed call costs 2.00 us)");
    s.target_cpu_ns.reset();
    s.share.reset();
    EXPECT_NE(instruments_sentence(c, s).find("their share is unknown"), std::string::npos);
}

}  // namespace
}  // namespace lockprof::report
