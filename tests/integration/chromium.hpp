// Headless Chromium for integration tests: find the browser, run it with the flags that work
// as root in a VM without network or GPU, and read script errors from its console log.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "cli/cli_runner.hpp"

namespace lockprof::test {

// `action`: "--dump-dom" or "--screenshot=FILE --window-size=W,H".
inline std::string chromium_command(const std::string& browser,
                                    const std::filesystem::path& profile, const std::string& action,
                                    const std::string& url) {
    return "timeout 90 " + browser +
           " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
           "--disable-background-networking --disable-component-update --disable-sync "
           "--enable-logging=stderr --v=0 --virtual-time-budget=3000 --user-data-dir=" +
           shell_quote(profile.string()) + " " + action + " " + shell_quote(url);
}

// Console errors (uncaught exceptions, failed loads) from Chromium's log.
inline std::string console_errors(const std::string& log) {
    std::string found;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);)
        if (line.find(":CONSOLE") != std::string::npos &&
            (line.find("Uncaught") != std::string::npos ||
             line.find("Error") != std::string::npos ||
             line.find("Failed to load") != std::string::npos))
            found += line + "\n";
    return found;
}

// The value of the first `name="..."` attribute in a DOM dump, "" when absent.
inline std::string dom_attribute(const std::string& dom, const std::string& name) {
    std::smatch m;
    if (std::regex_search(dom, m, std::regex(name + "=\"([^\"]*)\""))) return m[1].str();
    return {};
}

}  // namespace lockprof::test
