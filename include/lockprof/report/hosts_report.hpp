// `lockprof report A.json B.json ...`: result files from different machines as one answer
// (analysis/hosts.hpp), for the terminal and as one self-contained HTML page: per lock pair,
// each host's verdicts by thread count and where the conclusion holds; throughput plots with one
// line per host and lock, absolute and normalised to each host's fewest-thread figure; the
// hosts' provenance side by side with the differences that can explain a result marked; and
// what each host's PMU counted. Only rendering.
#pragma once

#include <string>

#include "lockprof/analysis/hosts.hpp"
#include "lockprof/report/plot.hpp"

namespace lockprof::report {

// The terminal's text: the warnings, each pair's table and summary, the provenance fields that
// differ, the PMU evidence, the method.
std::string hosts_text(const analysis::HostsComparison& hosts);

// Acquires/s against threads, one line per host and lock (a colour per lock, a dash pattern and
// marker per host); `normalised`: each line divided by its host's figure at the fewest threads
// it ran that lock with (1 thread where it ran one).
PlotSpec hosts_plot(const analysis::HostsComparison& hosts, bool normalised);

std::string hosts_html(const analysis::HostsComparison& hosts, const std::string& title);

}  // namespace lockprof::report
