"""Batch throughput (units per minute) with 1 and 2 workers on the bundled set, and the resume overhead.

    .venv/bin/python benchmarks/batch_bench.py [--workers 1,2] [--config NAME ...] [--task ID ...] [--metrics ssim,motion]

Each worker count runs the same units into a fresh results folder; then a `--resume` over the finished folder
measures the overhead of discovery + hashing + skipping (no unit re-runs). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default=str(REPO / "tasks" / "packs"))
    ap.add_argument("--submissions", default=str(REPO / "submissions"))
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--config", action="append", default=None, help="only these configurations")
    ap.add_argument("--task", action="append", default=None, help="only these task ids")
    ap.add_argument("--metrics", default=None, help="metrics to score (default all)")
    ap.add_argument("--keep", action="store_true", help="keep the results folders")
    a = ap.parse_args(argv)
    from physcodegym.batch.scheduler import run_batch
    from physcodegym.evaluator.scoring import parse_metrics

    metrics = parse_metrics(a.metrics) if a.metrics else None
    work = Path(tempfile.mkdtemp(prefix="pcg_batch_bench_"))
    tasks = Path(a.tasks)
    if a.task:  # a task subset: a folder of links to the chosen task folders
        tasks = work / "tasks"
        tasks.mkdir()
        for t in a.task:
            os.symlink(Path(a.tasks).resolve() / t, tasks / t)
    res: dict = {"bench": "batch_throughput", "configs": a.config, "tasks": a.task, "metrics": metrics, "cpus": os.cpu_count(), "runs": []}
    try:
        for w in [int(x) for x in a.workers.split(",")]:
            out = work / f"w{w}"
            t0 = time.perf_counter()
            doc = run_batch(tasks, Path(a.submissions), out, workers=w, metrics=metrics, configs=a.config, progress=False)
            dt = time.perf_counter() - t0
            t1 = time.perf_counter()
            again = run_batch(tasks, Path(a.submissions), out, workers=w, metrics=metrics, configs=a.config, progress=False, resume=True)
            resume_s = time.perf_counter() - t1
            res["runs"].append({"workers": w, "units": doc["units"], "seconds": round(dt, 2),
                                "units_per_minute": round(60.0 * doc["units"] / dt, 3) if dt > 0 else None,
                                "by_status": doc["by_status"], "resume_seconds": round(resume_s, 3),
                                "resume_reran": again["ran"]})
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
