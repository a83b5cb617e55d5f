"""A miniature results set for the report tests: one real task (truth trajectories, timed events, a reference
video written by OpenCV's mp4v, which browsers cannot play, so the report must transcode it) and three
configurations run by a real batch: a simulated ball (good), the same ball keyframed (a shortcut: the audit
finds scripted motion) and a crash (no artifact). The truth and the good scene render all 240 frames of their saved
scene: the audit compares the frames with a re-render of scene.blend, and 8 key frames held to 240 (the cheap form of
tests/batch/mini.py, kept for the shortcut) are a time-warp it charges."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "batch"))
import mini  # noqa: E402  (the batch tests' miniature scenes)

TASK = "mini_r"
RIGID_BODY = "bpy.ops.rigidbody.object_add()\nmat = "
KEYFRAMED = ("for f, z in ((1, 2.0), (4, 1.1), (8, 0.5)):\n    ball.location.z = z\n    ball.keyframe_insert('location', frame=f)\n"
             "mat = ")


def shortcut_scene() -> str:
    s = mini.scene(0.0, 2.0)
    assert s.count(RIGID_BODY) == 1
    return s.replace(RIGID_BODY, KEYFRAMED)


def build(root: Path) -> tuple[Path, Path]:
    from physcodegym.sandbox.runner import run_program

    tdir, sdir = root / "tasks", root / "submissions"
    folder = tdir / TASK
    folder.mkdir(parents=True)
    truth = mini.scene(0.0, 2.0, frames=240)
    (folder / "truth.py").write_text(truth)
    rec = run_program(folder / "truth.py", root / "truth_run", timeout_s=120)
    assert rec.status == "ok", rec.log_tail
    mini.encode_video(root / "truth_run" / "frames", folder / "reference.mp4")
    p = subprocess.run([sys.executable, "-m", "physcodegym.authoring.sample_worker", str(root / "truth_run" / "scene.blend"),
                        str(folder / "truth_trajectories.npz"), str(root / "roles.json"), "Ball", "Ground"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = mini.task_doc(TASK)
    doc["truth"] = {"program": "truth.py", "trajectories": "truth_trajectories.npz", "counterfactuals": None}
    doc["events"].append({"id": "ev_rest", "kind": "final_state", "description": "the ball rests on the ground", "roles": ["ball"],
                          "interval": {"start_s": 4.0, "end_s": 8.0}, "weight": 1.0, "key": False})
    (folder / "task.json").write_text(json.dumps(doc))
    progs = {"good": mini.scene(0.2, 2.0, frames=240), "shortcut": shortcut_scene(), "broken": "import bpy\nraise RuntimeError('deliberate crash')\n"}
    meta = {"good": (1.5, 6), "shortcut": (0.4, 2), "broken": (0.2, 1)}
    for cfg, prog in progs.items():
        (sdir / cfg / TASK).mkdir(parents=True)
        (sdir / cfg / TASK / "scene.py").write_text(prog)
        cost, launches = meta[cfg]
        (sdir / cfg / "config.json").write_text(json.dumps({"model": f"{cfg.title()}-Model", "harness": "test",
                                                            "cost_usd_per_task": cost, "launches_per_task": launches}))
    return tdir, sdir
