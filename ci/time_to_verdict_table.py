#!/usr/bin/env python3
"""Time to verdict of `hangbench validate`, from the JSON files a run of
ci/h200_evidence.sh's `validate` part wrote (NAME.json, roundN-NAME.json,
NAME-fresh.json): one Markdown row per library and kind of run.

    ci/time_to_verdict_table.py VALIDATE_DIR > VALIDATE_DIR/time-to-verdict.md
"""
import json
import re
import statistics
import sys
from pathlib import Path


def main(folder: Path) -> int:
    rows = {}
    for path in sorted(folder.glob("*.json")):
        try:
            verdict = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            print(f"{path}:{error.lineno}: not JSON ({error.msg})", file=sys.stderr)
            return 2
        name = re.sub(r"^round\d+-", "", path.stem)
        fresh = name.endswith("-fresh") or not all(arm["reused"] for arm in verdict["arms"][1:])
        name = name.removesuffix("-fresh")
        key = (name, "references run too" if fresh else "references from the store")
        rows.setdefault(key, []).append(verdict)
    if not rows:
        print(f"{folder}: no validate JSON files", file=sys.stderr)
        return 2
    print("| library | references | runs | verdict (exit) | seconds to verdict: min / median / max | p vs other reference |")
    print("|---|---|--:|---|---|---|")
    for (name, kind), runs in sorted(rows.items()):
        seconds = sorted(run["seconds_to_verdict"] for run in runs)
        verdicts = sorted({f'{run["verdict"]} ({run["exit_code"]})' for run in runs})
        p = sorted({run["candidate_vs_vulnerable"]["p"] if run["exit_code"] == 0 else run["candidate_vs_fixed"]["p"]
                    for run in runs})
        print(f"| {name} | {kind} | {len(runs)} | {', '.join(verdicts)} | "
              f"{seconds[0]:.1f} / {statistics.median(seconds):.1f} / {seconds[-1]:.1f} | {', '.join(p)} |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
