#include "lockprof/record/uretprobe_frames.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "lockprof/symbols/resolver.hpp"

namespace lockprof::record {
namespace {

// What happens in one thread, in time order: a probed call entered (with its return address)
// or returned, or a sample taken.
struct Step {
    std::uint64_t time = 0;
    enum class Kind { entry, exit, sample } kind = Kind::sample;
    std::uint64_t return_address = 0;  // entry
    std::size_t sample = 0;            // sample: index into samples
};

}  // namespace

std::optional<CodeRange> uprobes_page(std::string_view maps) {
    for (const auto& m : symbols::maps_entries(maps))
        if (m.path == "[uprobes]" && m.end > m.start) return CodeRange{m.start, m.end};
    return std::nullopt;
}

std::size_t restore_uretprobe_callers(std::vector<measure::RawSample>& samples,
                                      const std::vector<SpinHit>& hits,
                                      const std::map<pid_t, CodeRange>& pages) {
    const auto in_page = [&](const measure::RawSample& s, std::uint64_t address) {
        const auto page = pages.find(static_cast<pid_t>(s.pid));
        return page != pages.end() && address >= page->second.start && address < page->second.end;
    };
    std::map<std::uint32_t, std::vector<Step>> threads;
    for (std::size_t i = 0; i < samples.size(); ++i)
        if (std::any_of(samples[i].callchain.begin(), samples[i].callchain.end(),
                        [&](std::uint64_t a) { return in_page(samples[i], a); }))
            threads[samples[i].tid].push_back({samples[i].time_ns, Step::Kind::sample, 0, i});
    if (threads.empty()) return 0;
    for (const auto& h : hits) {
        if (h.is_stack) continue;  // an entry's stack copy: the entry itself is recorded apart
        const auto thread = threads.find(h.tid);
        if (thread == threads.end()) continue;
        if (h.is_return)
            thread->second.push_back({h.time_ns, Step::Kind::exit});
        else if (h.return_address)
            thread->second.push_back({h.time_ns, Step::Kind::entry, *h.return_address});
    }
    std::size_t restored = 0;
    for (auto& [tid, steps] : threads) {
        // At equal times, calls start before samples and end after them.
        const auto order = [](Step::Kind k) {
            return k == Step::Kind::entry ? 0 : k == Step::Kind::sample ? 1 : 2;
        };
        std::stable_sort(steps.begin(), steps.end(), [&](const Step& a, const Step& b) {
            return a.time != b.time ? a.time < b.time : order(a.kind) < order(b.kind);
        });
        std::vector<std::uint64_t>
            running;  // return addresses of the calls running, outermost first
        for (const auto& step : steps) {
            if (step.kind == Step::Kind::entry) {
                running.push_back(step.return_address);
            } else if (step.kind == Step::Kind::exit) {
                if (!running.empty()) running.pop_back();
            } else {
                auto& sample = samples[step.sample];
                auto call = running.rbegin();  // the innermost call for the innermost frame
                for (auto& frame : sample.callchain) {
                    if (!in_page(sample, frame)) continue;
                    if (call == running.rend()) break;
                    frame = *call++;
                    ++restored;
                }
            }
        }
    }
    return restored;
}

}  // namespace lockprof::record
