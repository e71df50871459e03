#!/usr/bin/env python3
"""The commands README.md and docs/*.md show are run against the built lockprof.

What counts as an example (the convention the docs follow):
  - a line in a fenced code block with no language or `sh`/`bash`/`shell`/`console` whose first
    word is `lockprof` (`lockprof events; lockprof doctor` is two commands), and
  - a line `$ lockprof ...` (or `HOST$ lockprof ...`) in any fenced block (a transcript: the
    command, then its output).
  `lockprof:` (with the colon) starts an error message shown as output, not a command.
  A `# comment` after a command is dropped; `[...]` marks optional parts of a synopsis, which
  are run without them and option-checked with them.

What is checked, for every example:
  1. every `--option` it names exists in `lockprof SUBCOMMAND --help` (the run options for a
     bare `lockprof --...`); after ` -- ` the words belong to the recorded command and are not
     checked, unless that command is lockprof itself (then they are checked as its own);
  2. unless it is marked not run, it runs in a temporary folder with lockprof first on PATH and
     must exit 0, or the code tests/docs/examples.conf gives it (a command shown refusing).

Not run, and why, is said in two places, so that neither goes stale silently:
  - `<!-- not run: REASON -->` on the line before a block's opening fence: a synopsis
    (`IN.folded -o OUT.svg [same options]`), or output that only looks like a command;
  - tests/docs/examples.conf, one command per line: `FILE | COMMAND | ACTION | REASON`, ACTION
    `skip` or `exit N`, either optionally `on ARCH` (platform.machine(): applies only there).
    COMMAND is the example as written, comment dropped. An entry that matches no example on its
    ARCH fails the test: the doc changed and the entry must follow.
  Commands that need perf.data are skipped, saying so, when `perf record` cannot make one here.

Rewrites, so the whole set runs in well under a minute on a loaded 2-core machine (each
changes how long or how wide a run is, never which options it uses):
  --duration X            -> 20ms for a run, 300ms for `record` (a run without --duration or
                             --acquires gets --duration 20ms)
  --max-time X            -> 1s
  --threads LIST          -> each count capped at 2, duplicates dropped (before ` -- ` only)
  --processes N           -> at most 3 (3 is where verdicts start resampling over processes)
  --pid 4242              -> the PID of a `sleep` the test starts
  ./my_benchmark, ./my-program, ./prog   -> a short shell loop (stand-in program)
  ./spin_helper, build/tests/lockprof_spin_helper -> the built lockprof_spin_helper
  ./lockprof              -> the lockprof under test
Inputs the examples read are made first with lockprof itself: base.json, new.json,
RESULT.json (small runs; kunpeng.json, m1.json, m1-mini.json, m1-air.json and x86.json are
copies of base.json for the cross-host report's examples), s.json and samples.json (a sampled run's --samples-out), perf.data (`perf record -e
cpu-clock -g` of the stand-in program, when perf works here), p.folded and prog.folded.

usage: run_doc_examples.py [--options-only] SOURCE_DIR LOCKPROF [SPIN_HELPER]
  --options-only: check the options of every example, run none (seconds, for doc edits)
"""
import glob
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

RUNNABLE_LANGS = {"", "sh", "bash", "shell", "console"}
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
FENCE = re.compile(r"^\s*```(\S*)")
COMMAND_TIMEOUT_S = 180  # a loaded machine (load 14 on 2 cores) took 7 min in all
INLINE = "inline code in prose: options checked, not run"

failures = []


def fail(where, why):
    failures.append(f"{where}: {why}")
    print(f"FAIL {where}: {why}", flush=True)


def strip_comment(line):
    return re.sub(r"(^|\s)#(\s.*)?$", "", line).strip()


def examples(source_dir):
    """(file, line number, command text, not-run reason or None) for every example."""
    files = ["README.md"] + sorted(
        os.path.relpath(p, source_dir) for p in glob.glob(os.path.join(source_dir, "docs", "*.md")))
    for rel in files:
        lines = open(os.path.join(source_dir, rel), encoding="utf-8").read().split("\n")
        in_block, lang, reason = False, "", None
        for number, line in enumerate(lines, 1):
            fence = FENCE.match(line)
            if fence:
                if in_block:
                    in_block = False
                    continue
                in_block, lang, reason = True, fence.group(1), None
                for before in reversed(lines[:number - 1]):
                    if before.strip():
                        marker = NOT_RUN.search(before)
                        reason = marker.group(1) if marker else None
                        break
                continue
            if not in_block:
                for span in re.findall(r"`(lockprof [^`]*)`", line):
                    yield rel, number, " ".join(span.split()), INLINE
                continue
            text = line.strip()
            prompt = re.match(r"\S*\$\s+(lockprof(\s.*)?)$", text)
            if prompt:  # `$ lockprof ...`, `guest$ lockprof ...`: a transcript's command
                text = prompt.group(1)
            elif not (lang in RUNNABLE_LANGS and re.match(r"lockprof(\s|$)", text)):
                continue
            for part in strip_comment(text).split(";"):
                if part.strip():
                    yield rel, number, " ".join(part.split()), reason


def subcommand_of(words, subcommands):
    """lockprof's subcommand ('run' when none is named) and the words after it."""
    if len(words) > 1 and words[1] in subcommands:
        return words[1], words[2:]
    return "run", words[1:]


def own_part(words):
    """The words lockprof parses itself, and the recorded command after ` -- `, if any."""
    if "--" in words:
        i = words.index("--")
        return words[:i], words[i + 1:]
    return words, []


class Help:
    def __init__(self, lockprof):
        self.lockprof = lockprof
        self.cache = {}
        top = subprocess.run([lockprof, "--help"], capture_output=True, text=True).stdout
        self.subcommands = set()
        for name in ("run", "list-locks", "annotate", "convert", "events", "doctor",
                     "flamegraph", "fold", "report", "record", "compare"):
            if re.search(rf"^\s+{re.escape(name)}\s", top, re.M):
                self.subcommands.add(name)
        if not self.subcommands:
            sys.exit(f"run_doc_examples: `{lockprof} --help` lists no subcommands")

    def options(self, sub):
        if sub not in self.cache:
            r = subprocess.run([self.lockprof, sub, "--help"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"run_doc_examples: `lockprof {sub} --help` exited {r.returncode}")
            self.cache[sub] = set(re.findall(r"--([a-z0-9][a-z0-9-]*)", r.stdout)) | {"help"}
        return self.cache[sub]


def check_options(where, command, help_):
    """Every --option the example names is in its subcommand's --help."""
    words = command.replace("[", " ").replace("]", " ").split()
    checked = 0
    while words and words[0] == "lockprof":
        sub, rest = subcommand_of(words, help_.subcommands)
        own, after = own_part(["lockprof"] + rest)
        known = help_.options(sub)
        for word in own:
            m = re.match(r"--([a-z0-9][a-z0-9-]*)", word)
            if not m:
                continue
            checked += 1
            if m.group(1) not in known:
                fail(where, f"`{command}`: --{m.group(1)} is not an option of "
                     f"`lockprof {sub}` (see `lockprof {sub} --help`)")
        words = after  # `record -- lockprof run ...`: check the inner command too
    return checked


def cap_threads(value):
    out = []
    for n in value.split(","):
        try:
            n = str(min(int(n), 2))
        except ValueError:
            return value
        if n not in out:
            out.append(n)
    return ",".join(out)


def rewrite(words, sub, stand_ins):
    """The example as the test runs it (the rewrites in this file's header)."""
    own, after = own_part(words)
    out = []
    i = 0
    has_length = False
    while i < len(own):
        word = own[i]
        name, eq, value = word.partition("=")
        if eq and name.startswith("--"):  # --name=value runs as --name value: the same
            own = own[:i] + [name, value] + own[i + 1:]
            continue
        takes = {"--duration", "--max-time", "--threads", "--processes", "--pid", "--binary"}
        if name in takes and not eq and i + 1 < len(own):
            value, i = own[i + 1], i + 1
        if name == "--duration":
            value, has_length = ("300ms" if sub == "record" else "20ms"), True
        elif name == "--acquires":
            has_length = True
        elif name == "--max-time":
            value = "1s"
        elif name == "--threads":
            value = cap_threads(value)
        elif name == "--processes":
            value = str(min(int(value), 3))
        elif name == "--pid":
            value = stand_ins["pid"]
        elif name == "--binary":
            value = stand_ins.get(value, value)
        if name in takes:
            out += [name, value]
        else:
            out.append(word)
        i += 1
    if sub == "run" and not has_length and "--help" not in own:
        out += ["--duration", "20ms"]
    if after:
        after = [stand_ins.get(after[0], after[0])] + after[1:]
        if after[0] == "lockprof":
            inner_sub, _ = subcommand_of(after, stand_ins["subcommands"])
            after = rewrite(after, inner_sub, stand_ins)
        return out + ["--"] + after
    return out


def uprobes_unavailable(spin_helper):
    """Why `record --spin` on the spin helper cannot run here; "" when it can."""
    if not spin_helper:
        return "no lockprof_spin_helper given (the third argument)"
    if not os.path.exists("/sys/bus/event_source/devices/uprobe/type"):
        return "no uprobe PMU is registered (/sys/bus/event_source/devices/uprobe)"
    if os.geteuid() != 0:
        return "uprobes need root or CAP_PERFMON; the test runs as a user"
    return ""


def load_conf(path):
    entries = []
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(" | ")]
        if len(fields) != 4:
            sys.exit(f"{path}:{number}: want `FILE | COMMAND | ACTION | REASON`, got: {line}")
        file_, command, action, reason = fields
        m = re.fullmatch(r"(skip|exit (\d+))(?: on (\S+))?", action)
        if not m or not reason:
            sys.exit(f"{path}:{number}: ACTION is `skip` or `exit N` [on ARCH], with a reason")
        entries.append({"file": file_, "command": " ".join(command.split()), "skip":
                        m.group(1) == "skip", "exit": int(m.group(2) or 0), "arch": m.group(3),
                        "reason": reason, "where": f"tests/docs/examples.conf:{number}",
                        "used": False})
    return entries


def run(argv, cwd, env):
    try:
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None


def make_fixtures(work, lockprof, env):
    """Inputs the examples name, made with lockprof (and perf, where it works here)."""
    small = ["--lock", "tas,cas", "--threads", "1", "--duration", "20ms", "--trials", "3", "-q"]
    made = {}
    for argv in ([lockprof] + small + ["--output", "base.json"],
                 [lockprof] + small + ["--output", "new.json"],
                 [lockprof] + small + ["--output", "RESULT.json"],
                 [lockprof, "--lock", "tas,cas", "--threads", "2", "--duration", "20ms",
                  "--trials", "1", "--sample", "--samples-out", "s.json", "--folded",
                  "p.folded"]):
        r = run(argv, work, env)
        if r is None or r.returncode != 0:
            sys.exit(f"run_doc_examples: making fixtures: `{' '.join(argv)}` failed:\n"
                     f"{r.stderr if r else 'timed out'}")
    shutil.copy(os.path.join(work, "p.folded"), os.path.join(work, "prog.folded"))
    # The hosts of the cross-host report's examples (docs/reports.md, "Several hosts"): results
    # of this machine under the names the docs give them.
    for host in ("kunpeng", "m1", "m1-mini", "m1-air", "x86"):
        shutil.copy(os.path.join(work, "base.json"), os.path.join(work, host + ".json"))
    shutil.copy(os.path.join(work, "s.json"), os.path.join(work, "samples.json"))
    perf = shutil.which("perf")
    if perf:
        r = run([perf, "record", "-q", "-e", "cpu-clock", "-g", "-o", "perf.data", "--",
                 os.path.join(work, "my_benchmark")], work, env)
        if r is not None and r.returncode == 0 and os.path.getsize(
                os.path.join(work, "perf.data")) > 0:
            made["perf.data"] = None
        else:
            made["perf.data"] = "`perf record -e cpu-clock` fails here: " + (
                r.stderr.strip().splitlines()[-1] if r and r.stderr.strip() else "timed out")
    else:
        made["perf.data"] = "perf is not installed (Debian linux-perf)"
    return made


def main():
    options_only = "--options-only" in sys.argv
    if options_only:
        sys.argv.remove("--options-only")
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.rsplit("usage: ", 1)[1])
    source_dir, lockprof = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    spin_helper = os.path.abspath(sys.argv[3]) if len(sys.argv) == 4 else None
    conf = load_conf(os.path.join(source_dir, "tests", "docs", "examples.conf"))
    help_ = Help(lockprof)
    arch = platform.machine()

    with tempfile.TemporaryDirectory(prefix="lockprof-doc-examples-") as work:
        bin_dir = os.path.join(work, ".bin")
        os.mkdir(bin_dir)
        os.symlink(lockprof, os.path.join(bin_dir, "lockprof"))
        os.symlink(lockprof, os.path.join(work, "lockprof"))
        os.symlink(os.path.join(source_dir, "profiles"), os.path.join(work, "profiles"))
        stand_in = os.path.join(work, "my_benchmark")
        with open(stand_in, "w") as f:
            f.write("#!/bin/sh\n# stand-in for the docs' programs: a little CPU, then exit 0\n"
                    "i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done\n")
        os.chmod(stand_in, 0o755)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
        sleeper = subprocess.Popen(["sleep", "100000"])  # killed below
        stand_ins = {"pid": str(sleeper.pid), "subcommands": help_.subcommands,
                     "./my_benchmark": stand_in, "./my-program": stand_in, "./prog": stand_in,
                     "./lockprof": lockprof}
        if spin_helper:
            stand_ins["./spin_helper"] = spin_helper
            stand_ins["build/tests/lockprof_spin_helper"] = spin_helper
        try:
            made = {} if options_only else make_fixtures(work, lockprof, env)
            counts = {"examples": 0, "options": 0, "ran": 0, "not run": 0, "inline": 0}
            ran = {}
            for rel, number, command, reason in examples(source_dir):
                where = f"{rel}:{number}"
                counts["examples"] += 1
                counts["options"] += check_options(where, command, help_)
                entry = None
                for e in conf:
                    if e["file"] == rel and e["command"] == command and e["arch"] in (None, arch):
                        entry = e
                        e["used"] = True
                if reason == INLINE or options_only:
                    counts["inline" if reason == INLINE else "not run"] += 1
                    continue
                if reason or (entry and entry["skip"]):
                    counts["not run"] += 1
                    print(f"skip {where}: `{command}`: {reason or entry['reason']}")
                    continue
                words = shlex.split(command.replace("[", " [ ").replace("]", " ] "))
                while "[" in words:  # optional parts of a synopsis are run without
                    start = words.index("[")
                    end = words.index("]", start)
                    del words[start:end + 1]
                if "perf.data" in words and made["perf.data"]:
                    counts["not run"] += 1
                    print(f"skip {where}: `{command}`: needs perf.data, and {made['perf.data']}")
                    continue
                sub, _ = subcommand_of(words, help_.subcommands)
                argv = [lockprof] + rewrite(words, sub, stand_ins)[1:]
                want = entry["exit"] if entry else 0
                if "--spin" in own_part(words)[0] and not entry:
                    why = uprobes_unavailable(spin_helper)
                    if why:
                        counts["not run"] += 1
                        print(f"skip {where}: `{command}`: {why}")
                        continue
                if tuple(argv) in ran:  # the same example in another doc: run once
                    if ran[tuple(argv)] != want:
                        fail(where, f"`{command}`: exited {ran[tuple(argv)]}, want {want}")
                    else:
                        print(f"ok   {where}: `{command}` (as run above, exit {want})")
                    continue
                started = time.monotonic()
                r = run(argv, work, env)
                took = time.monotonic() - started
                ran[tuple(argv)] = r.returncode if r else None
                counts["ran"] += 1
                shown = " ".join(shlex.quote(w) for w in ["lockprof"] + argv[1:])
                if r is None:
                    fail(where, f"`{shown}` ran past {COMMAND_TIMEOUT_S} s")
                elif r.returncode != want:
                    tail = (r.stderr.strip() or r.stdout.strip()).splitlines()[-3:]
                    fail(where, f"`{shown}` exited {r.returncode}, want {want}: "
                         + " / ".join(tail))
                else:
                    print(f"ok   {where}: `{shown}` (exit {r.returncode}, {took:.1f} s)")
        finally:
            sleeper.kill()
            sleeper.wait()

    for e in conf:
        if not e["used"] and e["arch"] in (None, arch) and not options_only:
            fail(e["where"], f"no example `{e['command']}` in {e['file']}: update or remove the "
                 "entry")
    print(f"doc examples: {counts['examples']} found ({counts['inline']} inline in prose, "
          f"options only), {counts['ran']} run, {counts['not run']} not run, "
          f"{counts['options']} options checked, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
