#!/usr/bin/env python3
"""README.md of a ci/bootstrap_root_over_wheels.sh folder, computed from its probes.jsonl.

  ci/bootstrap_root_table.py OUT_DIR > OUT_DIR/README.md
Every figure below comes from the folder's files; nothing is typed by hand.
"""
import json
import os
import sys


def release_key(release):
    parts = release.replace(".post", ".").split(".")
    return tuple(int(p) for p in parts if p.isdigit())


def yes(flag):
    return "yes" if flag else "no"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bootstrap_root_table.py OUT_DIR")
    folder = sys.argv[1]
    rows = []
    with open(os.path.join(folder, "probes.jsonl")) as f:
        for number, line in enumerate(f, 1):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit("%s/probes.jsonl line %d: %s" % (folder, number, e))
    machine = open(os.path.join(folder, "machine.txt")).read().strip().splitlines()
    rows.sort(key=lambda r: (r["package"], release_key(r["release"])))
    unjudged = [r for r in rows if "not_judged" in r]
    judged = [r for r in rows if "not_judged" not in r]
    waited = [r for r in judged if r["silent"]["silent_peer_found"] and r["silent"]["names_the_intruder"]]
    not_waited = [r for r in judged if r not in waited]
    quiet_controls = [r for r in judged if not r["none"]["silent_peer_found"]]
    print("# NCCL's bootstrap root and a silent connection, over NVIDIA's wheels (no GPU)")
    print()
    print("Written by `ci/bootstrap_root_table.py` from `probes.jsonl`, which "
          "`ci/bootstrap_root_over_wheels.sh` wrote. Each wheel's libnccl.so.2 was loaded by "
          "`workloads/nccl_bootstrap_silent/root_probe.py`: `ncclGetUniqueId` starts the bootstrap root; "
          "a forked process that holds none of the job's descriptors connects and sends nothing (`silent`), "
          "or nobody does (`none`); then a rank's bootstrap connection sends the job's magic and socket type. "
          "`hangbench diagnose --tree PID --stacks --json` read the process 1.5 s later. This measures the "
          "root's wait, which needs no GPU; the ranks' `ncclCommInitRank` that waits behind it needs one "
          "(`workloads/nccl_bootstrap_silent/matrix.toml`).")
    print()
    print("**%d of %d wheels judged**: the root waited on the silent connection, and diagnose named it "
          "(`nccl-bootstrap-silent-peer`, with the intruder's pid)%s. **%d of %d** controls (no intruder) gave "
          "no such finding.%s" % (
              len(waited), len(judged),
              "" if not not_waited else "; not in: " + ", ".join("%s %s" % (r["package"], r["release"])
                                                                 for r in not_waited),
              len(quiet_controls), len(judged),
              "" if not unjudged else " Not judged: %s (%s)." % (
                  ", ".join("%s %s" % (r["package"], r["release"]) for r in unjudged),
                  "; ".join(sorted({r["not_judged"] for r in unjudged})))))
    print()
    print("Provenance:")
    print()
    for line in machine:
        print("- " + line)
    print()
    print("| package | release | silent: finding | names the intruder | root's innermost NCCL frames | none: findings |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "not_judged" in r:
            print("| %s | %s | not judged | | %s | |" % (r["package"], r["release"], r["not_judged"]))
            continue
        s, n = r["silent"], r["none"]
        print("| %s | %s | %s | %s | %s | %s |" % (
            r["package"], r["release"], yes(s["silent_peer_found"]), yes(s["names_the_intruder"]),
            " ← ".join("`%s`" % f.split("(")[0] for f in s["root_frames"]) or "(none read)",
            ", ".join(n["rules"]) or "none"))


if __name__ == "__main__":
    main()
