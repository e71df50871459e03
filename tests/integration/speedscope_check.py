#!/usr/bin/env python3
"""A sampled run's --speedscope file, checked against the schema speedscope itself ships.

Runs `lockprof --sample --samples-out S.json`, converts it with `lockprof convert --speedscope`,
fetches the speedscope npm package (`npm pack speedscope`, cached in the build folder) and
validates the file against its dist/release/file-format-schema.json with python3-jsonschema;
then checks one profile per cell and that each profile's weights add up to the samples'
total CPU time in the result file. Exits 77 (skipped) when npm, the npm registry or jsonschema
is not available here.

usage: speedscope_check.py LOCKPROF CACHE_DIR
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def schema(cache):
    found = glob.glob(os.path.join(cache, "package", "dist", "release", "file-format-schema.json"))
    if found:
        return json.load(open(found[0]))
    if not shutil.which("npm"):
        skip("npm is not installed (Debian npm); it fetches the speedscope package")
    os.makedirs(cache, exist_ok=True)
    r = subprocess.run(["npm", "pack", "speedscope", "--silent"], cwd=cache, capture_output=True,
                       text=True, timeout=120)
    tgz = glob.glob(os.path.join(cache, "speedscope-*.tgz"))
    if r.returncode != 0 or not tgz:
        skip(f"npm pack speedscope failed (no registry here?): {r.stderr.strip()[:200]}")
    with tarfile.open(tgz[0]) as t:
        t.extract("package/dist/release/file-format-schema.json", cache)
    return schema(cache)


def main():
    lockprof, cache = sys.argv[1:3]
    try:
        import jsonschema
    except ImportError:
        skip("python3-jsonschema is not installed")
    spec = schema(cache)
    with tempfile.TemporaryDirectory() as d:
        samples, out = os.path.join(d, "S.json"), os.path.join(d, "s.speedscope.json")
        subprocess.run([lockprof, "--lock", "tas,cas", "--threads", "2", "--duration", "200ms",
                        "--trials", "1", "--quiet", "--sample", "--samples-out", samples],
                       check=True)
        subprocess.run([lockprof, "convert", samples, "--speedscope", out], check=True)
        doc = json.load(open(out))
        jsonschema.validate(doc, spec)
        run = json.load(open(samples))
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
