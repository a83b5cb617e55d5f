"""How often the audit's re-simulation fails to repeat a truth's own bake (the reproducibility of SPH liquids).

The audit re-bakes the saved scene in a worker and compares it with the bake (`probes.branches.resimulation`). For a
truth, anything but 0.0 is a re-bake that landed in another of the solver's outcomes: harmless to the verdict
(the comparison is chaos-robust) but a sign that some simulating child does not start the way the sandbox's
child does (`core.determinism`). The drift is rare (measured on hose_jet before the workers were pinned and their
layout fixed: 1 audit in 5 on two threads, 1 in 11 on one CPU with a random layout), so it takes many repeats.

    .venv/bin/python benchmarks/resim_repeat.py [--task hose_jet] [--repeats 16] [--vary-paths]

`--vary-paths` copies the run folder to paths of other lengths and grows the environment between audits (the
worker inherits both). Prints one JSON line: per audit its seconds, findings and every re-simulated thing whose
departure was not 0.0; then how many audits drifted.
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

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default="hose_jet")
    ap.add_argument("--repeats", type=int, default=16)
    ap.add_argument("--vary-paths", action="store_true")
    a = ap.parse_args()
    from physcodegym.probes.audit.audit import audit_path
    from physcodegym.sandbox.runner import run_program

    with tempfile.TemporaryDirectory(prefix="pcg_resim_") as td:
        base = Path(td) / "run"
        t = time.perf_counter()
        rec = run_program(ROOT / "tasks" / "packs" / a.task / "truth.py", base, mode="bake_only")
        bake_s = time.perf_counter() - t
        if not (base / "scene.blend").is_file():
            sys.exit(f"bake failed: {rec.status} {rec.reason}")
        audits = []
        for i in range(a.repeats):
            path = base
            if a.vary_paths:
                path = Path(td) / ("p" * (1 + 7 * i)) / "run"
                shutil.copytree(base, path)
                os.environ["PCG_RESIM_PAD"] = "x" * (37 * i)
            t = time.perf_counter()
            rep = audit_path(path)
            resim = rep.meta["resimulation"]
            things = {**resim.get("objects", {}), **resim.get("particles", {})}
            drift = {k: v.get("max_m", v.get("bulk_max_m")) for k, v in things.items()
                     if v.get("max_m", v.get("bulk_max_m"))}
            audits.append({"seconds": round(time.perf_counter() - t, 2), "findings": [f.kind for f in rep.findings],
                           "worker_cpus": resim.get("worker_cpus"), "drift_m": drift})
            print(json.dumps(audits[-1]), file=sys.stderr, flush=True)
            if a.vary_paths:
                shutil.rmtree(path.parent)
    print(json.dumps({"benchmark": "resim_repeat", "task": a.task, "bake_s": round(bake_s, 2), "audits": audits,
                      "drifted": sum(1 for x in audits if x["drift_m"]),
                      "with_findings": sum(1 for x in audits if x["findings"])}))


if __name__ == "__main__":
    main()
