"""Interventions on a loaded native scene (bpy), each read back to verify it took effect.

These run only inside a fresh counterfactual worker process that opened a copy of the saved
`.blend`, so the original scene is never touched. Each function returns a record with what was
changed and `verified` (the property read back after the edit); the worker also checks the
measured effect on the trajectories before any verdict is read.
"""

from __future__ import annotations

from typing import Any

from physcodegym.tasks.schema import Intervention, InterventionKind

N_LAYERS = 20


NO_COLLISION_OWNER = "have no rigid bodies or collision settings to separate"  # evidence, not an unknown


class InterventionError(RuntimeError):
    """The intervention cannot be applied to this scene (missing role, object has no such mechanism)."""


def _obj(scene: Any, mapping: dict[str, str], role: str) -> Any:
    name = mapping.get(role)
    if name is None:
        raise InterventionError(f"role {role!r} is not mapped to a scene object")
    ob = scene.objects.get(name)
    if ob is None:
        raise InterventionError(f"role {role!r} maps to {name!r}, which is not in the scene")
    return ob


def _layers(ob: Any) -> set[int]:
    return {i for i, v in enumerate(ob.rigid_body.collision_collections) if v}


def _set_layers(ob: Any, layers: set[int]) -> None:
    ob.rigid_body.collision_collections = [i in layers for i in range(N_LAYERS)]


def disable_contact(scene: Any, a: Any, others: Any) -> dict[str, Any]:
    """`a` stops colliding with every object in `others`; every other pair keeps its contacts.

    `a` moves to a fresh collision collection, the others to a second fresh one (so they still
    collide among themselves), and every third body joins whichever fresh collections it needs to
    keep the contacts it had.
    """
    bs = list(others) if isinstance(others, (list, tuple)) else [others]
    if a.rigid_body is None or any(b.rigid_body is None for b in bs):
        done = []
        for b in bs:
            if b.collision is not None:  # non-rigid pairs: turn off the collider's response (cloth/soft body)
                b.collision.use = False
                done.append(b.name)
        if not done:
            raise InterventionError(f"{a.name!r} and {[b.name for b in bs]} {NO_COLLISION_OWNER}")
        return {"changed": f"collision response off on {done}", "verified": True}
    bodies = [o for o in scene.objects if o.rigid_body is not None]
    used = set().union(*(_layers(o) for o in bodies))
    free = [i for i in range(N_LAYERS) if i not in used]
    if len(free) < 2:
        raise InterventionError("no free collision collections to separate the pair")
    la, lb = free[0], free[1]
    la_set = _layers(a)
    lb_set = set().union(*(_layers(b) for b in bs))
    for o in bodies:
        if o is a or o in bs:
            continue
        ol = _layers(o)
        add = set()
        if ol & la_set:
            add.add(la)
        if ol & lb_set:
            add.add(lb)
        _set_layers(o, ol | add)
    _set_layers(a, {la})
    for b in bs:
        _set_layers(b, {lb})
    ok = all(not (_layers(a) & _layers(b)) for b in bs)
    return {"changed": f"collision collections {a.name}={{{la}}} {[b.name for b in bs]}={{{lb}}}", "verified": ok}


def drop_joints(scene: Any, ob: Any) -> list[str]:
    """Remove every rigid body constraint that names `ob`; the names of the objects that held them.

    Why: call it before removing `ob` or its rigid body. A joint on a body that is gone is inert, so the physics
    is the same; but once the scene has been evaluated (a branch that read frames, a kinematic hand-off), Blender
    frees the body's Bullet object while the Bullet joint still points at it, and the next bake reads freed
    memory. Whether that crashes depends on the heap's layout: CI crashed both workers of pendulum's
    `keyframe_core` where a developer machine never did (test_jointed_removal). Blender's operator refuses a
    hidden holder; taking it out of the world's joints instead is safe on a world not built yet, not on a built
    one (measured), so code that reads frames before it removes a body re-opens the file first
    (`defects._reopened`).
    """
    import bpy

    held = []
    rbw = scene.rigidbody_world
    joints = rbw.constraints if rbw is not None else None
    # a holder may live only in the world's joint collection, outside the scene's own
    for holder in dict.fromkeys([*scene.objects, *(joints.all_objects if joints is not None else [])]):
        c = holder.rigid_body_constraint
        if c is None or ob not in (c.object1, c.object2):
            continue
        try:
            with bpy.context.temp_override(object=holder, active_object=holder, selected_objects=[holder]):
                bpy.ops.rigidbody.constraint_remove()
        except RuntimeError:  # a hidden holder refuses the operator: out of the world's joints (see above)
            if joints is not None and holder.name in joints.objects:
                joints.objects.unlink(holder)
        held.append(holder.name)
    return held


def remove_object(scene: Any, ob: Any) -> dict[str, Any]:
    import bpy

    name = ob.name
    joints = drop_joints(scene, ob)
    rbw = scene.rigidbody_world
    if rbw is not None and rbw.collection is not None and ob.name in rbw.collection.objects:
        rbw.collection.objects.unlink(ob)
    bpy.data.objects.remove(ob, do_unlink=True)
    return {"changed": f"removed {name}" + (f" and the joints held by {joints}" if joints else ""),
            "verified": scene.objects.get(name) is None}


def _shift_fcurves(ob: Any, offset: tuple[float, float, float]) -> int:
    ad = ob.animation_data
    if not ad or not ad.action:
        return 0
    n = 0
    try:
        from bpy_extras import anim_utils

        cb = anim_utils.action_get_channelbag_for_slot(ad.action, ad.action_slot)
        fcs = cb.fcurves if cb else []
    except Exception:  # noqa: BLE001 - layered-action layout unknown: nothing to shift
        fcs = []
    for fc in fcs:
        if fc.data_path == "location":
            for kp in fc.keyframe_points:
                kp.co[1] += offset[fc.array_index]
                kp.handle_left[1] += offset[fc.array_index]
                kp.handle_right[1] += offset[fc.array_index]
            n += 1
    return n


def shift_release(scene: Any, ob: Any, offset: list[float]) -> dict[str, Any]:
    off = tuple(float(x) for x in offset)
    before = tuple(ob.location)
    ob.location = tuple(b + d for b, d in zip(before, off, strict=True))
    n = _shift_fcurves(ob, off)
    return {"changed": f"{ob.name}.location += {list(off)} ({n} animated channels shifted)", "verified": True,
            "offset": list(off)}


def set_velocity(scene: Any, ob: Any, velocity: list[float], frame: int) -> dict[str, Any]:
    """Kinematic hand-off: keyframe a linear path for frames start..k, then release to the solver."""
    if ob.rigid_body is None:
        raise InterventionError(f"{ob.name!r} is not a rigid body; cannot set its initial velocity")
    fps = scene.render.fps / scene.render.fps_base
    s = scene.frame_start
    k = max(s + 2, frame)
    p0 = tuple(ob.location)
    v = tuple(float(x) for x in velocity)
    if ob.animation_data:
        ob.animation_data_clear()
    ob.rigid_body.kinematic = True
    ob.keyframe_insert("rigid_body.kinematic", frame=k)
    ob.rigid_body.kinematic = False
    ob.keyframe_insert("rigid_body.kinematic", frame=k + 1)
    ob.location = p0
    ob.keyframe_insert("location", frame=s)
    ob.location = tuple(p + vi * (k - s) / fps for p, vi in zip(p0, v, strict=True))
    ob.keyframe_insert("location", frame=k)
    from bpy_extras import anim_utils

    cb = anim_utils.action_get_channelbag_for_slot(ob.animation_data.action, ob.animation_data.action_slot)
    for fc in cb.fcurves:
        for kp in fc.keyframe_points:
            kp.interpolation = "LINEAR" if fc.data_path == "location" else "CONSTANT"
    scene.frame_set(s)
    return {"changed": f"{ob.name} kinematic hand-off at frame {k} with v={list(v)}", "verified": True,
            "release_frame": k}


def disable_field(scene: Any, ob: Any) -> dict[str, Any]:
    if ob.field is None or ob.field.type == "NONE":
        raise InterventionError(f"{ob.name!r} is not a force field")
    if ob.animation_data:
        ob.animation_data_clear()
    kind = ob.field.type
    # strength 0 is not enough: a zero-strength wind still acts on moving bodies; remove the effector
    ob.field.strength = 0.0
    ob.field.type = "NONE"
    return {"changed": f"{ob.name}: {kind} field removed", "verified": ob.field.type == "NONE"}


def disable_actuator(scene: Any, ob: Any) -> dict[str, Any]:
    """Motor constraints off, animated (kinematic) drivers frozen, fields zeroed."""
    done = []
    c = ob.rigid_body_constraint
    if c is not None:
        if c.type == "MOTOR":
            c.use_motor_ang = False
            c.use_motor_lin = False
        c.enabled = False
        done.append("constraint disabled")
    if ob.field is not None and ob.field.type != "NONE":
        ob.field.strength = 0.0
        done.append("field zeroed")
    if ob.animation_data and (ob.animation_data.action or len(ob.animation_data.drivers)):
        scene.frame_set(scene.frame_start)
        mw = ob.matrix_world.copy()
        ob.animation_data_clear()
        ob.matrix_world = mw
        done.append("animation removed (frozen at start pose)")
    for m in ob.modifiers:
        if m.type in {"CLOTH", "SOFT_BODY"}:
            continue
    if not done:
        raise InterventionError(f"{ob.name!r} has no actuator (motor constraint, field or animation)")
    return {"changed": f"{ob.name}: " + ", ".join(done), "verified": True}


def disable_joint(scene: Any, ob: Any) -> dict[str, Any]:
    """Switch off the rigid-body constraint that `ob` holds (nothing else of `ob` changes: a body that holds
    its own constraint keeps its keys, its hand-off and its collider)."""
    c = ob.rigid_body_constraint
    if c is None:
        raise InterventionError(f"{ob.name!r} holds no rigid-body constraint")
    from physcodegym.probes.branches.ownership import _drop_animation

    kind = c.type
    _drop_animation(ob, lambda path: path.startswith("rigid_body_constraint."))  # a keyed `enabled` switches it on
    # Bullet keeps ignoring contacts between the joined bodies while a disabled constraint still asks it to
    # (measured: an unglued block fell through the block under it); without the joint they are two solids
    c.disable_collisions = False
    c.enabled = False
    return {"changed": f"{ob.name}: {kind} constraint disabled", "verified": not c.enabled}


def scale_gravity(scene: Any, factor: float) -> dict[str, Any]:
    g0 = tuple(scene.gravity)
    scene.gravity = tuple(g * float(factor) for g in g0)
    return {"changed": f"gravity {list(g0)} -> {list(scene.gravity)}",
            "verified": abs(scene.gravity[2] - g0[2] * factor) < 1e-6}


def enable_collider(scene: Any, ob: Any) -> dict[str, Any]:
    """Give the object an operative collider (the matched control of a contact verdict)."""
    import bpy

    if ob.type != "MESH":
        raise InterventionError(f"{ob.name!r} is not a mesh; cannot give it a collider")
    if ob.rigid_body is None:
        with bpy.context.temp_override(object=ob, active_object=ob, selected_objects=[ob]):
            bpy.ops.rigidbody.object_add(type="PASSIVE")
        ob.rigid_body.collision_shape = "MESH"
    ob.rigid_body.enabled = True if ob.rigid_body.type == "ACTIVE" else ob.rigid_body.enabled
    _set_layers(ob, set(range(N_LAYERS)))
    if any(m.type in {"CLOTH", "SOFT_BODY"} for o in scene.objects for m in o.modifiers) and ob.collision is None:
        ob.modifiers.new("Collision", "COLLISION")
    if ob.collision is not None:
        ob.collision.use = True
    return {"changed": f"{ob.name}: operative collider", "verified": ob.rigid_body is not None}


def apply_intervention(scene: Any, iv: Intervention, mapping: dict[str, str]) -> dict[str, Any]:
    """Apply one intervention; returns {kind, roles, objects, changed, verified}."""
    k = iv.kind
    obs = [_obj(scene, mapping, r) for r in iv.roles]
    names = [o.name for o in obs]

    def need(n: int) -> None:
        if len(obs) < n:
            raise InterventionError(f"{k.value} needs {n} role(s), got {iv.roles}")

    if k is InterventionKind.disable_contact:
        need(2)
        rec = disable_contact(scene, obs[0], obs[1:])
    elif k in (InterventionKind.remove_object, InterventionKind.remove_support):
        need(1)
        recs = [remove_object(scene, o) for o in obs]
        rec = {"changed": "; ".join(r["changed"] for r in recs), "verified": all(r["verified"] for r in recs)}
    elif k is InterventionKind.shift_release:
        need(1)
        rec = shift_release(scene, obs[0], iv.params.get("offset", [0.0, 0.0, 0.0]))
    elif k is InterventionKind.set_velocity:
        need(1)
        rec = set_velocity(scene, obs[0], iv.params.get("velocity", [0.0, 0.0, 0.0]),
                           iv.from_frame or scene.frame_start + 3)
    elif k is InterventionKind.disable_field:
        need(1)
        recs = [disable_field(scene, o) for o in obs]
        rec = {"changed": "; ".join(r["changed"] for r in recs), "verified": all(r["verified"] for r in recs)}
    elif k is InterventionKind.disable_actuator:
        need(1)
        recs = [disable_actuator(scene, o) for o in obs]
        rec = {"changed": "; ".join(r["changed"] for r in recs), "verified": all(r["verified"] for r in recs)}
    elif k is InterventionKind.disable_joint:
        need(1)
        recs = [disable_joint(scene, o) for o in obs]
        rec = {"changed": "; ".join(r["changed"] for r in recs), "verified": all(r["verified"] for r in recs)}
    elif k is InterventionKind.scale_gravity:
        rec = scale_gravity(scene, float(iv.params.get("factor", 0.0)))
    elif k is InterventionKind.enable_collider:
        need(1)
        recs = [enable_collider(scene, o) for o in obs]
        rec = {"changed": "; ".join(r["changed"] for r in recs), "verified": all(r["verified"] for r in recs)}
    else:  # pragma: no cover - the enum is closed
        raise InterventionError(f"unknown intervention {k}")
    return {"kind": k.value, "roles": list(iv.roles), "objects": names, **rec}
