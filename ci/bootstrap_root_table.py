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


def print_provenance(machine):
    print("Provenance:")
    print()
    for line in machine:
        print("- " + line)
    print()


def frames_in_words(run):
    """The root thread's innermost NCCL frames, innermost first, without their arguments."""
    return " ← ".join("`%s`" % f.split("(")[0] for f in run["root_frames"]) or "(none read)"


def root_after(run):
    """What the root did after an intruder's connection, in words."""
    if run["root_alive"] and run["rank_connect"] == "connected" and run["rank_bytes_unread"] == 0:
        return "went on"
    if not run["root_alive"] and run["rank_connect"] == "refused":
        return "ended"
    return "other (root thread %s, rank %s, %s bytes unread)" % (
        "there" if run["root_alive"] else "gone", run["rank_connect"], run["rank_bytes_unread"])


def segments(rows, mode):
    """Per package, its releases in order folded into runs of one outcome:
    "nvidia-nccl-cu12: ended 2.16.2 to 2.26.5 (14), went on 2.27.3 to 2.32.3 (12)"."""
    out = []
    for package in sorted({r["package"] for r in rows}):
        runs = []
        for r in rows:
            if r["package"] != package:
                continue
            what = root_after(r[mode])
            if runs and runs[-1][0] == what:
                runs[-1][2] = r["release"]
                runs[-1][3] += 1
            else:
                runs.append([what, r["release"], r["release"], 1])
        out.append("%s: %s" % (package, ", ".join(
            "%s %s (%d)" % (what, first, n) if n == 1 else "%s %s to %s (%d)" % (what, first, last, n)
            for what, first, last, n in runs)))
    return out


def print_modes_page(rows, judged, unjudged, waited, quiet_controls, machine):
    """The page of a run with the closed and wrong-magic intruders beside the silent one."""
    print("# NCCL's bootstrap root and connections that are no rank's, over NVIDIA's wheels (no GPU)")
    print()
    print("Written by `ci/bootstrap_root_table.py` from `probes.jsonl`, which "
          "`ci/bootstrap_root_over_wheels.sh` wrote. Each wheel's libnccl.so.2 was loaded by "
          "`workloads/nccl_bootstrap_silent/root_probe.py` once per intruder: `ncclGetUniqueId` starts the "
          "bootstrap root; a forked process that holds none of the job's descriptors connects and sends nothing "
          "(`silent`), closes at once (`closed`), or sends 8 bytes that are not the job's magic (`wrong-magic`); "
          "or nobody connects (`none`). Then a rank's bootstrap connection sends the job's magic and socket "
          "type. 1.5 s later the probe read how many of those bytes the root left unread (`/proc/net/tcp`), and "
          "`hangbench diagnose --tree PID --stacks --json` read the process. The root *went on* when its thread "
          "is still there and has read the rank's bytes; it *ended* when its thread is gone and the rank's "
          "connection was refused (its listening socket closed with it). This measures the root, which needs "
          "no GPU; the ranks' `ncclCommInitRank` behind it needs one (`workloads/nccl_bootstrap_silent/matrix.toml`).")
    print()
    print("- **silent**: in %d of %d wheels judged the root waited on the silent connection, and diagnose named "
          "it (`nccl-bootstrap-silent-peer`, with the intruder's pid)." % (len(waited), len(judged)))
    for mode, words in (("closed", "closed at once"), ("wrong-magic", "a wrong magic")):
        if not all(mode in r for r in judged):
            continue
        went_on = [r for r in judged if root_after(r[mode]) == "went on"]
        print("- **%s** (%s): the root went on in %d of %d wheels judged. By package, in release order:"
              % (mode, words, len(went_on), len(judged)))
        for line in segments(judged, mode):
            print("  - " + line)
    print("- **none**: %d of %d controls gave no `nccl-bootstrap-silent-peer` finding." % (
        len(quiet_controls), len(judged)))
    if unjudged:
        print("- Not judged: %s (%s)." % (
            ", ".join("%s %s" % (r["package"], r["release"]) for r in unjudged),
            "; ".join(sorted({r["not_judged"] for r in unjudged}))))
    print()
    print_provenance(machine)
    print("| package | release | silent: finding | names the intruder | closed: root | wrong magic: root "
          "| none: findings | silent: root's innermost NCCL frames |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "not_judged" in r:
            print("| %s | %s | not judged | | | | | %s |" % (r["package"], r["release"], r["not_judged"]))
            continue
        s, n = r["silent"], r["none"]
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["package"], r["release"], yes(s["silent_peer_found"]), yes(s["names_the_intruder"]),
            root_after(r["closed"]) if "closed" in r else "", root_after(r["wrong-magic"]) if "wrong-magic" in r else "",
            ", ".join(n["rules"]) or "none",
            frames_in_words(s)))


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
    if any("closed" in r or "wrong-magic" in r for r in judged):
        print_modes_page(rows, judged, unjudged, waited, quiet_controls, machine)
        return
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
    print_provenance(machine)
    print("| package | release | silent: finding | names the intruder | root's innermost NCCL frames | none: findings |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "not_judged" in r:
            print("| %s | %s | not judged | | %s | |" % (r["package"], r["release"], r["not_judged"]))
            continue
        s, n = r["silent"], r["none"]
        print("| %s | %s | %s | %s | %s | %s |" % (
            r["package"], r["release"], yes(s["silent_peer_found"]), yes(s["names_the_intruder"]),
            frames_in_words(s),
            ", ".join(n["rules"]) or "none"))


if __name__ == "__main__":
    main()
