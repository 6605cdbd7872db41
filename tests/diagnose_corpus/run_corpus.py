#!/usr/bin/env python3
"""Runs the diagnose corpus (cases/*) against `hangbench diagnose` and prints a table.

Each case is started in its own session, waited for until it has published every
role its expect.json names (HB_CORPUS_ROLES), given a moment to settle, then read
by `hangbench diagnose --tree ROOT --stacks --json`; its findings are compared with
the expectation, and the whole session is killed (SIGCONT then SIGKILL, so that
stopped processes go too). README.md describes the case format.

  run_corpus.py --hangbench PATH [--programs DIR | --compile DIR] [--only NAME]
                [--markdown FILE] [--keep DIR] [--case-timeout S] [--settle S]
                [--repeat N] [--mpirun PATH] [--no-mpi] [--nccl-lib PATH | --no-nccl] [--python PATH]

--programs DIR   where the compiled C and MPI programs are (dc_<case>)
--compile DIR    compile them there first with cc and mpicc (no CMake needed)
--only NAME      run only this case (repeatable)
--markdown FILE  also write the table, per-rule precision and recall and provenance
--keep DIR       keep each case's diagnose JSON, roles and output under DIR/<case>/
--repeat N       run each case N times; it passes only if every run passes (a
                 finding that comes and goes with timing shows up)
--no-mpi         leave out the MPI cases (a build without MPI)
--nccl-lib PATH  the libnccl.so.2 a case with "needs": "nccl" loads (as HB_CORPUS_NCCL_LIB);
                 such a case runs on the CPU: it uses NCCL's host side only
--no-nccl        leave out the cases that need NCCL (a machine without one)

The last line printed is "N passed, M failed"; the exit status is 0 when every
case passed, 1 when one failed, 2 on bad usage.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")

# The wait-for graph's rules: a healthy case may not show them at any severity.
GENERIC_RULES = ["wait-cycle", "gil-convoy", "missing-rank", "collective-mismatch", "p2p-unmatched", "blocked-by-stopped"]

# Open MPI over loopback TCP, as the project's MPI tests run; ranks yield when idle
# so that busy-polling ranks leave the CPU to the others.
MPI_ENV = {
    "OMPI_MCA_btl": "self,tcp",
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
}


class CaseError(Exception):
    """The case could not be judged (it did not start, publish its roles, or diagnose failed)."""


def load_case(name):
    folder = os.path.join(CASES, name)
    with open(os.path.join(folder, "launch.json")) as f:
        launch = json.load(f)
    with open(os.path.join(folder, "expect.json")) as f:
        expect = json.load(f)
    return {"name": name, "folder": folder, "launch": launch, "expect": expect}


def all_case_names():
    return sorted(
        os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(CASES, "*", "expect.json"))
    )


def compile_programs(out_dir, names, cc="cc", mpicc="mpicc"):
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        folder = os.path.join(CASES, name)
        out = os.path.join(out_dir, "dc_" + name)
        if os.path.exists(os.path.join(folder, "main.c")):
            cmd = [cc, "-O1", "-g", "-pthread", "-I", HERE, "-o", out, os.path.join(folder, "main.c")]
        elif os.path.exists(os.path.join(folder, "main_mpi.c")):
            cmd = [mpicc, "-O1", "-g", "-I", HERE, "-o", out, os.path.join(folder, "main_mpi.c")]
        else:
            continue
        subprocess.run(cmd, check=True)


def command_of(case, args):
    launch = case["launch"]
    kind = launch["kind"]
    if kind == "python":
        return [args.python, os.path.join(case["folder"], "main.py")] + launch.get("args", [])
    if kind == "torchrun":  # the GPU cases (gpu_cases/): one rank per process, torchrun's agent on top
        return [args.torchrun, "--standalone", "--nproc-per-node", str(launch["np"]),
                os.path.join(case["folder"], "main.py")] + launch.get("args", [])
    if "program" in launch:  # a workload of the project's own, as its matrix runs it
        program = launch["program"].replace("{workloads}", args.workloads or "")
        if not os.access(program, os.X_OK):
            raise CaseError("program %s not built (--workloads)" % program)
        return [args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(launch["np"])] + \
            [a for k in sorted(launch.get("env", {})) for a in ("-x", k)] + [program] + launch.get("args", [])
    program = os.path.join(args.programs or "", "dc_" + case["name"])
    if not args.programs or not os.access(program, os.X_OK):
        raise CaseError("program %s not built (--programs or --compile)" % ("dc_" + case["name"]))
    if kind == "c":
        return [program] + launch.get("args", [])
    if kind == "mpi":
        return [args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(launch["np"]), program]
    raise CaseError("unknown launch kind %r" % kind)


def read_roles(path):
    """The roles file and every part (path.<part>) merged; temporary files are skipped."""
    roles = {}
    for p in [path] + sorted(glob.glob(glob.escape(path) + ".*")):
        if p.endswith(".tmp") or not os.path.exists(p):
            continue
        try:
            with open(p) as f:
                roles.update(json.load(f))
        except (OSError, ValueError):
            continue  # written by rename, so a half file is not expected; read again next time
    return roles


def session_members(sid):
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid:  # state ppid pgrp session ...
            members.append(int(entry))
    return members


def kill_session(proc):
    """SIGCONT and SIGKILL to every process of the case's session, until none is left."""
    deadline = time.monotonic() + 5
    while True:
        members = session_members(proc.pid)
        for pid in members:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        if proc.poll() is None:
            try:
                proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
        if not [p for p in session_members(proc.pid) if not is_zombie(p)] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def is_zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "RANK")


def rank_of(pid):
    """The launcher's rank of a process, from its environment; None when it has none."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    except OSError:
        return None
    for name in RANK_VARIABLES:
        value = env.get(name.encode())
        if value is not None and value.isdigit():
            return int(value)
    return None


def roles_from_ranks(sid):
    """Roles a program that publishes none plays by its launcher's ranks: rN (the rank's
    process, the first with rank N whose parent has none) and rN.main (its main thread)."""
    roles = {}
    for pid in sorted(session_members(sid)):
        rank = rank_of(pid)
        if rank is None or "r%d" % rank in roles:
            continue
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError):
            continue
        if rank_of(ppid) == rank:
            continue
        roles["r%d" % rank] = pid
        roles["r%d.main" % rank] = pid
    return roles


def run_case(case, args, work):
    """Starts the case, diagnoses it, kills it; returns (roles, diagnose JSON)."""
    roles_path = os.path.join(work, "roles.json")
    env = dict(os.environ)
    env.update(MPI_ENV)
    env["HB_CORPUS_ROLES"] = roles_path
    env["PYTHONPATH"] = HERE + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(case["launch"].get("env", {}))
    if args.nccl_lib:
        env["HB_CORPUS_NCCL_LIB"] = args.nccl_lib
    cmd = command_of(case, args)
    start = time.monotonic()
    deadline = start + args.case_timeout
    with open(os.path.join(work, "case.out"), "w") as out:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wanted = case["expect"].get("roles", [])
        roles_deadline = start + min(args.roles_timeout, args.case_timeout / 2)
        while True:
            roles = read_roles(roles_path)
            if case["launch"].get("roles") == "ranks":
                roles = roles_from_ranks(proc.pid)
            if all(r in roles for r in wanted) and (wanted or roles):
                break
            if proc.poll() is not None:
                raise CaseError("exited (%d) before publishing its roles: %s" % (proc.returncode, tail(work)))
            if time.monotonic() > roles_deadline:
                missing = [r for r in wanted if r not in roles]
                raise CaseError("roles not published in time (missing %s)" % ", ".join(missing or ["all"]))
            time.sleep(0.05)
        if case["launch"].get("roles") == "ranks":  # kept beside the diagnosis, as a program's own are
            with open(roles_path, "w") as f:
                json.dump(roles, f)
        time.sleep(case["launch"].get("settle", args.settle))
        if proc.poll() is not None:
            raise CaseError("exited (%d) before diagnose: %s" % (proc.returncode, tail(work)))
        budget = max(3.0, deadline - time.monotonic())
        json_path = os.path.join(work, "diagnose.json")
        diag = [args.hangbench, "diagnose", "--tree", str(proc.pid), "--stacks", "--json"]
        diag[2:2] = case["launch"].get("diagnose_args", [])
        if args.json_takes_file:
            diag.append(json_path)
        try:
            result = subprocess.run(diag, capture_output=True, text=True, timeout=budget)
        except subprocess.TimeoutExpired:
            raise CaseError("hangbench diagnose ran past %.0f s" % budget)
        if not args.json_takes_file:
            with open(json_path, "w") as f:
                f.write(result.stdout)
        if result.returncode != 0:
            raise CaseError("hangbench diagnose exit %d: %s" % (result.returncode, result.stderr.strip()[-300:]))
        try:
            with open(json_path) as f:
                report = json.load(f)
        except (OSError, ValueError):
            raise CaseError("hangbench diagnose gave no JSON: %s" % result.stdout[:200])
        return roles, report
    finally:
        kill_session(proc)


def tail(work):
    try:
        with open(os.path.join(work, "case.out")) as f:
            text = f.read().strip()
    except OSError:
        return ""
    return text[-200:].replace("\n", " | ")


def resolve(roles, names, what):
    ids = []
    for n in names:
        if isinstance(n, int):
            ids.append(n)
        elif n in roles:
            ids.append(int(roles[n]))
        else:
            raise CaseError("expect.json names %s %r that the case did not publish" % (what, n))
    return ids


def mismatch(req, finding, roles):
    """Why this finding does not satisfy the requirement (None when it does)."""
    thread_ids = {int(v) for k, v in roles.items() if "." in k}
    pids = finding.get("pids") or []
    tids = finding.get("tids") or []
    ranks = finding.get("ranks") or []
    if "pids" in req and set(pids) != set(resolve(roles, req["pids"], "pid")):
        return "pids %s, want %s" % (sorted(pids), sorted(resolve(roles, req["pids"], "pid")))
    if "ranks" in req and set(ranks) != set(req["ranks"]):
        return "ranks %s, want %s" % (sorted(ranks), sorted(req["ranks"]))
    if "tids" in req:
        missing = [t for t in resolve(roles, req["tids"], "tid") if t not in tids]
        if missing:
            return "tids %s lack %s" % (tids, missing)
    stray = [t for t in tids if t not in thread_ids]
    if stray:
        return "tids %s name threads %s of no role" % (tids, stray)
    for key, values, what in (("first_pid", pids, "pid"), ("first_tid", tids, "tid")):
        if key in req and (not values or values[0] != resolve(roles, [req[key]], what)[0]):
            return "%ss %s do not start with %s" % (what, values, req[key])
    if "last_pid" in req and (not pids or pids[-1] != resolve(roles, [req["last_pid"]], "pid")[0]):
        return "pids %s do not end with %s" % (pids, req["last_pid"])
    return None


def judge(case, roles, report):
    """(passed, reason, matched rule ids) for one case's findings."""
    expect = case["expect"]
    findings = report.get("findings") or []
    if not expect.get("hang"):
        bad = [f for f in findings if f.get("severity") == "hang" or f.get("rule") in GENERIC_RULES]
        if bad:
            return False, "healthy, but " + ", ".join(sorted({"%s(%s)" % (f["rule"], f["severity"]) for f in bad})), []
        return True, "", []
    matched, reasons = [], []
    for req in expect.get("require", []):
        severity = req.get("severity", "hang")
        candidates = [f for f in findings if f.get("rule") == req["rule"] and f.get("severity") == severity]
        why = [mismatch(req, f, roles) for f in candidates]
        if any(w is None for w in why):
            matched.append(req["rule"])
        elif candidates:
            reasons.append("%s: %s" % (req["rule"], why[0]))
        else:
            others = sorted({f.get("severity") for f in findings if f.get("rule") == req["rule"]})
            if others:
                reasons.append("%s: only at severity %s" % (req["rule"], ", ".join(others)))
            else:
                reasons.append("%s: no finding" % req["rule"])
    if not reasons and not any(f.get("severity") == "hang" for f in findings):
        reasons.append("no finding of severity hang")
    return not reasons, "; ".join(reasons), matched


def found_counts(report):
    """How many findings of each rule at severity hang, and of the graph's rules at others as rule(severity)."""
    counts = {}
    for f in report.get("findings") or []:
        if f.get("severity") == "hang":
            key = f["rule"]
        elif f.get("rule") in GENERIC_RULES:
            key = "%s(%s)" % (f["rule"], f["severity"])
        else:
            continue
        counts[key] = counts.get(key, 0) + 1
    return counts


def found_text(counts):
    return ", ".join(k if n == 1 else "%s x%d" % (k, n) for k, n in sorted(counts.items())) or "-"


def expected_text(expect):
    if not expect.get("hang"):
        return "healthy"
    return "hang: " + ", ".join(r["rule"] for r in expect.get("require", [])) if expect.get("require") else "hang"


def rules_seen(report):
    """Rule ids that count as reported: severity hang, or any severity for the graph's rules."""
    return {
        f["rule"]
        for f in report.get("findings") or []
        if f.get("severity") == "hang" or f.get("rule") in GENERIC_RULES
    }


def per_rule(results):
    """Per rule id: true positives, false positives (cases neither requiring nor allowing it), misses, wrong targets."""
    rules = list(GENERIC_RULES)
    for r in results:
        for req in r["case"]["expect"].get("require", []):
            if req["rule"] not in rules:
                rules.append(req["rule"])
    for r in results:
        rules += sorted(rule for rule in r["seen"] if rule not in rules)
    rows = []
    for rule in rules:
        tp = fp = miss = wrong = 0
        for r in results:
            required = [q["rule"] for q in r["case"]["expect"].get("require", [])]
            allowed = r["case"]["expect"].get("allow", [])
            seen = rule in r["seen"]
            if rule in allowed and rule not in required:
                continue
            if rule in required:
                if rule in r["matched"]:
                    tp += 1
                else:
                    miss += 1
                    wrong += 1 if seen else 0
            elif seen:
                fp += 1
        rows.append((rule, tp, fp, miss, wrong))
    return rows


def ratio(a, b):
    return "%.2f" % (a / b) if b else "-"


def table_rows(results):
    return [
        (r["case"]["name"], expected_text(r["case"]["expect"]), r["found"], r["verdict"], r["reason"]) for r in results
    ]


def print_table(results):
    rows = table_rows(results)
    head = ("case", "expected", "found", "verdict")
    widths = [max(len(head[i]), *(len(row[i]) for row in rows)) for i in range(4)]
    line = " | ".join(h.ljust(w) for h, w in zip(head, widths))
    print(line)
    print("-" * len(line))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + ("   " + row[4] if row[4] else ""))


def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def corpus_commit():
    """The commit of the corpus that ran: HANGBENCH_TREE_COMMIT when the caller knows it (a copy
    of the tree on another machine may carry stale git metadata: on the GPU machine it named a
    commit three back), else git's HEAD with "+changes" when the tree differs from it."""
    given = os.environ.get("HANGBENCH_TREE_COMMIT", "").strip()
    if given:
        return given[:12] + " (given by the caller)"
    head = command_output(["git", "-C", HERE, "rev-parse", "--short=12", "HEAD"])
    if not head:
        return "unknown"
    dirty = command_output(["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no", "--", "."])
    return head + (" +changes" if dirty else "")


def provenance(args):
    version = command_output([args.hangbench, "--version"]) or "unknown"
    corpus = corpus_commit()
    mpirun = command_output([args.mpirun, "--version"]).splitlines()
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")),
        ("hangbench", version),
        ("corpus commit", corpus),
        ("runs per case", str(args.repeat)),
        ("machine", "%s, %s, %d CPUs, %s" % (platform.node(), platform.platform(), os.cpu_count() or 0, cpu)),
        # The interpreter's name, not its path: a report must not carry this machine's folders.
        ("python", "%s %s" % (os.path.basename(args.python), command_output([args.python, "--version"]))),
        ("mpirun", mpirun[0] if mpirun else "not found"),
    ]


def write_markdown(path, results, args, passed, failed):
    md = ["# hangbench diagnose: the GPU-free corpus", ""]
    md.append("Produced by `tests/diagnose_corpus/run_corpus.py`; tests/diagnose_corpus/README.md describes the cases.")
    md += ["", "| case | expected | found | verdict | why |", "|---|---|---|---|---|"]
    for name, expected, found, verdict, reason in table_rows(results):
        md.append("| %s | %s | %s | %s | %s |" % (name, expected, found, verdict, reason.replace("|", "/")))
    md += ["", "%d passed, %d failed" % (passed, failed), ""]
    md += ["## Per rule", ""]
    md.append(
        "TP: cases that require the rule and got a matching finding. FP: cases that neither require nor allow it "
        "(healthy cases and the other hang cases) yet show it (at severity hang; at any severity for the wait-for "
        "graph's rules). Miss: cases that require it without a matching finding (wrong target: it appeared, but on "
        "other processes, threads or ranks, or below severity hang)."
    )
    md += ["", "| rule | TP | FP | miss | wrong target | precision | recall |", "|---|---|---|---|---|---|---|"]
    for rule, tp, fp, miss, wrong in per_rule(results):
        precision, recall = ratio(tp, tp + fp), ratio(tp, tp + miss)
        md.append("| %s | %d | %d | %d | %d | %s | %s |" % (rule, tp, fp, miss, wrong, precision, recall))
    md += ["", "## Provenance", ""]
    for key, value in provenance(args):
        md.append("- %s: %s" % (key, value))
    with open(path, "w") as f:
        f.write("\n".join(md) + "\n")


def run_once(case, args, keep):
    """One run of a case: its verdict, why, the rules it matched and those it showed."""
    work = tempfile.mkdtemp(prefix="hb-corpus-%s-" % case["name"])
    report, verdict, reason, matched = {}, "ERROR", "", []
    try:
        roles, report = run_case(case, args, work)
        ok, reason, matched = judge(case, roles, report)
        verdict = "PASS" if ok else "FAIL"
    except CaseError as e:
        reason = str(e)
    except Exception as e:  # a broken case must not stop the others
        reason = "%s: %s" % (type(e).__name__, e)
    if keep:
        shutil.copytree(work, keep, dirs_exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    return {
        "verdict": verdict,
        "reason": " ".join(reason.split()),
        "matched": set(matched),
        "found": found_counts(report),
        "seen": rules_seen(report),
    }


def combine(case, runs):
    """A case's runs as one row: PASS only when every run passed; the rules any run showed."""
    failed = [r for r in runs if r["verdict"] != "PASS"]
    if not failed:
        verdict, reason = "PASS", ""
    else:
        verdict = "FAIL" if any(r["verdict"] == "FAIL" for r in failed) else "ERROR"
        first = next(r for r in failed if r["verdict"] == verdict)
        reason = first["reason"]
        if len(runs) > 1:
            reason = "%d of %d runs failed; %s" % (len(failed), len(runs), reason)
    found = {}
    for r in runs:
        for key, n in r["found"].items():
            found[key] = max(n, found.get(key, 0))
    return {
        "case": case,
        "verdict": verdict,
        "reason": reason,
        "matched": set.intersection(*[r["matched"] for r in runs]),
        "found": found_text(found),
        "seen": set.union(*[r["seen"] for r in runs]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hangbench", required=True, help="the hangbench binary")
    parser.add_argument("--programs", help="folder of the compiled C and MPI programs (dc_<case>)")
    parser.add_argument("--compile", metavar="DIR", help="compile the programs into DIR first (cc, mpicc)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this case")
    parser.add_argument("--markdown", metavar="FILE", help="also write the results as Markdown")
    parser.add_argument("--keep", metavar="DIR", help="keep each case's files under DIR/<case>/")
    parser.add_argument("--case-timeout", type=float, default=20.0, help="bound on one case, seconds")
    parser.add_argument("--roles-timeout", type=float, default=10.0, help="bound on the wait for the roles")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds between the roles and diagnose")
    parser.add_argument("--repeat", type=int, default=1, help="run each case this many times (PASS: every time)")
    parser.add_argument("--cases", metavar="DIR", help="the cases' folder (default: cases/ here; gpu_cases/ on a GPU)")
    parser.add_argument("--torchrun", default="torchrun", help="torchrun, for the GPU cases")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--workloads", default=os.environ.get("HANGBENCH_WORKLOADS_DIR"),
                        help="the built workloads, for cases that run one ({workloads} in launch.json)")
    parser.add_argument("--no-mpi", action="store_true", help="leave out the cases run under mpirun")
    parser.add_argument("--nccl-lib", help='the libnccl.so.2 of the cases whose launch.json says "needs": "nccl"')
    parser.add_argument("--no-nccl", action="store_true", help="leave out the cases that need NCCL")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs the Python cases")
    args = parser.parse_args()
    global CASES
    if args.cases:
        CASES = os.path.abspath(args.cases)
    if not os.access(args.hangbench, os.X_OK):
        parser.error("no hangbench binary at %s" % args.hangbench)
    # `diagnose --json` prints the JSON; should it take a file name instead, give it one.
    usage = command_output([args.hangbench, "diagnose", "--help"])
    args.json_takes_file = re.search(r"--json[ =](TEXT|FILE|PATH)", usage) is not None
    names = all_case_names()
    unknown = [n for n in args.only if n not in names]
    if unknown:
        parser.error("no such case: %s" % ", ".join(unknown))
    if args.only:
        names = [n for n in names if n in args.only]
    if args.no_mpi:
        names = [n for n in names if load_case(n)["launch"]["kind"] != "mpi"]
    if args.no_nccl:
        names = [n for n in names if load_case(n)["launch"].get("needs") != "nccl"]
    needs_nccl = [n for n in names if load_case(n)["launch"].get("needs") == "nccl"]
    if needs_nccl and not args.nccl_lib:
        parser.error("cases %s need NCCL: give --nccl-lib PATH, or --no-nccl to leave them out" % ", ".join(needs_nccl))
    if args.compile:
        compile_programs(args.compile, names)
        args.programs = args.compile

    results = []
    for name in names:
        case = load_case(name)
        runs = []
        for i in range(args.repeat):
            keep = None
            if args.keep:
                keep = os.path.join(args.keep, name) if args.repeat == 1 else os.path.join(args.keep, name, "run%d" % i)
            runs.append(run_once(case, args, keep))
            run = runs[-1]
            print("%-32s %s%s" % (name, run["verdict"], ("  " + run["reason"]) if run["reason"] else ""),
                  file=sys.stderr, flush=True)
        results.append(combine(case, runs))

    passed = sum(1 for r in results if r["verdict"] == "PASS")
    failed = len(results) - passed
    print_table(results)
    if args.markdown:
        write_markdown(args.markdown, results, args, passed, failed)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
