"""A second Blender in the whole suite: bpy 5.2.3 LTS on Python 3.13 (`.venv-bpy52/`, made by
`scripts/setup.sh test`), beside the suite's own bpy 5.0.1 on 3.11.

Why in every run: Blender's own code changes under the product between versions (5.2 compiles code itself, which the
run-time barrier once took for the program's; 5.2 lists UI folders among its IDs, which the stored-path scan once
took for scene paths; 4.2 and 4.5 crash or hang at interpreter exit). A shipped truth must run `ok` with no policy
finding from Blender's own code, and its audit must give S_val 1.0 with no finding, on a version other than the
one every other test uses. The full matrix (4.2, 4.5, 5.0, 5.2 and a Blender binary) is `benchmarks/blender_matrix.py`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PY = REPO / ".venv-bpy52" / "bin" / "python"


def _cli(args: list[str], timeout: float) -> dict:
    p = subprocess.run([str(PY), "-m", "physcodegym", *args, "--json"], capture_output=True, text=True,
                       timeout=timeout, cwd=REPO)
    assert p.stdout.strip(), f"no JSON from {args[0]} (rc {p.returncode}):\n{p.stderr[-3000:]}"
    return json.loads(p.stdout)


def test_a_shipped_truth_runs_and_audits_clean_on_bpy_5_2(tmp_path: Path) -> None:
    if not PY.is_file():
        pytest.fail(f"{PY.relative_to(REPO)} is missing: run `bash scripts/setup.sh test` (it needs Python 3.13)")
    out = tmp_path / "run"
    rec = _cli(["run", str(REPO / "tasks" / "packs" / "ball_bounce" / "truth.py"), "--out", str(out),
                "--mode", "bake_only"], timeout=600)
    assert rec["status"] == "ok", rec
    assert str(rec["blender_version"]).startswith("5.2"), rec  # the record names the Blender that ran it
    doc = _cli(["audit", str(out), "--task", "ball_bounce"], timeout=900)
    assert doc["status"] == "ok", doc
    assert doc["findings"] == [] and doc["S_val"] == 1.0, (doc["findings"], doc["S_val"])
