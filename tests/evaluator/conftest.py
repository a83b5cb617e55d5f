"""Fixtures for the evaluator tests: a real Workbench render (child Blender process), synthetic clips, task folders."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import cv2
import numpy as np
import pytest

H, W, F = 360, 640, 240

_RENDER = textwrap.dedent(
    """
    import sys, bpy
    out = sys.argv[-1]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.render.engine = 'BLENDER_WORKBENCH'
    sc.display.shading.light = 'STUDIO'; sc.display.shading.color_type = 'OBJECT'; sc.display.render_aa = 'FXAA'
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
    sc.render.image_settings.file_format = 'PNG'
    sc.frame_start, sc.frame_end = 1, 4
    bpy.ops.mesh.primitive_plane_add(size=20); plane = bpy.context.active_object; plane.color = (0.5, 0.6, 0.45, 1)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.6, location=(0, 0, 0.6)); ball = bpy.context.active_object
    ball.color = (0.85, 0.2, 0.15, 1)
    bpy.ops.mesh.primitive_cube_add(size=0.8, location=(1.8, 0.8, 0.4)); bpy.context.active_object.color = (0.2, 0.3, 0.9, 1)
    ball.keyframe_insert('location', frame=1); ball.location.x = 1.2; ball.keyframe_insert('location', frame=4)
    bpy.ops.object.camera_add(location=(0, -7, 3.2), rotation=(1.2, 0, 0)); sc.camera = bpy.context.active_object
    sc.render.filepath = out + '/a/####'
    bpy.ops.render.render(animation=True)
    ball.location.z += 0.15; sc.camera.location.x += 0.12  # a close twin: slightly shifted view and ball
    ball.animation_data_clear(); ball.location.x = 0.3
    sc.render.filepath = out + '/b/####'
    bpy.ops.render.render(animation=True)
    """
)


@pytest.fixture(scope="session")
def rendered_pair(tmp_path_factory) -> tuple[np.ndarray, np.ndarray]:
    """Two 4-frame 640x360 Workbench renders of a close-twin scene (real bpy, in a child process)."""
    out = tmp_path_factory.mktemp("render")
    script = out / "render.py"
    script.write_text(_RENDER)
    p = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]

    def load(d: Path) -> np.ndarray:
        files = sorted(d.glob("*.png"))
        assert len(files) == 4, files
        return np.stack([cv2.cvtColor(cv2.imread(str(f)), cv2.COLOR_BGR2RGB) for f in files])

    return load(out / "a"), load(out / "b")


def texture(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return cv2.resize(rng.integers(40, 200, (45, 80, 3), dtype=np.uint8), (W, H), interpolation=cv2.INTER_CUBIC)


def disk_clip(n: int = F, x0: float = 80, speed: float = 2.0, y: int = 180, r: int = 30, start: int = 0, seed: int = 0) -> np.ndarray:
    bg = texture(seed)
    out = np.empty((n, H, W, 3), np.uint8)
    for i in range(n):
        f = bg.copy()
        x = x0 + speed * max(0, i - start)
        cv2.circle(f, (int(round(x * 16)), y * 16), r * 16, (230, 40, 40), -1, lineType=cv2.LINE_AA, shift=4)
        out[i] = f
    return out


def write_mp4(path: Path, frames: np.ndarray, fps: float = 30) -> Path:
    h, w = frames.shape[1:3]
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    assert vw.isOpened()
    for f in frames:
        vw.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
    vw.release()
    return path


def seal_run(d: Path, status: str = "ok", n_frames: int = F) -> Path:
    """Accept whatever `d/sandbox/` holds (sandbox.artifacts) and write the runner's record with `status`.

    Frames-only runs (no scene.blend) get the given status anyway: these clips test scoring, not the runner."""
    from physcodegym.core import atomic
    from physcodegym.sandbox.artifacts import accept_outputs
    from physcodegym.sandbox.runner import RunRecord

    (d / "sandbox").mkdir(parents=True, exist_ok=True)
    acc = accept_outputs(d / "sandbox", d, "full", n_frames)
    rec = RunRecord(status=status, seconds=1.0, artifacts=acc.artifacts, expected_frames=n_frames,
                    reason=None if status == "ok" else f"{status} in the test")
    atomic.write_text(d / "run.json", rec.model_dump_json())
    return d


def write_pngs(folder: Path, frames: np.ndarray) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(frames, start=1):
        cv2.imwrite(str(folder / f"{i:04d}.png"), cv2.cvtColor(f, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 1])
    return folder


def minimal_task(task_id: str = "eval-disk") -> dict:
    return {
        "id": task_id,
        "title": "A rolling disk",
        "category": "rigid",
        "subcategory": "rolling-tracks",
        "roles": [{"name": "ball", "description": "the red ball"}],
        "checklist": [{"id": "ball", "category": "ball", "count": 1, "attributes": ["red"], "roles": ["ball"]}],
        "events": [
            {"id": "rolls", "description": "the ball rolls right", "roles": ["ball"], "interval": {"start_s": 0, "end_s": 8}, "weight": 1}
        ],
        "rubric": {"criteria": [{"id": "sim", "description": "ball simulated", "weight": 1, "roles": ["ball"], "check": "moves_by_simulation"}]},
    }


class Clips:
    """Session-wide synthetic 240-frame clips and a task folder whose reference is the moving disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.task_dir = root / "task"
        self.task_dir.mkdir()
        (self.task_dir / "task.json").write_text(json.dumps(minimal_task()))
        write_mp4(self.task_dir / "reference.mp4", disk_clip())
        from physcodegym.metrics.video import load_video

        self.ref = load_video(self.task_dir / "reference.mp4")  # what the scorer sees (after the codec)

    def run_dir(self, name: str, frames: np.ndarray | None, status: str = "ok") -> Path:
        """A run folder as the runner leaves it: frames accepted from the scratch folder, the record written by us."""
        d = self.root / name
        d.mkdir()
        if frames is not None:
            write_pngs(d / "sandbox" / "frames", frames)
        return seal_run(d, status, n_frames=len(frames) if frames is not None else F)


@pytest.fixture(scope="session")
def clips(tmp_path_factory) -> Clips:
    return Clips(tmp_path_factory.mktemp("clips"))


@pytest.fixture(scope="session")
def tools():
    """The clip helpers above (test modules cannot import conftest in importlib mode)."""
    from types import SimpleNamespace

    return SimpleNamespace(disk_clip=disk_clip, texture=texture, write_mp4=write_mp4, write_pngs=write_pngs, minimal_task=minimal_task,
                           seal_run=seal_run)
