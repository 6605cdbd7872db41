#!/usr/bin/env python3
"""Writes the README of a results folder of ci/h200_diagnose.sh runs from their files:
per call (a subfolder holding machine.txt, timings.jsonl, gpu-corpus.md), the commit
and the GPU that ran, diagnose's wall time per world size against issue 38's bars, and
the GPU corpus's verdicts. No figure is typed by hand.

Usage: python3 ci/diagnose_graph_results.py RESULTS_DIR > RESULTS_DIR/README.md
"""
import json
import os
import re
import statistics
import sys

BARS = {2: 0.4, 8: 1.5}  # issue 38: seconds for --tree --stacks at 2 and 8 ranks


def machine(folder):
    return machine_facts(open(os.path.join(folder, "machine.txt")).read().splitlines())


def machine_facts(lines):
    """The GPU, the hangbench commit and the date of a device call's machine.txt lines."""
    gpu = lines[0] if lines else "?"
    commit = next((re.search(r"\(([0-9a-f]+(-dirty(\+diff\.[0-9a-f]+)?)?)\)", l).group(1) for l in lines if "0.1.0 (" in l), "?")
    date = next((l for l in lines if "UTC" in l), "?")
    return gpu, commit, date


def corpus_rows(folder):
    rows = []
    for line in open(os.path.join(folder, "gpu-corpus.md")):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[3] in ("PASS", "FAIL", "ERROR"):
            rows.append(cells)
    return rows


def main():
    root = sys.argv[1]
    calls = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "machine.txt")))
    out = ["# diagnose as a wait-for graph on a GPU machine (issue 38)", "",
           "Written by `ci/diagnose_graph_results.py` from the files below; each call is one run of",
           "`ci/h200_diagnose.sh run` (the GPU part of `tests/diagnose_corpus/`, then `diagnose --tree --stacks",
           "--json` of a DataLoader DDP job hung in its abort over NVIDIA's 2.17.1 wheel, at the torchrun world",
           "sizes below, every rank on the one GPU as its own NCCL host). The archives hold every diagnosis.", ""]
    out += ["## Time of `diagnose --tree AGENT --stacks --json`", "",
            "With the Flight Recorder on, diagnose waits for each rank's dump, which PyTorch's monitor",
            "thread writes when it next polls its pipe (every `TORCH_NCCL_COORD_CHECK_MILSEC`, 1000 ms by",
            "default); calls before the Flight Recorder column existed ran with it on.", "",
            "| call | GPU | hangbench | ranks | Flight Recorder | seconds, each run | median | bar | runs within the bar |",
            "|---|---|---|---|---|---|---|---|---|"]
    for call in calls:
        folder = os.path.join(root, call)
        gpu, commit, _ = machine(folder)
        runs = [json.loads(l) for l in open(os.path.join(folder, "timings.jsonl")) if l.strip()]
        for n, fr in sorted({(r["ranks"], r.get("flight_recorder", "on")) for r in runs}):
            secs = [r["seconds"] for r in runs if r["ranks"] == n and r.get("flight_recorder", "on") == fr]
            bar = BARS.get(n)
            within = sum(1 for s in secs if bar is not None and s <= bar)
            out.append("| %s | %s | %s | %d | %s | %s | %.3f | %s | %d of %d |" % (
                call, gpu, commit, n, fr, ", ".join("%.3f" % s for s in secs), statistics.median(secs),
                ("%.1f s" % bar) if bar else "-", within, len(secs)))
    out += ["", "## The GPU corpus", "",
            "| call | hangbench | case | expected | found | verdict |", "|---|---|---|---|---|---|"]
    for call in calls:
        folder = os.path.join(root, call)
        _, commit, _ = machine(folder)
        for cells in corpus_rows(folder):
            out.append("| %s | %s | %s | %s | %s | %s |" % (call, commit, cells[0], cells[1], cells[2], cells[3]))
    out += ["", "## Provenance", ""]
    for call in calls:
        gpu, commit, date = machine(os.path.join(root, call))
        tree = next((l.split("tree ", 1)[1] for l in open(os.path.join(root, call, "machine.txt")) if "from tree " in l), "")
        out.append("- %s: %s, hangbench %s, %s%s" % (call, gpu, commit, date,
                                                    ", scripts and corpus from " + tree.strip() if tree else ""))
    print("\n".join(out))


if __name__ == "__main__":
    main()
