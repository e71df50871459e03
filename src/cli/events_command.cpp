// `lockprof events`: what each alias resolves to on this CPU and whether the kernel accepts it;
// `--all` lists libpfm4's active PMUs and their events.
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/pmu/aliases.hpp"
#include "lockprof/pmu/event_sources.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/pmu/libpfm.hpp"
#include "lockprof/report/text_table.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

std::string type_name(std::uint32_t type) {
    switch (type) {
        case PERF_TYPE_HARDWARE:
            return "hardware";
        case PERF_TYPE_SOFTWARE:
            return "software";
        case PERF_TYPE_TRACEPOINT:
            return "tracepoint";
        case PERF_TYPE_HW_CACHE:
            return "hw-cache";
        case PERF_TYPE_RAW:
            return "raw";
        default:
            return fmt::format("pmu {}", type);
    }
}

// The kernel's verdict in a few words; the full explanation goes below the table.
std::string short_errno(int error) {
    switch (error) {
        case ENOENT:
            return "no (ENOENT)";
        case EACCES:
            return "no (EACCES)";
        case EPERM:
            return "no (EPERM)";
        case EOPNOTSUPP:
            return "no (EOPNOTSUPP)";
        case EINVAL:
            return "no (EINVAL)";
        case ENOSYS:
            return "no (ENOSYS)";
        case ENODEV:
            return "no (ENODEV)";
        default:
            return fmt::format("no (errno {})", error);
    }
}

void list_aliases(bool include_kernel) {
    const auto identity = arch::cpu_identity();
    const auto core = pmu::libpfm::core_pmu();
    const auto kernel_pmus = pmu::registered_core_pmus();
    std::string kernel_names;
    for (const auto& name : kernel_pmus) kernel_names += (kernel_names.empty() ? "" : ", ") + name;
    std::cout << fmt::format(
        "CPU: {} ({}); kernel core PMU: {}; libpfm4 core PMU: {}; counting {}\n\n",
        identity.model_name, identity.arch, kernel_pmus.empty() ? "none" : kernel_names,
        core.name.empty() ? "none detected" : core.name,
        include_kernel ? "user and kernel space" : "user space only");
    report::TextTable table;
    using A = report::TextTable::Align;
    table.set_header(
        {"alias", "libpfm4 event", "type", "config", "kernel accepts", "what it counts"},
        {A::left, A::left, A::left, A::right, A::left, A::left});
    std::map<int, std::vector<std::string>> refused_by_kernel;
    std::vector<std::string> refusals, notes;
    for (const auto& alias : pmu::aliases()) {
        const auto r = pmu::try_resolve_event(alias.name, include_kernel);
        if (r.status != pmu::Resolution::Status::ok) {
            table.add_row({std::string(alias.name), "-", "-", "-", "refused",
                           std::string(alias.description)});
            refusals.push_back(r.message);
            continue;
        }
        perf_event_attr attr = r.event.attr;
        const int fd = pmu::open_event(attr);
        std::string accepted = "yes";
        if (fd >= 0)
            ::close(fd);
        else {
            accepted = short_errno(-fd);
            refused_by_kernel[-fd].push_back(std::string(alias.name));
        }
        table.add_row({std::string(alias.name), r.event.pfm_name, type_name(r.event.attr.type),
                       fmt::format("{:#x}", r.event.attr.config), accepted,
                       std::string(alias.description)});
        if (!r.event.note.empty()) notes.push_back(fmt::format("{}: {}", alias.name, r.event.note));
    }
    std::cout << table.render();
    if (!notes.empty()) std::cout << "\n";
    for (const auto& n : notes) std::cout << "note: " << n << "\n";
    if (!refusals.empty() || !refused_by_kernel.empty()) std::cout << "\n";
    // One line per reason: "'stxr_fail', 'stxr_pass' cannot be counted on x86_64: ...".
    std::vector<std::pair<std::string, std::string>> by_reason;  // reason, names
    for (const auto& line : refusals) {
        // Each refusal starts with the alias quoted: "'stxr_fail' cannot be counted on ...".
        const auto at = line.rfind('\'', 0) == 0 ? line.find('\'', 1) : std::string::npos;
        const std::string name = at == std::string::npos ? "" : line.substr(0, at + 1);
        const std::string reason = at == std::string::npos ? line : line.substr(at + 1);
        auto it = std::find_if(by_reason.begin(), by_reason.end(),
                               [&](const auto& r) { return r.first == reason; });
        if (it == by_reason.end() || name.empty())
            by_reason.emplace_back(reason, name);
        else
            it->second += ", " + name;
    }
    for (auto& [reason, names] : by_reason) {
        if (names.find(',') != std::string::npos && reason.rfind(" has ", 0) == 0)
            reason.replace(0, 5, " have ");
        std::cout << "refused: " << names << reason << "\n";
    }
    for (const auto& [error, names] : refused_by_kernel) {
        std::string joined;
        for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
        std::cout << "kernel: " << pmu::explain_open_error(error, joined, kernel_pmus) << "\n";
    }
    std::cout << "\nAny libpfm4 name also works with --event (e.g. perf::task-clock, "
                 "perf_raw::r6e); `lockprof events --all` lists them.\n";
}

void list_all(const std::string& only_pmu) {
    const auto pmus = pmu::libpfm::active_pmus();
    bool found = only_pmu.empty();
    for (const auto& p : pmus) {
        if (!only_pmu.empty() && p.name != only_pmu) continue;
        found = true;
        std::cout << fmt::format("{}: {} ({} events{})\n", p.name, p.description, p.events,
                                 p.counters ? fmt::format(", {} counters", p.counters) : "");
        for (const auto& e : pmu::libpfm::events_of(p)) {
            std::cout << fmt::format("  {}::{}  {}\n", p.name, e.name, e.description);
            for (const auto& u : e.umasks) std::cout << "      :" << u << "\n";
        }
    }
    if (!found) {
        std::string names;
        for (const auto& p : pmus) names += (names.empty() ? "" : ", ") + p.name;
        throw UsageError(
            fmt::format("events: PMU '{}' is not active here; active PMUs: {}", only_pmu, names));
    }
}

}  // namespace

int events_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    po::options_description options("events options");
    // clang-format off
    options.add_options()
        ("all", po::bool_switch(), "list every event of libpfm4's active PMUs, with descriptions")
        ("pmu", po::value<std::string>(), "with --all: only this PMU (e.g. perf, arm_n1, skl)")
        ("kernel", po::bool_switch(), "resolve for counting kernel space too")
        ("help,h", "show this help");
    // clang-format on
    const auto vm = parse_arguments(args, options, "events");
    if (vm.count("help")) {
        std::cout << "Usage: lockprof events [--all [--pmu NAME]] [--kernel]\n\n"
                     "Lists the event aliases --event accepts, what each resolves to on this CPU "
                     "(libpfm4 name,\nperf_event type and config) and whether the kernel accepts "
                     "it (a trial open). Aliases\nthat cannot be counted on this CPU say why. "
                     "--all lists libpfm4's active PMUs and their events.\n\n"
                  << options;
        return 0;
    }
    if (vm["all"].as<bool>() || vm.count("pmu"))
        list_all(vm.count("pmu") ? vm["pmu"].as<std::string>() : "");
    else
        list_aliases(vm["kernel"].as<bool>());
    return 0;
}

}  // namespace lockprof::cli
