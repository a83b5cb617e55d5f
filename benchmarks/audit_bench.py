"""Audit cost vs the scene's own bake (+ render): a 10-body 240-frame rigid scene and a cloth flag.

Prints one JSON line: per scene bake_s, sample_s, audit_s (audit after sampling), ratio_to_bake,
render_s (measured on --render-frames frames with Workbench at 640x360, scaled to the frame range)
and ratio_to_bake_render (target <= 0.15).

    .venv/bin/python benchmarks/audit_bench.py [--render-frames 24] [--frames 240]

Per shipped task (`--tasks ball_bounce,block_stack` or `--tasks all`): the truth program is baked in the
sandbox (`bake_only`, timed), a few frames are rendered with the scene's own engine and scaled to the
frame range, then `audit --task` does its work (audit with the solvers-off re-evaluation and the measured
field / hidden-collider effects, plus the rubric with its counterfactual re-bakes), each task in a fresh
process. The line per task carries audit_s, rubric_s, bake_s, render_s_est and
ratio = (audit_s + rubric_s) / (bake_s + render_s_est) (target <= 0.25). The rubric's counterfactuals
start during the audit as `audit --task` starts them; `--sequential` starts them after it (the A/B).

With `--full` each task is measured as a batch runs it: the wall clock of `physcodegym run --mode full` (bake and
the 240-frame render, start-up included) against that of `physcodegym audit RUN --task` (start-up, the audit with
its checks on the handed-in frames, the rubric); ratio = audit / run. The render estimate above comes from the
first frames only: bake + estimate overstated the real run on 8 shipped tasks (ball_bounce 31.6 s vs 25.8 s) and
understated it on the three SPH liquids, whose particles fill the scene later (milk_pour 44.8 s vs 57.4 s).
`--full` is what a batch pays.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path


def rigid_scene(frames: int):
    from physcodegym.testing import demo_scenes as D

    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc, (0, -10, 4), (0, 0, 1))
    D.ground(friction=0.6)
    for i in range(10):
        x, y = (i % 5 - 2) * 0.7, (i // 5) * 0.7 - 0.35
        if i % 2:
            D.sphere(f"Ball{i}", (x + 0.1, y, 1.0 + 0.6 * i), 0.25, mass=1.0, restitution=0.5)
        else:
            D.box(f"Box{i}", (x, y, 1.0 + 0.6 * i), (0.4, 0.4, 0.4), rb="ACTIVE", mass=1.0)
    return sc


def cloth_scene(frames: int):
    import bpy
    from physcodegym.testing import demo_scenes as D

    sc = D.reset(frames)
    D.camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=30, y_subdivisions=30, size=2, location=(0, 0, 2), rotation=(math.pi / 2, 0, 0))
    fl = bpy.context.active_object
    fl.name = "Flag"
    xs = [v.co.x for v in fl.data.vertices]
    vg = fl.vertex_groups.new(name="pin")
    vg.add([v.index for v in fl.data.vertices if abs(v.co.x - min(xs)) < 1e-6], 1.0, "REPLACE")
    cm = fl.modifiers.new("Cloth", "CLOTH")
    cm.settings.vertex_group_mass = "pin"
    cm.settings.quality = 5
    cm.point_cache.frame_end = frames
    bpy.ops.object.effector_add(type="WIND", location=(0, -3, 2), rotation=(-math.pi / 2, 0, 0))
    bpy.context.active_object.field.strength = 800.0
    return sc


def render_estimate(sc, render_frames: int, frames: int) -> float:
    """Seconds a render of `frames` frames would take, from a PNG render of the first `render_frames` (the scene's
    frame range is set back afterwards)."""
    import bpy

    end = sc.frame_end
    with tempfile.TemporaryDirectory() as td:
        sc.render.image_settings.file_format = "PNG"
        sc.frame_end = sc.frame_start + render_frames - 1
        sc.render.filepath = str(Path(td) / "####")
        t = time.perf_counter()
        bpy.ops.render.render(animation=True)
        seconds = time.perf_counter() - t
    sc.frame_end = end
    return seconds / render_frames * frames


def measure(name: str, build, frames: int, render_frames: int) -> dict:
    import bpy
    from physcodegym.probes.audit.audit import audit_scene
    from physcodegym.probes.scene.sampling import sample_scene

    sc = build(frames)
    t = time.perf_counter()
    bpy.ops.ptcache.bake_all(bake=True)
    bake = time.perf_counter() - t
    t = time.perf_counter()
    samples = sample_scene(sc)
    sample = time.perf_counter() - t
    t = time.perf_counter()
    rep = audit_scene(sc, samples=samples)
    audit = time.perf_counter() - t
    render = None
    if render_frames > 0:
        sc.render.engine = "BLENDER_WORKBENCH"
        render = render_estimate(sc, render_frames, frames)
    total = sample + audit
    return {
        "scene": name,
        "frames": frames,
        "bake_s": round(bake, 3),
        "sample_s": round(sample, 3),
        "audit_s": round(audit, 3),
        "audit_total_s": round(total, 3),
        "ratio_to_bake": round(total / bake, 3) if bake > 0 else None,
        "render_s_est": round(render, 2) if render is not None else None,
        "ratio_to_bake_render": round(total / (bake + render), 3) if render else None,
        "findings": [f.kind for f in rep.findings],
        "stages": rep.timings,
    }


def task_measure(task_id: str, render_frames: int, work: Path, sequential: bool = False) -> dict:
    """One shipped task in this process: bake the truth, estimate its render, audit + rubric (see module doc)."""
    import bpy
    from physcodegym.probes.audit.audit import audit_path_full
    from physcodegym.sandbox.runner import run_program
    from physcodegym.tasks.loader import load_task
    from physcodegym.verifier.rubric_eval import evaluate_rubric, prefetch_counterfactuals

    lt = load_task(task_id)
    out = work / task_id
    t = time.perf_counter()
    rec = run_program(lt.truth_program, out, mode="bake_only")
    bake = time.perf_counter() - t
    if not (out / "scene.blend").is_file():
        return {"task": task_id, "error": f"bake failed: {getattr(rec, 'status', rec)}"}
    early = []  # the rubric's counterfactuals start while the audit works, as in `physcodegym audit --task`

    def start(samples, blend):
        early.append(prefetch_counterfactuals(lt, bpy.context.scene, samples, blend, out))

    t = time.perf_counter()
    report, samples, scene = audit_path_full(out, on_started=None if sequential else start)
    audit = time.perf_counter() - t
    t = time.perf_counter()
    rub = evaluate_rubric(lt, scene, samples, report, out, prefetched=early[0] if early else None)
    rubric = time.perf_counter() - t
    render = None
    if render_frames > 0:
        bpy.ops.wm.open_mainfile(filepath=str(out / "scene.blend"))
        sc = bpy.context.scene
        render = render_estimate(sc, render_frames, sc.frame_end - sc.frame_start + 1)
    cost = audit + rubric
    return {
        "task": task_id,
        "bake_s": round(bake, 2),
        "render_s_est": round(render, 2) if render is not None else None,
        "audit_s": round(audit, 2),
        "rubric_s": round(rubric, 2),
        "ratio": round(cost / (bake + render), 3) if render else round(cost / bake, 3),
        "S_val": rub["S_val"],
        "criteria": {c["id"]: [c["passed"], round(c["score"], 4)] for c in rub["criteria"]},
        "findings": [f.kind for f in report.findings],
        "stages": {k: v for k, v in report.timings.items() if k in ("open", "sample", "solvers_off", "effects", "total")},
        "counterfactuals": len(rub.get("counterfactuals", [])),
        "started_during_audit": rub.get("counterfactuals_started_during_audit"),
        "sequential": sequential,
    }


def task_measure_full(task_id: str, work: Path) -> dict:
    """One shipped task as a batch scores it: `physcodegym run --mode full` of the truth (bake + 240-frame render,
    the sandboxed child as it runs every submission), then `physcodegym audit RUN --task` in its own process
    (bpy start-up, the frame checks on the handed-in frames, the rubric's counterfactuals). Both are wall clock
    of the real commands, start-up included; ratio = audit / run."""
    import subprocess

    from physcodegym.core.launch import cli_argv

    out = work / task_id
    t = time.perf_counter()
    p = subprocess.run(cli_argv(["run", str(_truth(task_id)), "--out", str(out), "--mode", "full", "--json"]),
                       capture_output=True, text=True)
    run = time.perf_counter() - t
    if p.returncode != 0:
        return {"task": task_id, "error": f"run exited {p.returncode}: {p.stdout[-300:]} {p.stderr[-300:]}"}
    t = time.perf_counter()
    p = subprocess.run(cli_argv(["audit", str(out), "--task", task_id, "--json"]), capture_output=True, text=True)
    audit = time.perf_counter() - t
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"task": task_id, "error": f"audit exited {p.returncode}: {p.stderr[-500:]}"}
    tm = doc.get("timings") or {}
    return {
        "task": task_id,
        "run_s": round(run, 2),
        "audit_s": round(audit, 2),
        "ratio": round(audit / run, 3),
        "S_val": doc.get("S_val"),
        "findings": [f["kind"] for f in doc.get("findings", [])],
        "stages": {k: round(v, 2) for k, v in tm.items() if v >= 0.5},
        "started_during_audit": doc.get("counterfactuals_started_during_audit"),
    }


def _truth(task_id: str) -> Path:
    from physcodegym.tasks.loader import load_task

    return load_task(task_id).truth_program


def tasks_main(ids: list[str], render_frames: int, sequential: bool = False, full: bool = False) -> None:
    import subprocess

    res = []
    for tid in ids:
        if full:
            with tempfile.TemporaryDirectory(prefix="pcg_auditbench_") as td:
                res.append(task_measure_full(tid, Path(td)))
            print(json.dumps(res[-1]), file=sys.stderr)
            continue
        cmd = [sys.executable, __file__, "--one-task", tid, "--render-frames", str(render_frames)]
        p = subprocess.run(cmd + (["--sequential"] if sequential else []), capture_output=True, text=True)
        line = next((ln for ln in reversed(p.stdout.splitlines()) if ln.startswith("{")), None)
        res.append(json.loads(line) if line else {"task": tid, "error": p.stderr[-500:]})
        print(json.dumps(res[-1]), file=sys.stderr)
    target = 0.25
    ok = all(r.get("ratio") is not None and r["ratio"] <= target for r in res)
    print(json.dumps({"benchmark": "audit_tasks_full" if full else "audit_tasks", "target_ratio": target,
                      "within_target": ok, "tasks": res}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=240)
    ap.add_argument("--render-frames", type=int, default=24, help="frames actually rendered to estimate render time (0: skip)")
    ap.add_argument("--tasks", default=None, help="comma-separated shipped task ids, or 'all': per-task audit + counterfactual cost")
    ap.add_argument("--one-task", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--full", action="store_true",
                    help="per task: time the real `run --mode full` and `audit --task` commands (ratio = audit / run)")
    ap.add_argument("--sequential", action="store_true",
                    help="start the rubric's counterfactuals after the audit, not during it (the A/B of that overlap)")
    a = ap.parse_args()
    import contextlib
    import os

    if a.tasks:
        from physcodegym.tasks.loader import PACKS_DIR, list_tasks

        ids = [t.id for t in list_tasks([PACKS_DIR])] if a.tasks == "all" else a.tasks.split(",")
        tasks_main(ids, a.render_frames, a.sequential, a.full)
        return
    if a.one_task:
        saved = os.dup(1)
        os.dup2(2, 1)
        try:
            with tempfile.TemporaryDirectory(prefix="pcg_auditbench_") as td:
                r = task_measure(a.one_task, a.render_frames, Path(td), a.sequential)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
        print(json.dumps(r, default=str))
        return

    saved = os.dup(1)
    os.dup2(2, 1)  # Blender prints bake progress on fd 1: keep stdout for the JSON line
    try:
        res = [measure("rigid_10_bodies", rigid_scene, a.frames, a.render_frames), measure("cloth_flag_30x30", cloth_scene, a.frames, a.render_frames)]
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        with contextlib.suppress(OSError):
            os.close(saved)
    target = 0.15
    ok = all(r["ratio_to_bake_render"] is None or r["ratio_to_bake_render"] <= target for r in res)
    print(json.dumps({"benchmark": "audit", "target_ratio": target, "within_target": ok, "scenes": res}))


if __name__ == "__main__":
    main()
