"""Motion ownership by mechanism: the solvers-off re-evaluation (the universal test of scripted motion).

The saved scene is re-opened in a fresh worker process (`probes.rebake.cf_worker`, job `solvers_off`), every
cache is freed and every solver and field is switched off (rigid-body world disabled, cloth / soft body /
fluid / dynamic-paint modifiers off, solver particles set to no physics, fields set to none), and the
frames are evaluated again. Whatever still moves there is moved by something that is not a solver:
keyframes in the active action or in NLA strips, drivers anywhere, constraints, parenting, hooks,
armatures, shape keys, lattices, geometry nodes reading the scene time, procedural modifiers. No list of
mechanisms is needed: the depsgraph evaluates them all.

A dynamic rigid body whose keyframes the solver overrides is not scripted: its baked pose leaves the
solvers-off pose, so only frames where both agree are counted for it. A short animated prefix (a kinematic
hand-off of the initial velocity) is allowed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.scene import physics as ph
from physcodegym.probes.scene.sampling import INSTANCES_SUFFIX as _INST
from physcodegym.samples import SceneSamples

HANDOFF_FRAMES = 15  # solvers-off motion on at most this many frames is an initial-condition hand-off
AGREE_TRANSLATION = 2e-3  # m: a dynamic body's baked pose "is" its animated pose within this
AGREE_ROTATION = 5e-3  # rad


def switch_off_solvers(scene: Any) -> list[str]:
    """Free every cache and switch off every solver and field of `scene` (bpy, in a worker on a throwaway load)."""
    import bpy

    done: list[str] = []
    with bpy.context.temp_override(scene=scene):
        bpy.ops.ptcache.free_bake_all()
    rbw = scene.rigidbody_world
    if rbw is not None:
        rbw.enabled = False
        done.append("rigidbody_world.enabled = False")
    # An animated or driven switch would turn a solver back on at the next frame change: keyframes (in the
    # active action and in NLA strips) and drivers on the world, on solver modifiers' visibility, on fields
    # and on particle physics are removed, so the switches set here hold on every frame.
    done += _drop_animation(scene, lambda p: p.startswith("rigidbody_world"))
    solver_mods = {m.name for ob in scene.objects for m in ob.modifiers if m.type in ph.SOLVER_MODIFIERS}
    for ob in scene.objects:
        for m in ob.modifiers:
            if m.type in ph.SOLVER_MODIFIERS:
                m.show_viewport = False
                m.show_render = False
                done.append(f"{ob.name}.modifiers[{m.name!r}] off")
        done += _drop_animation(ob, lambda p: p.startswith("field.") or _solver_switch(p, solver_mods))
        for ps in ob.particle_systems:
            done += _drop_animation(ps.settings, lambda p: p == "physics_type")
            if ps.settings.physics_type in ph.SOLVER_PARTICLES:
                ps.settings.physics_type = "NO"
                done.append(f"{ob.name}.particle_systems[{ps.name!r}] physics NO")
        if ob.field is not None and ob.field.type != "NONE":
            ob.field.type = "NONE"
            done.append(f"{ob.name}.field off")
    scene.frame_set(scene.frame_start)
    return done


def _solver_switch(path: str, solver_mods: set[str]) -> bool:
    """An animation path that shows or hides a solver modifier (`modifiers["Cloth"].show_viewport`)."""
    if not path.startswith("modifiers[") or not path.endswith(("show_viewport", "show_render")):
        return False
    return any(path.startswith(f'modifiers["{n}"]') for n in solver_mods)


def _drop_animation(idb: Any, hit: Any) -> list[str]:
    """Remove drivers and keyframe curves (active action and NLA strip actions, layered channelbags)
    of `idb` whose data path `hit` accepts; returns what was removed."""
    out: list[str] = []
    ad = getattr(idb, "animation_data", None)
    if ad is None:
        return out
    for d in list(ad.drivers):
        if hit(d.data_path):
            out.append(f"{idb.name}: driver {d.data_path} removed")
            ad.drivers.remove(d)
    actions = [ad.action] + [st.action for tr in ad.nla_tracks for st in tr.strips]
    seen: set[str] = set()
    for act in actions:
        if act is None or act.name_full in seen:
            continue
        seen.add(act.name_full)
        for layer in getattr(act, "layers", []):
            for strip in layer.strips:
                for bag in getattr(strip, "channelbags", []):
                    for fc in list(bag.fcurves):
                        if hit(fc.data_path):
                            out.append(f"{idb.name}: keyframes {fc.data_path} removed")
                            bag.fcurves.remove(fc)
    return out


def _local(verts: np.ndarray, mats: np.ndarray) -> np.ndarray:
    """World vertices (F, V, 3) back into object space with the per-frame world matrices (F, 4, 4)."""
    m = mats.astype(np.float64)
    singular = np.abs(np.linalg.det(m[:, :3, :3])) < 1e-12  # scale 0 (grown from nothing): no object space
    inv = np.full_like(m, np.nan)
    if (~singular).any():
        inv[~singular] = np.linalg.inv(m[~singular])
    # singular frames come out NaN and drop out of the deformation test; the scale change itself is transform
    # motion (pose_motion) and is judged there
    return np.einsum("fij,fvj->fvi", inv[:, :3, :3], verts.astype(np.float64)) + inv[:, None, :3, 3]


def _rot_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-frame rotation angle between the rotation parts of two (F, 4, 4) tracks."""
    def norm(m: np.ndarray) -> np.ndarray:
        sc = np.linalg.norm(m[:, :3, :3], axis=1)
        return m[:, :3, :3] / np.where(sc[:, None, :] < 1e-9, 1.0, sc[:, None, :])

    ra, rb = norm(a), norm(b)
    c = np.clip((np.einsum("fij,fij->f", ra, rb) - 1) / 2, -1, 1)
    return np.arccos(c)


def compare(baked: SceneSamples, off: SceneSamples) -> dict[str, dict[str, Any]]:
    """Objects that move with every solver off, per name: mechanism (transform / deform), frames, extent.

    Only geometry objects are judged (a moving empty matters through the geometry it carries, which is
    tested itself). For a dynamic rigid body only frames where the baked pose agrees with the solvers-off
    pose count (the solver overrides its keyframes otherwise).
    """
    out: dict[str, dict[str, Any]] = {}
    nf = min(len(baked.frames), len(off.frames))
    if nf == 0:
        return out
    idx_off = {n: i for i, n in enumerate(off.names)}
    for bi, n in enumerate(baked.names):
        info = baked.info.get(n, {})
        if n not in idx_off or (info.get("type") not in ph.GEOMETRY_TYPES and n + _INST not in off.verts):
            continue  # an empty matters only through the geometry it carries or instances
        mo = off.matrices[idx_off[n], :nf]
        mb = baked.matrices[bi, :nf]
        if not (np.all(np.isfinite(mo)) and np.all(np.isfinite(mb))):
            continue
        rec: dict[str, Any] = {}
        st = ph.pose_motion(mo)
        if ph.moves(st):
            steps = st["step"].copy()
            if ph.dynamic(info, baked.scene_info):
                agree = (np.linalg.norm(mo[:, :3, 3] - mb[:, :3, 3], axis=1) < AGREE_TRANSLATION) & (
                    _rot_between(mo, mb) < AGREE_ROTATION)
                steps &= agree
            if int(steps.sum()) > HANDOFF_FRAMES:
                x = mo[:, :3, 3]
                rec["transform"] = {
                    "steps": int(steps.sum()),
                    "frames": _frange(baked.frames[:nf], steps),
                    "translation_m": round(st["translation"], 6),
                    "rotation_rad": round(st["rotation"], 6),
                    "scale_rel": round(st["scale"], 6),
                    "displacement": np.linalg.norm(x - x[0], axis=1),
                }
        vb, vo = baked.verts.get(n), off.verts.get(n)
        if vo is not None and vb is not None and vo.shape[1] == vb.shape[1] and vo.shape[1] > 0:
            lo = _local(vo[:nf], mo)
            ok = np.all(np.isfinite(lo.reshape(nf, -1)), axis=1)
            if ok.sum() > 1:
                lo_ok = lo[ok]
                dfm = np.linalg.norm(lo_ok - lo_ok[:1], axis=2).max(axis=1)
                step = np.zeros(nf, bool)
                dv = np.linalg.norm(np.diff(lo, axis=0), axis=2)
                with np.errstate(invalid="ignore"):
                    step[1:] = np.nanmax(np.where(np.isfinite(dv), dv, 0.0), axis=1) > ph.STEP_EPS
                if float(dfm.max()) > ph.MOVE_TRANSLATION and int(step.sum()) > HANDOFF_FRAMES:
                    full = np.zeros(nf)
                    full[ok] = dfm
                    rec["deform"] = {"steps": int(step.sum()), "frames": _frange(baked.frames[:nf], step),
                                     "deform_m": round(float(dfm.max()), 6), "displacement": full}
        inst = _instance_motion(baked, off, n, mo, nf)
        if inst is not None:
            rec["instances"] = inst
        if rec:
            out[n] = rec
    return out


def _instance_motion(baked: SceneSamples, off: SceneSamples, n: str, mo: np.ndarray, nf: int) -> dict[str, Any] | None:
    """Motion, relative to their instancer, of the instances `n` renders (geometry nodes, instancing) with
    every solver off: instances that move on their own are as scripted as vertices that do."""
    vo = off.verts.get(n + _INST)
    if vo is None or vo.shape[1] == 0:
        return None
    lo = _local(vo[:nf], mo)
    ok = np.all(np.isfinite(lo), axis=2)  # (F, P): points present on that frame
    if ok.sum() == 0:
        return None
    first = np.where(ok.any(axis=0), np.argmax(ok, axis=0), 0)
    ref = lo[first, np.arange(lo.shape[1])]
    d = np.where(ok, np.linalg.norm(lo - ref[None], axis=2), 0.0)
    dfm = d.max(axis=1)
    dv = np.linalg.norm(np.diff(lo, axis=0), axis=2)
    step = np.zeros(nf, bool)
    with np.errstate(invalid="ignore"):
        step[1:] = np.nanmax(np.where(np.isfinite(dv), dv, 0.0), axis=1) > ph.STEP_EPS
    if float(dfm.max()) > ph.MOVE_TRANSLATION and int(step.sum()) > HANDOFF_FRAMES:
        return {"steps": int(step.sum()), "frames": _frange(baked.frames[:nf], step),
                "instances": int(vo.shape[1] // 4), "deform_m": round(float(dfm.max()), 6), "displacement": dfm}
    return None


def _frange(frames: np.ndarray, mask: np.ndarray) -> list[int]:
    idx = np.nonzero(mask)[0]
    return [] if len(idx) == 0 else [int(frames[idx[0]]), int(frames[idx[-1]])]


def start_solvers_off(blend: Any, frames: tuple[int, int], work_dir: Any, timeout_s: float = 600.0,
                      stack_gaps: list[str] | None = None) -> Any:
    """Start the re-evaluation of `blend` with every solver and field off in a fresh worker and return at once
    (`probes.branches.counterfactual.BranchRun`; `.result()[0]` is (samples or None, record)). `stack_gaps`: colliders
    whose collision surface the same worker measures first (the record's "stack_gaps")."""
    from pathlib import Path

    from physcodegym.probes.branches.counterfactual import start_branches

    job = {"out": Path(work_dir) / "solvers_off.npz", "frames": frames, "solvers_off": True,
           "stack_gaps": list(stack_gaps or [])}
    return start_branches(Path(blend), [job], {}, timeout_s=timeout_s)


def run_solvers_off(blend: Any, frames: tuple[int, int], work_dir: Any = None, timeout_s: float = 600.0,
                    stack_gaps: list[str] | None = None) -> tuple[SceneSamples | None, dict[str, Any]]:
    """`start_solvers_off` and wait; (samples or None, record)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pcg_owner_") as td:
        return start_solvers_off(blend, frames, work_dir or td, timeout_s, stack_gaps).result()[0]
