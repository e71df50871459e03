// "SIGINT" for SIGINT: how results, notes and messages name a signal.
#pragma once

#include <string.h>

#include <string>

namespace lockprof {

inline std::string signal_name(int signal) {
    const char* abbreviation = sigabbrev_np(signal);
    return abbreviation ? std::string("SIG") + abbreviation : "signal " + std::to_string(signal);
}

}  // namespace lockprof
