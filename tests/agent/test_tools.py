"""Tool-level tests without Blender launches: schemas, observation, workspace confinement, budget refusal."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest
from physcodegym.agent.budget import Budget, BudgetLimits
from physcodegym.agent.tools import LAUNCH_TOOLS, Toolbox, tool_specs
from physcodegym.metrics.video import load_video

EXPECTED_TOOLS = {
    "video_info", "get_frames", "frame_grid", "clip", "write_file", "read_file",
    "run_scene", "inspect_scene", "render_preview", "check_submission", "finalize",
}


def _decode(png: bytes) -> np.ndarray:
    return cv2.cvtColor(cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


@pytest.fixture
def box(tmp_path, synth_task):
    return Toolbox(tmp_path / "run", synth_task.video_path, Budget(limits=BudgetLimits(max_launches=2)))


def test_tool_specs_are_json_schemas_from_pydantic():
    specs = {s.name: s for s in tool_specs()}
    assert set(specs) == EXPECTED_TOOLS
    for s in specs.values():
        assert s.parameters["type"] == "object" and isinstance(s.parameters["properties"], dict)
    assert specs["get_frames"].parameters["required"] == ["times"]
    assert specs["get_frames"].parameters["properties"]["times"]["type"] == "array"
    assert specs["render_preview"].parameters["properties"]["frame"]["maximum"] == 240
    # no argument of any tool names a file outside the workspace
    assert all("video" not in p for s in specs.values() for p in s.parameters["properties"])


def test_observation_tools_show_the_reference(box, synth_task):
    ref = load_video(synth_task.video_path)
    info = box.call("video_info", {})
    assert not info.is_error
    assert info.data == {"duration_s": 8.0, "fps": 30, "frames": 240, "width": 640, "height": 360}
    assert str(synth_task.folder) not in str(info.data)

    out = box.call("get_frames", {"times": [0.0, 1.0, 7.99]})
    assert [f["frame"] for f in out.data["frames"]] == [1, 31, 240]
    assert len(out.images) == 3
    img = _decode(out.images[1])
    assert img.shape == (360, 640, 3)
    # below the label band the image is the reference frame at t=1 s (the ball is lower than at t=0)
    assert np.abs(img[30:].astype(int) - ref[30][30:].astype(int)).mean() < 2.0
    assert np.abs(img[30:].astype(int) - ref[0][30:].astype(int)).mean() > np.abs(img[30:].astype(int) - ref[30][30:].astype(int)).mean()

    grid = box.call("frame_grid", {"start": 0, "end": 8, "count": 8})
    assert grid.data["grid"] == {"rows": 2, "cols": 4} and len(grid.images) == 1
    assert _decode(grid.images[0]).shape == (360, 1280, 3)

    clip = box.call("clip", {"start": 1.0, "end": 2.0, "rate": 10})
    assert [f["frame"] for f in clip.data["frames"]] == [31, 34, 37, 40, 43, 46, 49, 52, 55, 58, 61]
    assert len(clip.images) == 11
    many = box.call("clip", {"start": 0, "end": 8, "rate": 30})
    assert len(many.images) == 24 and many.data["truncated_to_24"]

    bad = box.call("get_frames", {"times": []})
    assert bad.is_error and "times" in bad.data["error"]
    bad = box.call("clip", {"start": 3, "end": 1, "rate": 5})
    assert bad.is_error and "before start" in bad.data["error"]


def test_workspace_confinement_hides_reference_and_truth(box, synth_task):
    truth = synth_task.truth_program
    video = synth_task.video_path
    rel_to_task = os.path.relpath(truth, box.workspace)
    attempts = [
        str(truth), str(video), rel_to_task, "../../task.json", "sub/../../state.json", "~/x", "/etc/passwd", "",
    ]
    for path in attempts:
        out = box.call("read_file", {"path": path})
        assert out.is_error, path
        assert "import bpy" not in str(out.data), path
    # a symlink planted in the workspace (e.g. by a previous run of the program) is not followed
    (box.workspace / "link.py").symlink_to(truth)
    (box.workspace / "dirlink").symlink_to(synth_task.folder)
    for path in ("link.py", "dirlink/truth.py", "dirlink/reference.mp4"):
        out = box.call("read_file", {"path": path})
        assert out.is_error and "symbolic links" in out.data["error"], path
        assert box.call("write_file", {"path": path, "text": "x"}).is_error
    assert "import bpy" in truth.read_text()  # untouched
    assert box.call("write_file", {"path": "/tmp/escape.py", "text": "x"}).is_error
    assert box.call("write_file", {"path": "../escape.py", "text": "x"}).is_error
    assert not (box.run_dir / "escape.py").exists()
    ok = box.call("write_file", {"path": "notes/plan.md", "text": "hello"})
    assert not ok.is_error and box.call("read_file", {"path": "notes/plan.md"}).data["text"] == "hello"


def test_launch_refused_when_budget_is_spent(tmp_path, synth_task):
    b = Budget(limits=BudgetLimits(max_launches=0))
    box = Toolbox(tmp_path / "run", synth_task.video_path, b)
    box.call("write_file", {"path": "scene.py", "text": "import bpy\n"})
    for name in LAUNCH_TOOLS:
        args = {"frame": 1} if name == "render_preview" else {}
        out = box.call(name, args)
        assert out.is_error and "launch budget exhausted" in out.data["error"], name
    assert b.launches_used == 0 and box.state["launches"] == []
    assert "no launches left" in b.line()


def test_finalize_refused_without_a_full_run(box):
    out = box.call("finalize", {})
    assert out.is_error and out.data["refused"] and "scene.py does not exist" in out.data["problems"][0]
    box.call("write_file", {"path": "scene.py", "text": "import bpy\nimport os\nos.system('ls')\n"})
    chk = box.call("check_submission", {})
    assert not chk.data["ok"]
    assert any("policy" in p for p in chk.data["problems"]) and any("no full run" in p for p in chk.data["problems"])
    assert box.call("finalize", {}).is_error
    assert not (box.run_dir / "submission").exists()


def test_write_file_keeps_every_scene_revision(box):
    box.call("write_file", {"path": "scene.py", "text": "import bpy\n# v1\n"})
    box.call("write_file", {"path": "scene.py", "text": "import bpy\n# v1\n"})  # unchanged: no new revision
    out = box.call("write_file", {"path": "scene.py", "text": "import bpy\n# v2\n"})
    assert out.data["revision"] == 2 and out.data["policy_violations"] == []
    revs = sorted((box.run_dir / "revisions").glob("scene_r*.py"))
    assert [r.read_text() for r in revs] == ["import bpy\n# v1\n", "import bpy\n# v2\n"]
    assert os.path.isfile(box.run_dir / "state.json")
