"""Time the bake-only re-run + fresh-process sampling of shipped tasks and summarise their build records.

    .venv/bin/python benchmarks/tasks_bench.py [TASK ...]     # default: every shipped task

Prints one JSON line: per task the category, the re-run seconds (bake-only run + sampling, measured now),
and from build.json the bake/render seconds of the last build, the reference SSIM and the folder size.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from physcodegym.authoring.build import PACKS_DIR, shipped_ids
from physcodegym.authoring.verify import rerun_samples


def main() -> None:
    ids = sys.argv[1:] or shipped_ids()
    rows = []
    for tid in ids:
        rec = json.loads((PACKS_DIR / tid / "build.json").read_text())
        with tempfile.TemporaryDirectory() as td:
            t0 = time.monotonic()
            rerun_samples(PACKS_DIR / tid, Path(td))
            rerun = time.monotonic() - t0
        rows.append({
            "id": tid, "category": rec["category"], "subcategory": rec["subcategory"], "rerun_s": round(rerun, 2),
            "build_bake_s": rec["bake_seconds"], "build_render_s": rec["render_seconds"],
            "ssim_mean": rec["reference_ssim"]["ssim_mean"], "ssim_min": rec["reference_ssim"]["ssim_min"],
            "size_mb": round(rec["total_bytes"] / 1e6, 3),
        })
    print(json.dumps({"benchmark": "tasks", "tasks": rows, "total_size_mb": round(sum(r["size_mb"] for r in rows), 3)}))


if __name__ == "__main__":
    main()
