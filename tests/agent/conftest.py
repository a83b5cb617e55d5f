"""Fixtures for the agent harness tests: a task with a real reference video, the loopback LLM."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from physcodegym.tasks.loader import PACKS_DIR, LoadedTask, load_task
from physcodegym.testing.loopback import loopback_fixture

loopback = pytest.fixture(loopback_fixture)

TRUTH_MARKER = "TRUTH_SECRET_7f3a"

SYNTH_TASK = {
    "id": "agent_synth_ball",
    "title": "A ball falls on a table",
    "category": "rigid",
    "subcategory": "falling-bouncing",
    "roles": [
        {"name": "ball", "description": "red ball"},
        {"name": "table", "description": "grey table", "core": False},
    ],
    "checklist": [{"id": "obj_ball", "category": "ball", "count": 1, "attributes": ["red"], "roles": ["ball"]}],
    "events": [
        {"id": "ev_land", "description": "the ball lands", "roles": ["ball", "table"], "interval": {"start_s": 0.5, "end_s": 1.0}, "weight": 1.0}
    ],
    "rubric": {
        "initial_conditions": ["the ball is released at rest"],
        "criteria": [{"id": "c_sim", "description": "ball moves by simulation", "weight": 1, "roles": ["ball"], "check": "moves_by_simulation"}],
    },
    "truth": {"program": "truth.py", "trajectories": "truth_trajectories.npz", "counterfactuals": None},
}


def _write_video(path: Path) -> np.ndarray:
    import cv2

    frames = np.zeros((240, 360, 640, 3), np.uint8)
    frames[:] = (40, 40, 48)
    for i in range(240):
        y = int(40 + min(i, 60) * 4.5)
        cv2.circle(frames[i], (320, y), 24, (220, 30, 30), -1)
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 30, (640, 360))
    for f in frames:
        vw.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
    vw.release()
    return frames


def shipped_task() -> LoadedTask | None:
    """The first shipped task that has its reference video and truth program, if any are built yet."""
    for folder in sorted(PACKS_DIR.glob("*/task.json")):
        try:
            lt = load_task(folder.parent)
        except Exception:
            continue
        if lt.video_path.is_file() and lt.truth_program and lt.truth_program.is_file():
            return lt
    return None


@pytest.fixture(scope="session")
def synth_task(tmp_path_factory: pytest.TempPathFactory) -> LoadedTask:
    folder = tmp_path_factory.mktemp("tasks") / SYNTH_TASK["id"]
    folder.mkdir()
    (folder / "task.json").write_text(json.dumps(SYNTH_TASK))
    (folder / "truth.py").write_text(f"# {TRUTH_MARKER}\nimport bpy\n")
    _write_video(folder / "reference.mp4")
    return load_task(folder)


@pytest.fixture(scope="session")
def agent_task(synth_task: LoadedTask) -> LoadedTask:
    """A shipped task when one is available (the issue asks for one), else the synthetic task."""
    return shipped_task() or synth_task
