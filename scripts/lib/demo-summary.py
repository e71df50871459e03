#!/usr/bin/env python3
"""The one line scripts/demo.sh ends its run with, from lockprof's result file.

    demo-summary.py RESULT.json RUN_SECONDS

Prints what settled ("2 of 4 comparisons settled: cas slower than tas (0.64x at 1 thread,
0.65x at 2 threads)"), or, where no comparison did, why: the cells' measured noise against the
equivalence band and the --max-time that would likely settle them at that noise, from each
cell's trials_to_narrow (docs/reports.md, "Adaptive trials") and the seconds per trial this
run took (RUN_SECONDS, overheads included). Reads only the fields docs/result-schema.md
documents; exits 1 with one line on a file it cannot read.
"""
import json
import sys

DECIDED = ("faster", "slower", "equivalent")


def threads(n):
    return f"{n} thread" if n == 1 else f"{n} threads"


def settled_line(cells, compared):
    groups = {}  # (lock, verdict, baseline) -> ["0.64x at 1 thread", ...], in the file's order
    for c in cells:
        cmp = c["summary"].get("comparison") or {}
        if cmp.get("verdict") in DECIDED:
            key = (c["lock"], cmp["verdict"], cmp["baseline"])
            groups.setdefault(key, []).append(
                f'{cmp["throughput_ratio"]:.2f}x at {threads(c["threads"])}')
    said = "; ".join(f'{lock} {verdict} {"to" if verdict == "equivalent" else "than"} '
                     f'{baseline} ({", ".join(where)})'
                     for (lock, verdict, baseline), where in groups.items())
    decided = sum(len(where) for where in groups.values())
    return f"{decided} of {compared} comparisons settled: {said}"


def unsettled_line(run, cells, run_seconds):
    precisions = [c["summary"].get("precision") for c in cells]
    precisions = [p for p in precisions if p]
    widths = [p["half_width"] for p in precisions if p.get("half_width") is not None]
    bands = [(c["summary"].get("comparison") or {}).get("equivalence") for c in cells]
    band = next((b for b in bands if b), 0.02)
    noise = (f"the cells' intervals were ±{min(widths) * 100:.0f}-{max(widths) * 100:.0f}%"
             if widths else "no cell had an interval")
    budget = run["config"].get("trials_auto") or {}
    trials = sum(c["stop"]["trials"] for c in cells)
    needed = [p.get("trials_to_narrow") for p in precisions]
    spent = f'{budget["max_time_ns"] / 1e9:g} s budget' if budget else f"{trials} trials"
    if budget and needed and None not in needed and trials:
        # Round-robin: every cell gets trials until its own interval is narrow.
        seconds = sum(needed) * run_seconds / trials
        more = (f"about {max(needed)} trials per cell, a --max-time of about "
                f"{max(1, round(seconds / 60))} min, would likely narrow them to the band "
                f"(scripts/demo.sh --max-time {int(seconds) + 1}s), or a quieter machine")
    else:
        more = "more trials (--trials auto --max-time) or a quieter machine would narrow them"
    return (f"no verdict settled in the {spent}: {noise}, wider than the ±{band * 100:g}% "
            f"band; {more}")


def main():
    if len(sys.argv) != 3:
        print("usage: demo-summary.py RESULT.json RUN_SECONDS", file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            run = json.load(f)
        cells = run["cells"]
        compared = sum(1 for c in cells if c["summary"].get("comparison"))
        decided = any((c["summary"].get("comparison") or {}).get("verdict") in DECIDED
                      for c in cells)
        print(settled_line(cells, compared) if decided
              else unsettled_line(run, cells, float(sys.argv[2])))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"demo-summary.py: cannot summarise {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
