"""Cost of one counterfactual branch relative to one baseline bake of the same scene (target <= 1.2x).

Both are one fresh worker process on the same saved scene: the baseline frees and re-bakes every
cache unchanged, the counterfactual applies an intervention and re-bakes. Prints one JSON line.

    .venv/bin/python benchmarks/counterfactual_bench.py [--task ball_dominoes] [--repeat 3]
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


def _worker(blend: Path, out: Path, interventions: list[dict], mapping: dict[str, str], force: bool) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "physcodegym.probes.rebake.cf_worker", "--blend", str(blend), "--out", str(out),
           "--interventions", json.dumps(interventions), "--mapping", json.dumps(mapping)]
    if force:
        cmd.append("--force-rebake")
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
    wall = time.perf_counter() - t
    return wall, json.loads(out.with_suffix(".json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default="ball_dominoes")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    from physcodegym.tasks.loader import load_task
    from physcodegym.verifier.selftest import truth_blend, truth_mapping

    lt = load_task(a.task)
    cfs = [c for c in lt.task.rubric.criteria if c.counterfactual is not None]
    iv = cfs[0].counterfactual.intervention.model_dump(mode="json") if cfs else {"kind": "scale_gravity", "params": {"factor": 0.5}}
    with tempfile.TemporaryDirectory(prefix="pcg_cfbench_") as td:
        wd = Path(td)
        blend = truth_blend(lt, wd)
        mapping = truth_mapping(lt)
        base_w, cf_w, base_b, cf_b = [], [], [], []
        for i in range(a.repeat):
            w, r = _worker(blend, wd / f"b{i}.npz", [], mapping, True)
            base_w.append(w)
            base_b.append(r.get("bake_s", 0.0))
            w, r = _worker(blend, wd / f"c{i}.npz", [iv], mapping, False)
            cf_w.append(w)
            cf_b.append(r.get("bake_s", 0.0))
    bw, cw = statistics.median(base_w), statistics.median(cf_w)
    print(json.dumps({
        "benchmark": "counterfactual_vs_baseline_bake", "task": lt.id, "intervention": iv["kind"], "repeat": a.repeat,
        "baseline_wall_s": round(bw, 3), "counterfactual_wall_s": round(cw, 3), "ratio_wall": round(cw / bw, 3),
        "baseline_bake_s": round(statistics.median(base_b), 4), "counterfactual_bake_s": round(statistics.median(cf_b), 4),
        "ratio_bake": round(statistics.median(cf_b) / max(statistics.median(base_b), 1e-9), 3), "target_ratio": 1.2,
    }))


if __name__ == "__main__":
    main()
