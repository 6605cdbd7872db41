#!/usr/bin/env python3
"""Refuses a results folder whose recorded hangbench commit is not in this repository's history.

Usage: python3 ci/check_results_commits.py [RESULTS_DIR [REPO_DIR]]

Reads the commit every file of RESULTS_DIR records: "hangbench_commit" anywhere in
each JSON (plain or .json.xz: run reports, validate, sweep, diagnose, evidence, soak)
and the "hangbench 0.1.0 (<commit>)" or "0.1.0 (<commit>)" lines of each machine.txt,
the same commits ci/results_readme.py lists per set. A commit reads "<sha12>",
"<sha12>-dirty+diff.<sha12 of the diff>" (cmake/git_commit.cmake) or, from binaries
built before the diff was hashed, "<sha12>-dirty". Each <sha12> must be a commit that
HEAD of REPO_DIR (default: the repository this script is in) descends from; anything
else ("unknown", a commit of no branch here) is refused with the files that record it.
A bare "-dirty" passes but is listed: the code that ran was that commit plus a diff
nobody recorded, and the set's NOTES.md is the only account of it.

It needs git and the repository's full history: without git or .git, or in a
shallow clone that lacks a commit, it fails and says so (it never passes unchecked).
Exit 0: every commit checked; 1: a commit refused or one that could not be checked.
"""
import json
import lzma
import os
import re
import subprocess
import sys

COMMIT = re.compile(r"^([0-9a-f]{12})(-dirty(\+diff\.([0-9a-f]{12}|unknown))?)?$")
MACHINE_LINE = re.compile(r"(?:hangbench )?\d+\.\d+\.\d+ \(([^()\s]+)\)")


def recorded_commits(value, out):
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "hangbench_commit" and isinstance(item, str):
                out.append(item)
            else:
                recorded_commits(item, out)
    elif isinstance(value, list):
        for item in value:
            recorded_commits(item, out)


def commits_by_set(results):
    """{set: {commit: [files]}}, and the files that could not be read."""
    sets, unreadable = {}, []
    for dirpath, dirnames, filenames in os.walk(results):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, results)
            found = []
            if name.endswith(".json") or name.endswith(".json.xz"):
                try:
                    opener = lzma.open if name.endswith(".xz") else open
                    with opener(path, "rt", encoding="utf-8") as f:
                        recorded_commits(json.load(f), found)
                except (OSError, EOFError, lzma.LZMAError, UnicodeDecodeError, json.JSONDecodeError) as e:
                    unreadable.append(f"{rel}: {e}")
                    continue
            elif name == "machine.txt":
                with open(path, encoding="utf-8", errors="replace") as f:
                    found = MACHINE_LINE.findall(f.read())
            top = rel.split(os.sep)[0] if os.sep in rel else "."
            for commit in found:
                sets.setdefault(top, {}).setdefault(commit, []).append(rel)
    return sets, unreadable


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(here, "..", "results"))
    repo = sys.argv[2] if len(sys.argv) > 2 else os.path.normpath(os.path.join(here, ".."))
    if len(sys.argv) > 3 or (len(sys.argv) > 1 and sys.argv[1].startswith("-")):
        sys.stdout.write(__doc__)
        return 2
    if not os.path.isdir(results):
        print(f"check_results_commits: {results}: not a folder")
        return 1
    try:
        probe = git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    except FileNotFoundError:
        print("check_results_commits: git is not installed: the recorded commits cannot be checked (this is a failure, "
              "not a skip)")
        return 1
    if probe.returncode != 0:
        print(f"check_results_commits: {repo} is not a git checkout with a HEAD ({probe.stderr.strip()}): the recorded "
              "commits cannot be checked (this is a failure, not a skip)")
        return 1
    shallow = git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"

    sets, unreadable = commits_by_set(results)
    refused, legacy_dirty, checked = [], [], 0
    verdicts = {}  # sha -> None when HEAD descends from it, else why not
    for name, commits in sorted(sets.items()):
        for commit, files in sorted(commits.items()):
            where = f"{name}/: `{commit}` ({len(files)} file{'s' if len(files) != 1 else ''}, e.g. {files[0]})"
            match = COMMIT.match(commit)
            if not match:
                refused.append(f"{where}: not a commit (want <sha12>, <sha12>-dirty+diff.<sha12> or <sha12>-dirty)")
                continue
            sha = match.group(1)
            if sha not in verdicts:
                full = git(repo, "rev-parse", "--verify", "-q", f"{sha}^{{commit}}")
                if full.returncode != 0:
                    verdicts[sha] = "no such commit in this repository" + (
                        " (the clone is shallow: `git fetch --unshallow` and run again)" if shallow else "")
                elif git(repo, "merge-base", "--is-ancestor", full.stdout.strip(), "HEAD").returncode != 0:
                    verdicts[sha] = "a commit, but not in HEAD's history"
                else:
                    verdicts[sha] = None
            if verdicts[sha]:
                refused.append(f"{where}: {verdicts[sha]}")
                continue
            checked += 1
            if match.group(2) == "-dirty":
                legacy_dirty.append(where)
    for line in unreadable:
        refused.append(f"{line}: unreadable, its commit cannot be checked")

    print(f"check_results_commits: {checked} recorded commit(s) of {len(sets)} set(s) found in HEAD's history"
          + (" (shallow clone)" if shallow else ""))
    if legacy_dirty:
        print(f"{len(legacy_dirty)} record a bare '-dirty' (built before the diff was hashed; what ran is that commit "
              "plus an unrecorded diff, see the set's NOTES.md):")
        for line in legacy_dirty:
            print(f"  {line}")
    if refused:
        print(f"REFUSED: {len(refused)}:")
        for line in refused:
            print(f"  {line}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
