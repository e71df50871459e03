// The parts of the self-contained HTML page that a run's report and a recording's report
// share (html_report.cpp): the head with its styles, the navigation and sections, the footer,
// and a function's instruction table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lockprof/attribution/annotate.hpp"

namespace lockprof::report::html {

// Text and attribute values: invalid UTF-8 and control characters never reach the page.
std::string escape(std::string_view text);

// "<!DOCTYPE html>" through "<main>": the <title> and the generator, with the styles inline.
std::string head(const std::string& title, const std::string& lockprof_version);

// One <section id><h2>heading</h2> body </section>, and the navigation that links each.
struct Section {
    std::string id;
    std::string title;    // in the navigation
    std::string heading;  // over the section
    std::string body;
};
std::string navigation(const std::vector<Section>& sections);
std::string sections(const std::vector<Section>& sections);

// The footer and the end of the document.
std::string footer(const std::string& lockprof_version, const std::string& git_revision);

// A listed function's hottest instructions plus its whole loop (at most `max_rows` of those),
// each with the instruction before it, where skid puts a sample's cost, in address order with
// the rows left out counted; after the note on missing line and inline information where it
// applies.
std::string instruction_table(const attribution::HotFunction& f, unsigned max_rows);
// The indices into f.instructions that instruction_table() shows, ascending.
std::vector<std::size_t> instruction_rows(const attribution::HotFunction& f, unsigned max_rows);

}  // namespace lockprof::report::html
