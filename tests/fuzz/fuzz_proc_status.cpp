// /proc/PID/status text (src/record/targets.cpp, parse_process_status and status_value): the
// state and uid record reads of every process it may attach to, and the capability mask.
#include "fuzz_support.hpp"
#include "lockprof/record/targets.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view status = fuzz::text(data, size);
    fuzz::refusals_only([&] {
        (void)record::parse_process_status(status);
        for (const char* key : {"State", "Uid", "CapEff", "Name"}) {
            const std::string value = record::status_value(status, key);
            fuzz::check(value.find('\n') == std::string::npos, "a value is one line");
        }
    });
    return 0;
}
