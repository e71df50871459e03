#include "cli/interrupts.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "lockprof/common/output_registry.hpp"

namespace lockprof::cli::interrupts {
namespace {

std::atomic<int> g_count{0};
std::atomic<int> g_first{0};
std::atomic<bool> g_stop{false};
std::atomic<bool> g_writing{false};
std::atomic<bool> g_measured{false};  // a MeasurementScope has ended in this process
bool g_terminal = false;  // stderr is a terminal: clear the progress line before a message

// Async-signal-safe writes to stderr.
void put(const char* s) noexcept {
    std::size_t left = std::strlen(s);
    while (left > 0) {
        const ssize_t n = ::write(STDERR_FILENO, s, left);
        if (n <= 0) return;
        s += n;
        left -= static_cast<std::size_t>(n);
    }
}

const char* name(int signal) noexcept {
    return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
}

extern "C" void on_cleanup_signal(int signal) {
    outputs::remove_temporaries();
    // After run or record (a MeasurementScope has ended): its outputs are in place, and the
    // exit status is still the policy's, 128 + the first signal, not death by this one.
    if (g_measured.load()) {
        const int first = g_first.load();
        _exit(128 + (first ? first : signal));
    }
    // SA_RESETHAND put the default action back; the signal stays blocked until this returns,
    // then ends the process as it would have without a handler.
    raise(signal);
}

extern "C" void on_measurement_signal(int signal) {
    const int saved_errno = errno;
    const int n = g_count.fetch_add(1) + 1;
    const bool writing = g_writing.load();
    if (n == 1) {
        g_first.store(signal);
        g_stop.store(true);
    } else if (n == 2) {
        put(g_terminal ? "\r\033[Klockprof: " : "lockprof: ");
        put(name(signal));
        put(writing ? " again: still writing the outputs; a third signal aborts and loses those "
                      "not written yet\n"
                    : " again: still stopping, then every output is written; a third signal "
                      "aborts and loses them all\n");
    } else {
        put(g_terminal ? "\r\033[Klockprof: " : "lockprof: ");
        put(name(signal));
        put(" a third time: aborting; ");
        if (!writing) put("the measurement is not written; ");
        put("lost: ");
        if (outputs::describe_unwritten(STDERR_FILENO) == 0)
            put(writing ? "nothing, every output file is in place" : "the report on stdout");
        put("\n");
        outputs::remove_temporaries();
        _exit(128 + g_first.load());
    }
    errno = saved_errno;
}

struct sigaction handler(void (*function)(int), int flags) {
    struct sigaction action {};
    action.sa_handler = function;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    action.sa_flags = flags;
    return action;
}

struct sigaction g_old_int {
}, g_old_term{};

}  // namespace

void install_cleanup() {
    g_measured.store(false);
    const struct sigaction action = handler(on_cleanup_signal, SA_RESETHAND | SA_RESTART);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

MeasurementScope::MeasurementScope() {
    g_count.store(0);
    g_first.store(0);
    g_stop.store(false);
    g_writing.store(false);
    g_terminal = isatty(STDERR_FILENO) != 0;
    // SA_RESTART: a signal during the write-out must not fail a write to a pipe with EINTR.
    const struct sigaction action = handler(on_measurement_signal, SA_RESTART);
    sigaction(SIGINT, &action, &g_old_int);
    sigaction(SIGTERM, &action, &g_old_term);
}

MeasurementScope::~MeasurementScope() {
    g_measured.store(true);
    sigaction(SIGINT, &g_old_int, nullptr);
    sigaction(SIGTERM, &g_old_term, nullptr);
}

CommandPolicy::CommandPolicy(bool measures) {
    sigset_t both, previous;
    sigemptyset(&both);
    sigaddset(&both, SIGINT);
    sigaddset(&both, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &both, &previous);
    install_cleanup();
    if (measures) scope_.emplace();
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

int CommandPolicy::exit_code(int status) const {
    const int interrupted = interrupts::exit_code();
    return scope_ && interrupted ? interrupted : status;
}

void writing_outputs() {
    g_writing.store(true);
}

const std::atomic<bool>& stop_requested() {
    return g_stop;
}

const std::atomic<int>& stop_signal() {
    return g_first;
}

int signals_received() {
    return g_count.load();
}

int exit_code() {
    const int first = g_first.load();
    return first ? 128 + first : 0;
}

}  // namespace lockprof::cli::interrupts
