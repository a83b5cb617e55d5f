"""Known defects injected into a baked truth scene (bpy), for the verifier's self-test.

Each defect changes the scene the way a cheating or careless reconstruction would (keyframes on a core
object, a removed collider, a hidden support, an oversized collision margin, an attractor); the self-test
in `verifier.selftest` checks that the audit and the rubric catch each one. Runs inside `probes.rebake.cf_worker`.
"""

from __future__ import annotations

import json
from typing import Any

from physcodegym.probes.defects.defects_hiding import HIDING_DEFECTS, HIDING_TWINS, inject_hiding
from physcodegym.probes.defects.targets import (
    NOT_APPLICABLE,
    STILL_M,
    cloth_core,
    core_objects,
    displacement,
    flow_tracks,
    moving_core,
    solver_flow,
    support_objects,
)

DEFECTS: dict[str, tuple[str, ...]] = {
    "keyframe_core": ("scripted_motion", "not_simulated"),
    "remove_collider": ("no_contact_response", "interpenetration"),
    "hidden_support": ("hidden_support",),
    "oversize_margin": ("collider_mismatch",),
    "add_attractor": ("unexplained_force_field", "energy_gain"),
    # concealment mechanisms (SPEC §5, self-test)
    "nla_world_off": ("scripted_motion", "not_simulated"),  # truth motion keyed into an NLA strip, rigid world off
    "hidden_follower": ("scripted_motion",),  # the simulated core stops rendering; a visible copy follows it
    "gravity_clock": ("non_physical_parameter",),  # gravity weight 0.25 with the solver clock at 2x
    "static_embed": ("interpenetration",),  # two rendered solids sunk into each other, neither moves
    "glue_joint": ("hidden_support",),  # the moving core glued (FIXED joint) to its support: a joint nobody sees
    "hidden_motor": ("energy_gain", "hidden_support"),  # a linear MOTOR joint drags the moving core along
    # the moving core hung by a POINT joint from its rendered support, the pivot 1 m above it in mid-air
    "distant_hinge": ("hidden_support",),
    "stale_bake": ("stale_cache",),  # baked at half gravity, then gravity set back: the bake is kept
    # an angular MOTOR joint on the moving core whose target velocity is keyed over the run, its impulse too weak
    # to change much: an actuator played by keyframes is scripted whatever its measured effect
    "keyed_motor": ("scripted_motion",),
    # honest twins (SPEC §5, self-test): each must stay clean (no finding, no failed criterion, no drop of S_val
    # that the unchanged truth does not have)
    "idle_motor": (),  # the keyed_motor joint with its motors off: present, constant, changing nothing
    "instanced_decor": (),  # every rendered mesh with no physics drawn through a collection instance instead
    "rebake_same": (),  # stale_bake's twin: gravity assigned after the bake, to the value the bake was made with
    # a FORCE field far under the moving rigid core, its strength tuned to carry the core's whole weight: the body
    # floats where it should fall (the finding names the field and the share of the weight it carries)
    "field_lift": ("hidden_support",),
    "field_far": (),  # field_lift's twin: the same field, its reach cut to 1 m, 100 m away: it acts on nothing
    # a spare of the task's cloth, pinned and still on a rendered crate, folded back over itself so that its
    # returning leg passes through the first one beside the fold: a static defect though nothing moves
    "still_cloth_crossing": ("self_intersection",),
    "still_cloth_fold": (),  # its twin: the same spare folded with its returning leg 2 cm above the first one
    **HIDING_DEFECTS,  # render-only motion, viewport-only collider, pass-through, cloth shell, pin, Brownian push,
    # a collider drawn inside its collision surface, a vanishing liquid
}
# The concealment-mechanism defects (CI runs them on a few rigid tasks; `selftest --all` on every task).
MECHANISM_DEFECTS: tuple[str, ...] = ("nla_world_off", "hidden_follower", "gravity_clock", "static_embed",
                                      "glue_joint", "hidden_motor", "distant_hinge", "stale_bake", "keyed_motor",
                                      "idle_motor", "instanced_decor", "rebake_same", "field_lift", "field_far",
                                      "still_cloth_crossing", "still_cloth_fold", *HIDING_DEFECTS)
# Honest twins: the self-test expects them clean (`verifier.selftest`: a finding or a drop of S_val is a false alarm).
HONEST_TWINS: dict[str, str] = {"idle_motor": "keyed_motor", "instanced_decor": "pin_in_air",
                                "rebake_same": "stale_bake", "field_far": "field_lift",
                                "still_cloth_fold": "still_cloth_crossing", **HIDING_TWINS}
BASIC_DEFECTS: tuple[str, ...] = tuple(k for k in DEFECTS if k not in MECHANISM_DEFECTS)
def _still_core(scene: Any, mapping: dict[str, str], defect: str) -> Any:
    """The moving core, or a not-applicable error when it is no simulated body and never moves: a defect that
    hides or replaces the core's own motion proves nothing on an object that stays put (a liquid's emitter;
    its flow moves instead)."""
    ob = moving_core(scene, mapping)
    body = (ob.rigid_body is not None and ob.rigid_body.type == "ACTIVE") or any(
        m.type in {"CLOTH", "SOFT_BODY"} for m in ob.modifiers)
    if body:  # a simulated body at rest (a settled stack) still has a simulation the defect can hide or replace
        return ob
    d = displacement(scene, ob)
    if d <= STILL_M:
        flow = solver_flow(scene, mapping)
        what = f"its particle system {flow[1].name!r} moves instead" if flow else "nothing of it moves"
        raise ValueError(f"{NOT_APPLICABLE} the core {ob.name} never moves in the truth bake ({d * 1000:.1f} mm); "
                         f"{what}, so {defect} has no motion to act on")
    return ob


def _hidden_flow_shelf(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """An invisible collider that catches a liquid in mid-fall: a thin box in the path of the baked flow, a
    quarter of the way (3 to 15 cm) down from where it is emitted towards where it ends, under the particles
    that cross that height. The liquid is then held by something nobody sees."""
    import bpy
    import numpy as np

    flow = solver_flow(scene, mapping)
    if flow is None:
        raise ValueError(f"{NOT_APPLICABLE} no core particle system is simulated")
    em, ps0 = flow
    P, A = flow_tracks(scene, em, ps0)
    z = np.where(A, P[..., 2], np.nan)
    born = A.any(axis=0)
    if not born.any():
        raise ValueError(f"{NOT_APPLICABLE} the particle system {ps0.name!r} emits nothing in the truth bake")
    z_emit = float(np.nanmedian(z[A.argmax(axis=0)[born], np.nonzero(born)[0]]))
    z_end = float(np.nanmedian(z[-1])) if A[-1].any() else z_emit - 0.3
    z_top = z_emit - min(0.15, max(0.03, 0.25 * (z_emit - z_end)))
    age = np.arange(len(A))[:, None] - A.argmax(axis=0)[None, :]
    near = A & (age < 30) & (np.abs(P[..., 2] - z_top) < 0.03)  # the stream in its first second, not later splashes
    if not near.any():
        raise ValueError(f"{NOT_APPLICABLE} the flow of {ps0.name!r} never crosses z = {z_top:.3f} m below its emitter")
    xy = P[near][:, :2]
    lo, hi = np.percentile(xy, 5, axis=0), np.percentile(xy, 95, axis=0)
    c = (lo + hi) / 2
    ext = np.maximum(hi - lo, 0.05) + 0.1
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(float(c[0]), float(c[1]), z_top - 0.01))
    box = bpy.context.active_object
    box.name = "HiddenShelf"
    box.scale = (float(ext[0]), float(ext[1]), 0.02)
    box.hide_render = True
    box.modifiers.new("Collision", "COLLISION")
    return {"kind": "hidden_support", "object": box.name,
            "detail": f"invisible collider {ext[0]:.2f} x {ext[1]:.2f} m, top at z = {z_top:.3f} m, in the path of "
                      f"{em.name}'s flow {ps0.name!r}"}


def _keyed_flow(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """The cheat for a liquid: the truth flow recorded and played back. The particle system is removed and a
    point cloud, one vertex per particle, replays every baked particle position through shape keys (eval_time
    keyed on every frame), drawing the liquid's drop on each vertex. The cloud takes the emitter's name, so the
    liquid role resolves to it; the emitter stays as a rendered, still disc."""
    import bpy
    import numpy as np

    flow = solver_flow(scene, mapping)
    if flow is None:
        raise ValueError(f"{NOT_APPLICABLE} no core object moves and no core particle system is simulated")
    em, ps0 = flow
    size = float(ps0.settings.particle_size)
    drop_src = ps0.settings.instance_object if ps0.settings.render_type == "OBJECT" else None
    frames = list(range(scene.frame_start, scene.frame_end + 1))
    P, A = flow_tracks(scene, em, ps0)
    n = P.shape[1]
    born = A.any(axis=0)
    first = np.where(born, A.argmax(axis=0), 0)
    last = np.where(born, len(frames) - 1 - A[::-1].argmax(axis=0), 0)
    hide = np.array(em.matrix_world.translation, np.float32)
    for i in range(n):  # before birth a drop waits at its birth point, after death where it died
        if not born[i]:
            P[:, i] = hide
            continue
        P[: first[i], i] = P[first[i], i]
        P[last[i] + 1 :, i] = P[last[i], i]
    scene.frame_set(scene.frame_start)
    ps_name = ps0.name  # read before the removal: `ps0` then points at freed memory (a garbled name, or a crash)
    em.modifiers.remove(
        next(m for m in em.modifiers if m.type == "PARTICLE_SYSTEM" and m.particle_system.name == ps_name))
    del ps0
    name = em.name
    em.name = name + "_Emitter"
    me = bpy.data.meshes.new(name + "Keyed")
    me.vertices.add(n)
    me.vertices.foreach_set("co", P[0].ravel())
    me.update()
    cloud = bpy.data.objects.new(name, me)
    scene.collection.objects.link(cloud)
    cloud.shape_key_add(name="Basis", from_mix=False)
    for k in range(1, len(frames)):
        cloud.shape_key_add(name=f"frame{frames[k]}", from_mix=False).data.foreach_set("co", P[k].ravel())
    key = me.shape_keys
    key.use_relative = False  # absolute keys: eval_time walks the recorded frames in order
    for k, f in enumerate(frames):
        key.eval_time = key.key_blocks[k].frame
        key.keyframe_insert("eval_time", frame=f)
    if drop_src is not None and drop_src.type == "MESH":
        drop = bpy.data.objects.new(name + "Drop", drop_src.data)
        scene.collection.objects.link(drop)
        drop.scale = (size, size, size)
        drop.parent = cloud
        cloud.instance_type = "VERTS"
        cloud.show_instancer_for_render = False
    return {"kind": "keyframe_core", "object": cloud.name,
            "detail": f"particle system {ps_name!r} of {name} removed; {n} particles x {len(frames)} frames of the "
                      f"truth flow replayed by shape keys on {cloud.name} (emitter renamed {em.name})"}


def _reopened() -> Any:
    """Open the file being edited again and return its scene (objects are found again by name).

    Why: an injection that reads the truth motion frame by frame builds the physics world; removing a jointed
    body from a built world leaves Bullet's joint pointing at freed memory, and a joint whose holder is hidden
    cannot be removed first (`interventions.drop_joints`). Re-opened, the old world is freed while every body
    still exists, and the new one is built only by the re-bake, after the edit (measured safe with the holder
    shown or hidden, test_jointed_removal). The worker opened this job's own copy, so nothing earlier is lost.
    """
    import bpy

    bpy.ops.wm.open_mainfile(filepath=bpy.data.filepath, use_scripts=False)  # Auto Run off, as the worker
    return bpy.context.scene


def _drop_rigid_body(scene: Any, ob: Any) -> None:
    """Remove `ob`'s rigid body, the joints that name it first (`interventions.drop_joints` says why).

    Measured in bpy 5.0.1 with the plain removal, the worker started as the self-test starts it from 40 run
    folders of different path lengths: pendulum's `keyframe_core` crashed 10 (SIGSEGV); with the joints removed
    first, none.
    """
    import bpy
    from physcodegym.probes.branches.interventions import drop_joints

    if ob.rigid_body is None:
        return
    drop_joints(scene, ob)
    with bpy.context.temp_override(object=ob, active_object=ob, selected_objects=[ob]):
        bpy.ops.rigidbody.object_remove()


def _keyframe_core(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """The moving core's solver removed and its truth motion keyframed (every other frame, and the last)."""
    ob = moving_core(scene, mapping)
    if displacement(scene, ob) <= STILL_M and solver_flow(scene, mapping) is not None:
        # a still emitter: keyframing it proves nothing; the flow is what moves, so the flow is keyed
        return _keyed_flow(scene, mapping)
    track = []
    for f in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(f)
        track.append(ob.matrix_world.copy())
    name = ob.name
    scene = _reopened()  # the frames read built the physics world: the body is removed from a fresh one
    ob = scene.objects[name]
    _drop_rigid_body(scene, ob)
    for m in list(ob.modifiers):
        if m.type in {"CLOTH", "SOFT_BODY"}:
            ob.modifiers.remove(m)
    ob.animation_data_clear()
    for i, mw in enumerate(track):
        if i % 2 and i != len(track) - 1:
            continue
        f = scene.frame_start + i
        ob.matrix_world = mw
        ob.keyframe_insert("location", frame=f)
        ob.keyframe_insert("rotation_euler", frame=f)
    return {"kind": kind, "object": ob.name,
            "detail": f"rigid body/cloth removed, {len(track)} frames keyframed from the truth motion"}


def _remove_collider(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """The first passive collider the core rests on loses its collision (it still renders)."""
    sups = support_objects(scene, mapping)
    if not sups:
        raise ValueError(f"{NOT_APPLICABLE} no passive collider to remove")
    ob = sups[0]
    _drop_rigid_body(scene, ob)
    for m in list(ob.modifiers):
        if m.type == "COLLISION":
            ob.modifiers.remove(m)
    return {"kind": kind, "object": ob.name, "detail": "collider removed (still renders)"}


def _hidden_support(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """An invisible shelf under the moving core (or under a still emitter's liquid) holds it up."""
    import bpy
    import mathutils

    ob = moving_core(scene, mapping)
    if ob.rigid_body is None and solver_flow(scene, mapping) is not None and displacement(scene, ob) <= STILL_M:
        # a shelf under a still emitter holds nothing: the liquid is what an invisible collider would hold
        return _hidden_flow_shelf(scene, mapping)
    scene.frame_set(scene.frame_start)
    bb = [ob.matrix_world @ mathutils.Vector(c) for c in ob.bound_box]
    zmin = min(v.z for v in bb)
    cx = sum(v.x for v in bb) / 8
    cy = sum(v.y for v in bb) / 8
    ext = max(max(v.x for v in bb) - min(v.x for v in bb), max(v.y for v in bb) - min(v.y for v in bb), 0.2)
    # top face 3 cm above the body's lowest point: the body is held by the invisible shelf, not its visible support
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(cx, cy, zmin - 0.02))
    box = bpy.context.active_object
    box.name = "HiddenShelf"
    box.scale = (3 * ext, 3 * ext, 0.1)
    box.hide_render = True
    if any(m.type in {"CLOTH", "SOFT_BODY"} for m in ob.modifiers):
        box.modifiers.new("Collision", "COLLISION")
    else:
        with bpy.context.temp_override(object=box, active_object=box, selected_objects=[box]):
            bpy.ops.rigidbody.object_add(type="PASSIVE")
        box.rigid_body.collision_shape = "BOX"
        box.rigid_body.collision_collections = [True] * 20
    return {"kind": kind, "object": box.name, "detail": f"invisible collider under {ob.name}"}


def _oversize_margin(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """The core's collision margin (or its support's collision thickness) grown so it floats on a shell."""
    ob = moving_core(scene, mapping)
    dims = sorted(ob.dimensions)
    m = max(0.1, 0.5 * dims[0] if dims[0] > 0 else 0.1)
    if ob.rigid_body is not None:
        # spheres and boxes embed their margin; a hull grows by it, so the body floats on a shell
        if ob.rigid_body.collision_shape in {"SPHERE", "BOX", "CAPSULE"}:
            ob.rigid_body.collision_shape = "CONVEX_HULL"
        ob.rigid_body.use_margin = True
        ob.rigid_body.collision_margin = min(1.0, m)
        return {"kind": kind, "object": ob.name,
                "detail": f"{ob.rigid_body.collision_shape} collision margin {m:.3f} m"}
    sups = support_objects(scene, mapping)
    # SPH particles against a 0.2 m shell bake for minutes (measured on liquid_duck); 0.1 m is still
    # 5x Blender's default and twice what the scan accepts
    th = 0.06 if any(len(o.particle_systems) for o in scene.objects) else 0.2
    for s in sups:
        if s.collision is not None:
            s.collision.thickness_outer = th
            return {"kind": kind, "object": s.name, "detail": f"collision thickness {th} m"}
    raise ValueError(f"{NOT_APPLICABLE} no collider whose margin can be oversized")


def _add_attractor(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """A FORCE field pulling at the moving core, 1 m beside it."""
    import bpy

    ob = moving_core(scene, mapping)
    scene.frame_set(scene.frame_start)
    p = ob.matrix_world.translation
    bpy.ops.object.effector_add(type="FORCE", location=(p.x + 1.0, p.y, p.z + 0.5))
    f = bpy.context.active_object
    f.name = "Attractor"
    f.field.strength = -60.0

    return {"kind": kind, "object": f.name, "detail": f"FORCE field strength -60 near {ob.name}"}


def _rebake_same(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """stale_bake's honest twin: gravity assigned after the bake, the value it was baked with."""
    g = [float(x) for x in scene.gravity]
    return {"kind": kind, "object": None, "after_bake": {"gravity": g},
            "detail": f"baked, then gravity assigned again the value it was baked with ({g}): the bake holds"}


def _stale_bake(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """Baked at half gravity, then gravity set back: Blender keeps the bake, which the saved scene no longer makes."""
    g = [float(x) for x in scene.gravity]
    scene.gravity = [0.5 * x for x in g]
    return {"kind": kind, "object": None, "after_bake": {"gravity": g},
            "detail": f"baked at half gravity {[round(0.5 * x, 3) for x in g]}, then gravity set back to {g}: "
                      "Blender keeps the bake"}


def inject_defect(scene: Any, kind: str, mapping: dict[str, str]) -> dict[str, Any]:
    """Change the loaded truth scene so it carries one defect of `kind`; returns what was done."""
    basic = {"keyframe_core": _keyframe_core, "remove_collider": _remove_collider, "hidden_support": _hidden_support,
             "oversize_margin": _oversize_margin, "add_attractor": _add_attractor, "rebake_same": _rebake_same,
             "stale_bake": _stale_bake}
    if kind in basic:
        return basic[kind](scene, mapping, kind)
    if kind == "nla_world_off":
        return _nla_world_off(scene, mapping)
    if kind == "hidden_follower":
        return _hidden_follower(scene, mapping)
    if kind == "gravity_clock":
        return _gravity_clock(scene, mapping)
    if kind == "static_embed":
        return _static_embed(scene, mapping)
    if kind in ("glue_joint", "hidden_motor", "keyed_motor", "idle_motor"):
        return _hidden_joint(scene, mapping, kind)
    if kind == "instanced_decor":
        return _instanced_decor(scene, mapping)
    if kind in ("field_lift", "field_far"):
        return _field_lift(scene, mapping, kind)
    if kind in ("still_cloth_crossing", "still_cloth_fold"):
        return _still_cloth(scene, mapping, kind)
    if kind == "distant_hinge":
        return _distant_hinge(scene, mapping)
    if kind in HIDING_DEFECTS:
        return inject_hiding(scene, kind, mapping)
    raise ValueError(f"unknown defect {kind!r}; known: {', '.join(DEFECTS)}")


def after_bake(scene: Any, injected: dict[str, Any]) -> list[str]:
    """Edits a defect makes once its scene is baked (`stale_bake`: the setting the bake was made with is put
    back, so the saved scene names nothing unusual while its bake shows other physics); what was done."""
    done = []
    todo = injected.get("after_bake") or {}
    if "gravity" in todo:
        scene.gravity = todo["gravity"]
        done.append(f"scene.gravity = {todo['gravity']}")
    return done


def _track(scene: Any, ob: Any) -> list[Any]:
    out = []
    for f in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(f)
        out.append(ob.matrix_world.copy())
    scene.frame_set(scene.frame_start)
    return out


def _nla_world_off(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """Key the truth motion of the moving rigid core into an NLA strip (no active action) and switch the
    rigid-body world off: the body keeps its rigid body, the strip moves it."""
    rbw = scene.rigidbody_world
    ob = _still_core(scene, mapping, "nla_world_off")
    if rbw is None or ob.rigid_body is None:
        raise ValueError(f"{NOT_APPLICABLE} the moving core {ob.name} is not a rigid body")
    track = _track(scene, ob)
    ob.animation_data_clear()
    for i, mw in enumerate(track):
        if i % 2 and i != len(track) - 1:
            continue
        ob.matrix_world = mw
        ob.keyframe_insert("location", frame=scene.frame_start + i)
        ob.keyframe_insert("rotation_euler", frame=scene.frame_start + i)
    ad = ob.animation_data
    act = ad.action
    tr = ad.nla_tracks.new()
    tr.strips.new(act.name, int(act.frame_range[0]), act)
    ad.action = None
    rbw.enabled = False
    return {"kind": "nla_world_off", "object": ob.name,
            "detail": f"{len(track)} frames keyed into an NLA strip, rigidbody_world.enabled = False"}


def _hidden_follower(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """The simulated core stops rendering; a rendered copy without physics is parented to it (the visible
    object's motion is owned by a body nobody sees)."""
    import bpy

    ob = _still_core(scene, mapping, "hidden_follower")
    if ob.type != "MESH" or any(m.type in {"CLOTH", "SOFT_BODY"} for m in ob.modifiers):
        raise ValueError(f"{NOT_APPLICABLE} the moving core {ob.name} deforms (a rigid copy cannot follow it)")
    scene.frame_set(scene.frame_start)
    vis = bpy.data.objects.new(ob.name + "_Shown", ob.data.copy())
    scene.collection.objects.link(vis)
    for slot_src, slot in zip(ob.material_slots, vis.material_slots, strict=False):
        slot.material = slot_src.material
    vis.matrix_world = ob.matrix_world.copy()
    vis.parent = ob
    vis.matrix_parent_inverse = ob.matrix_world.inverted()
    ob.hide_render = True
    return {"kind": "hidden_follower", "object": vis.name,
            "detail": f"{ob.name} hidden in renders; {vis.name} (no physics) parented to it"}


def _gravity_clock(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """Weaker gravity with a faster solver clock on the solver that moves the core (the same fall, other physics)."""
    ob = moving_core(scene, mapping)
    done = []
    if ob.rigid_body is not None and scene.rigidbody_world is not None:
        w = scene.rigidbody_world
        w.effector_weights.gravity = 0.25
        w.time_scale = 2.0
        done.append("rigidbody_world: effector_weights.gravity 0.25, time_scale 2.0")
    for m in ob.modifiers:
        if m.type == "CLOTH":
            m.settings.effector_weights.gravity = 0.25
            m.settings.time_scale = 2.0
            done.append(f"{m.name}: effector_weights.gravity 0.25, time_scale 2.0")
    for o in core_objects(scene, mapping):
        for ps in o.particle_systems:
            ps.settings.effector_weights.gravity = 0.25
            ps.settings.time_tweak = 2.0
            done.append(f"{o.name}/{ps.name}: effector_weights.gravity 0.25, time_tweak 2.0")
    if not done:
        raise ValueError(f"{NOT_APPLICABLE} no solver moves the core")
    return {"kind": "gravity_clock", "object": ob.name, "detail": "; ".join(done)}


def _static_embed(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """Two rendered crates (no physics) sunk 40 % into each other beside the scene's support; neither moves."""
    import bpy
    import mathutils

    sups = support_objects(scene, mapping) or core_objects(scene, mapping)
    ref = sups[0]
    scene.frame_set(scene.frame_start)
    bb = [ref.matrix_world @ mathutils.Vector(c) for c in ref.bound_box]
    x = max(v.x for v in bb)
    y = min(v.y for v in bb)
    z = max(v.z for v in bb)
    size = 0.12
    names = []
    for i, dx in enumerate((0.0, 0.6 * size)):
        me = bpy.data.meshes.new(f"EmbedCrate{i}")
        h = size / 2
        verts = [(a, b, c) for a in (-h, h) for b in (-h, h) for c in (-h, h)]
        faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
        me.from_pydata(verts, [], faces)
        me.update()
        o = bpy.data.objects.new(f"EmbedCrate{i}", me)
        scene.collection.objects.link(o)
        o.location = (x + 0.5 + dx, y - 0.5, z + h + 0.3)
        names.append(o.name)
    return {"kind": "static_embed", "object": names[0],
            "detail": f"{names[0]} and {names[1]} overlap by {0.4 * size:.3f} m, no physics"}


def _distant_hinge(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """The moving rigid core hung by a POINT joint from its rendered support, the pivot 1 m above the core's
    start: both joined bodies render, the link between them does not. Applies whatever joint types the task
    admits (an admitted joint still needs material that reaches its pivot)."""
    import bpy
    from mathutils import Vector

    ob = _still_core(scene, mapping, "distant_hinge")
    if ob.rigid_body is None or scene.rigidbody_world is None:
        raise ValueError(f"{NOT_APPLICABLE} the moving core {ob.name} is not a rigid body")
    sups = [o for o in support_objects(scene, mapping) if o.rigid_body is not None and not o.hide_render]
    if not sups:
        raise ValueError(f"{NOT_APPLICABLE} no rendered rigid support to hang the core from")
    scene.frame_set(scene.frame_start)
    holder = bpy.data.objects.new("Tether", None)
    scene.collection.objects.link(holder)
    holder.location = ob.matrix_world.translation + Vector((0.0, 0.0, 1.0))
    bpy.context.view_layer.objects.active = holder
    bpy.ops.rigidbody.constraint_add(type="POINT")
    c = holder.rigid_body_constraint
    c.object1, c.object2 = sups[0], ob
    return {"kind": "distant_hinge", "object": holder.name,
            "detail": f"POINT joint {holder.name} between {sups[0].name} and {ob.name}, its pivot 1 m above "
                      f"{ob.name} in mid-air"}


def _hidden_joint(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """A rigid-body joint the video does not show, between the moving rigid core and its (rendered) support:
    `glue_joint` a FIXED joint holding the core where it starts, `hidden_motor` a linear MOTOR joint dragging it
    along x at 1 m/s. Not applicable where the task admits that joint type (then it is no cheat)."""
    import bpy

    jtype = "FIXED" if kind == "glue_joint" else "MOTOR"
    if kind == "idle_motor":  # the twin: a joint type nobody admits, present, that does nothing
        jtype = "MOTOR"
    elif jtype in json.loads(mapping.get("__admits__", "[]")):
        raise ValueError(f"{NOT_APPLICABLE} the task admits {jtype} joints")
    if jtype in json.loads(mapping.get("__admits__", "[]")):
        raise ValueError(f"{NOT_APPLICABLE} the task admits {jtype} joints")
    ob = _still_core(scene, mapping, kind)
    if ob.rigid_body is None or scene.rigidbody_world is None:
        raise ValueError(f"{NOT_APPLICABLE} the moving core {ob.name} is not a rigid body")
    sups = [o for o in support_objects(scene, mapping) if o.rigid_body is not None]
    scene.frame_set(scene.frame_start)
    if sups:
        anchor = sups[0]
    else:  # no passive body: an unrendered one that collides with nothing
        bpy.ops.mesh.primitive_cube_add(size=0.05, location=ob.matrix_world.translation)
        anchor = bpy.context.active_object
        anchor.name = "JointAnchor"
        anchor.hide_render = True
        with bpy.context.temp_override(object=anchor, active_object=anchor, selected_objects=[anchor]):
            bpy.ops.rigidbody.object_add(type="PASSIVE")
        anchor.rigid_body.collision_collections = [False] * 20
    holder = bpy.data.objects.new("Glue" if jtype == "FIXED" else "Drive", None)
    scene.collection.objects.link(holder)
    holder.location = ob.matrix_world.translation.copy()
    bpy.context.view_layer.objects.active = holder  # constraint_add acts on the active object only
    bpy.ops.rigidbody.constraint_add(type=jtype)
    c = holder.rigid_body_constraint
    c.object1, c.object2 = anchor, ob
    if kind in ("keyed_motor", "idle_motor"):  # keep their collision: a joint disables it by default, and a ball
        c.disable_collisions = False  # that falls through its table is another defect than the one named here
    how = ""
    if kind == "hidden_motor":
        c.use_motor_lin = True
        c.motor_lin_target_velocity = 1.0
        c.motor_lin_max_impulse = 5.0
        how = " (linear motor 1 m/s)"
    elif kind == "keyed_motor":
        c.use_motor_ang = True
        c.motor_ang_max_impulse = 0.002
        f0, f1 = scene.frame_start, scene.frame_end
        for f, w in ((f0, 0.0), ((f0 + f1) // 2, 0.5), (f1, -0.5)):
            c.motor_ang_target_velocity = w
            c.keyframe_insert("motor_ang_target_velocity", frame=f)
        how = " (angular motor, impulse 0.002, target velocity keyed 0 -> 0.5 -> -0.5 rad/s)"
    elif kind == "idle_motor":
        c.use_motor_lin = c.use_motor_ang = False
        how = " (motors off)"
    return {"kind": kind, "object": holder.name,
            "detail": f"{jtype} joint {holder.name} between {anchor.name} and {ob.name}{how}"}


def _instanced_decor(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """Every rendered mesh with no physics settings, no animation, no parent and no children (a pole, a stand, a
    backdrop) is moved into a collection of its own that no scene links and drawn by an empty that instances that
    collection: every frame shows the same material, so the audit must find nothing new (`instanced_decor`)."""
    import bpy

    roles = {v for k, v in mapping.items() if not k.startswith("__")}
    physics = {"CLOTH", "SOFT_BODY", "COLLISION", "FLUID", "DYNAMIC_PAINT", "PARTICLE_SYSTEM"}
    drawn = {ps.settings.instance_object.name for o in scene.objects for ps in o.particle_systems
             if ps.settings.instance_object is not None}  # particle drops: they render where the particles are
    roles |= drawn
    decor = [o for o in scene.objects if o.type == "MESH" and o.name not in roles and not o.hide_render
             and o.rigid_body is None and o.rigid_body_constraint is None and o.parent is None and not o.children
             and o.animation_data is None and not o.particle_systems
             and (o.field is None or o.field.type == "NONE") and not any(m.type in physics for m in o.modifiers)]
    if not decor:
        raise ValueError(f"{NOT_APPLICABLE} no rendered mesh without physics to draw through an instance")
    done = []
    for o in decor:
        col = bpy.data.collections.new(f"Decor_{o.name}")
        for c in list(o.users_collection):
            c.objects.unlink(o)
        col.objects.link(o)
        inst = bpy.data.objects.new(f"{o.name}_instance", None)
        inst.instance_type = "COLLECTION"
        inst.instance_collection = col
        scene.collection.objects.link(inst)
        done.append(o.name)
    return {"kind": "instanced_decor", "object": None,
            "detail": f"{len(done)} rendered mesh(es) without physics drawn through collection instances: {done}"}


FIELD_DROP_M = 100.0  # m: field_lift's field sits this far under the core (its push is vertical wherever it goes)


def _field_lift(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """A FORCE field `FIELD_DROP_M` under the moving rigid core's start, constant falloff, its strength tuned so
    its push carries the core's whole weight: the body, which starts at rest, floats where it starts
    (`field_lift`). Bullet receives a FORCE field's strength as a force of strength / fps newtons (measured in bpy
    5.0.1: 295 holds 1 kg at 30 fps, the same at 24 fps rises, 2 kg falls; substeps change nothing), scaled by the
    rigid-body world's force weight, while gravity is scaled by its gravity weight. The twin `field_far` is the
    same field 100 m to the side with its reach cut to 1 m: present, strong, acting on nothing. Not applicable
    where the task admits force fields (then a field is no cheat) or the core is no rigid body."""
    import bpy
    from mathutils import Vector

    if "FORCE" in json.loads(mapping.get("__admits__", "[]")):
        raise ValueError(f"{NOT_APPLICABLE} the task admits force fields")
    ob = _still_core(scene, mapping, kind)
    w = scene.rigidbody_world
    if ob.rigid_body is None or w is None or ob.rigid_body.type != "ACTIVE":
        raise ValueError(f"{NOT_APPLICABLE} the moving core {ob.name} is not an active rigid body (a field's push "
                         "on a cloth or a liquid is no one number to tune)")
    ew = w.effector_weights
    g = float(Vector(scene.gravity).length) * ew.gravity * ew.all
    if ew.force * ew.all <= 0 or g <= 0:
        raise ValueError(f"{NOT_APPLICABLE} the rigid-body world takes no force fields or has no gravity")
    fps = scene.render.fps / scene.render.fps_base
    strength = ob.rigid_body.mass * g * fps / (ew.force * ew.all)
    scene.frame_set(scene.frame_start)
    p = ob.matrix_world.translation.copy()
    bpy.ops.object.effector_add(type="FORCE", location=(p.x, p.y, p.z - FIELD_DROP_M))
    f = bpy.context.active_object
    f.name = "Lift"
    f.field.strength = strength
    f.field.falloff_power = 0.0
    where = f"{FIELD_DROP_M:.0f} m under {ob.name}"
    if kind == "field_far":
        f.location = (p.x + FIELD_DROP_M, p.y, p.z - FIELD_DROP_M)
        f.field.use_max_distance = True
        f.field.distance_max = 1.0
        where = f"{FIELD_DROP_M:.0f} m to the side of and under {ob.name}, its reach cut to 1 m (it acts on nothing)"
    return {"kind": kind, "object": f.name,
            "detail": f"FORCE field {f.name} strength {strength:.2f} ({ob.rigid_body.mass:g} kg x {g:.2f} m/s^2 x "
                      f"{fps:g} fps), {where}"}


FOLD_LEG_M, FOLD_ROWS = 0.5, 8  # the spare cloth: each leg of the fold 0.5 m long, 8 rows of quads (0.0625 m)


def _still_cloth(scene: Any, mapping: dict[str, str], kind: str) -> dict[str, Any]:
    """A spare of the task's cloth (a new strip with the core cloth's quality and mass), every vertex pinned, lying
    on a rendered crate (no physics) beside the scene's support, folded back over itself: its first leg 2 cm over
    the crate, the returning leg 1 cm over it one row from the fold, then (`still_cloth_crossing`) 1.5 cm under
    it from the next row on, so its triangles pass through the first leg beside the fold, where the crossing
    triangles' nearest vertices are two edge rings apart; (`still_cloth_fold`, the twin) 2 cm over it. Every pin
    stays within 5 cm of the crate (a pin farther from material would be a hidden support, another defect).
    Why a spare and not the core cloth: pinning the core stops the motion the task's criteria judge, so its twin
    could never be clean. Not applicable where no core object is a cloth."""
    import bpy
    import mathutils
    _core, cm0 = cloth_core(scene, mapping, kind)
    sups = support_objects(scene, mapping) or core_objects(scene, mapping)
    scene.frame_set(scene.frame_start)
    bb = [sups[0].matrix_world @ mathutils.Vector(c) for c in sups[0].bound_box]
    x0, y0, top = max(v.x for v in bb) + 0.8, min(v.y for v in bb) - 0.8, max(v.z for v in bb) + 0.3
    L, n = FOLD_LEG_M, FOLD_ROWS
    crate = bpy.data.objects.new("SpareCrate", bpy.data.meshes.new("SpareCrate"))
    h = 0.05
    cv = [(a, b, c) for a in (-0.05, L + 0.05) for b in (-0.05, L + 0.05) for c in (-2 * h, 0.0)]
    crate.data.from_pydata(cv, [], [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4),
                                    (1, 5, 7, 3)])
    crate.data.update()
    scene.collection.objects.link(crate)
    crate.location = (x0, y0, top)
    verts = []
    for j in range(2 * n + 1):
        for i in range(n + 1):
            if j <= n:
                y, z = j * L / n, 0.02
            else:
                k = j - n
                y = L - k * L / n
                z = 0.03 if k == 1 else (0.005 if kind == "still_cloth_crossing" else 0.04)
            verts.append((i * L / n, y, z))
    faces = [(j * (n + 1) + i, j * (n + 1) + i + 1, (j + 1) * (n + 1) + i + 1, (j + 1) * (n + 1) + i)
             for j in range(2 * n) for i in range(n)]
    me = bpy.data.meshes.new("SpareCloth")
    me.from_pydata(verts, [], faces)
    me.update()
    ob = bpy.data.objects.new("SpareCloth", me)
    scene.collection.objects.link(ob)
    ob.location = (x0, y0, top)
    ob.vertex_groups.new(name="pin").add(list(range(len(verts))), 1.0, "REPLACE")
    cm = ob.modifiers.new("Cloth", "CLOTH")
    cm.settings.vertex_group_mass = "pin"
    cm.settings.quality = cm0.settings.quality
    cm.settings.mass = cm0.settings.mass
    cm.point_cache.frame_start, cm.point_cache.frame_end = scene.frame_start, scene.frame_end
    how = "dips 1.5 cm under its first leg (crossing it)" if kind == "still_cloth_crossing" else "stays 2 cm over it"
    return {"kind": kind, "object": ob.name,
            "detail": f"{ob.name}: a pinned, still spare of {cm0.name}'s cloth on {crate.name}, folded back over "
                      f"itself; its returning leg {how} one row from the fold"}
