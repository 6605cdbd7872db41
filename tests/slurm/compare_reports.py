#!/usr/bin/env python3
"""Compares two hangbench report.json files cell by cell: trial and outcome counts,
hang intervals, verdicts, and every comparison's p-values. Exit 1 on a difference."""
import json
import sys


def cells(report):
    return {c["id"]: c for c in report["cells"]}


def main(a_path, b_path):
    a, b = json.load(open(a_path)), json.load(open(b_path))
    differences = []
    ca, cb = cells(a), cells(b)
    if set(ca) != set(cb):
        differences.append(f"cells differ: {sorted(set(ca) ^ set(cb))}")
    keys = ["n", "hangs", "passed", "crashed", "failed", "infra", "hang_ci95", "verdict"]
    for cell_id in sorted(set(ca) & set(cb)):
        for key in keys:
            if ca[cell_id].get(key) != cb[cell_id].get(key):
                differences.append(f"{cell_id}: {key} {ca[cell_id].get(key)} vs {cb[cell_id].get(key)}")
    comps_a = {c["name"]: c for c in a.get("comparisons", [])}
    comps_b = {c["name"]: c for c in b.get("comparisons", [])}
    if set(comps_a) != set(comps_b):
        differences.append("comparisons differ")
    for name in sorted(set(comps_a) & set(comps_b)):
        for key, value in comps_a[name].items():
            if key.startswith(("p_", "log10_p", "a_", "b_")) and comps_b[name].get(key) != value:
                differences.append(f"{name}: {key} {value} vs {comps_b[name].get(key)}")
    for d in differences:
        print("DIFF", d)
    compared = sum(1 for _ in ca)
    print(f"compared {compared} cells and {len(comps_a)} comparisons: {len(differences)} difference(s)")
    return 1 if differences or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
