#!/usr/bin/env python3
"""Writes the README of a results folder of ci/h200_watch.sh runs from their archives:
per call (a subfolder holding watch.tar.xz), the GPU and the commit that ran, and per
case watch's exit code, its time, and the first event (hang or not, the shape, its
catalog entry, the signals the rule read, the capture's seconds). No figure is typed
by hand.

Usage: python3 ci/watch_results.py RESULTS_DIR > RESULTS_DIR/README.md
"""
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diagnose_graph_results import machine_facts  # noqa: E402


def members(archive):
    out = {}
    with tarfile.open(archive, "r:xz") as tar:
        for m in tar.getmembers():
            if m.isfile():
                out[os.path.normpath(m.name)] = tar.extractfile(m).read().decode("utf-8", "replace")
    return out


def first_event(files, case):
    text = files.get(os.path.join(case, "events.jsonl"), "")
    for line in text.splitlines():
        if line.strip():
            return json.loads(line)
    return None


def main():
    root = sys.argv[1]
    calls = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "watch.tar.xz")))
    out = ["# `hangbench watch` over GPU jobs (issue 42)", "",
           "Written by `ci/watch_results.py` from the archives below; each call is one run of",
           "`ci/h200_watch.sh run` (the cases it names: `ddp-abort` a DataLoader DDP job hung in its abort",
           "over NVIDIA's 2.17.1 under torchrun; `ddp-abort-gpu` the same read from NVML alone; `gil-convoy`",
           "the diagnose corpus's GIL convoy with the Flight Recorder on; `healthy-gpu` a healthy all-reduce",
           "loop read from NVML alone, ended from outside). Exit 124: hung, evidence captured.", "",
           "| call | GPU | hangbench | case | watch exit | seconds | first event | shape | catalog | signals read | idle s | capture s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    provenance = []
    for call in calls:
        files = members(os.path.join(root, call, "watch.tar.xz"))
        gpu, commit, date = machine_facts(files.get("logs/machine.txt", "").splitlines())
        provenance.append("- %s: %s, hangbench %s, %s" % (call, gpu, commit, date))
        for line in files.get("outcomes.jsonl", "").splitlines():
            if not line.strip():
                continue
            o = json.loads(line)
            e = first_event(files, o["case"])
            out.append("| %s | %s | %s | %s | %d | %.1f | %s | %s | %s | %s | %s | %s |" % (
                call, gpu, commit, o["case"], o["exit"], o["seconds"],
                e["event"] if e else "none", (e or {}).get("shape", "-") or "-", (e or {}).get("catalog_id", "-") or "-",
                ", ".join((e or {}).get("signals", [])) or "-",
                (e or {}).get("seconds_since_progress", "-"), (e or {}).get("capture_s", "-")))
    out += ["", "## Provenance", ""] + provenance
    print("\n".join(out))


if __name__ == "__main__":
    main()
