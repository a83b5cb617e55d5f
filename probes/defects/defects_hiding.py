"""Self-test injections for the concealment mechanisms written against the audit after its first matrix (bpy).

Each one is a cheat a reconstruction could write to make the frames show motion the physics did not make, or
to hide what holds a body up, and each has a detector in the audit (SPEC §5):

- `render_only_lift`: a geometry-nodes modifier reading the scene time lifts the moving core, shown in renders
  only (the viewport, where bakes and a naive audit look, sees the truth) -> `scripted_motion`;
- `viewport_grown_collider`: a Displace modifier shown in the viewport only grows the mesh the rigid core
  collides with, so every rendered frame shows it resting on air -> `collider_mismatch` (or, where the grown hull
  overlaps a neighbour at the start, it is launched by nothing visible -> `energy_gain`);
- `pass_through`: the support keeps its rigid body but shares no collision collection with the moving core,
  which falls through what the frames show it should land on -> `no_contact_response` (or `interpenetration` where
  it is seen sinking inside it);
- `cloth_shell`: the cloth core keeps 0.1 m from every collider (`distance_min`), a drape that floats
  -> `collider_mismatch`;
- `pin_in_air`: the cloth core is pinned along its top edge to nothing rendered -> `hidden_support`;
- `brownian_push`: a random push each step on the liquid's particles -> `non_physical_parameter`;
- `collision_stack_shrink`: every rendered collider with a Collision modifier is drawn 5 cm smaller by a Displace
  after that modifier (it still collides as before), so the cloth or liquid meets surfaces no frame shows
  -> `collider_mismatch`;
- `vanishing_liquid`: the liquid's particles live for 40 % of the run and then vanish -> `non_physical_parameter`;
- `view_layer_hidden`: the support that holds the moving core is moved into a collection that the only view layer
  which renders excludes (the first view layer is switched off and a second one renders): it collides as before
  and no frame shows it -> `hidden_support`;
- `cloth_string`: the cloth core tied by two loose edges (springs that render nothing) from its x-most corners to a
  pinned vertex on the highest point of a rendered static object -> `hidden_support`;
- `keyed_hidden`: that support's hide_render is keyed on for every frame but the last (it renders on one frame, the
  frame the settings used to be read on) -> `hidden_support`;
- `sourceless_liquid`: the liquid's emitter stops rendering (if it did) and is lifted into mid-air, more than
  `SOURCELESS_GAP_M` from anything rendered: the liquid appears from nowhere -> `energy_gain`;
- `masked_stilt`: the moving rigid core's base mesh gets a stilt reaching `STILT_REL` of its size (at least
  `STILT_MIN_M`) below it, cut from every frame by a Mask modifier, and its hull is built from the mesh before
  modifiers (mesh source BASE): it stands on, or is launched by, geometry no frame shows -> `collider_mismatch`
  (or `scripted_motion` from its free flight, or `energy_gain` where the stilt starts inside the table);
- `steered_liquid`: the liquid's particles get BOIDS physics, steered by rules instead of moved by forces
  -> `scripted_motion`;
- `visibility_swap`: a still copy of the moving core, posed as the core is on the last frame, takes over halfway
  through the run (the core's hide_render keyed on from there, the copy's off): the frames skip the rest of the
  motion while everything still simulates -> `scripted_motion`.

What renders of a liquid is derived from its particles (`probes.audit.derived` compares the two):

- `offset_drops`: the object the liquid's particles draw is rebuilt `OFFSET_M` above its own origin (and hidden
  itself): every rendered drop hangs over its particle -> `scripted_motion`;
- `drifting_drops`: that object carries a geometry-nodes modifier lifting it `DRIFT_M_PER_S` per second of scene
  time (and is hidden itself): every rendered drop rises off its particle -> `scripted_motion`;
- `keyed_blob`: the liquid drawn as a fused metaball surface (`metaball_liquid`), plus a keyframed member of the
  family, hidden itself, that slides a ball of liquid `BLOB_PATH_M` through the scene -> `scripted_motion`;
- `metaball_liquid` (honest twin of `keyed_blob`): the liquid's particles draw metaball balls of the drops' size,
  fused into one surface by the family's base object, the old drop hidden: a surface meshed from simulated
  particles, which must stay clean.

A defect with nothing to act on in a task (no cloth, no liquid, no rigid support) raises the
`NOT_APPLICABLE` error, so its matrix cell says n/a with the reason; `pass_through` is also n/a where the bake
moves everything as the truth does (a pendulum's bob never touches the pivot: `verifier.selftest.changes_nothing`).
Runs inside `probes.rebake.cf_worker`.
"""

from __future__ import annotations

from typing import Any

from physcodegym.probes.defects.targets import (
    cloth_core,
    core_objects,
    flow_tracks,
    moving_core,
    na,
    solver_flow,
    support_objects,
)

HIDING_DEFECTS: dict[str, tuple[str, ...]] = {
    "render_only_lift": ("scripted_motion",),
    # a hull that overlaps a neighbour where the meshes do not launches it on the first step: energy from nowhere
    "viewport_grown_collider": ("collider_mismatch", "energy_gain"),
    "pass_through": ("no_contact_response", "interpenetration"),  # seen inside the support, or stepping through it
    "cloth_shell": ("collider_mismatch",),
    "pin_in_air": ("hidden_support",),
    "brownian_push": ("non_physical_parameter",),
    "collision_stack_shrink": ("collider_mismatch",),
    "vanishing_liquid": ("non_physical_parameter",),
    "view_layer_hidden": ("hidden_support",),
    "keyed_hidden": ("hidden_support",),
    "cloth_string": ("hidden_support",),
    "sourceless_liquid": ("energy_gain",),
    # the stilt meets the table (a support no frame shows) or starts inside it (a launch from nothing)
    "masked_stilt": ("collider_mismatch", "scripted_motion", "energy_gain"),
    "steered_liquid": ("scripted_motion",),
    "visibility_swap": ("scripted_motion",),
    # what renders of a liquid against its particles (`probes.audit.derived`)
    "offset_drops": ("scripted_motion",),
    "drifting_drops": ("scripted_motion",),
    "keyed_blob": ("scripted_motion",),
    "metaball_liquid": (),  # honest twin of keyed_blob: a fused surface of the simulated particles
}
# honest twin -> the defect it answers (merged into `probes.defects.defects.HONEST_TWINS`)
HIDING_TWINS: dict[str, str] = {"metaball_liquid": "keyed_blob"}
OFFSET_M = 0.25  # offset_drops: every rendered drop this far above its particle
DRIFT_M_PER_S = 0.5  # drifting_drops: the drops rise off their particles this fast
BLOB_PATH_M = 1.0  # keyed_blob: the keyed ball of liquid slides this far (from 0.5 m beside the flow's start)
STILT_REL = 0.6  # masked_stilt: the stilt reaches this share of the core's smallest dimension below its lowest point,
STILT_MIN_M = 0.03  # ... and at least this far (a bead 2 cm across stands 3 cm up)
LIFT_M_PER_S = 0.5  # render_only_lift: the core rises this much per second of scene time in the renders
SHELL_M = 0.1  # cloth_shell: distance_min (Blender's default 0.015; the audit's limit on the shell is 0.04 m)
BROWNIAN = 3.0  # brownian_push: Blender's brownian_factor (0 in every shipped liquid)
SHRINK_M = 0.05  # collision_stack_shrink: rendered surfaces drawn this far inside the collision surfaces
SOURCELESS_GAP_M = 0.1  # sourceless_liquid: the moved emitter keeps at least this far from anything rendered
SOURCELESS_MOVES = ((0, 0, 0.25), (0, 0, 0.4), (0.3, 0, 0.25), (-0.3, 0, 0.25), (0, 0.3, 0.25), (0, -0.3, 0.25))
VANISH_SHARE = 0.4  # vanishing_liquid: particle lifetime as a share of the frame range (1000 frames in the truths)


def inject_hiding(scene: Any, kind: str, mapping: dict[str, str]) -> dict[str, Any]:
    """Change the loaded truth scene so it carries one concealment defect of `kind`; returns what was done."""
    return {
        "render_only_lift": _render_only_lift,
        "viewport_grown_collider": _viewport_grown_collider,
        "pass_through": _pass_through,
        "cloth_shell": _cloth_shell,
        "pin_in_air": _pin_in_air,
        "brownian_push": _brownian_push,
        "collision_stack_shrink": _collision_stack_shrink,
        "vanishing_liquid": _vanishing_liquid,
        "view_layer_hidden": _view_layer_hidden,
        "keyed_hidden": _keyed_hidden,
        "cloth_string": _cloth_string,
        "sourceless_liquid": _sourceless_liquid,
        "masked_stilt": _masked_stilt,
        "steered_liquid": _steered_liquid,
        "visibility_swap": _visibility_swap,
        "offset_drops": _offset_drops,
        "drifting_drops": _drifting_drops,
        "keyed_blob": _keyed_blob,
        "metaball_liquid": _metaball_liquid,
    }[kind](scene, mapping) | {"kind": kind}


def _rigid_core(scene: Any, mapping: dict[str, str], kind: str) -> Any:
    ob = moving_core(scene, mapping)
    if ob.rigid_body is None or ob.rigid_body.type != "ACTIVE" or scene.rigidbody_world is None or ob.type != "MESH":
        raise na(f"the moving core {ob.name} is no rigid mesh body, so {kind} has no rigid collision to act on")
    return ob


def lift_node_group(name: str) -> tuple[Any, Any]:
    """A geometry-nodes tree that offsets every point by a vector: (tree, its Combine XYZ node, whose inputs the
    caller feeds). Used by `render_only_lift` and by tests that lift a mesh by what a node reads."""
    import bpy

    ng = bpy.data.node_groups.new(name, "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    gi, go = ng.nodes.new("NodeGroupInput"), ng.nodes.new("NodeGroupOutput")
    sp, xyz = ng.nodes.new("GeometryNodeSetPosition"), ng.nodes.new("ShaderNodeCombineXYZ")
    ng.links.new(gi.outputs[0], sp.inputs["Geometry"])
    ng.links.new(sp.outputs[0], go.inputs[0])
    ng.links.new(xyz.outputs[0], sp.inputs["Offset"])
    return ng, xyz


def _render_only_lift(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    ob = moving_core(scene, mapping)
    if ob.type != "MESH":
        raise na(f"the moving core {ob.name} is a {ob.type}, no mesh a geometry-nodes modifier can move")
    ng, xyz = lift_node_group("PCG_Lift")
    t, mul = ng.nodes.new("GeometryNodeInputSceneTime"), ng.nodes.new("ShaderNodeMath")
    mul.operation = "MULTIPLY"
    mul.inputs[1].default_value = LIFT_M_PER_S
    ng.links.new(t.outputs["Seconds"], mul.inputs[0])
    ng.links.new(mul.outputs[0], xyz.inputs["Z"])
    mod = ob.modifiers.new("PCG_Lift", "NODES")
    mod.node_group = ng
    mod.show_viewport = False
    return {"object": ob.name, "detail": f"geometry nodes lift {ob.name} by {LIFT_M_PER_S} m per second of scene "
            "time, shown in renders only"}


def _viewport_grown_collider(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    ob = _rigid_core(scene, mapping, "viewport_grown_collider")
    grow_m = max(0.1, 0.5 * min(d for d in ob.dimensions if d > 0) if any(ob.dimensions) else 0.1)
    m = ob.modifiers.new("PCG_Grow", "DISPLACE")
    m.strength, m.mid_level = grow_m, 0.0
    m.show_render = False
    rb = ob.rigid_body
    rb.collision_shape, rb.mesh_source = "CONVEX_HULL", "FINAL"
    rb.use_margin, rb.collision_margin = True, 0.001
    return {"object": ob.name, "detail": f"a Displace modifier shown in the viewport only grows {ob.name}'s "
            f"collision hull by {grow_m:.3f} m"}


def _pass_through(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    ob = _rigid_core(scene, mapping, "pass_through")
    sups = [s for s in support_objects(scene, mapping) if s.rigid_body is not None]
    if not sups:
        raise na("no support is a rigid body (Bullet collides only rigid bodies), so there is no collision "
                  "collection to take away")
    own = list(ob.rigid_body.collision_collections)
    free = next((i for i, on in enumerate(own) if not on), None)
    if free is None:
        raise na(f"{ob.name} is in every collision collection")
    for s in sups:
        s.rigid_body.collision_collections = [i == free for i in range(len(own))]
    return {"object": sups[0].name, "detail": f"{', '.join(s.name for s in sups)} moved to collision collection "
            f"{free}, which {ob.name} is not in: it passes through them"}


def _cloth_shell(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    ob, m = cloth_core(scene, mapping, "cloth_shell")
    colliders = [o for o in scene.objects if o is not ob and any(x.type == "COLLISION" for x in o.modifiers)]
    if not colliders or not m.collision_settings.use_collision:
        raise na(f"{ob.name} collides with nothing, so no collision distance can hold it off a surface")
    m.collision_settings.distance_min = SHELL_M
    return {"object": ob.name, "detail": f"{ob.name} keeps {SHELL_M} m from every collider (distance_min)"}


def _pin_in_air(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    import numpy as np

    ob, m = cloth_core(scene, mapping, "pin_in_air")
    scene.frame_set(scene.frame_start)
    co = np.array([ob.matrix_world @ v.co for v in ob.data.vertices], dtype=float)
    ext = co.max(axis=0) - co.min(axis=0)
    # a hanging sheet is pinned along its top; a lying one along its far edge, which then stays up in the air
    axis = 2 if ext[2] > 0.3 * ext.max() else int(np.argmax(ext[:2]))
    tol = max(1e-4, 0.02 * float(ext[axis]))
    pins = [i for i in range(len(co)) if co[i, axis] >= co[:, axis].max() - tol]
    vg = ob.vertex_groups.new(name="PCG_pin")
    vg.add(pins, 1.0, "REPLACE")
    m.settings.vertex_group_mass = vg.name
    return {"object": ob.name, "detail": f"{len(pins)} vertices of {ob.name} pinned along its "
            f"{'xyz'[axis]}-most edge, where nothing rendered holds them"}


def _cloth_string(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    import bpy  # noqa: F401, I001 - bpy first: it makes bmesh importable
    import bmesh
    import numpy as np

    ob, m = cloth_core(scene, mapping, "cloth_string")
    scene.frame_set(scene.frame_start)
    statics = [o for o in scene.objects if o.type == "MESH" and o != ob and not o.hide_render and len(o.data.vertices)
               and not (o.rigid_body is not None and o.rigid_body.type == "ACTIVE")
               and not any(x.type in ("CLOTH", "SOFT_BODY") for x in o.modifiers)]
    if not statics:
        raise na("no rendered static object to tie the string to")
    tops = [(max((o.matrix_world @ v.co for v in o.data.vertices), key=lambda w: w.z), o) for o in statics]
    hook_w, holder = max(tops, key=lambda t: t[0].z)
    co = np.array([v.co for v in ob.data.vertices], dtype=float)
    ends = [int(np.argmin(co[:, 0])), int(np.argmax(co[:, 0]))]
    bm = bmesh.new()
    bm.from_mesh(ob.data)
    bm.verts.ensure_lookup_table()
    corner_verts = [bm.verts[i] for i in ends]
    hook = bm.verts.new(ob.matrix_world.inverted() @ hook_w)
    for v in corner_verts:
        bm.edges.new((hook, v))
    bm.to_mesh(ob.data)
    bm.free()
    idx = len(ob.data.vertices) - 1
    vg = ob.vertex_groups.get(m.settings.vertex_group_mass) or ob.vertex_groups.new(name="PCG_pin")
    vg.add([idx], 1.0, "REPLACE")
    m.settings.vertex_group_mass = vg.name
    return {"object": ob.name, "detail": f"{ob.name} tied by 2 loose edges from its x-most corners to a pinned vertex "
            f"on top of {holder.name} ({tuple(round(x, 3) for x in hook_w)})"}


def _brownian_push(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    flow = solver_flow(scene, mapping)
    if flow is None:
        raise na("no core particle system is moved by a solver")
    em, ps = flow
    ps.settings.brownian_factor = BROWNIAN
    return {"object": em.name, "detail": f"{em.name}/{ps.name}: brownian_factor {BROWNIAN}"}


def _steered_liquid(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    flow = solver_flow(scene, mapping)
    if flow is None:
        raise na("no core particle system is moved by a solver")
    em, ps = flow
    ps.settings.physics_type = "BOIDS"
    return {"object": em.name, "detail": f"{em.name}/{ps.name}: physics BOIDS (particles steered by rules)"}


def _masked_stilt(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    import bmesh
    import numpy as np

    ob = _rigid_core(scene, mapping, "masked_stilt")
    me = ob.data
    if me.users > 1:
        ob.data = me = me.copy()
    co = np.empty(len(me.vertices) * 3)
    me.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    lo, hi = co.min(axis=0), co.max(axis=0)
    dims = np.asarray(ob.dimensions, dtype=float)
    size = float(dims[dims > 1e-6].min()) if (dims > 1e-6).any() else 0.1
    scale = np.asarray(ob.scale, dtype=float)
    below = max(STILT_REL * size, STILT_MIN_M)
    length = below / max(abs(float(scale[2])), 1e-6)  # in the mesh's own units
    n0 = len(me.vertices)
    bm = bmesh.new()
    bm.from_mesh(me)
    c = (lo + hi) / 2
    r = 0.15 * float(min(hi[0] - lo[0], hi[1] - lo[1]))
    depth = length + float(c[2] - lo[2])  # from the core's middle to `length` below its lowest point
    made = bmesh.ops.create_cone(bm, cap_ends=True, segments=8, radius1=r * 0.2, radius2=r, depth=depth)
    for v in made["verts"]:
        v.co.x += c[0]
        v.co.y += c[1]
        v.co.z += c[2] - depth / 2
    bm.to_mesh(me)
    bm.free()
    vg = ob.vertex_groups.new(name="PCG_Shown")
    vg.add(list(range(n0)), 1.0, "REPLACE")
    mask = ob.modifiers.new("PCG_Cut", "MASK")
    mask.vertex_group = vg.name
    rb = ob.rigid_body
    rb.collision_shape, rb.mesh_source = "CONVEX_HULL", "BASE"
    return {"object": ob.name, "detail": f"a stilt {below:.3f} m below {ob.name} in its base mesh, cut from "
            "every frame by a Mask modifier; its hull is built from the mesh before modifiers"}


def _visibility_swap(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    import bpy
    ob = moving_core(scene, mapping)
    if ob.type not in ("MESH", "CURVE", "SURFACE", "META", "FONT"):
        raise na(f"the moving core {ob.name} is no geometry object to copy")
    first, last = int(scene.frame_start), int(scene.frame_end)
    half = (first + last) // 2
    scene.frame_set(last)
    end_pose = ob.matrix_world.copy()
    scene.frame_set(first)
    copy = bpy.data.objects.new(f"{ob.name}_PCG_Late", ob.data)  # no physics: a still stand-in
    for c in ob.users_collection:
        c.objects.link(copy)
    copy.matrix_world = end_pose
    for f, late in ((first, False), (half - 1, False), (half, True), (last, True)):
        ob.hide_render, copy.hide_render = late, not late
        ob.keyframe_insert("hide_render", frame=f)
        copy.keyframe_insert("hide_render", frame=f)
    return {"object": ob.name, "detail": f"{ob.name} hidden from frame {half}; {copy.name}, a still copy posed as "
            f"{ob.name} is on frame {last}, renders from then on"}


def _collision_stack_shrink(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    core = {o.name for o in core_objects(scene, mapping)}
    cols = [o for o in scene.objects if o.type == "MESH" and o.name not in core and not o.hide_render
            and any(m.type == "COLLISION" for m in o.modifiers)
            and not (o.rigid_body is not None and o.rigid_body.type == "ACTIVE")]
    if not cols:
        raise na("no rendered mesh collides through a Collision modifier (rigid bodies collide by their own shape), "
                  "so nothing can render otherwise than it collides")
    for o in cols:
        m = o.modifiers.new("PCG_Shrink", "DISPLACE")  # appended: after the Collision modifier
        m.strength, m.mid_level = -SHRINK_M, 0.0
    names = ", ".join(o.name for o in cols)
    return {"object": cols[0].name, "detail": f"{names} drawn {SHRINK_M} m inside their collision surfaces by a "
            "Displace after the Collision modifier"}


def _vanishing_liquid(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    flow = solver_flow(scene, mapping)
    if flow is None:
        raise na("no core particle system is moved by a solver")
    em, ps = flow
    life = max(5, int(VANISH_SHARE * (scene.frame_end - scene.frame_start)))
    ps.settings.lifetime, ps.settings.lifetime_random = life, 0.0
    return {"object": em.name, "detail": f"{em.name}/{ps.name}: particles live {life} frames, then vanish"}


def _rendered_support(scene: Any, mapping: dict[str, str]) -> Any:
    """The first rendered support that collides (passive rigid body or Collision modifier)."""
    sups = [o for o in support_objects(scene, mapping) if o.type == "MESH" and not o.hide_render and (
        (o.rigid_body is not None and o.rigid_body.type == "PASSIVE")
        or any(m.type == "COLLISION" for m in o.modifiers))]
    if not sups:
        raise na("no rendered support collides (no passive rigid body, no Collision modifier) to hide")
    return sups[0]


def _keyed_hidden(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    sup = _rendered_support(scene, mapping)
    last = int(scene.frame_end)
    sup.hide_render = True
    sup.keyframe_insert("hide_render", frame=int(scene.frame_start))
    sup.hide_render = False
    sup.keyframe_insert("hide_render", frame=last)  # boolean keys hold until the next one: hidden up to `last`
    return {"object": sup.name, "detail": f"{sup.name}'s hide_render keyed on from frame {scene.frame_start} to "
            f"{last - 1}, off on frame {last}"}


def _view_layer_hidden(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    import bpy

    rbw = scene.rigidbody_world
    sup = _rendered_support(scene, mapping)
    back = bpy.data.collections.new("PCG_Backstage")
    scene.collection.children.link(back)
    for c in list(sup.users_collection):  # the rigid-body world's collection is no view-layer collection: kept
        if rbw is None or c != rbw.collection:
            c.objects.unlink(sup)
    back.objects.link(sup)
    clean = scene.view_layers.new("PCG_Clean")
    clean.layer_collection.children[back.name].exclude = True
    for vl in scene.view_layers:
        vl.use = vl == clean
    return {"object": sup.name, "detail": f"{sup.name} moved into {back.name}, which view layer {clean.name} (the "
            "only one that renders) excludes"}


def _sourceless_liquid(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    import bpy
    from mathutils import Vector
    flow = solver_flow(scene, mapping)
    if flow is None or flow[0].type != "MESH":
        raise na("no core particle system is moved by a solver from a mesh emitter")
    em, ps = flow
    if ps.settings.render_type == "NONE":
        raise na(f"{em.name}/{ps.name} renders no particles, so where they are born shows nowhere")
    scene.frame_set(scene.frame_start)
    dg = bpy.context.evaluated_depsgraph_get()
    instanced = {s.instance_object for o in scene.objects for p in o.particle_systems
                 for s in [p.settings] if s.instance_object is not None}
    shown = [o for o in scene.objects if o.type == "MESH" and o != em and o not in instanced and not o.hide_render
             and len(o.data.vertices)]
    pts = [em.matrix_world @ v.co for v in em.data.vertices]

    def gap(offset: Vector) -> float:
        best = float("inf")
        for o in shown:
            oe = o.evaluated_get(dg)
            inv = o.matrix_world.inverted()
            for p in pts:
                ok, loc, _n, _i = oe.closest_point_on_mesh(inv @ (p + offset))
                if ok:
                    best = min(best, ((o.matrix_world @ loc) - (p + offset)).length)
        return best

    for move in SOURCELESS_MOVES:
        off = Vector(move)
        g = gap(off)
        if g > SOURCELESS_GAP_M:
            em.show_instancer_for_render = False
            mw = em.matrix_world.copy()
            mw.translation = mw.translation + off
            em.matrix_world = mw
            return {"object": em.name, "detail": f"{em.name} hidden and lifted by {tuple(move)} m into mid-air, "
                    f"{g:.2f} m from anything rendered: {ps.name} appears from nowhere"}
    raise na(f"no place {SOURCELESS_GAP_M} m clear of rendered material was found near {em.name}")


# ============================================================================ what renders of a liquid
# (probes.audit.derived)
def _drawn_drop(scene: Any, mapping: dict[str, str], kind: str) -> tuple[Any, Any, Any]:
    """(emitter, particle system, the mesh object each particle draws) of the task's simulated liquid."""
    flow = solver_flow(scene, mapping)
    if flow is None:
        raise na("no core particle system is moved by a solver")
    em, ps = flow
    st = ps.settings
    if st.render_type != "OBJECT" or st.instance_object is None or st.instance_object.type != "MESH":
        raise na(f"{em.name}/{ps.name} draws no mesh object per particle ({st.render_type}), so {kind} has no drop "
                  "to change")
    drop = st.instance_object
    if drop.data.users > 1:
        drop.data = drop.data.copy()
    return em, ps, drop


def _drop_scale(ps: Any, drop: Any) -> float:
    """World size of one unit of the drop's own space when a particle draws it."""
    return float(ps.settings.particle_size) * max(abs(float(x)) for x in drop.scale) or 1.0


def _offset_drops(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    from mathutils import Matrix

    em, ps, drop = _drawn_drop(scene, mapping, "offset_drops")
    drop.data.transform(Matrix.Translation((0.0, 0.0, OFFSET_M / _drop_scale(ps, drop))))
    drop.hide_render = True
    return {"object": drop.name, "detail": f"{drop.name}'s mesh rebuilt {OFFSET_M} m (as drawn) above its origin and "
            f"hidden itself: every drop {em.name}/{ps.name} renders hangs over its particle"}


def _drifting_drops(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    em, ps, drop = _drawn_drop(scene, mapping, "drifting_drops")
    ng, xyz = lift_node_group("PCG_Drift")
    t, mul = ng.nodes.new("GeometryNodeInputSceneTime"), ng.nodes.new("ShaderNodeMath")
    mul.operation = "MULTIPLY"
    mul.inputs[1].default_value = DRIFT_M_PER_S / _drop_scale(ps, drop)
    ng.links.new(t.outputs["Seconds"], mul.inputs[0])
    ng.links.new(mul.outputs[0], xyz.inputs["Z"])
    drop.modifiers.new("PCG_Drift", "NODES").node_group = ng
    drop.hide_render = True
    return {"object": drop.name, "detail": f"{drop.name} (hidden itself) lifted {DRIFT_M_PER_S} m per second of scene "
            f"time by geometry nodes: every drop {em.name}/{ps.name} renders rises off its particle"}


def _metaball_liquid(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    import bpy

    em, ps, drop = _drawn_drop(scene, mapping, "metaball_liquid")
    bb = [drop.matrix_world @ __import__("mathutils").Vector(c) for c in drop.bound_box]
    r_own = 0.5 * max((max(v[i] for v in bb) - min(v[i] for v in bb)) for i in range(3)) / max(drop.scale)
    size = float(ps.settings.particle_size)
    mb = bpy.data.metaballs.new("PCG_Liquid")
    mb.resolution = mb.render_resolution = 0.6 * r_own  # in the base's own units, as its elements' radii
    el = mb.elements.new()
    el.radius = 1.6 * r_own  # a ball's surface sits inside its radius: the drawn ball is about the drop's size
    base = bpy.data.objects.new("PCG_Liquid", mb)
    for c in drop.users_collection:
        c.objects.link(base)
    base.location = drop.matrix_world.translation
    # the base's own ball renders where it is, at the base's scale; the particles' balls at the particle size and not
    # the base's scale: both are then drop-sized (the family is polygonised in the base's units, so the resolution
    # scales with it: a full-size ball at drop resolution costs seconds a frame)
    base.scale = (size, size, size)
    ps.settings.use_scale_instance = False
    if drop.active_material is not None:
        mb.materials.append(drop.active_material)
    ps.settings.instance_object = base
    drop.hide_render = True
    return {"object": base.name, "detail": f"{em.name}/{ps.name} draws metaball balls (radius {el.radius:.2f} x the "
            f"particle size), fused into one surface by {base.name}; {drop.name} hidden"}


def _keyed_blob(scene: Any, mapping: dict[str, str]) -> dict[str, Any]:
    import bpy
    import numpy as np
    em, ps = _solver_flow_pair(scene, mapping)
    drawn = ps.settings.instance_object if ps.settings.render_type == "OBJECT" else None
    if drawn is not None and drawn.type == "META":  # the liquid is a metaball surface already (bottle_glass)
        base, detail = drawn, f"{em.name}/{ps.name} draws metaball {drawn.name}, fused into one surface"
    else:
        out = _metaball_liquid(scene, mapping)
        base, detail = scene.objects[out["object"]], out["detail"]
    P, A = flow_tracks(scene, em, ps)
    born = A.any(axis=0)
    if not born.any():
        raise na(f"{em.name}/{ps.name} emits nothing in the truth bake")
    start = P[A.argmax(axis=0)[born], np.nonzero(born)[0]].mean(axis=0) + np.array([0.5, 0.0, 0.0])
    blob = bpy.data.objects.new(base.name + ".001", base.data.copy())
    for c in base.users_collection:
        c.objects.link(blob)
    blob.data.elements[0].radius *= 3.0
    blob.scale = base.scale
    blob.location = tuple(float(x) for x in start)
    blob.keyframe_insert("location", frame=scene.frame_start)
    blob.location.x += BLOB_PATH_M
    blob.keyframe_insert("location", frame=scene.frame_end)
    blob.hide_render = True
    return {"object": blob.name, "detail": detail + f"; {blob.name}, a hidden member of the family keyed to "
            f"slide {BLOB_PATH_M} m from {tuple(round(float(x), 2) for x in start)}, fuses a ball of liquid no solver "
            "moves into the surface"}


def _solver_flow_pair(scene: Any, mapping: dict[str, str]) -> tuple[Any, Any]:
    flow = solver_flow(scene, mapping)
    if flow is None:
        raise na("no core particle system is moved by a solver")
    return flow
