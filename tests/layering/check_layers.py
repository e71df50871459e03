#!/usr/bin/env python3
"""The layering the build enforces is the one docs/ARCHITECTURE.md draws.

Reads the module diagram from docs/ARCHITECTURE.md ("## Modules and the layering the build
enforces": `module -> what it may use`), then, for every module M and every module D with
headers, preprocesses `#include "lockprof/D/<a header>"` with M's include tree
(BUILD/layers/M) as the only lockprof include path. It must succeed exactly when D is M or
one the diagram lets M use, directly or through the modules it uses; anything else means the
build and the document disagree.

Then the samples-to-code floor (attribution/): `run`, `record` and `fold perf.data` turn
samples into code on it, so neither perfdata nor record may reach analysis (the statistics of
runs), and analysis holds no pprof code.

usage: check_layers.py SOURCE_DIR BUILD_DIR CXX
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def diagram(source_dir):
    text = open(os.path.join(source_dir, "docs", "ARCHITECTURE.md"), encoding="utf-8").read()
    section = text.split("## Modules and the layering the build enforces", 1)[1]
    block = section.split("```", 2)[1]
    reach = {}
    for line in block.splitlines():
        m = re.match(r"^(\w+)\s*[-─]+\s*(.*)$", line.strip())
        if not m:
            continue
        name, rest = m.group(1), m.group(2)
        rest = re.sub(r"\(.*?\)", "", rest).replace(">", "").strip()
        reach[name] = set() if rest.startswith("nothing") else {
            d.strip() for d in rest.split(",") if d.strip() and not d.strip().startswith("everything")}
        if "everything below" in rest:
            reach[name] = "below"
    modules = list(reach)
    for name, deps in reach.items():
        if deps == "below":
            reach[name] = {m for m in modules if m != name}
    # The diagram lists what a module uses directly; it also sees what those use.
    changed = True
    while changed:
        changed = False
        for name in modules:
            closure = set(reach[name])
            for d in reach[name]:
                closure |= reach.get(d, set())
            if closure != reach[name]:
                reach[name], changed = closure, True
    return reach


def floor_failures(source_dir, reach):
    failures = []
    for m in ("perfdata", "record"):
        if "analysis" in reach.get(m, set()):
            failures.append(f"{m} reaches analysis: samples become code on attribution/, below "
                            "analysis")
    for folder in (os.path.join("src", "analysis"), os.path.join("include", "lockprof", "analysis")):
        for name in sorted(os.listdir(os.path.join(source_dir, folder))):
            text = open(os.path.join(source_dir, folder, name), encoding="utf-8").read()
            if re.search(r'lockprof/export/pprof\.hpp|\bpprof::|PprofBuilder', text):
                failures.append(f"{folder}/{name} holds pprof code: it belongs on attribution/")
    return failures


def main():
    source_dir, build_dir, cxx = sys.argv[1:4]
    reach = diagram(source_dir)
    include = os.path.join(source_dir, "include", "lockprof")
    headers = {}
    for d in sorted(os.listdir(include)):
        files = sorted(f for f in os.listdir(os.path.join(include, d)) if f.endswith(".hpp"))
        if files:
            headers[d] = files[0]
    missing = set(headers) - set(reach)
    if missing:
        print(f"modules with headers but not in ARCHITECTURE.md's diagram: {sorted(missing)}")
        return 1
    jobs = []
    for m in reach:
        tree = os.path.join(build_dir, "layers", m)
        if not os.path.isdir(tree):
            print(f"LAYERING: {m}: no include tree {tree} (is the build configured?)")
            return 1
        for d, header in headers.items():
            jobs.append((m, d, header, tree))

    def check(job):
        m, d, header, tree = job
        allowed = d == m or d in reach[m]
        r = subprocess.run([cxx, "-std=c++20", "-E", "-x", "c++", "-", "-o", os.devnull,
                            "-I", tree, "-I", os.path.join(build_dir, "generated")],
                           input=f'#include "lockprof/{d}/{header}"\n', capture_output=True,
                           text=True)
        if allowed and r.returncode != 0:
            first = (r.stderr.strip().splitlines() or ["?"])[0]
            return (f"{m} may use {d}, but lockprof/{d}/{header} does not preprocess with its "
                    f"tree: {first}")
        if not allowed and r.returncode == 0:
            return f"{m} may not use {d}, yet lockprof/{d}/{header} is visible to it"
        return None

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [f for f in pool.map(check, jobs) if f]
    failures += floor_failures(source_dir, reach)
    checked = len(jobs)
    for f in failures:
        print("LAYERING:", f)
    print(f"{checked} module/header pairs checked, {len(failures)} disagree with "
          "docs/ARCHITECTURE.md")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
