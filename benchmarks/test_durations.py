"""Where the test suite spends its time: per test, per folder and per xdist group, from a pytest run's output.

    make test PYTEST_ARGS="--durations=0 --junitxml=/tmp/junit.xml" 2>&1 | tee /tmp/test.log
    .venv/bin/python benchmarks/test_durations.py /tmp/junit.xml [--log /tmp/test.log] [--label NAME] [--write]

Reads a JUnit XML file (or the `--durations=0` table of a pytest log; both give set-up, call and tear-down per
test) and prints one JSON line: the wall-clock seconds of the run when the log has pytest's closing line, the
summed test seconds, per folder (set-up shown apart from the call) and the slowest 40 tests. `--write` also stores it as benchmarks/results/test_durations.json, which
tests/conftest.py reads to hand the longest groups out first (longest-processing-time-first scheduling, so the
run does not end on one worker finishing a long group alone). The numbers are a measurement of one machine at one
time, not a limit: no test asserts on them.

`--merge` refreshes the stored table from a run of a few test files only: every test of those files is replaced
by this run's figures (a test no longer collected there drops out), every other test keeps its stored figure.
`--scale F` multiplies this run's seconds first: a run on a busy machine is slower throughout, and the scheduler
only needs the tests' relative sizes, so F (stored seconds / this run's seconds, on tests both measured with
nothing changed) keeps one table on one scale.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from physcodegym.core import atomic

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "test_durations.json"
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)s (setup|call|teardown)\s+(\S.*)$")
_CLOSING = re.compile(r"in (\d+(?:\.\d+)?)s(?: \(\d+:\d\d:\d\d\))?\s*=*$")


def from_junit(path: Path) -> dict[str, dict[str, float]]:
    """{nodeid: {"call": s}} from JUnit XML (its `time` is set-up + call + tear-down; reported as `call`)."""
    out: dict[str, dict[str, float]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        file = module + ".py" if not module.endswith(".py") else module
        nodeid = f"{file}::{case.get('name')}"
        out[nodeid] = {"call": float(case.get("time") or 0.0)}
    return out


def from_log(text: str) -> dict[str, dict[str, float]]:
    """{nodeid: {phase: s}} from the `--durations` table of a pytest log."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for line in text.splitlines():
        m = _DURATION.match(line.strip())
        if m:
            out[m.group(3)][m.group(2)] = out[m.group(3)].get(m.group(2), 0.0) + float(m.group(1))
    return dict(out)


def wall_seconds(text: str) -> list[float]:
    """The closing `N passed ... in S s` of each pytest run in the log (the parallel phase, then the serial one)."""
    return [float(m.group(1)) for line in text.splitlines() if (m := _CLOSING.search(line.strip()))
            and re.search(r"\b(passed|failed|error)", line)]


def summarise(tests: dict[str, dict[str, float]], label: str, walls: list[float]) -> dict:
    folders: dict[str, dict[str, float]] = defaultdict(lambda: {"setup": 0.0, "call": 0.0, "teardown": 0.0, "tests": 0})
    totals = {}
    for nodeid, phases in tests.items():
        total = sum(phases.values())
        totals[nodeid] = round(total, 2)
        parts = nodeid.split("::")[0].split("/")
        folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
        f = folders[folder]
        for phase, s in phases.items():
            f[phase] += s
        f["tests"] += 1
    slowest = sorted(totals.items(), key=lambda kv: -kv[1])[:40]
    return {
        "label": label,
        "wall_seconds": walls,
        "tests": len(tests),
        "test_seconds": round(sum(totals.values()), 1),
        "folders": {k: {p: round(v, 1) if isinstance(v, float) else v for p, v in f.items()}
                    for k, f in sorted(folders.items(), key=lambda kv: -sum(x for x in kv[1].values()))},
        "slowest": [{"test": k, "seconds": v} for k, v in slowest],
        "per_test": totals,
    }


def merged(run: dict[str, dict[str, float]], stored: dict[str, float]) -> dict[str, dict[str, float]]:
    """The stored per-test seconds with every test of the files `run` measured replaced by `run`'s figures."""
    files = {nodeid.split("::")[0] for nodeid in run}
    out = {k: {"call": float(v)} for k, v in stored.items() if k.split("::")[0] not in files}
    out.update(run)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="JUnit XML of the run, or a pytest log with --durations=0")
    ap.add_argument("--log", type=Path, help="the run's log, for its wall-clock closing lines")
    ap.add_argument("--label", default="", help="what was measured (machine state, commit)")
    ap.add_argument("--write", action="store_true", help=f"also write {OUT.relative_to(REPO)}")
    ap.add_argument("--merge", action="store_true", help="replace only the tests of the files this run measured")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply this run's seconds (see the docstring)")
    args = ap.parse_args(argv)
    text = args.source.read_text(errors="replace")
    tests = from_junit(args.source) if text.lstrip().startswith("<") else from_log(text)
    tests = {k: {p: s * args.scale for p, s in v.items()} for k, v in tests.items()}
    if args.merge:
        tests = merged(tests, json.loads(OUT.read_text()).get("per_test", {}) if OUT.is_file() else {})
    log = args.log.read_text(errors="replace") if args.log else ("" if text.lstrip().startswith("<") else text)
    doc = summarise(tests, args.label, wall_seconds(log))
    if args.write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(OUT, json.dumps(doc, indent=1) + "\n")
    brief = {k: v for k, v in doc.items() if k != "per_test"}
    json.dump(brief, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
