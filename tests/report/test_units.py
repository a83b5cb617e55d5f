"""Pieces of the report that are plain functions: contact moments from a trajectory, and set-up's pip filter."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def test_contact_moments_are_the_impacts_of_a_shipped_truth_and_none_in_free_flight() -> None:
    from physcodegym.report.plots import contact_frames, role_track
    from physcodegym.samples import SceneSamples
    from physcodegym.tasks.loader import load_task

    lt = load_task("ball_bounce")
    truth = SceneSamples.load_npz(lt.truth_trajectories)
    track = role_track(truth, "Ball")
    hits = contact_frames(track, truth.fps)
    first = next(ev for ev in lt.task.events if ev.id == "first_impact").interval
    assert hits, "no contact found in a bouncing ball"
    assert first.start_s - 2 / 30 <= hits[0] / truth.fps <= first.end_s + 2 / 30, (hits, first)
    assert len(hits) >= 3  # it bounces several times
    t = np.arange(240) / 30.0
    flight = np.stack([0.5 * t, 0 * t, 3 + 2 * t - 4.905 * t * t], axis=1)  # a thrown ball, never touching
    assert contact_frames(flight, 30.0) == []


def test_setup_filters_pip_location_noise_and_keeps_errors(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/usr/bin/env bash\n"
                    "echo \"WARNING: Location 'file:///opt/pypi-more/simple/bpy/' is ignored: it is neither a file nor a directory.\" >&2\n"
                    "printf '  /tmp/x/editable_wheel.py:354: BuildBackendWarning: Editable installation.\\n  !!\\n"
                    "  Please be careful with folders in your working directory\\n  !!\\n"
                    "    with strategy, WheelFile(wheel_path) as wheel_obj:\\n' >&2\n"
                    "echo 'ERROR: No matching distribution found for nothing-here' >&2\n"
                    "exit 3\n")
    fake.chmod(0o755)
    body = (REPO / "scripts" / "setup.sh").read_text()
    fn = body[body.index("pipq() {"):]
    fn = fn[: fn.index("\n}\n") + 3]
    p = subprocess.run(["bash", "-c", f"set -uo pipefail\n{fn}\npipq {fake} install x; echo rc=$?"], capture_output=True, text=True)
    assert "rc=3" in p.stdout
    assert "ERROR: No matching distribution" in p.stderr
    assert "Location" not in p.stderr and "Editable" not in p.stderr and "WheelFile" not in p.stderr
    assert p.stderr.strip().splitlines() == ["ERROR: No matching distribution found for nothing-here"]


def test_a_counterfactual_criterion_reads_as_a_sentence() -> None:
    """The evidence shape rubric_eval records for a counterfactual criterion (as measured on the demo's shortcut)."""
    from physcodegym.report.evidence import criterion_sentence
    from physcodegym.tasks.loader import load_task

    spec = next(c for c in load_task("ball_bounce").task.rubric.criteria if c.check == "counterfactual")
    res = {"id": spec.id, "check": "counterfactual", "passed": False, "score": 0.0, "weight": spec.weight,
           "evidence": {"took_effect": True, "took_effect_evidence": {"read_back": True, "measured": "object absent from the intervened scene"},
                        "verdict": {"measure": "min_height", "role": "ball", "at_s": 3.0, "op": "lt", "expected": -0.5,
                                    "intervened": {"value": 0.06, "unit": "m", "frame": 91}, "passed": False},
                        "trajectories": {"ball": {"object": "RedBall", "max_deviation_m": 0.0}}},
           "reason": "min_height of ball = 0.0600 not lt -0.5"}
    s = criterion_sentence(res, spec)
    assert "the intervention took effect: yes (object absent from the intervened scene)" in s
    assert "min height of ball in the intervened copy 0.06 m (frame 91)" in s
    assert "expected min height of ball at 3 s < -0.5" in s and "Verdict: failed (score 0.00" in s
    res["passed"], res["score"] = True, 1.0
    assert "Verdict: passed (score 1.00" in criterion_sentence(res, spec)


def test_task_set_line_names_version_staleness_and_mixed_rows() -> None:
    from physcodegym.report.build import task_set_line, task_set_summary

    meta = {"set": "physcodegym-tasks", "version": "1.2.0", "sha256": "ab" * 32, "n_tasks": 16, "stale": []}
    ts = task_set_summary(meta, [{"task_set": "physcodegym-tasks@1.2.0"}], 5)
    assert task_set_line(ts) == "Task set: physcodegym-tasks version 1.2.0 (5 of 16 tasks, sha256 abababababab)."
    stale = task_set_summary(dict(meta, stale=["pendulum: content hash 1 differs"]), [{"task_set": None}], 5)
    line = task_set_line(stale)
    assert "1 pack(s) differ from the manifest: pendulum" in line and "Rows scored on: unrecorded." in line
    assert task_set_line(task_set_summary(None, [], 0)).startswith("Task set: not recorded")
