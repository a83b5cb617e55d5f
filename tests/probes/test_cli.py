"""`physcodegym audit` on saved run folders (fresh process, real .blend), plots, and the screen-motion check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from physcodegym.testing import demo_scenes as D


def _save_run(run: Path, builder, program: str | None = None, render: bool = False) -> Path:
    import bpy

    run.mkdir(parents=True, exist_ok=True)
    sc = builder()
    try:
        if render:
            sc.render.engine = "BLENDER_WORKBENCH"
            sc.render.resolution_percentage = 25
            sc.render.image_settings.file_format = "PNG"
            sc.render.filepath = str(run / "frames" / "####")
            bpy.ops.render.render(animation=True)
        bpy.ops.wm.save_as_mainfile(filepath=str(run / "scene.blend"))
    finally:
        D.clear_user_handlers()
    if program is not None:
        (run / "scene.py").write_text(program)
    return run


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "physcodegym", "audit", *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit_runs")
    return {
        "shelf": _save_run(root / "shelf", lambda: D.invisible_shelf(True)),
        "shelf_ok": _save_run(root / "shelf_ok", lambda: D.invisible_shelf(False)),
        "handler_prog": _save_run(root / "handler_prog", lambda: D.handler_ball(False), program=D.HANDLER_PROGRAM),
    }


def test_cli_json_shape_and_findings(runs, tmp_path):
    p = _cli(str(runs["shelf"]), "--json", "--plot", str(tmp_path / "plots"))
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert set(doc) >= {"findings", "criteria", "S_val"} and doc["S_val"] is None and doc["criteria"] == []
    kinds = [f["kind"] for f in doc["findings"]]
    assert "hidden_support" in kinds
    for f in doc["findings"]:
        assert set(f) >= {"kind", "objects", "frames", "value", "unit", "message", "evidence"}
    assert doc["scene"]["cache"]["rigidbody"] in ("baked", "resimulated")
    assert Path(doc["samples_path"]).is_file()
    ok = json.loads(_cli(str(runs["shelf_ok"]), "--json").stdout)
    assert ok["findings"] == []


def test_cli_reads_the_program_for_handlers(runs):
    doc = json.loads(_cli(str(runs["handler_prog"]), "--json", "--no-evidence").stdout)
    sm = [f for f in doc["findings"] if f["kind"] == "scripted_motion"]
    assert sm and "Ball" in sm[0]["objects"] and "evidence" not in sm[0]


def test_cli_bad_input_exit_2(tmp_path):
    p = _cli(str(tmp_path / "missing"), "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["file"].endswith("missing")
    (tmp_path / "empty").mkdir()
    p = _cli(str(tmp_path / "empty"), "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["field"] == "scene.blend"


def test_plots_written_for_curve_findings(audited, tmp_path):
    from physcodegym.probes.audit.plots import write_plots

    paths = write_plots(audited("pumped_ball"), tmp_path)
    assert paths and all(Path(p).stat().st_size > 1000 for p in paths)


def test_screen_motion_of_handler_moved_object(tmp_path):
    """Handler-moved ball: the saved scene is static, the rendered frames are not -> scripted_motion."""
    from physcodegym.probes.audit.audit import audit_path

    bad = _save_run(tmp_path / "bad", lambda: D.handler_ball(True), render=True)
    good = _save_run(tmp_path / "good", lambda: D.handler_ball(False), render=True)
    rb = audit_path(bad)
    assert rb.meta["screen_motion"]["state"] == "ok"
    hits = [f for f in rb.by_kind("scripted_motion") if "Ball" in f.objects]
    assert hits and hits[0].unit == "fraction of footprint", [f.message for f in rb.findings]
    rg = audit_path(good)
    assert rg.meta["screen_motion"]["state"] == "ok" and not rg.by_kind("scripted_motion")


def test_cli_with_task_scores_truth_above_shortcut(tmp_path):
    """--task adds the rubric: the shipped truth scores S_val above the hidden-support shortcut."""
    from physcodegym.sandbox.runner import run_program

    root = Path(__file__).resolve().parents[2]
    truth, short = tmp_path / "truth", tmp_path / "short"
    run_program(root / "tasks" / "packs" / "ball_bounce" / "truth.py", truth, mode="bake_only")
    run_program(root / "submissions" / "shortcut-agent" / "ball_bounce" / "scene.py", short, mode="bake_only")
    dt = json.loads(_cli(str(truth), "--task", "ball_bounce", "--json", "--no-evidence").stdout)
    ds = json.loads(_cli(str(short), "--task", "ball_bounce", "--json", "--no-evidence").stdout)
    assert dt["task"] == "ball_bounce" and dt["criteria"] and isinstance(dt["S_val"], float)
    assert dt["findings"] == [] and "hidden_support" in [f["kind"] for f in ds["findings"]]
    assert ds["S_val"] < dt["S_val"]
