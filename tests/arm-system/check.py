#!/usr/bin/env python3
"""Host-side checks of one emulated arm64 system stage (scripts/test-arm-system.sh).

    check.py STAGE OUTDIR BUILD [NATIVE_LOCKPROF]

OUTDIR holds what scripts/lib/arm-system-guest.sh left in the guest: STEP.out/.err/.rc per
step and the JSON files lockprof wrote. BUILD is the cross build whose binaries the guest ran
(its objdump'd code is what the exact counts are compared with). NATIVE_LOCKPROF, a lockprof
built for this host, re-annotates the guest's samples here as a user would elsewhere. Prints one `ok:` line per
check; exits 1 at the first failed check, saying what was expected and what was found.

QEMU emulates the PMU's counting machinery, not a microarchitecture: cycles and instructions
count (exactly under -icount shift=0, where they are equal), store-exclusive and cache events
open but count 0, generic cache events are ENOENT. The checks assert lockprof's plumbing and
arithmetic against that, never a timing or a microarchitectural effect.
"""
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


def ok(message):
    print(f"    ok: {message}")


class Stage:
    def __init__(self, outdir):
        self.dir = Path(outdir)

    def step(self, name, want_rc=0):
        """A step's stdout and stderr, after checking its exit status."""
        rc_file = self.dir / f"{name}.rc"
        expect(rc_file.exists(), f"step '{name}' did not run (no {rc_file.name}; see stage.log)")
        rc = int(rc_file.read_text().strip() or "-1")
        out = (self.dir / f"{name}.out").read_text(errors="replace")
        err = (self.dir / f"{name}.err").read_text(errors="replace")
        expect(rc == want_rc,
               f"step '{name}' exited {rc}, expected {want_rc}\n--- stdout\n{out[-3000:]}"
               f"\n--- stderr\n{err[-3000:]}")
        return out, err

    def json(self, name):
        path = self.dir / name
        expect(path.exists(), f"{name} was not written")
        return json.loads(path.read_text())


# --- results ---------------------------------------------------------------------------------

def cell(run, lock, threads=None):
    for c in run["cells"]:
        if c["lock"] == lock and (threads is None or c["threads"] == threads):
            return c
    raise Failure(f"no cell for {lock} in the result")


def event_summary(c, event):
    for e in c["summary"].get("events", []):
        if e["event"] == event:
            return e
    raise Failure(f"{c['lock']}: event {event} is not in the summary")


def per_acquire(c, event):
    e = event_summary(c, event)
    expect(e["counted"], f"{c['lock']}: {event} was not counted")
    return e["per_acquire"]["median"]


def trial_per_acquire(c, event):
    """`event` per acquire in each trial of cell `c`: the threads' raw counts / their acquires."""
    figures = []
    for trial in c["trials"]:
        counted = sum(e["raw"] for t in trial["threads"] for e in t.get("counters", [])
                      if e["event"] == event)
        acquires = sum(t["acquires"] for t in trial["threads"])
        expect(acquires > 0, f"{c['lock']}: a trial made no acquires")
        figures.append(counted / acquires)
    return figures


def hardware_counted_fully(c, events):
    for event in events:
        e = event_summary(c, event)
        expect(e["counted"], f"{c['lock']}: {event} was not counted")
        expect(abs(e["running_fraction"] - 1.0) < 1e-9,
               f"{c['lock']}: {event} ran {e['running_fraction']:.3f} of the time; a group that "
               f"fits the PMU must run all of it")


# --- the measured loop's instructions --------------------------------------------------------

BRANCH = re.compile(r"^(b\.\w+|cbz|cbnz|tbz|tbnz|b)$")


def disassemble(build, symbol):
    """(address, mnemonic, operands) of the function whose demangled name is `symbol`."""
    binary = str(Path(build) / "lockprof")
    nm = subprocess.run(["aarch64-linux-gnu-nm", "-C", "-S", binary], capture_output=True,
                        text=True, check=True).stdout
    for line in nm.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[3] == symbol:
            start, size = int(parts[0], 16), int(parts[1], 16)
            break
    else:
        raise Failure(f"{symbol} is not in {binary}'s symbol table")
    listing = subprocess.run(
        ["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", f"--start-address={start}",
         f"--stop-address={start + size}", binary], capture_output=True, text=True,
        check=True).stdout
    instructions = []
    for line in listing.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*([^<]*)", line)
        if m:
            instructions.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    expect(instructions, f"objdump listed no instructions for {symbol}")
    return instructions


def branch_target(mnemonic, operands):
    if not BRANCH.match(mnemonic):
        return None
    return int(operands.split(",")[-1].strip().split()[0], 16)


def loop_edges(instructions):
    """The backward branches as (branch, target): all of them, those in the function's body,
    and the outer loop's, the one with the longest span in the body. The body ends at the
    first ret; blocks after it are the compiler's cold paths (setup variants, the contended
    slow path), whose branches back into the body are not the loop."""
    back_edges = [(address, branch_target(m, o)) for address, m, o in instructions
                  if branch_target(m, o) is not None and branch_target(m, o) <= address]
    body_end = next((address for address, m, _ in instructions if m == "ret"), None)
    in_body = [edge for edge in back_edges if body_end is None or edge[0] < body_end]
    expect(in_body, "the measured loop has no backward branch")
    return back_edges, in_body, max(in_body, key=lambda edge: edge[0] - edge[1])


def uncontended_iteration(instructions):
    """Instructions one iteration of the measured loop executes when the lock is free and the
    loop does no work (--shared-lines 0, --critical-ns 0, --parallel-ns 0).

    The outer loop is the backward branch with the longest span in the function's body (up to
    its first ret; out-of-line cold paths after it branch back into the middle). Walking it
    from its head:
    a backward conditional branch inside it is not taken (store-exclusive retries and spins on
    a held lock do not happen uncontended), nor is one to code outside the loop (the exit, the
    out-of-line contended path); a forward one within the loop is taken when it skips over a
    loop (a work loop that runs zero times) or when its fall-through leaves the outer loop
    (the stop and limit checks continue); any other is not taken. Stops with a Failure
    where the walk meets something it cannot decide (a call, a return, a jump outside).
    """
    index = {address: i for i, (address, _, _) in enumerate(instructions)}
    back_edges, _, (tail, head) = loop_edges(instructions)
    inside = lambda address: head <= address <= tail  # noqa: E731
    count, pc, path = 0, index[head], []
    for _ in range(10_000):
        address, mnemonic, operands = instructions[pc]
        count += 1
        path.append(f"{address:x} {mnemonic}")
        if address == tail:
            return count, path
        expect(mnemonic not in ("bl", "blr", "br", "ret"),
               f"the uncontended path meets '{mnemonic}' at {address:x}; the walk cannot follow it")
        target = branch_target(mnemonic, operands)
        if target is None:
            pc += 1
            continue
        if mnemonic == "b":
            expect(inside(target), f"the path jumps out of the loop at {address:x}")
            pc = index[target]
            continue
        taken = False
        if target > address and inside(target):
            skips_loop = any(address < b < target and address < t < target for b, t in back_edges)
            _, next_mnemonic, next_operands = instructions[pc + 1]
            next_target = branch_target(next_mnemonic, next_operands)
            exits = next_mnemonic == "ret" or (next_mnemonic == "b" and not inside(next_target))
            taken = skips_loop or exits
        pc = index[target] if taken else pc + 1
    raise Failure("the walk of the measured loop did not come back to its head")


def in_acquire_loop(instructions, path):
    """How many instructions of the uncontended `path` lie in the inlined acquire loop: the
    spans of the backward branches in the body, other than the outer loop's, that hold a
    load-exclusive (the store-exclusive retry and the spin on a held lock; the spin's head can
    lie before the outer loop's). Every instruction a waiter spends beyond an uncontended
    iteration is in those spans."""
    _, in_body, outer = loop_edges(instructions)
    spans = [(head, tail) for tail, head in in_body if (tail, head) != outer
             and any(head <= a <= tail and m.startswith("ld") and "xr" in m
                     for a, m, _ in instructions)]
    expect(spans, "the measured loop has no inner loop around a load-exclusive")
    addresses = [int(step.split()[0], 16) for step in path]
    inside = sum(1 for a in addresses if any(head <= a <= tail for head, tail in spans))
    expect(inside < len(path),
           f"all {len(path)} instructions of the uncontended iteration lie in the spans taken "
           f"for the acquire loop ({', '.join(f'{h:x}..{t:x}' for h, t in spans)}): they are "
           f"not only the acquire loop")
    return inside


def loop_symbol(lock):
    """measured_loop<...> of `lock` (e.g. TasLock) in the llsc flavour, delay none, no latency."""
    return (f"void lockprof::workload::llsc::measured_loop<lockprof::locks::llsc::{lock}"
            f"<(lockprof::arch::Delay)0>, false>(void*, lockprof::workload::LoopArgs const&)")


# --- stages ------------------------------------------------------------------------------------

def event_line(events, alias):
    """The `lockprof events` line of one alias ("" when it is not listed)."""
    return next((l for l in events.splitlines() if l.startswith(alias + " ")), "")


def check_common(stage):
    doctor, _ = stage.step("doctor")
    expect("perf_event (hardware)  works" in doctor, f"doctor does not say hardware works:\n{doctor}")
    ok("doctor: perf_event (hardware) works against the guest kernel's PMU driver")
    events, _ = stage.step("events")
    cycles = event_line(events, "cycles")
    expect(" yes " in cycles, f"events: the kernel does not accept cycles: '{cycles}'")
    ok("events: cycles accepted by the kernel")
    return doctor, events


def check_neoverse_n1(stage, build, native):
    doctor, events = check_common(stage)
    expect("arm_n1 (core)" in doctor, "doctor: libpfm4 did not pick arm_n1 on Neoverse N1")
    for alias, name in (("stxr_fail", "arm_n1::STREX_FAIL_SPEC"), ("strex", "arm_n1::STREX_SPEC")):
        line = event_line(events, alias)
        expect(name in line and " yes " in line, f"events: {alias} is not {name}, accepted: '{line}'")
    ok("events: stxr_fail -> arm_n1::STREX_FAIL_SPEC and strex -> arm_n1::STREX_SPEC, accepted")

    # Exact counts under icount: whole numbers, cycles = instructions, = the disassembly.
    stage.step("exact")
    exact = stage.json("exact.json")
    # QEMU's emulated PMU, under a loaded host, at times counts more than the user-mode
    # instructions retired (a CI run: 28.07 per acquire where the loop is 28, about the kernel's
    # own instructions in the window added), never fewer: the trial with the least is checked,
    # and at least one of the three must be exact.
    exact_instructions, iterations = {}, {}
    for lock, type_name in (("tas@llsc", "TasLock"), ("cas@llsc", "CasLock")):
        c = cell(exact, lock, 1)
        hardware_counted_fully(c, ["cycles", "instructions"])
        per_trial = trial_per_acquire(c, "instructions")
        expect(len(per_trial) == 3, f"{lock}: {len(per_trial)} trials, 3 asked for")
        least = min(range(len(per_trial)), key=per_trial.__getitem__)
        instructions = per_trial[least]
        cycles = trial_per_acquire(c, "cycles")[least]
        exact_instructions[lock] = instructions
        expect(abs(instructions - round(instructions)) < 0.01,
               f"{lock}: {instructions:.4f} instructions per acquire is not a whole number")
        expect(abs(cycles - instructions) < 0.01,
               f"{lock}: cycles/acq {cycles:.4f} differs from instructions/acq {instructions:.4f}")
        instructions_of_loop = disassemble(build, loop_symbol(type_name))
        expected, path = uncontended_iteration(instructions_of_loop)
        iterations[lock] = expected, in_acquire_loop(instructions_of_loop, path)
        # The measured loop at the floor (issue 29): 22 instructions was tas@llsc's iteration
        # before the exclusion check moved into every acquire (28 with it, cas@llsc 31); GCC 12
        # now makes 16 and 17 (docs/aarch64.md lists them by phase).
        expect(expected <= 22,
               f"{lock}: one uncontended iteration of its measured loop is {expected} "
               f"instructions, more than the 22 of a loop with nothing beside the lock:\n  "
               + "\n  ".join(path))
        expect(round(instructions) == expected,
               f"{lock}: {instructions:.3f} instructions per acquire counted, but one uncontended "
               f"iteration of its measured loop is {expected} instructions:\n  " + "\n  ".join(path))
        ok(f"{lock}: {instructions:.3f} instructions and {cycles:.3f} cycles per acquire = the "
           f"{expected} instructions of one loop iteration in its disassembly (trials: "
           + ", ".join(f"{x:.3f}" for x in per_trial) + ")")
    exact_instructions = exact_instructions["tas@llsc"]

    # Multiplexing: more hardware events than counters, scaled values unchanged.
    out, _ = stage.step("multiplex")
    multiplex = cell(stage.json("multiplex.json"), "tas@llsc", 1)
    fractions = {e["event"]: e["running_fraction"] for e in multiplex["summary"]["events"]}
    expect(all(0 < f < 0.99 for f in fractions.values()),
           f"with 12 hardware events on 6+1 counters every event should run part of the time: "
           f"{fractions}")
    expect("running" in out, "the table does not show the running fraction of multiplexed events")
    scaled = per_acquire(multiplex, "instructions")
    expect(abs(scaled / exact_instructions - 1) < 0.01,
           f"multiplexed instructions/acq {scaled:.3f} is not within 1% of {exact_instructions:.3f}")
    ok(f"multiplexing: 12 events ran {min(fractions.values()):.0%}-{max(fractions.values()):.0%} "
       f"of the time; scaled instructions/acq {scaled:.3f} vs {exact_instructions:.3f} unmultiplexed")

    # Sampling on hardware cycles, annotated in the guest by its own objdump.
    out, _ = stage.step("sample")
    sampling = stage.json("sample.json")["sampling"]
    expect(sampling["sampler"] == "perf" and sampling["event"] == "cycles",
           f"sampled {sampling['sampler']}/{sampling['event']}, not perf/cycles: "
           f"{sampling.get('event_note')}")
    samples = stage.json("samples.json")
    kept = sum(len(t.get("samples", [])) for c in samples["cells"] for tr in c["trials"]
               for t in tr["threads"])
    lost = sum(t.get("samples_lost", 0) for c in samples["cells"] for tr in c["trials"]
               for t in tr["threads"])
    expect(kept > 50 and lost == 0, f"{kept} samples kept, {lost} lost")
    share = re.search(r"acquire loop: (\d+(?:\.\d+)?)% of samples", out)
    expect(share, f"no acquire-loop share in the annotation:\n{out}")
    # Four threads on one CPU, each holding the lock for 200 instructions of critical work:
    # the guest's scheduler preempts holders at its ticks, in virtual time under icount, and
    # the waiters spin out their turns. Threads on two vCPUs contend as QEMU interleaves the
    # vCPUs, which the guest does not control: one CI run spun so little that the loop
    # harness got 55% of the samples (16 runs here: 60-100% in the acquire loop).
    phases = re.search(r"measured loop by phase \(of all samples\): (.*)", out)
    expect(phases, f"no phase breakdown in the annotation:\n{out}")
    by_phase = {name.strip(): float(pct) for name, pct in
                re.findall(r"([a-z ]+?) (\d+(?:\.\d+)?)%", phases.group(1))}
    hottest = max(by_phase, key=by_phase.get)
    expect(hottest == "acquire loop",
           f"the samples of contended tas@llsc gather in the {hottest}, not the acquire loop: "
           f"{phases.group(1)}")
    # Under icount a cycle is an instruction, so the samples must fall where the counters say
    # the instructions went: all but one uncontended iteration's worth outside the acquire
    # loop (its disassembly's, plus the 200 of --critical-ins) were spent spinning in it.
    # Ten guest runs: 74.0-76.3% sampled where 73.3-76.3% was counted.
    iteration, inside = iterations["tas@llsc"]
    counted = per_acquire(cell(stage.json("sample.json"), "tas@llsc", 4), "instructions")
    outside = iteration - inside + 200
    expect(counted > 2 * outside,
           f"{counted:.0f} instructions per acquire, {outside} of them outside the acquire "
           f"loop: the waiters hardly spun, so the run does not test where samples gather")
    implied = 100 * (counted - outside) / counted
    expect(abs(float(share.group(1)) - implied) <= 10,
           f"the acquire loop holds {share.group(1)}% of the cycles samples, but the counters "
           f"put {implied:.1f}% of the instructions there ({counted:.0f} per acquire, "
           f"{outside} of them outside the loop)")
    expect(re.search(r"\bldaxr\b", out) and re.search(r"\bstxr\b", out),
           "the annotation does not list the ldaxr/stxr pair")
    ok(f"sampling: {kept} samples of hardware cycles (perf), 0 lost; the acquire loop holds "
       f"{share.group(1)}%, the most of any phase ({phases.group(1)}), where the counted "
       f"instructions put {implied:.1f}%; ldaxr/stxr annotated")

    # Annotating elsewhere: the guest's samples, read on this host with a copy of the binary
    # that ran and the cross objdump, as a user without binutils on the target would.
    if native:
        import shutil
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / "lockprof-that-ran"
            shutil.copy(Path(build) / "lockprof", copy)
            annotate = subprocess.run(
                [native, "annotate", str(stage.dir / "samples.json"), "--binary", str(copy),
                 "--objdump", "aarch64-linux-gnu-objdump", "--annotate-top", "1"],
                capture_output=True, text=True)
        expect(annotate.returncode == 0,
               f"host annotate of the guest's samples exited {annotate.returncode}: "
               f"{annotate.stderr}")
        host_share = re.search(r"acquire loop: (\d+(?:\.\d+)?)% of samples", annotate.stdout)
        expect(host_share and host_share.group(1) == share.group(1),
               f"annotate on the host gives acquire-loop share "
               f"{host_share.group(1) if host_share else 'none'}, the guest {share.group(1)}")
        expect(re.search(r"\bstxr\b", annotate.stdout), "host annotate lists no stxr")
        ok(f"annotate elsewhere: the guest's samples, annotated on this x86 host with a copy of "
           f"the binary (--binary) and aarch64-linux-gnu-objdump, give the same {share.group(1)}%")

    # The explanation uses what was counted.
    out, _ = stage.step("exact")
    explanation = out[out.find("Explanation"):]
    expect("Explanation" in out, f"no explanation:\n{out}")
    expect("no measured" not in explanation and "instructions per acquire" in explanation
           and "cycles per acquire" in explanation,
           f"the explanation does not use the counted instructions and cycles:\n{explanation}")
    ok("explanation: tas@llsc vs cas@llsc cites the counted events")

    # record -- CMD: hardware counters and hardware-event sampling of another process.
    stage.step("record")
    record = stage.json("record.json")
    text = json.dumps(record["totals"])
    expect("cycles" in text and "instructions" in text, f"record totals: {text[:500]}")
    expect(record["sampling"]["event"] == "cycles" and record["sampling"]["sampler"] == "perf",
           f"record sampled {record['sampling']}")
    hot = [s["symbol"] for s in record["hot_symbols"]]
    expect(any("measured_loop" in s for s in hot), f"record: measured_loop not among {hot}")
    ok("record -- CMD: cycles and instructions counted, cycles sampled, measured_loop among "
       "the hottest symbols")


def gtest_results(path, failures=None):
    """Each test's outcome; `failures`, when given, collects each failed test's messages."""
    expect(Path(path).exists(), f"{path} was not written (the test binary crashed?)")
    results = {}
    for case in ElementTree.parse(path).iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        if case.find("failure") is not None:
            results[name] = "failed"
            if failures is not None:
                failures[name] = "\n".join(f.get("message", "") for f in case.iter("failure"))
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            results[name] = "skipped"
        else:
            results[name] = "passed"
    return results


def running_when_stopped(log):
    """The gtest test a stopped step was running: its last [ RUN ] without an outcome line."""
    running = None
    for line in log.splitlines():
        if line.startswith("[ RUN      ] "):
            running = line[13:].strip()
        elif running and re.match(r"\[ +(OK|FAILED|SKIPPED) +\] " + re.escape(running), line):
            running = None
    return running


def slowest(path, count=5):
    """The `count` slowest tests of a gtest XML report, as 'name s' text."""
    cases = [(float(c.get("time") or 0), f"{c.get('classname')}.{c.get('name')}")
             for c in ElementTree.parse(path).iter("testcase")]
    return ", ".join(f"{name} {seconds:.0f} s" for seconds, name in sorted(cases)[::-1][:count])


def check_neoverse_n1_tests(stage):
    for step in ("unit", "cli", "validate"):
        limit = stage.dir / f"{step}.timeout"
        if limit.exists():
            log = (stage.dir / f"{step}.out").read_text(errors="replace")
            expect(False, f"the {step} step in the guest was stopped at its limit of "
                          f"{limit.read_text().strip()} s (scripts/lib/arm-system-guest.sh); it was "
                          f"running {running_when_stopped(log) or 'no test'}\n{log[-3000:]}")
    for step, xml_name, must_run in (
            ("unit", "unit.xml", ["PmuCounting.HardwareCyclesCountWhenThePmuIsExposed",
                                  "PerfSampler.CyclesNeedAHardwarePmu",
                                  "UprobeSampler.EveryEntryTheKernelCountsIsRecorded"]),
            ("cli", "cli.xml", ["CliPmu.DefaultEventsCountSoftwareAndNoteWhatIsMissing",
                                "CliRecordSpin.SLockEntriesPerCallSiteAreExact",
                                "CliRecordSpin.PlainSlowPathIsNamedByItsReturnAddress",
                                # A command's inherited probes on arm64: threads, fork, exec.
                                "EveryMode/CliRecordIntegrity.TargetsOwnChecksPassAndItsExit"
                                "StatusIsKept/command_spin",
                                "CliRecordIntegrityReport.TheReportsProgramKeepsItsThreadsAnd"
                                "ItsSlowPath"])):
        rc = int((stage.dir / f"{step}.rc").read_text().strip() or "-1")
        failures = {}
        results = gtest_results(stage.dir / xml_name, failures)
        failed = [n for n, r in results.items() if r == "failed"]
        # What each failed test printed (its assertion messages, from the XML report), not the
        # tail of the log, which ends with the summary.
        why = "\n".join(f"--- {n}:\n{m[-6000:]}" for n, m in failures.items())
        expect(rc == 0 and not failed,
               f"{step} tests in the guest: exit {rc}, failed {failed}\n"
               f"{why or (stage.dir / f'{step}.out').read_text()[-4000:]}")
        for name in must_run:
            expect(results.get(name) == "passed",
                   f"{name} must run and pass in the guest (a hardware PMU, uprobes); it "
                   f"{results.get(name, 'did not run')}")
        skipped = sorted(n for n, r in results.items() if r == "skipped")
        ok(f"{step} tests in the guest: {len(results) - len(skipped)} passed, {len(skipped)} "
           f"skipped ({', '.join(skipped) or 'none'}); {', '.join(must_run)} ran; the slowest: "
           f"{slowest(stage.dir / xml_name)}")
    if (stage.dir / "validate.rc").exists():
        out, _ = stage.step("validate")
        verdicts = [l for l in out.splitlines() if re.search(r"confirmed|refuted|not measurable", l)]
        expect(verdicts, f"validate-hardware.sh printed no verdicts:\n{out[-3000:]}")
        expect(not any(re.search(r"\b(confirmed|refuted)\b", l) and "not measurable" not in l
                       for l in verdicts),
               "under emulation every mechanism check must be 'not measurable':\n" + "\n".join(verdicts))
        ok("validate-hardware.sh: every mechanism check 'not measurable' under emulation")


def check_hosts_result(stage):
    """The guest's result for the cross-host report: tas and cas at 1 and 2 threads, 8 trials
    each, cycles counted (a default event), the guest's own hostname."""
    stage.step("hosts")
    run = stage.json("hosts.json")
    expect(run["provenance"]["hostname"].startswith("qemu-system-"),
           f"hosts.json: hostname '{run['provenance']['hostname']}'")
    for lock in ("tas", "cas"):
        for threads in (1, 2):
            c = cell(run, lock, threads)
            expect(len(c["trials"]) == 8, f"hosts.json: {lock}/{threads}t has {len(c['trials'])} trials")
            expect(per_acquire(c, "cycles") > 0, f"hosts.json: {lock}/{threads}t: no cycles counted")
    ok(f"hosts.json: tas and cas at 1 and 2 threads, 8 trials, cycles counted on "
       f"{run['provenance']['hostname']}")


def check_cortex_a57(stage):
    _, events = check_common(stage)
    line = event_line(events, "stxr_fail")
    expect("arm_ac57::INST_SPEC_EXEC_STREX_FAIL" in line and " yes " in line,
           f"events on cortex-a57: stxr_fail is '{line}'")
    ok("events: stxr_fail -> arm_ac57::INST_SPEC_EXEC_STREX_FAIL, accepted")
    _, err = stage.step("refuse", want_rc=2)
    expect("needs ARMv8.1 LSE atomics" in err, f"tas@lse refusal: {err}")
    ok("tas@lse refused with exit 2 on an ARMv8.0 core")
    stage.step("count")
    run = stage.json("count.json")
    for lock in ("tas@llsc", "cas@llsc", "tas@outline"):
        hardware_counted_fully(cell(run, lock, 1), ["cycles", "stxr_fail"])
        expect(per_acquire(cell(run, lock, 1), "cycles") > 0, f"{lock}: 0 cycles per acquire")
    ok("tas@llsc, cas@llsc, tas@outline: cycles and stxr_fail counted, running 100%")
    check_hosts_result(stage)


def check_max(stage):
    doctor, events = check_common(stage)
    for alias, raw in (("stxr_fail", "perf_raw::r6e"), ("stxr_pass", "perf_raw::r6d")):
        line = event_line(events, alias)
        expect(raw in line and " yes " in line, f"events on max: {alias} is '{line}'")
    ok("events: stxr_fail -> perf_raw::r6e, stxr_pass -> perf_raw::r6d (no libpfm4 table), accepted")
    stage.step("count")
    run = stage.json("count.json")
    for lock in ("tas@llsc", "tas@lse"):
        hardware_counted_fully(cell(run, lock, 1), ["cycles", "stxr_fail", "stxr_pass"])
    ok("tas@llsc, tas@lse: cycles and the raw store-exclusive events counted, running 100%")
    check_hosts_result(stage)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    stage_name, outdir, build = sys.argv[1:4]
    native = sys.argv[4] if len(sys.argv) == 5 else None
    stage = Stage(outdir)
    checks = {
        "neoverse-n1": lambda: check_neoverse_n1(stage, build, native),
        "neoverse-n1-tests": lambda: check_neoverse_n1_tests(stage),
        "cortex-a57": lambda: check_cortex_a57(stage),
        "max": lambda: check_max(stage),
    }
    if stage_name not in checks:
        print(f"check.py: unknown stage '{stage_name}'", file=sys.stderr)
        return 2
    try:
        checks[stage_name]()
    except Failure as failure:
        print(f"    FAILED: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
