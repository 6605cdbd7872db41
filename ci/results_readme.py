#!/usr/bin/env python3
"""Writes results/README.md from what results/ holds, so that no figure in it is typed by hand.

Usage: python3 ci/results_readme.py [RESULTS_DIR] > RESULTS_DIR/README.md

Reads every run report (report.json or report.json.xz, schema hangbench.run/1), every
`hangbench validate` and `hangbench sweep` JSON, every `hangbench diagnose --json`
output (each plain or .json.xz), the Google Benchmark logs and each set's
logs/machine.txt. Each run gets its headline figures and links to its own reports
(report.md, report.html, release-table.md, ...); every other Markdown or HTML file of a
set is linked, and the rest (trial folders, logs, archives) is counted, not listed.
Each set's NOTES.md, written by hand by whoever ran the set, is linked, never quoted;
one of its lines of the form

    Superseded: `FOLDER/` by `SET/FOLDER/`

marks that run of the set as superseded by the other, and its section says so. The
test ResultsReadme.RegeneratesTheCommittedReadme (tests/CMakeLists.txt) fails when
the committed README differs from this script's output.
"""
import datetime
import json
import lzma
import os
import re
import sys


def utc(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)


def iso_to_utc(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def when(moment):
    return moment.strftime("%Y-%m-%d %H:%M")


def span_text(first, last):
    if first.date() == last.date():
        return f"{when(first)}–{last.strftime('%H:%M')} UTC"
    return f"{when(first)} – {when(last)} UTC"


def load_json(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        try:
            return json.load(f)
        except ValueError as e:  # a malformed file is named with its line, not a traceback
            line = getattr(e, "lineno", "?")
            sys.exit(f"results_readme: {path}: line {line}: not JSON ({e}); mend or remove it, then run this again")


def plural(n, word):
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}" + ("es" if word.endswith("s") else "s")


def is_json(name):
    return name.endswith(".json") or name.endswith(".json.xz")


def link(set_name, rel):
    """A Markdown link from results/README.md to SET/REL."""
    return f"[`{rel}`]({set_name}/{rel})"


def report_links(set_name, folder, names, files):
    """Links to the files NAMES of FOLDER (relative to the set) that the set holds."""
    rels = [os.path.join(folder, n) if folder else n for n in names]
    return [link(set_name, r) for r in rels if r in files]


def holm_family(doc, report_dir):
    """How many comparisons the report's Holm correction ran over, and how to say it.

    The report says so itself (report.md: "Holm's correction across the N comparisons
    of this run[ with trials on both sides]"); hangbench adjusts over the comparisons
    with trials on both sides since 069eb38, over every comparison before. Without a
    report.md, the count of comparisons with trials on both sides. Checked against
    the report's own p values: the smallest p, unless Holm's p is capped at 1, is
    multiplied by exactly N."""
    comparisons = doc["comparisons"]
    both = sum(1 for r in comparisons if r["a_n"] and r["b_n"])
    n, only_run = both, True
    md = os.path.join(report_dir, "report.md")
    if os.path.exists(md):
        with open(md, encoding="utf-8") as f:
            said = re.search(r"Holm's correction across the (\d+) comparisons of this run( with trials on both sides)?",
                             f.read())
        if said:
            n, only_run = int(said.group(1)), bool(said.group(2))
    tested = [r for r in comparisons if r["a_n"] and r["b_n"] and r["p_two_sided"] > 0 and r["p_holm"] < 1]
    if tested:
        smallest = min(tested, key=lambda r: r["log10_p_two_sided"])
        factor = round(10 ** (smallest["log10_p_holm"] - smallest["log10_p_two_sided"]))
        if factor != n:
            sys.exit(f"results_readme: {report_dir}: the report's Holm p values are over {factor} comparisons, "
                     f"its report.md says {n}")
    if n == 0 and both == 0:
        return "none tested: no comparison had trials on both sides"
    if only_run or n == both:
        return f"Holm over the {n} with trials on both sides"
    return (f"Holm over all {n}, as this report adjusted them (the {len(comparisons) - both} not run included: "
            "hangbench has left such comparisons out of the family since commit 069eb38)")


def machine_of(provenance):
    gpu = provenance.get("gpu") or "no GPU"
    if provenance.get("driver"):
        gpu += f", driver {provenance['driver']}"
    return f"{provenance.get('host') or 'unknown host'} ({gpu}; {provenance.get('kernel') or 'unknown kernel'})"


class SetFacts:
    """What one set's files say about when, where and with which hangbench they were made."""

    def __init__(self):
        self.moments = []
        self.machines = set()
        self.commits = {}  # commit -> files that record it

    def add(self, moment, provenance=None, path=None):
        if moment is not None:
            self.moments.append(moment)
        if provenance:
            self.machines.add(machine_of(provenance))
            commit = provenance.get("hangbench_commit")
            if commit:
                self.commits.setdefault(commit, []).append(path)


def run_section(rel, doc, facts, set_name, root, files, superseded):
    """A run report in prose and tables: what ran, on what, when, every count, links to its reports."""
    p = doc["provenance"]
    cells = doc["cells"]
    trials = doc["trials"]
    starts = [t["started_at"] for t in trials if t["started_at"] > 0]
    ends = [t["started_at"] + t["wall_s"] for t in trials if t["started_at"] > 0]
    facts.add(iso_to_utc(p["started_at"]), p, rel)
    if starts:
        facts.add(utc(min(starts)))
        facts.add(utc(max(ends)))
    total = {k: sum(c[k] for c in cells) for k in ("n", "hangs", "passed", "crashed", "failed", "infra")}
    verdicts = {}
    for c in cells:
        verdicts[c["verdict"] or "none"] = verdicts.get(c["verdict"] or "none", 0) + 1
    per_cell = sorted({c["n"] + c["infra"] for c in cells})
    per_cell_text = str(per_cell[0]) if len(per_cell) == 1 else f"{per_cell[0]}–{per_cell[-1]}"
    folder = os.path.dirname(rel)
    heading = (f"### `{folder}/`: matrix `{doc['matrix']['name']}`" if folder else
               f"### The run: matrix `{doc['matrix']['name']}`")
    out = [heading + (" (superseded)" if folder in superseded else ""), ""]
    if folder in superseded:
        later = superseded[folder]
        out += [f"**Superseded** by [`{later}/`]({later}/) (the set's NOTES.md says why); the figures below "
                "are this run's own.", ""]
    links = report_links(set_name, folder, ["report.md", "report.html"], files)
    if links:
        out += ["Reports: " + ", ".join(links) + ".", ""]
    status = "complete" if doc["complete"] else "**incomplete** (stopped before every planned trial ran)"
    out.append(
        f"`{doc['matrix']['path']}` (sha256 `{doc['matrix']['sha256'][:12]}`): {plural(len(cells), 'cell')}, "
        f"{plural(len(trials), 'trial')} ({per_cell_text} per cell), run {status}. "
        f"Trials from {span_text(utc(min(starts)), utc(max(ends)))} on {machine_of(p)}; "
        f"hangbench {p['hangbench_version']}, recorded commit `{p['hangbench_commit']}`."
    )
    out.append("")
    out.append(
        f"Outcomes: {total['hangs']} hung, {total['passed']} passed, **{total['crashed']} crashed**, "
        f"{total['failed']} failed, {total['infra']} INFRA. Verdicts: "
        + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
        + "."
    )
    plain = [c for c in cells if c["verdict"] == "CONFIRMED" and (c["crashed"] or c["failed"])]
    if plain:
        out += ["", f"In this report's own verdicts, {plural(len(plain), 'cell')} with crashed or failed trials "
                    "read plain CONFIRMED (hangbench's reports have said so beside the verdict since commit 63c5e68)."]
    notable = [c for c in cells if c["hangs"] or c["crashed"] or c["failed"] or c["infra"]
               or c["verdict"] not in ("CONFIRMED", "")]
    if notable:
        out += ["", "Cells that hung, crashed, failed or did not confirm their expectation "
                    f"({len(notable)} of {len(cells)}; every other cell: 0 hung, 0 crashed, 0 failed, CONFIRMED):", "",
                "| cell | expect | hangs | crashed | failed | 95% CI | verdict |", "|---|---|--:|--:|--:|---|---|"]
        for c in notable:
            ci = f"{100 * c['hang_ci95']['lo']:.1f}–{100 * c['hang_ci95']['hi']:.1f} %" if c["n"] else "n/a"
            verdict = c["verdict"] or "–"
            if c["crashed"] or c["failed"]:
                verdict += f", {c['crashed']} crashed, {c['failed']} failed"
            out.append(f"| `{c['id']}` | {c['expect'] or '–'} | {c['hangs']}/{c['n']} | {c['crashed']} | "
                       f"{c['failed']} | {ci} | {verdict} |")
    if doc["comparisons"]:
        family = holm_family(doc, os.path.join(root, folder))
        out += ["", f"Comparisons (Fisher's exact test, cells pooled per side, {family}; a comparison with no "
                    "trials on a side was not run):",
                "", "| comparison | a | b | p two-sided | Holm p |", "|---|--:|--:|--:|--:|"]
        for r in doc["comparisons"]:
            p_text, holm_text = ((r["p_two_sided_text"], r["p_holm_text"]) if r["a_n"] and r["b_n"]
                                 else ("not run", "not run"))
            out.append(f"| {r['name'] or 'a vs b'} | {r['a_hangs']}/{r['a_n']} | {r['b_hangs']}/{r['b_n']} | "
                       f"{p_text} | {holm_text} |")
    return out


def validate_section(folder, names, results, facts, set_name, files):
    rows = []
    for name in names:
        rel = os.path.join(folder, name)
        doc = load_json(os.path.join(results, rel))
        p = doc["provenance"]
        facts.add(iso_to_utc(p["started_at"]), p, rel)
        version = doc.get("inspect", {}).get("version") or "?"
        p_text = doc.get("candidate_vs_fixed", {}).get("p", "–") if doc["verdict"] == "vulnerable" else \
            doc.get("candidate_vs_vulnerable", {}).get("p", "–")
        stem = name[:-len(".json.xz")] if name.endswith(".json.xz") else name[:-len(".json")]
        shown = report_links(set_name, folder, [stem + ".md"], files)
        rows.append(f"| {shown[0] if shown else f'`{name}`'} | `{doc['library']}` | {version} | "
                    f"**{doc['verdict']}** | {doc['exit_code']} | "
                    f"{doc['seconds_to_verdict']:.1f} | {doc.get('trials_per_library', '–')} | {p_text} | "
                    f"`{p['hangbench_commit']}` | {p['started_at'][11:16]} |")
    out = [f"### `{folder}/`: `hangbench validate`", "",
           "p: Fisher's two-sided p of the library's hangs against the reference it was told from "
           "(the fixed one when vulnerable, else the vulnerable one). A file links to its report where one "
           "is kept beside it.", "",
           "| file | library | version | verdict | exit | seconds to verdict | trials per arm | p | commit | started (UTC) |",
           "|---|---|---|---|--:|--:|--:|--:|---|---|"]
    return out + rows


def diagnose_section(rel, doc, facts):
    captured = utc(doc["captured_at"])
    facts.add(captured)
    debuggers = sorted({pr["stacks"]["debugger"] for pr in doc["processes"] if pr.get("stacks", {}).get("debugger")})
    stacks = sum(1 for pr in doc["processes"] if pr.get("stacks", {}).get("threads"))
    counts = {}
    for f in doc["findings"]:
        counts[f["title"]] = counts.get(f["title"], 0) + 1
    titles = "; ".join(t + (f" (×{n})" if n > 1 else "") for t, n in counts.items()) or "no known hang shape"
    seconds = doc.get("read_seconds") or 0
    read = f"read in {seconds:.1f} s" if seconds >= 0.1 else (f"read in {seconds:.3f} s" if seconds else "read time not recorded")
    stack_text = (f"native stacks of {plural(stacks, 'process')} in the JSON "
                  f"({', '.join(os.path.basename(d) for d in debuggers)})" if stacks else "no native stacks in the JSON")
    line = (f"- `{rel}`: captured {when(captured)} UTC on {doc['host']}, {plural(len(doc['processes']), 'process')}, "
            f"{plural(len(doc['connections']), 'connection')}, {read}; {stack_text}; findings: {titles}.")
    if "provenance" in doc:
        facts.add(None, doc["provenance"], rel)
    return [line]


def hangs_header(doc):
    """The teardown's column, or that of the phase a catalog entry's reproducer hangs after."""
    phase = doc.get("teardown_phase") or ""
    return "teardown hangs" if not phase or phase.startswith("teardown") else f"hangs after `{phase}`"


def sweep_section(rel, doc, facts, set_name, files):
    p = doc["provenance"]
    facts.add(iso_to_utc(p["started_at"]) if p.get("started_at") else None, p, rel)
    refs = doc["references"]
    out = [f"### `{rel}`: `hangbench sweep` (exit {doc['exit_code']}, {doc['seconds']:.1f} s)", "",
           f"> {doc['sentence']}", "",
           f"{doc['trials_per_library']} trials per library, alpha {doc['alpha']}; references: vulnerable "
           f"{refs['vulnerable']['teardown_hangs']}/{refs['vulnerable']['counted']}, fixed "
           f"{refs['fixed']['teardown_hangs']}/{refs['fixed']['counted']} (p = {refs['p']}: the references "
           "against each other).", ""]
    links = report_links(set_name, os.path.dirname(rel), ["release-table.md", "release-table.html"], files)
    if links:
        out += ["Reports: " + ", ".join(links) + ".", ""]
    out += ["p: Fisher's two-sided p of the release's hangs against the reference it was told from (the fixed "
            "one when vulnerable, else the vulnerable one).", "",
            f"| release | package | CUDA | shutdown() in ncclSocketClose | {hangs_header(doc)} | stopped before | "
            "verdict | p |",
            "|---|---|---|---|--:|--:|---|--:|"]
    for r in doc["rows"]:
        if r.get("problem"):
            out.append(f"| `{r['library']}` | | | | | | not run: {r['problem']} | |")
            continue
        against = r.get("p_vs_fixed") if r["verdict"] == "vulnerable" else r.get("p_vs_vulnerable")
        out.append(f"| {r['release']} | {r['package']} | {r['cuda_build']} | {r['static']['socket_close_calls_shutdown']} | "
                   f"{r['teardown_hangs']}/{r['counted']} | {r['before_teardown']} | {r['verdict']} | "
                   f"{(against or {}).get('p', '–') if r['counted'] else '–'} |")
    for c in doc.get("history_changes", []):
        out.append("")
        out.append(f"History: {c['release']} " + (f"is new and {c['after']}." if not c["before"]
                                                  else f"changed from {c['before']} to {c['after']}."))
    return out


def soak_section(rel, doc, facts):
    """hangbench_soak's JSON (benchmarks/soak.cpp): kills, what was left after each, the store's checks."""
    p = doc["provenance"]
    facts.add(iso_to_utc(p["started_at"]) if p.get("started_at") else None, p, rel)
    kills = doc["per_kill"]
    by_kind = {}
    for k in kills:
        by_kind.setdefault(k.get("kind", "harness"), []).append(k)
    command = " ".join(p.get("soak_command", [])) or "not recorded"
    out = [f"### `{rel}`: soak (`{command}`)", "",
           f"Trial isolation: {p.get('trial_isolation') or 'not recorded'}; "
           f"{doc['wall_s']:.1f} s of wall time; verdict of every check: {'ok' if doc['ok'] else 'FAILED'}.", "",
           "| kills | n | rows at the kill | survivors 1 s after (max) | cgroups 1 s after (max) | "
           "cleared after (s, min–max) | integrity ok |",
           "|---|--:|--:|--:|--:|--:|--:|"]
    for kind, ks in sorted(by_kind.items()):
        cleared = [k["cleared_s"] for k in ks if k["cleared_s"] >= 0]
        span = f"{min(cleared):.3f}–{max(cleared):.3f}" if cleared else "never"
        rows = [k["rows_at_kill"] for k in ks]
        out.append(f"| {kind} | {len(ks)} | {min(rows)}–{max(rows)} | "
                   f"{max(k.get('survivors_after_1s', k['survivors_after_10s']) for k in ks)} | "
                   f"{max(k.get('cgroups_after_1s', k['cgroups_left']) for k in ks)} | {span} | "
                   f"{sum(k['integrity'] == 'ok' for k in ks)}/{len(ks)} |")
    outcomes = "; ".join(f"{cell} " + ", ".join(f"{o} {n}" for o, n in sorted(counts.items()))
                         for cell, counts in sorted(doc["outcomes"].items()))
    out += ["", f"Store at the end: {doc['rows']} rows of {doc['trials_planned']} planned, {doc['distinct_rows']} "
                f"distinct, run {doc['run_status']}, integrity {doc['integrity']}, "
                f"{doc['misclassified']} misclassified, {doc['bad_exit_codes']} bad exit codes. Outcomes: {outcomes}."]
    return out


def benchmark_section(rel, text):
    header = [line[2:] for line in text.splitlines() if line.startswith("# ")]
    rows = [line.split() for line in text.splitlines() if line.startswith("BM_")]
    out = [f"### `{rel}`: Google Benchmark", ""] + [f"{h}  " for h in header] + ["",
           "| benchmark | wall time | CPU time | iterations | counters |", "|---|--:|--:|--:|---|"]
    for r in rows:
        out.append(f"| `{r[0]}` | {r[1]} {r[2]} | {r[3]} {r[4]} | {r[5]} | {' '.join(r[6:])} |")
    return out


def machine_lines(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return "; ".join(lines)


SUPERSEDED = re.compile(r"^Superseded: `([^`]+?)/?` by `([^`]+?)/?`")


def superseded_runs(root):
    """{folder of the set: the set/folder that supersedes it}, from the set's NOTES.md."""
    path = os.path.join(root, "NOTES.md")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return {m.group(1): m.group(2) for m in map(SUPERSEDED.match, f) if m}


def set_section(results, name):
    root = os.path.join(results, name)
    files = []
    for dirpath, _, filenames in os.walk(root):
        for f in filenames:
            files.append(os.path.relpath(os.path.join(dirpath, f), root))
    files.sort()
    file_set = set(files)
    facts = SetFacts()
    covered = set()
    linked = set()
    superseded = superseded_runs(root)
    body = []
    for f in files:
        if os.path.basename(f) in ("report.json", "report.json.xz"):
            body += run_section(f, load_json(os.path.join(root, f)), facts, name, root, file_set, superseded) + [""]
            covered.add(f)
            linked.update(os.path.join(os.path.dirname(f), n) if os.path.dirname(f) else n
                          for n in ("report.md", "report.html"))
    unknown = set(superseded) - {os.path.dirname(f) for f in covered}
    if unknown:
        sys.exit(f"results_readme: {name}/NOTES.md marks {sorted(unknown)} superseded: no run report there")
    missing = [later for later in superseded.values() if not os.path.isdir(os.path.join(results, later))]
    if missing:
        sys.exit(f"results_readme: {name}/NOTES.md names {missing} as superseding: no such folder in {results}")
    for f in files:
        if os.path.basename(f) == "release-table.json":
            doc = load_json(os.path.join(root, f))
            if doc.get("schema") == "hangbench.sweep/1":
                body += sweep_section(f, doc, facts, name, file_set) + [""]
                covered.add(f)
                linked.update(os.path.join(os.path.dirname(f), n) if os.path.dirname(f) else n
                              for n in ("release-table.md", "release-table.html"))
    validate_dirs = {}
    for f in files:
        if is_json(f) and f not in covered and any("validate" in part for part in f.split(os.sep)[:-1]):
            doc = load_json(os.path.join(root, f))
            if "verdict" in doc and "seconds_to_verdict" in doc:
                validate_dirs.setdefault(os.path.dirname(f), []).append(os.path.basename(f))
                covered.add(f)
                stem = f[:-len(".json.xz")] if f.endswith(".json.xz") else f[:-len(".json")]
                linked.add(stem + ".md")
    for folder, names in sorted(validate_dirs.items()):
        body += validate_section(folder, sorted(names), root, facts, name, file_set) + [""]
    for f in files:
        if os.path.basename(f) == "soak.json":
            doc = load_json(os.path.join(root, f))
            if "per_kill" in doc and "provenance" in doc:
                body += soak_section(f, doc, facts) + [""]
                covered.add(f)
    diagnoses = []
    for f in files:
        if is_json(f) and f not in covered:
            doc = load_json(os.path.join(root, f))
            if doc.get("schema") == "hangbench.evidence/1" and "findings" in doc:
                diagnoses += diagnose_section(f, doc, facts)
                covered.add(f)
    if diagnoses:
        body += ["### Diagnoses and hung trials' evidence (`hangbench diagnose --json`, evidence.json)", ""] + diagnoses + [""]
    machine = os.path.join("logs", "machine.txt")
    if machine in files:
        body += [f"`logs/machine.txt`: {machine_lines(open(os.path.join(root, machine), encoding='utf-8').read())}", ""]
        covered.add(machine)
    # Every other report or table of the set (Markdown, HTML) is linked; the rest is counted.
    pages = [f for f in files if f.endswith((".md", ".html")) and f not in linked and f != "NOTES.md"]
    if pages:
        body += ["Other reports and tables here: " + ", ".join(link(name, f) for f in pages) + ".", ""]
    rest = [f for f in files if f not in covered and f not in linked and f not in pages and f != "NOTES.md"]
    if rest:
        body += [f"Not listed here: {plural(len(rest), 'other file')} (logs, raw outputs, trial folders, archives), "
                 f"in [`{name}/`]({name}/).", ""]
    head = [f"## `{name}/`", ""]
    if facts.moments:
        head.append(f"Made {span_text(min(facts.moments), max(facts.moments))} "
                    f"(from the reports' start times, trial times and capture times).")
    if facts.machines:
        head.append("Machines: " + "; ".join(sorted(facts.machines)) + ".")
    if facts.commits:
        head.append("hangbench commits the files record: " + "; ".join(
            f"`{c}` ({plural(len(paths), 'file')})" for c, paths in sorted(facts.commits.items())) + ".")
    if superseded:
        head.append("Superseded: " + "; ".join(f"`{old}/` by [`{new}/`]({new}/)" for old, new in sorted(superseded.items()))
                    + " (the set's NOTES.md says why).")
    if os.path.exists(os.path.join(root, "NOTES.md")):
        head.append(f"Notes by whoever ran it (written by hand): [`{name}/NOTES.md`]({name}/NOTES.md).")
    return (min(facts.moments) if facts.moments else None), head + [""] + body


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else "results"
    sections = []
    loose = []
    for name in sorted(os.listdir(results)):
        path = os.path.join(results, name)
        if os.path.isdir(path):
            sections.append(set_section(results, name))
        elif name.endswith(".txt"):
            loose.append(name)
    sections.sort(key=lambda s: (s[0] is None, s[0] or 0, s[1][0]))
    out = ["# Evidence from real runs", "",
           "Generated by `python3 ci/results_readme.py results > results/README.md` from the files below; the "
           "test `ResultsReadme.RegeneratesTheCommittedReadme` fails when this file and the script's output differ. "
           "Every figure, date, machine and commit here is read from a run's own JSON report (`report.json`, kept "
           "xz-compressed as `report.json.xz` where large: `xz -d -k` restores it byte for byte), a `validate` or "
           "`diagnose` JSON, a benchmark log or a set's `logs/machine.txt`. Written by hand: only each set's "
           "`NOTES.md` (why the set was run and what explains its numbers), linked below. In the files, the "
           "machines' working folders read `<repo>` (the repository copy) and `<out>` (the run's output folder).",
           "",
           "A recorded commit is the one the binary's build folder knew; until commit 3ac7a7c it was read when the "
           "folder was configured, so a set's NOTES.md says when the code that ran was newer.", ""]
    for _, lines in sections:
        out += lines
    for name in loose:
        text = open(os.path.join(results, name), encoding="utf-8").read()
        if "BM_" in text:
            out += benchmark_section(name, text) + [""]
    notes = sorted(n for n in os.listdir(results) if n.startswith("NOTES-") and n.endswith(".md"))
    if notes:
        out += ["Notes on the files above (written by hand): " + ", ".join(f"[`{n}`]({n})" for n in notes) + ".", ""]
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
