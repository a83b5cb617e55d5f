"""Panel tests: one bpy process for the module, the add-on enabled once, tiny real scenes."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

# Isolate Blender's user config (preferences, extensions) from the machine's before bpy is imported.
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="pcg_panel_user_"))

VIDEO_FRAMES = 48


def make_video(path: Path, frames: int = VIDEO_FRAMES, size: tuple[int, int] = (64, 36)) -> Path:
    """A red bar growing left to right (width, height = size)."""
    import cv2
    import numpy as np

    width, height = size
    w = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 30.0, (width, height))
    for i in range(frames):
        im = np.zeros((height, width, 3), np.uint8)
        im[:, : ((i % 64) + 1) * width // 64] = (0, 0, 255)
        w.write(im)
    w.release()
    return path


TASK = {
    "id": "panel_drop",
    "title": "A cube drops onto the ground",
    "category": "rigid",
    "subcategory": "falling-bouncing",
    "roles": [
        {"name": "cube", "description": "red cube", "name_hints": ["Cube"]},
        {"name": "ground", "description": "grey floor", "core": False, "name_hints": ["Ground"]},
    ],
    "checklist": [{"id": "obj_cube", "category": "cube", "count": 1, "attributes": ["red"], "roles": ["cube"]}],
    "events": [
        {"id": "ev_fall", "description": "the cube falls", "roles": ["cube"], "interval": {"start_s": 0.0, "end_s": 0.5}, "weight": 1.0},
        {
            "id": "ev_land",
            "description": "the cube lands",
            "roles": ["cube", "ground"],
            "interval": {"start_s": 0.6, "end_s": 1.0},
            "weight": 2.0,
            "key": True,
        },
    ],
    "rubric": {"criteria": [{"id": "c_sim", "description": "cube simulated", "weight": 1, "roles": ["cube"], "check": "moves_by_simulation"}]},
}


@pytest.fixture(scope="session")
def addon(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The add-on enabled through Blender's add-on system (so its preferences exist), once per session;
    job folders (scene copies, worker output) go to a pytest temp folder."""
    import addon_utils
    import bpy

    mod = addon_utils.enable("physcodegym", default_set=True)
    assert mod is not None and "physcodegym" in bpy.context.preferences.addons
    bpy.context.preferences.addons["physcodegym"].preferences.runs_folder = str(tmp_path_factory.mktemp("runs"))
    yield mod
    addon_utils.disable("physcodegym", default_set=True)


@pytest.fixture
def task_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "panel_drop"
    folder.mkdir()
    (folder / "task.json").write_text(json.dumps(TASK))
    make_video(folder / "reference.mp4")
    return folder


@pytest.fixture(scope="module")
def task_folder_240(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same task with a full-length reference at the scoring size (240 frames, 640x360): the agent needs the
    length, and scoring the reference as a candidate needs a candidate's video contract."""
    folder = tmp_path_factory.mktemp("t240") / "panel_drop"
    folder.mkdir()
    (folder / "task.json").write_text(json.dumps(TASK))
    make_video(folder / "reference.mp4", frames=240, size=(640, 360))
    return folder
