#include "lockprof/attribution/pprof_builder.hpp"

#include <ctime>

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "lockprof/attribution/stacks.hpp"

namespace lockprof::attribution {

namespace pprof = exporting::pprof;

bool samples_weigh_time(const measure::SamplingInfo& sampling) {
    return sampling.sampler == "timer" || sampling.event == "cpu-clock" ||
           sampling.event == "task-clock";
}

PprofBuilder::PprofBuilder(const measure::SamplingInfo& sampling)
    : weighs_time_(samples_weigh_time(sampling)) {
    profile_.sample_types = {{"samples", "count"}, {"cpu", "nanoseconds"}};
    if (weighs_time_) {
        profile_.period_type = {"cpu", "nanoseconds"};
        profile_.period = static_cast<std::int64_t>(
            sampling.period ? sampling.period
                            : (sampling.frequency ? 1'000'000'000ull / sampling.frequency : 0));
        profile_.default_sample_type = "cpu";
    } else {
        profile_.sample_types.push_back({sampling.event, "count"});
        profile_.period_type = {sampling.event, "count"};
        profile_.period = static_cast<std::int64_t>(sampling.period);  // 0: finish() averages
        profile_.default_sample_type = sampling.event;
    }
}

std::size_t PprofBuilder::add_address_space(const std::vector<measure::MappedModule>& modules,
                                            const symbols::SymbolResolver& resolver) {
    Space space;
    space.resolver = &resolver;
    for (const auto& m : modules) {
        // Samples land in code: executable mappings (the vDSO's permissions say so too).
        const bool code = m.permissions.empty() || m.permissions.find('x') != std::string::npos ||
                          m.path == symbols::kVdso;
        if (!code || m.end <= m.start || space.mappings.contains(m.start)) continue;
        pprof::Mapping mapping;
        mapping.id = profile_.mappings.size() + 1;
        mapping.start = m.start;
        mapping.limit = m.end;
        mapping.offset = m.offset;
        mapping.file = m.path;
        mapping.build_id = m.build_id;
        // lockprof resolved every address already; pprof must not symbolize them again.
        mapping.has_functions = mapping.has_filenames = mapping.has_line_numbers =
            mapping.has_inline_frames = true;
        space.mappings.emplace(m.start, std::make_pair(m.end, mapping.id));
        profile_.mappings.push_back(std::move(mapping));
    }
    spaces_.push_back(std::move(space));
    return spaces_.size() - 1;
}

std::uint64_t PprofBuilder::function(const std::string& demangled, const std::string& file) {
    auto [it, added] = functions_.try_emplace({demangled, file}, profile_.functions.size() + 1);
    // The name is lockprof's short name, as its annotation and flamegraphs show it
    // ("measured_loop<TasLock<(Delay)1>, false>"), the system name the whole demangled one.
    // pprof keeps a name that differs from the system name as it is; given only the long one it
    // would drop the template arguments, and measured_loop<TasLock> and measured_loop<CasLock>
    // would become one "measured_loop".
    if (added)
        profile_.functions.push_back(
            {it->second, symbols::short_name(demangled), demangled, file, 0});
    return it->second;
}

std::uint64_t PprofBuilder::location(std::size_t space_index, std::uint64_t address) {
    auto [it, added] = locations_.try_emplace({space_index, address}, 0);
    if (!added) return it->second;
    const Space& space = spaces_.at(space_index);
    pprof::Location loc;
    loc.id = profile_.locations.size() + 1;
    loc.address = address;
    if (auto m = space.mappings.upper_bound(address); m != space.mappings.begin()) {
        --m;
        if (address < m->second.first) loc.mapping_id = m->second.second;
    }
    const symbols::Location where = space.resolver->resolve(address);
    if (where.has_symbol()) {
        // The innermost line is the address's own; each inlined copy's call site is the line
        // of the function around it.
        std::string file = where.source_file;
        int line = where.source_line;
        for (auto& call : space.resolver->inlined_calls(address)) {
            loc.lines.push_back({function(call.function, file), line});
            file = std::move(call.call_file);
            line = call.call_line;
        }
        loc.lines.push_back({function(where.symbol, file), line});
    } else {
        // "[postgres]", "[vdso]", "[kernel]", "[unknown]": what the folded stacks call it.
        const std::string name = attribution::frame_name(where);
        auto [f, added] = functions_.try_emplace({name, ""}, profile_.functions.size() + 1);
        if (added) profile_.functions.push_back({f->second, name, {}, {}, 0});
        loc.lines.push_back({f->second, 0});
    }
    profile_.locations.push_back(std::move(loc));
    it->second = profile_.locations.back().id;
    return it->second;
}

void PprofBuilder::add(std::size_t space, const measure::RawSample& sample, std::int64_t cpu_ns,
                       std::vector<pprof::Label> labels) {
    pprof::Sample s;
    s.location_ids.reserve(sample.callchain.size() + 1);
    s.location_ids.push_back(location(space, sample.ip));
    // Return addresses point after the call; -1 lands inside it.
    for (auto ret : sample.callchain)
        if (ret) s.location_ids.push_back(location(space, ret - 1));
    s.values = {1, cpu_ns};
    if (!weighs_time_) s.values.push_back(static_cast<std::int64_t>(sample.weight));
    s.labels = std::move(labels);
    profile_.samples.push_back(std::move(s));
}

pprof::Profile PprofBuilder::finish(std::int64_t duration_ns, std::int64_t time_nanos,
                                    std::vector<std::string> comments) {
    if (profile_.period == 0 && !weighs_time_ && !profile_.samples.empty()) {
        // Frequency-based event sampling: the kernel varied the period; say what it averaged.
        std::int64_t total = 0;
        for (const auto& s : profile_.samples) total += s.values[2];
        profile_.period = total / static_cast<std::int64_t>(profile_.samples.size());
    }
    profile_.duration_nanos = duration_ns;
    profile_.time_nanos = time_nanos;
    profile_.comments = std::move(comments);
    return std::move(profile_);
}

std::vector<std::int64_t> apportion(std::uint64_t total,
                                    const std::vector<const measure::RawSample*>& samples) {
    std::vector<std::int64_t> out(samples.size(), 0);
    unsigned __int128 weights = 0;
    for (const auto* s : samples) weights += s->weight;
    if (weights == 0 || samples.empty()) return out;
    std::vector<std::pair<std::uint64_t, std::size_t>> remainders;  // (remainder, index)
    std::uint64_t given = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const unsigned __int128 share = static_cast<unsigned __int128>(total) * samples[i]->weight;
        out[i] = static_cast<std::int64_t>(share / weights);
        given += static_cast<std::uint64_t>(out[i]);
        remainders.emplace_back(static_cast<std::uint64_t>(share % weights), i);
    }
    std::sort(remainders.begin(), remainders.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; given < total && k < remainders.size(); ++k, ++given)
        ++out[remainders[k].second];
    return out;
}

std::int64_t epoch_nanos(const std::string& timestamp_utc) {
    std::tm tm{};
    const char* end = strptime(timestamp_utc.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end) return 0;
    const std::time_t t = timegm(&tm);
    return t < 0 ? 0 : static_cast<std::int64_t>(t) * 1'000'000'000;
}

pprof::Profile run_pprof(const workload::RunResult& run) {
    if (!run.sampling) return {};
    const measure::SamplingInfo& info = *run.sampling;
    const symbols::SymbolResolver resolver(info.modules);
    PprofBuilder builder(info);
    const std::size_t space = builder.add_address_space(info.modules, resolver);
    std::uint64_t wall_ns = 0;
    for (const auto& cell : run.cells) {
        const std::string flavour = cell.flavour.empty() ? "native" : cell.flavour;
        for (const auto& trial : cell.trials) {
            wall_ns += trial.wall_ns;
            for (const auto& thread : trial.threads) {
                std::vector<const measure::RawSample*> samples;
                for (const auto& s : thread.samples) samples.push_back(&s);
                const auto cpu = builder.weighs_time() ? std::vector<std::int64_t>{}
                                                       : apportion(thread.cpu_ns, samples);
                for (std::size_t i = 0; i < samples.size(); ++i)
                    builder.add(space, *samples[i],
                                builder.weighs_time()
                                    ? static_cast<std::int64_t>(samples[i]->weight)
                                    : cpu[i],
                                {pprof::Label::text("lock", cell.lock),
                                 pprof::Label::text("flavour", flavour),
                                 pprof::Label::number("threads", cell.threads),
                                 // Text: pprof drops numeric labels whose value is 0.
                                 pprof::Label::text("thread", std::to_string(thread.index)),
                                 pprof::Label::number("tid", samples[i]->tid)});
            }
        }
    }
    std::vector<std::string> comments = {
        fmt::format("lockprof {} ({})", run.provenance.lockprof_version,
                    run.provenance.git_revision),
        fmt::format("sampler {}, event {}, {}", info.sampler, info.event,
                    info.period ? fmt::format("period {}", info.period)
                                : fmt::format("{} Hz", info.frequency))};
    if (!info.event_note.empty()) comments.push_back(info.event_note);
    return builder.finish(static_cast<std::int64_t>(wall_ns),
                          epoch_nanos(run.provenance.timestamp_utc), std::move(comments));
}

}  // namespace lockprof::attribution
