"""Cost of the wall around trusted children (docs/THREAT_MODEL.md) on `audit --task` and `score`, per shipped truth.

For each task: its truth is run once (`physcodegym run TRUTH --mode full`, kept in WORK/<task>), then
`physcodegym audit RUN --task T --json` and `physcodegym score --task T --candidate RUN --json --metrics ...` are
timed walled (the default) and with `--unsafe-no-isolation`, alternating, N times each; the medians are reported
with the overhead in seconds and as a share of the walled score's time. Also checks what must not change: S_val
1.0 and no finding, walled or not. Whole commands are noisy on a shared machine, so `start_cost` also measures the
wall's own cost per walled child (bwrap's namespaces and binds around a bpy start), alternating with a bare start.

Usage: `python benchmarks/wall_bench.py [--tasks ball_bounce,ball_dominoes] [--n 2] [--work DIR]
[--metrics ssim,motion,val]`. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "physcodegym"]


def _run(argv: list[str]) -> tuple[float, dict]:
    t = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    dt = time.perf_counter() - t
    try:
        doc = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}
    except json.JSONDecodeError:
        doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    if p.returncode != 0:
        doc = {"error": p.stderr[-500:], **(doc if isinstance(doc, dict) else {})}
    return dt, doc


def _s_val(doc: dict) -> tuple[float | None, list[str]]:
    """(S_val, finding kinds) of an audit or a score document."""
    if "metrics" not in doc:  # audit document
        return doc.get("S_val"), [f.get("kind") for f in doc.get("findings") or []]
    det = (doc.get("details") or {}).get("S_val") or {}
    return (doc.get("metrics") or {}).get("S_val"), list(det.get("findings") or [])


def start_cost(n: int) -> dict:
    """The wall's own cost per walled child, which is what it adds to an audit (one walled child) and a score (one
    audit): `python -c "import bpy"` behind the wall vs the same child with the same environment unwalled,
    alternating, medians of n. Much less noisy than whole commands on a shared machine."""
    from physcodegym.core.limits import run_limited
    from physcodegym.sandbox import wall

    code = [sys.executable, "-c", "import bpy"]
    w, b = [], []
    for _ in range(n):
        with wall.scratch_folder() as s:
            w.append(wall.run_walled(code, scratch=s, readonly=[ROOT / "tasks"], timeout_s=120, memory_mb=4096).seconds)
        with wall.scratch_folder() as s:
            b.append(run_limited(code, timeout_s=120, memory_mb=4096, env=wall.walled_env(s), cwd=str(s)).seconds)
    return {"walled_s": round(statistics.median(w), 3), "bare_s": round(statistics.median(b), 3),
            "overhead_s": round(statistics.median(w) - statistics.median(b), 3), "n": n}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="ball_bounce,ball_dominoes")
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--work", default=None)
    ap.add_argument("--metrics", default="ssim,motion,val", help="score metrics (LPIPS adds time on both sides)")
    a = ap.parse_args()
    work = Path(a.work or tempfile.mkdtemp(prefix="pcg_wall_bench_"))
    out: dict = {"n": a.n, "metrics": a.metrics, "start_cost": start_cost(max(5, 3 * a.n)), "tasks": {}}
    for task in a.tasks.split(","):
        run = work / task
        if not (run / "run.json").is_file():
            _run([*CLI, "run", str(ROOT / "tasks" / "packs" / task / "truth.py"), "--out", str(run), "--mode", "full",
                  "--json"])
        rec = json.loads((run / "run.json").read_text())
        if rec.get("status") != "ok":
            out["tasks"][task] = {"error": f"truth run {rec.get('status')}: {rec.get('reason')}"}
            continue
        audit = [*CLI, "audit", str(run), "--task", task, "--json"]
        score = [*CLI, "score", "--task", task, "--candidate", str(run), "--json", "--metrics", a.metrics]
        row: dict = {}
        for name, argv in (("audit", audit), ("score", score)):
            w, b, checks = [], [], []
            for _ in range(a.n):
                dt, doc = _run(argv)
                w.append(dt)
                checks.append(("walled", *_s_val(doc)))
                dt, doc = _run([*argv, "--unsafe-no-isolation"])
                b.append(dt)
                checks.append(("unsafe", *_s_val(doc)))
            mw, mb = statistics.median(w), statistics.median(b)
            row[name] = {"walled_s": round(mw, 2), "unsafe_s": round(mb, 2), "overhead_s": round(mw - mb, 2),
                         "runs_walled": [round(x, 2) for x in w], "runs_unsafe": [round(x, 2) for x in b],
                         "s_val": sorted({(c[0], c[1]) for c in checks}),
                         "findings": sorted({k for c in checks for k in c[2]})}
        row["audit_overhead_share_of_score"] = round(row["audit"]["overhead_s"] / row["score"]["walled_s"], 4)
        row["score_overhead_share"] = round(row["score"]["overhead_s"] / row["score"]["walled_s"], 4)
        row["start_cost_share_of_score"] = round(out["start_cost"]["overhead_s"] / row["score"]["walled_s"], 4)
        out["tasks"][task] = row
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
