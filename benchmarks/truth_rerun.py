"""Shipped truths re-run the way a submission is scored: a full isolated run (bake + 240 rendered frames), then
`score` with S_ssim, S_mot and S_val against the task's own reference.

A truth program is the reconstruction the task was made from, so it must come out clean (S_val 1.0, no
finding) on the path `score` and `batch` take, not only in a bake-only audit; and its re-run must reproduce
its own reference video (S_mot >= 0.9; the sandbox runner makes the particle solver reproducible, so 1.0 is expected).

    .venv/bin/python benchmarks/truth_rerun.py [--keep DIR] [TASK ...]     # default: every shipped task

Prints one JSON line: per task run_s, score_s, S_val, S_mot, S_ssim, the finding kinds charged and the failed
criteria; then the tasks that missed either target.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "physcodegym"]


def _json(cmd: list[str]) -> tuple[dict, float, int]:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    dt = time.perf_counter() - t
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        doc = {"error": p.stderr[-2000:]}
    return doc, dt, p.returncode


def one(task: str, work: Path) -> dict:
    from physcodegym.tasks.loader import load_task

    lt = load_task(task)
    out = work / task
    run, run_s, rc = _json([*CLI, "run", str(lt.truth_program), "--out", str(out), "--timeout", "1800", "--json"])
    row: dict = {"task": task, "run_status": run.get("status"), "run_s": round(run_s, 1)}
    if rc != 0 or run.get("status") != "ok":
        return {**row, "error": run.get("log_tail") or run.get("error") or run}
    sc, score_s, rc = _json([*CLI, "score", "--task", task, "--candidate", str(out), "--metrics", "ssim,motion,val",
                             "--json"])
    m = sc.get("metrics", {})
    val = (sc.get("details") or {}).get("S_val") or {}
    charges = (val.get("aggregation") or {}).get("finding_charges") or val.get("finding_charges") or []
    failed = [c["id"] for c in val.get("criteria", []) if c.get("passed") is False]
    return {**row, "score_s": round(score_s, 1), "S_val": m.get("S_val"), "S_mot": m.get("S_mot"),
            "S_ssim": m.get("S_ssim"), "charged": sorted({c["kind"] for c in charges}), "failed": failed,
            "missing": sc.get("missing", {}), **({"score_error": sc.get("error")} if rc != 0 else {})}


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", default=None, help="keep the run folders here (default: a temporary folder)")
    ap.add_argument("tasks", nargs="*")
    a = ap.parse_args(argv)
    tasks = a.tasks or sorted(p.name for p in (ROOT / "tasks" / "packs").iterdir() if (p / "task.json").is_file())
    rows = []
    with tempfile.TemporaryDirectory(prefix="pcg_truth_rerun_") as td:
        work = Path(a.keep) if a.keep else Path(td)
        work.mkdir(parents=True, exist_ok=True)
        for t in tasks:
            r = one(t, work)
            rows.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    missed = [r["task"] for r in rows if r.get("S_val") != 1.0 or (r.get("S_mot") or 0.0) < 0.9]
    print(json.dumps({"tasks": rows, "targets": {"S_val": 1.0, "S_mot_min": 0.9}, "missed": missed}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
