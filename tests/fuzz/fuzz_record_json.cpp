// Recordings (`lockprof record --output x.json`, schema "lockprof.record", or "lockprof-record"
// before, docs/record.md), as `lockprof report x.json` reads them back
// (src/report/record_document.cpp, record_html.cpp): parsed as JSON as read_recording() parses
// the file, read by record_document_from_json(), which must refuse a document that is not a whole
// recording with a UsageError, never a crash or another exception, and rendered by
// render_record_html(); what it reads writes back as it reads again.
#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "lockprof/report/record_document.hpp"
#include "lockprof/report/record_report.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto doc = nlohmann::json::parse(fuzz::text(data, size), nullptr, false);
    if (doc.is_discarded()) return 0;  // read_recording() leaves it to the result reader
    fuzz::refusals_only([&] {
        const auto document = report::record_document_from_json(doc);
        fuzz::check(report::is_recording(doc), "only a recording renders");
        const std::string html = report::render_record_html(document, "fuzz");
        const auto written = report::to_json(document);
        fuzz::check(report::to_json(report::record_document_from_json(written)) == written,
                    "what is read writes back as it reads again");
        fuzz::check(html.ends_with("</html>\n"), "the page is whole");
    });
    return 0;
}
