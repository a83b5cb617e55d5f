"""Helpers shared by tests/window's conftest and tests: where the launcher is, its environment, Blender's installer,
and the run's scene program. A plain module (not conftest) so the test file can import it by name."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "scripts" / "blender"

# A run's scene with one known defect: the ball falls and bounces by keyframes, not by a solver (the audit's
# scripted_motion), beside a ground; 240 frames at 30 fps like every task's contract.
KEYED_BALL_PROGRAM = """import bpy

bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, 240
sc.render.fps = 30
sc.render.resolution_x, sc.render.resolution_y = 640, 360
bpy.ops.mesh.primitive_plane_add(size=6.0)
bpy.context.object.name = "Ground"
bpy.ops.mesh.primitive_uv_sphere_add(radius=0.2, location=(0.0, 0.0, 2.0))
ball = bpy.context.object
ball.name = "Ball"
for frame, z in ((1, 2.0), (20, 0.2), (35, 1.2), (50, 0.2), (60, 0.6), (70, 0.2)):
    ball.location.z = z
    ball.keyframe_insert("location", index=2, frame=frame)
bpy.ops.object.camera_add(location=(0.0, -7.0, 1.5), rotation=(1.45, 0.0, 0.0))
sc.camera = bpy.context.object
bpy.ops.object.light_add(type="SUN", location=(0.0, 0.0, 5.0))
bpy.ops.wm.save_as_mainfile(filepath="scene.blend")
"""


def launcher_env(*writable: Path, user: Path | None = None) -> dict[str, str]:
    """Environment for scripts/blender: these folders writable inside the wall, Blender's user folder at `user`."""
    env = dict(os.environ)
    env["PHYSCODEGYM_BLENDER_RW"] = ":".join(str(p) for p in writable)
    if user is not None:
        env["BLENDER_USER_RESOURCES"] = str(user)
    return env


def install(zip_path: Path, user: Path) -> subprocess.CompletedProcess:
    """Blender's own installer, as a user would run it: `blender --command extension install-file --enable`."""
    return subprocess.run(
        [
            str(LAUNCHER),
            "-b",
            "--factory-startup",
            "--command",
            "extension",
            "install-file",
            "-r",
            "user_default",
            "--enable",
            str(zip_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=launcher_env(user, user=user),
        cwd=user,
    )
