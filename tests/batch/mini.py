"""A miniature benchmark for batch tests: tiny real tasks (short reference videos rendered by bpy) and submissions.

A scene renders `FRAMES` key frames with Workbench and then byte-copies them into the 240-frame contract
(`frames/0001.png … 0240.png`, each key frame held for 30 frames), so a unit costs a few seconds while the
runner, the scorer and the accounting see a full-length sequence.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FRAMES = 8

SCENE = '''
import bpy
import os
bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, {frames}
sc.render.fps = 30
bpy.ops.mesh.primitive_plane_add(size=20)
ground = bpy.context.active_object
ground.name = "Ground"
bpy.ops.rigidbody.object_add(type='PASSIVE')
bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, location=({x}, 0, {z}))
ball = bpy.context.active_object
ball.name = "Ball"
bpy.ops.rigidbody.object_add()
mat = bpy.data.materials.new("Red")
mat.diffuse_color = (0.8, 0.1, 0.1, 1.0)
ball.data.materials.append(mat)
bpy.ops.object.camera_add(location=(0, -10, 2), rotation=(1.45, 0, 0))
sc.camera = bpy.context.active_object
bpy.ops.object.light_add(type='SUN', location=(0, 0, 10))
sc.rigidbody_world.point_cache.frame_end = sc.frame_end
bpy.ops.ptcache.bake_all(bake=True)
sc.render.engine = 'BLENDER_WORKBENCH'
sc.display.render_aa = 'OFF'  # 3.5x faster a frame than the default 8 samples (the report's scenes render 240)
sc.display.shading.color_type = 'MATERIAL'
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
sc.render.image_settings.file_format = 'PNG'
sc.render.filepath = "//keys/"
{save}
bpy.ops.render.render(animation=True)
os.makedirs("frames", exist_ok=True)
for i in range({total}):
    k = i * {frames} // 240 + 1
    with open(os.path.join("keys", "%04d.png" % k), "rb") as fh:
        data = fh.read()
    with open(os.path.join("frames", "%04d.png" % (i + 1)), "wb") as fh:
        fh.write(data)
{after}
'''


def scene(x: float = 0.0, z: float = 2.0, frames: int = FRAMES, total: int = 240, save: bool = True, after: str = "") -> str:
    s = 'bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))' if save else ""
    return SCENE.format(x=x, z=z, frames=frames, total=total, save=s, after=after)


def task_doc(task_id: str, category: str = "rigid") -> dict:
    return {
        "id": task_id,
        "title": f"A ball falls ({task_id})",
        "category": category,
        "subcategory": "falling-bouncing" if category == "rigid" else None,
        "roles": [
            {"name": "ball", "description": "red ball", "truth_object": "Ball", "name_hints": ["ball"]},
            {"name": "ground", "description": "ground plane", "core": False, "truth_object": "Ground", "name_hints": ["ground"]},
        ],
        "checklist": [{"id": "obj_ball", "category": "ball", "count": 1, "attributes": ["red"], "roles": ["ball"]}],
        "events": [{"id": "ev_fall", "description": "the ball falls", "roles": ["ball"], "interval": {"start_s": 0.0, "end_s": 0.2},
                    "weight": 1.0, "key": True}],
        "rubric": {"criteria": [{"id": "c_sim", "description": "the ball moves by simulation", "weight": 1.0, "roles": ["ball"],
                                 "check": "moves_by_simulation"}]},
        "truth": None,
    }


def encode_video(frames_dir: Path, out: Path, fps: int = 30) -> None:
    import cv2

    files = sorted(frames_dir.glob("*.png"))
    first = cv2.imread(str(files[0]))
    h, w = first.shape[:2]
    vw = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    for f in files:
        vw.write(cv2.imread(str(f)))
    vw.release()


def build(root: Path, tasks: dict[str, tuple[float, float, str]] | None = None, broken: bool = True) -> tuple[Path, Path]:
    """tasks: id -> (x, z, category) of the truth ball. Returns (tasks_dir, submissions_dir)."""
    from physcodegym.sandbox.runner import run_program

    tasks = tasks or {"mini_a": (0.0, 2.0, "rigid"), "mini_b": (1.0, 3.0, "wind")}
    tdir, sdir = root / "tasks", root / "submissions"
    for tid, (x, z, cat) in tasks.items():
        folder = tdir / tid
        folder.mkdir(parents=True)
        (folder / "task.json").write_text(json.dumps(task_doc(tid, cat)))
        prog = root / "truth" / f"{tid}.py"
        prog.parent.mkdir(parents=True, exist_ok=True)
        prog.write_text(scene(x, z))
        rec = run_program(prog, root / "truth" / f"run_{tid}", timeout_s=120)
        assert rec.status == "ok", rec.log_tail
        encode_video(root / "truth" / f"run_{tid}" / "frames", folder / "reference.mp4")
    ids = list(tasks)
    good = sdir / "good"
    for i, tid in enumerate(ids):
        x, z, _ = tasks[tid]
        (good / tid).mkdir(parents=True)
        (good / tid / "scene.py").write_text(scene(x + 0.3 * i, z))
    (good / "config.json").write_text(json.dumps({"model": "Good-Model", "harness": "test", "cost_usd_per_task": 1.5}))
    # a second attempt of the first task: the latest with a rendered sequence counts
    att = good / ids[0] / "attempts" / "2"
    att.mkdir(parents=True)
    att.joinpath("scene.py").write_text(scene(tasks[ids[0]][0] + 2.0, 1.0))
    if broken:
        b = sdir / "broken"
        progs = {
            "crash": "import bpy\nraise RuntimeError('deliberate crash')\n",
            "hang": "import bpy\nwhile True:\n    pass\n",
            "policy": "import bpy\nimport subprocess\nsubprocess.run(['true'])\n",
        }
        kinds = list(progs)
        # map failure kinds onto the available tasks through attempts so every kind is exercised
        for i, kind in enumerate(kinds):
            tid = ids[i % len(ids)]
            d = b / tid / "attempts" / str(i + 1)
            d.mkdir(parents=True)
            (d / "scene.py").write_text(progs[kind])
        (b / "config.json").write_text(json.dumps({"model": "Broken-Model", "harness": "test", "timeout_s": 10, "cost_usd_per_task": 0.2}))
        # 10 s: the crash unit must reach its crash (bpy import behind the wall) on a loaded machine; the hang still times out
        # missing frames: renders 237 of 240 (own config: it needs a normal timeout)
        m = sdir / "partial" / ids[-1]
        m.mkdir(parents=True)
        (m / "scene.py").write_text(scene(0.0, 2.0, total=237))
    return tdir, sdir


def copy_bench(src: Path, dst: Path) -> tuple[Path, Path]:
    shutil.copytree(src / "tasks", dst / "tasks")
    shutil.copytree(src / "submissions", dst / "submissions")
    return dst / "tasks", dst / "submissions"


METRICS = ["S_mot"]  # a real metric that differs between units and costs a few seconds


def store_rows(out: Path) -> dict[tuple, dict]:
    """Every row of a results folder's store, keyed by (config, task_id, attempt)."""
    from physcodegym.batch.store import ResultsStore

    st = ResultsStore(out, readonly=True)
    try:
        return {(r["config"], r["task_id"], r["attempt"]): r for r in st.rows()}
    finally:
        st.close()
