// SIGINT and SIGTERM: one policy for every subcommand (docs/reliability.md, "Interrupts").
//
// Every command (CommandPolicy, from cli::main, before the options are parsed): a signal removes
// the temporary of an output being written, so nothing half-written is left beside it, and ends
// lockprof as the signal would. Outputs are atomic (write_output()), so each is then absent or
// whole.
//
// run and record, while a MeasurementScope lives: the first signal asks the measurement to stop
// (stop_requested(), stop_signal()) and lockprof goes on to write everything it has; a second
// is noted on stderr and changes nothing; a third aborts at once, saying on stderr which outputs
// are lost (common/output_registry.hpp), removing the temporary of the one being written and
// exiting 128 + the first signal. A signal after the scope has ended (lockprof returning, its
// outputs in place) exits 128 + the first signal, or 128 + itself, without a word. A shell's
// `timeout -s INT` (which signals lockprof and then its process group) and a double Ctrl-C deliver
// two signals: the write-out survives both.
#pragma once

#include <atomic>
#include <optional>

namespace lockprof::cli::interrupts {

// The cleanup handler for SIGINT and SIGTERM.
void install_cleanup();

// The measuring policy for SIGINT and SIGTERM, from construction (which forgets earlier
// signals) to destruction (which puts back the handlers found).
class MeasurementScope {
  public:
    MeasurementScope();
    ~MeasurementScope();
    MeasurementScope(const MeasurementScope&) = delete;
    MeasurementScope& operator=(const MeasurementScope&) = delete;
};

// The policy for the whole of one command, installed by cli::main before anything is parsed:
// the measuring one when `measures` (run, record) until it is destroyed, else the cleanup
// handler. Both signals are held back while the handlers change, so a process that shows
// SIGINT caught (/proc/PID/status SigCgt) already applies the command's policy.
class CommandPolicy {
  public:
    explicit CommandPolicy(bool measures);
    CommandPolicy(const CommandPolicy&) = delete;
    CommandPolicy& operator=(const CommandPolicy&) = delete;
    // The process's exit status for a command that returned `status`: 128 + the first signal
    // once a measuring command took one, whenever it came (also as the command returned).
    int exit_code(int status) const;

  private:
    std::optional<MeasurementScope> scope_;
};

// The measurement is over and the outputs are being written: what a second or third signal
// says changes to that.
void writing_outputs();

// Set by the first signal (RunControl::interrupted).
const std::atomic<bool>& stop_requested();
// 0, or the first signal's number (record()'s stop).
const std::atomic<int>& stop_signal();
// Signals received in this scope.
int signals_received();
// 0 without a signal, else 128 + the first signal: 130 for SIGINT, 143 for SIGTERM.
int exit_code();

}  // namespace lockprof::cli::interrupts
