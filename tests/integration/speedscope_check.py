#!/usr/bin/env python3
"""A sampled run's --speedscope file, checked against the schema speedscope itself ships.

Runs `lockprof --sample --samples-out S.json`, converts it with `lockprof convert --speedscope`,
fetches the speedscope npm package (`npm pack speedscope`, cached in the build folder) and
validates the file against its dist/release/file-format-schema.json with python3-jsonschema;
then checks one profile per cell and that each profile's weights add up to the samples'
total CPU time in the result file. Exits 77 (skipped) when npm, the npm registry or jsonschema
is not available here.

With --app it loads the same kind of file into the speedscope app itself instead: the
package's dist/release served over HTTP on 127.0.0.1 (the app fetches #profileURL=, which
file:// URLs cannot), rendered by headless Chromium (--dump-dom), and checks that speedscope's
own importer read it ("Importing as speedscope json file" in the console), that the console
has no errors, and that the app's profile list names every cell with the total it shows
equal to the file's; then a `record` of a shell loop the same way (one profile, the process,
its weights equal to the CPU time record's JSON gives its samples). Exits 77 without chromium.

usage: speedscope_check.py LOCKPROF CACHE_DIR [--app]
"""
import glob
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def package(cache):
    """The speedscope npm package's dist/release folder, fetched once into `cache`."""
    release = os.path.join(cache, "package", "dist", "release")
    if os.path.exists(os.path.join(release, "index.html")):
        return release
    tgz = glob.glob(os.path.join(cache, "speedscope-*.tgz"))
    if not tgz:
        if not shutil.which("npm"):
            skip("npm is not installed (Debian npm); it fetches the speedscope package")
        os.makedirs(cache, exist_ok=True)
        r = subprocess.run(["npm", "pack", "speedscope", "--silent"], cwd=cache,
                           capture_output=True, text=True, timeout=120)
        tgz = glob.glob(os.path.join(cache, "speedscope-*.tgz"))
        if r.returncode != 0 or not tgz:
            skip(f"npm pack speedscope failed (no registry here?): {r.stderr.strip()[:200]}")
    with tarfile.open(tgz[0]) as t:
        t.extractall(cache, members=[m for m in t.getmembers()
                                     if m.name.startswith("package/dist/release/") or
                                     m.name == "package/package.json"])
    return release


def schema(cache):
    return json.load(open(os.path.join(package(cache), "file-format-schema.json")))


def sampled_run(lockprof, d):
    """A 2-thread tas,cas run's samples and their --speedscope file, in folder d."""
    samples, out = os.path.join(d, "S.json"), os.path.join(d, "s.speedscope.json")
    subprocess.run([lockprof, "--lock", "tas,cas", "--threads", "2", "--duration", "200ms",
                    "--trials", "1", "--quiet", "--sample", "--samples-out", samples],
                   check=True)
    subprocess.run([lockprof, "convert", samples, "--speedscope", out], check=True)
    return json.load(open(samples)), json.load(open(out)), out


def shown_ns(text):
    """Speedscope's formatted duration ("60.00ms", "1.23s", "512.00µs") in nanoseconds."""
    m = re.fullmatch(r"([0-9.]+)\s*(ns|µs|us|ms|s|min)", text.strip())
    assert m, f"unexpected duration format '{text}'"
    scale = {"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9}[m.group(2)]
    return float(m.group(1)) * scale, scale


def load_in_app(browser, release, profile, d):
    """Loads `profile` into the speedscope app in headless Chromium; returns the DOM, after
    checking its own importer read the file and the console shows no error."""
    site = os.path.join(d, "site")
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(release, site)
    shutil.copy(profile, os.path.join(site, "profile.json"))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=site, **k)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    url = f"{base}/index.html#profileURL={base}/profile.json"
    cmd = ["timeout", "90", browser, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--enable-logging=stderr",
           "--v=0", "--virtual-time-budget=5000", f"--user-data-dir={d}/chromium",
           "--dump-dom", url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    server.shutdown()
    assert r.returncode == 0, f"chromium exited {r.returncode}: {r.stderr[-2000:]}"
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    errors = [l for l in console
              if any(w in l for w in ("Uncaught", "Error", "Failed to load", "rror:"))]
    assert not errors, "console errors:\n" + "\n".join(errors)
    assert any("Importing as speedscope json file" in l for l in console), \
        "speedscope's importer did not read the file as its own format:\n" + "\n".join(console)
    return r.stdout


def check_app(lockprof, cache):
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(b)), None)
    if not browser:
        skip("no chromium here (Debian chromium; scripts/setup.sh --extras)")
    release = package(cache)  # fetched, or skipped without npm or the registry
    with tempfile.TemporaryDirectory() as d:
        # A sampled run: one profile per cell; the app's profile list shows each total.
        run, doc, out = sampled_run(lockprof, d)
        dom = load_in_app(browser, release, out, d)
        rows = re.findall(r'<tr title="([^"]*)"[^>]*>\s*<td[^>]*>(\d+)</td>\s*<td[^>]*>\s*'
                          r'<span>([^<]*)</span>\s*</td>\s*<td[^>]*>([^<]*)</td>', dom)
        shown = {html.unescape(name): total for name, _, _, total in rows}
        expected = {p["name"]: sum(p["weights"]) for p in doc["profiles"]}
        assert sorted(shown) == sorted(expected), (shown, sorted(expected))
        for name, weight in expected.items():
            ns, scale = shown_ns(shown[name])
            # Speedscope rounds to two decimals of its unit.
            assert abs(ns - weight) <= 0.005 * scale + 1e-9, (name, shown[name], weight)
        title = re.search(r"<title>([^<]*)</title>", dom)

        # A recording of a shell loop: one profile, the process; its weights are the CPU time
        # record's own report gives the samples (hot symbols' weights, every sample covered).
        rec_json, rec_ss = os.path.join(d, "rec.json"), os.path.join(d, "rec.speedscope.json")
        subprocess.run([lockprof, "record", "--sample", "--quiet", "--output", rec_json,
                        "--speedscope", rec_ss, "--", "/bin/sh", "-c",
                        "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"],
                       check=True, stdout=subprocess.DEVNULL)
        rec, rec_doc = json.load(open(rec_json)), json.load(open(rec_ss))
        assert [p["name"] for p in rec_doc["profiles"]] == ["sh"], rec_doc["profiles"]
        sampled = sum(p["samples"] for p in rec["processes"])
        if sum(h["samples"] for h in rec["hot_symbols"]) == sampled:
            assert sum(rec_doc["profiles"][0]["weights"]) == \
                sum(h["weight"] for h in rec["hot_symbols"]), "record totals differ"
        rec_dom = load_in_app(browser, release, rec_ss, d)
        assert re.search(r">sh<", rec_dom), "the app does not name the recorded process"
        version = json.load(open(os.path.join(cache, "package", "package.json")))["version"] \
            if os.path.exists(os.path.join(cache, "package", "package.json")) else "?"
        print(f"speedscope {version} app loaded both files with its own importer, no console "
              f"errors; run: title '{title.group(1) if title else ''}', profiles and totals "
              f"shown {shown}; record: profile 'sh', {sampled} samples, "
              f"{sum(rec_doc['profiles'][0]['weights'])} ns")
    return 0


def main():
    lockprof, cache = sys.argv[1:3]
    # The binary under test, as the CLI tests choose it (tests/support/lockprof_under_test.hpp).
    lockprof = os.environ.get("LOCKPROF_TEST_BIN") or lockprof
    if "--app" in sys.argv[3:]:
        return check_app(lockprof, cache)
    try:
        import jsonschema
    except ImportError:
        skip("python3-jsonschema is not installed")
    spec = schema(cache)
    with tempfile.TemporaryDirectory() as d:
        run, doc, _ = sampled_run(lockprof, d)
        jsonschema.validate(doc, spec)
    names = sorted(p["name"] for p in doc["profiles"])
    assert names == ["cas/2t", "tas/2t"], names
    for cell in run["cells"]:
        total = sum(row[3] for trial in cell["trials"] for t in trial["threads"]
                    for row in t.get("samples", []))
        profile = next(p for p in doc["profiles"] if p["name"] == f"{cell['lock']}/2t")
        assert sum(profile["weights"]) == total == profile["endValue"], (cell["lock"], total)
        assert profile["unit"] == ("nanoseconds" if run["sampling"]["event"] == "cpu-clock"
                                   else "none")
    print(f"speedscope file valid against speedscope {spec.get('$id', '')} schema; profiles "
          f"{names}, weights equal each cell's sampled total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
