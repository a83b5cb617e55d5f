"""What a defect acts on in a baked truth scene (bpy): the core objects a task names, the colliders that hold
them, the one that moves most, a liquid's solver-moved particles, a cloth. Shared by the defect modules
(`defects`, `defects_hiding`), so that neither imports the other."""

from __future__ import annotations

import json
from typing import Any

# Defects that cannot apply to a task say so with this prefix (the self-test reports them not applicable).
NOT_APPLICABLE = "not applicable:"


def core_objects(scene: Any, mapping: dict[str, str]) -> list[Any]:
    core = json.loads(mapping.get("__core__", "[]")) if "__core__" in mapping else list(mapping)
    obs = [scene.objects.get(mapping[r]) for r in core if r in mapping and not r.startswith("__")]
    return [o for o in obs if o is not None]


def support_objects(scene: Any, mapping: dict[str, str]) -> list[Any]:
    """The passive colliders a defect may take away or thicken: those the task's rubric names as supports first,
    then the other role objects, then the rest of the scene, each nearest the core first (at the first frame: a
    collider nothing touches, such as a back wall, is the last a defect should pick, since removing it proves
    nothing)."""
    core_obs = core_objects(scene, mapping)
    core = {o.name for o in core_obs}
    preferred = [scene.objects.get(n) for n in json.loads(mapping.get("__supports__", "[]"))]
    cands = [o for o in preferred if o is not None and o.name not in core]
    roles = [o for k, v in mapping.items() if not k.startswith("__") and (o := scene.objects.get(v)) is not None
             and o.name not in core and o not in cands]
    rest = [o for o in scene.objects if o.name not in core and o not in cands and o not in roles]
    scene.frame_set(scene.frame_start)
    core_boxes = [_box(c) for c in core_obs]
    cands += sorted(roles, key=lambda o: _gap(o, core_boxes)) + sorted(rest, key=lambda o: _gap(o, core_boxes))
    return [o for o in cands if (o.rigid_body is not None and o.rigid_body.type == "PASSIVE") or any(
        m.type == "COLLISION" for m in o.modifiers)]


def _box(ob: Any) -> tuple[Any, Any]:
    """World-space bounding box (min corner, max corner) of `ob` at the current frame."""
    import numpy as np
    from mathutils import Vector

    pts = np.array([tuple(ob.matrix_world @ Vector(c)) for c in ob.bound_box])
    return pts.min(axis=0), pts.max(axis=0)


def _gap(ob: Any, core_boxes: list[tuple[Any, Any]]) -> float:
    """Smallest distance between `ob`'s world bounding box and any of the core's (0 where they overlap)."""
    import numpy as np

    if not core_boxes:
        return 0.0
    lo, hi = _box(ob)
    return min(float(np.linalg.norm(np.maximum(0.0, np.maximum(clo - hi, lo - chi)))) for clo, chi in core_boxes)


def moving_core(scene: Any, mapping: dict[str, str]) -> Any:
    """The simulated core object that moves most in the baked truth (a resting block hides a keyframed copy)."""
    obs = core_objects(scene, mapping)
    if not obs:
        raise ValueError("no core object mapped")
    sim = [o for o in obs if (o.rigid_body is not None and o.rigid_body.type == "ACTIVE") or any(
        m.type in {"CLOTH", "SOFT_BODY"} for m in o.modifiers)]
    cands = sim or obs
    if len(cands) == 1:
        return cands[0]
    start = {o.name: o.matrix_world.translation.copy() for o in cands}
    moved = dict.fromkeys(start, 0.0)
    for f in range(scene.frame_start, scene.frame_end + 1, 5):
        scene.frame_set(f)
        for o in cands:
            moved[o.name] = max(moved[o.name], (o.matrix_world.translation - start[o.name]).length)
    scene.frame_set(scene.frame_start)
    return max(cands, key=lambda o: moved[o.name])


STILL_M = 1e-3  # m: a core object that never moves farther than this in the truth bake is still


def displacement(scene: Any, ob: Any) -> float:
    """Largest distance of `ob`'s origin from its first-frame position over the baked range (every 5th frame)."""
    scene.frame_set(scene.frame_start)
    p0 = ob.matrix_world.translation.copy()
    d = 0.0
    for f in range(scene.frame_start, scene.frame_end + 1, 5):
        scene.frame_set(f)
        d = max(d, (ob.matrix_world.translation - p0).length)
    scene.frame_set(scene.frame_start)
    return d


def solver_flow(scene: Any, mapping: dict[str, str]) -> tuple[Any, Any] | None:
    """(emitter, particle system) of a core object whose particles a solver moves (SPH, Newtonian), or None."""
    for o in core_objects(scene, mapping):
        for ps in o.particle_systems:
            if ps.settings.physics_type in {"FLUID", "NEWTON"}:
                return o, ps
    return None


def na(why: str) -> ValueError:
    return ValueError(f"{NOT_APPLICABLE} {why}")


def cloth_core(scene: Any, mapping: dict[str, str], kind: str) -> tuple[Any, Any]:
    for ob in core_objects(scene, mapping):
        for m in ob.modifiers:
            if m.type == "CLOTH":
                return ob, m
    raise na(f"no core object is a cloth, so {kind} has nothing to act on")


def flow_tracks(scene: Any, em: Any, ps0: Any) -> tuple[Any, Any]:
    """Baked particle positions (F, P, 3) and alive mask (F, P) of one particle system over the scene's range."""
    import bpy
    import numpy as np

    ps_index = list(em.particle_systems).index(ps0)
    pos, alive = [], []
    for f in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(f)
        ps = em.evaluated_get(bpy.context.evaluated_depsgraph_get()).particle_systems[ps_index]
        n = len(ps.particles)
        a = np.zeros(n * 3, np.float32)
        st = np.zeros(n, np.int32)
        if n:
            ps.particles.foreach_get("location", a)
            ps.particles.foreach_get("alive_state", st)
        pos.append(a.reshape(n, 3))
        alive.append(st == 3)  # alive_state ALIVE (bpy 5.0: DEAD=1, UNBORN=2, ALIVE=3, DYING=4)
    scene.frame_set(scene.frame_start)
    n = max(len(p) for p in pos)
    P = np.zeros((len(pos), n, 3), np.float32)
    A = np.zeros((len(pos), n), bool)
    for i, (p, al) in enumerate(zip(pos, alive, strict=True)):
        P[i, : len(p)] = p
        A[i, : len(al)] = al
    return P, A
