"""More concealment mechanisms, each a tiny real-bake defect scene and a close valid twin (solvers-off
re-evaluation in a fresh worker, as in `test_mechanisms`):

- a scene-level keyframe on the rigid-body world switch: the solvers-off run must hold the solver off on
  every frame (else a truly simulated ball "agrees" with its solvers-off pose and is called scripted);
- a force field holding a body up in mid-air (a hidden support, named with the field);
- a shape-key animation moving a mesh whose object never moves (its vertices must be sampled);
- derived motion whose rendered, simulated owner is never in the camera's view;
- a shelf that Workbench draws with nothing (viewport colour alpha 0, while its node tree is opaque);
- a physical constant keyframed to change mid-run (the ground's restitution); a constant key is no change;
- a geometry-nodes instance (not realized: no mesh vertex shows it) moved by the scene time on a static plate;
- parameters whose effect hides them: mass 0 (Bullet holds the active body still) and restitution above 1
  on the passive ground (the ground never moves, the ball it pumps does);
- the viewport against the render (`probes.scene.render_config`): motion from a modifier shown in renders only, and a
  collision mesh grown by a modifier shown in the viewport only (the solver collides with what no frame shows);
- a cloth whose collision distance holds it above the floor it lies on (a shell no frame shows);
- a cloth hanging from pinned vertices, and a soft body hanging on its goals, with nothing rendered there to
  hold them;
- a ball falling through a rendered shelf it shares no collision collection with (a contact never made);
- a ball kicked on the first step by a collision hull that overlaps a platform where the rendered ball does not,
  then falling far off the stage (energy from nowhere, which the later fall must not hide);
- a crate that starts asleep in mid-air (Bullet's deactivation holds it: held by nothing, not a collider mismatch);
- a parcel resting on faces of the ground's mesh whose material renders nothing (transparency is per face), and a
  cloth draped over such faces (judged by what a branch without those faces does);
- a cloth lying on a floor grown by a modifier shown in the viewport only (judged by re-baking the scene as it
  renders);
- a cloth lying on a floor lowered by a modifier after its Collision modifier (Blender collides with the mesh as it
  is at that modifier: judged by re-baking with the floor colliding as it renders);
- a cloth whose shrink factor is keyed (any keyed or driven solver property, found from its F-curve);
- a slab lifted by geometry nodes where an "Is Viewport" node says so (the audit feeds it False, as a render does);
- a ball whose hull is built from its mesh before modifiers (rigid-body mesh source BASE), which holds a stilt a
  Mask modifier cuts from every frame (it stands on the stilt's tip in mid-air);
- a ball deflected in mid-fall by a plank taken away after the bake (it turns in mid-air: `free_flight`);
- a ball that hands over to a second, resting ball by keyed render visibility (one ball jumps on screen) or by
  Build modifiers (geometry removed and built mid-run, no keyframe), and a
  timeline marker that cuts to a camera 1 m to the side, a camera keyed to teleport 0.5 m (a dolly and pan is
  the twin) or to jump from 35 to 60 mm (a zoom is the twin) (`probes.audit.detect_switches`);
- a prop keyed from scale 0 to 1 (it appears); its twin stays at scale 0, which is no motion.
"""

from __future__ import annotations

from typing import Any

import pytest
from physcodegym.probes.audit.findings import AuditReport
from physcodegym.testing import demo_scenes as D


def keyed_world(defect: bool, frames: int = 40) -> Any:
    """A rigid ball. Twin: it falls on the ground, the world's `enabled` is keyframed on (a legal, redundant
    key). Defect: the key holds the world off and the ball's keyframes move it."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    b = D.sphere("Ball", (0, 0, 2.0), 0.25)
    if defect:
        for f, z in ((1, 2.0), (15, 0.25), (25, 1.0), (35, 0.25)):
            b.location.z = z
            b.keyframe_insert("location", index=2, frame=f)
    sc.rigidbody_world.enabled = not defect
    sc.keyframe_insert("rigidbody_world.enabled", frame=1)
    D.bake()
    return sc


def field_hold(defect: bool, frames: int = 40) -> Any:
    """A crate above the ground. Defect: an upward FORCE field under it holds it in mid-air. Twin: the same
    crate resting on the ground, no field."""
    import bpy

    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    D.box("Crate", (0, 0, 0.8 if defect else 0.2), (0.4, 0.4, 0.4), rb="ACTIVE", mass=1.0)
    if defect:
        bpy.ops.object.effector_add(type="FORCE", location=(0, 0, 0.0))
        f = bpy.context.active_object
        f.name = "Lift"
        f.field.strength = 295.0  # measured: about the crate's weight (it neither rises nor falls)
        f.field.falloff_type = "SPHERE"
        f.field.falloff_power = 0.0
    D.bake()
    return sc


def shapekey_ball(defect: bool, frames: int = 40) -> Any:
    """A ball mesh with a shape key that lowers every vertex by 1.5 m. Defect: no rigid body, the key's
    value is keyframed (the object never moves, its vertices do). Twin: the key is still and the ball is a
    rigid body that falls on the ground."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    b = D.sphere("Ball", (0, 0, 2.0), 0.25, rb=None if defect else "ACTIVE")
    b.shape_key_add(name="Basis")
    k = b.shape_key_add(name="Down")
    for v in k.data:
        v.co.z -= 1.5
    k.value = 0.0  # (measured: a new key can start at 1.0)
    if defect:
        for f, val in ((1, 0.0), (15, 1.0), (25, 0.5), (35, 1.0)):
            k.value = val
            k.keyframe_insert("value", frame=f)
    D.bake()
    return sc


def offscreen_owner(defect: bool, frames: int = 40) -> Any:
    """A visible ball without physics that follows (Child Of) a rendered rigid twin. Defect: the twin falls
    30 m to the side, never in the camera's view. Twin: the rigid carrier falls in view next to the ball."""
    from mathutils import Matrix

    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground(size=80.0)
    x = 30.0 if defect else 1.0
    carrier = D.sphere("Carrier", (x, 0, 2.0), 0.25)
    ball = D.sphere("Ball", (0, 0, 2.0), 0.25, rb=None)
    c = ball.constraints.new("CHILD_OF")
    c.target = carrier
    c.inverse_matrix = Matrix.Translation((-x, 0.0, 0.0))
    D.bake()
    return sc


def alpha_shelf(defect: bool, frames: int = 40) -> Any:
    """A parcel resting on a shelf in a Workbench (MATERIAL colour) scene. Defect: the shelf material's
    viewport colour has alpha 0, so Workbench draws nothing, though its node tree is an opaque Principled
    BSDF. Twin: alpha 1."""
    import bpy

    sc = D.reset(frames)
    sc.render.engine = "BLENDER_WORKBENCH"
    sc.display.shading.color_type = "MATERIAL"
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    shelf = D.box("Shelf", (0, 0, 1.0), (1.0, 0.6, 0.05), rb="PASSIVE")
    m = bpy.data.materials.new("ShelfPaint")
    m.diffuse_color = (0.5, 0.5, 0.5, 0.0 if defect else 1.0)
    shelf.data.materials.append(m)
    D.box("Parcel", (0, 0, 1.3), (0.3, 0.3, 0.3), rb="ACTIVE", mass=0.5)
    D.bake()
    return sc


def keyed_bounce(defect: bool, frames: int = 40) -> Any:
    """A ball bouncing on the ground. Defect: the ground's restitution is keyframed from 0.3 up to 1.0 at
    frame 20 (the bounce gains height mid-run). Twin: the same keyframes both at 0.3 (no change)."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    g = D.ground(restitution=0.3)
    D.sphere("Ball", (0, 0, 1.5), 0.25, restitution=0.9)
    g.rigid_body.keyframe_insert("restitution", frame=1)
    g.rigid_body.restitution = 1.0 if defect else 0.3
    g.rigid_body.keyframe_insert("restitution", frame=20)
    D.bake()
    return sc


def gn_instance(defect: bool, frames: int = 40) -> Any:
    """A static rendered plate (a ball falls on it) whose geometry nodes add an instance of a hidden sphere.
    Defect: the instance's height follows the scene time. Twin: a constant height (it never moves)."""
    import bpy

    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    plate = D.box("Plate", (0, 0, 0.05), (2.0, 2.0, 0.1), rb="PASSIVE")
    D.sphere("Ball", (0.6, 0, 1.5), 0.25)  # something the solver moves in both variants
    src = D.sphere("Source", (0, 0, -5.0), 0.25, rb=None)
    src.hide_render = True
    ng = bpy.data.node_groups.new("Juggle", "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    n, link = ng.nodes, ng.links.new
    gi, go = n.new("NodeGroupInput"), n.new("NodeGroupOutput")
    oi = n.new("GeometryNodeObjectInfo")
    oi.inputs["Object"].default_value = src
    oi.inputs["As Instance"].default_value = True
    xyz = n.new("ShaderNodeCombineXYZ")
    if defect:
        mul = n.new("ShaderNodeMath")
        mul.operation = "MULTIPLY"
        mul.inputs[1].default_value = 1.5
        link(n.new("GeometryNodeInputSceneTime").outputs["Seconds"], mul.inputs[0])
        link(mul.outputs[0], xyz.inputs["Z"])
    else:
        xyz.inputs["Z"].default_value = 1.0
    tr = n.new("GeometryNodeTransform")
    join = n.new("GeometryNodeJoinGeometry")
    link(oi.outputs["Geometry"], tr.inputs["Geometry"])
    link(xyz.outputs[0], tr.inputs["Translation"])
    link(gi.outputs[0], join.inputs[0])
    link(tr.outputs[0], join.inputs[0])
    link(join.outputs[0], go.inputs[0])
    plate.modifiers.new("Juggle", "NODES").node_group = ng
    D.bake()
    return sc


def bad_params(defect: bool, frames: int = 40) -> Any:
    """A ball dropped on the ground next to a crate in mid-air. Defect: the crate has mass 0 (it hangs there)
    and the ground's restitution is 1.5. Twin: the crate rests on the ground (mass 1), restitution 0.5."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground(restitution=1.5 if defect else 0.5)
    D.sphere("Ball", (0, 0, 1.5), 0.25, restitution=0.5)
    D.box("Crate", (1.0, 0, 1.0 if defect else 0.2), (0.4, 0.4, 0.4), rb="ACTIVE", mass=1.0)
    if defect:
        import bpy

        bpy.data.objects["Crate"].rigid_body.mass = 0.0
    D.bake()
    return sc


def render_only_motion(defect: bool, frames: int = 40) -> Any:
    """A ball without physics next to a simulated one. Defect: a geometry-nodes modifier reading the scene time
    moves the ball and is shown in renders only (the viewport, and bpy's evaluated depsgraph, see it at rest).
    Twin: the same modifier shown in both, at a constant height (it never moves)."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    D.sphere("Faller", (1.2, 0, 1.5), 0.25)  # something the solver moves in both variants
    ball = D.sphere("Ball", (-0.6, 0, 0.5), 0.25, rb=None)
    mod = ball.modifiers.new("Lift", "NODES")
    mod.node_group = D._time_offset_group("Lift", 0.8, use_time=defect)
    mod.show_viewport = not defect
    D.bake()
    return sc


def viewport_grown_collider(defect: bool, frames: int = 60) -> Any:
    """A ball dropped on the ground, colliding as its convex hull. Defect: a Displace modifier shown in the
    viewport only grows the mesh the solver collides with by 0.3 m, so every rendered frame shows the ball
    resting on air. Twin: the same modifier shown in renders too (the rendered ball is the one that collides)."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    _grown_ball((0, 0, 1.5), viewport_only=defect)
    D.bake()
    return sc


def _grown_ball(loc: tuple, viewport_only: bool) -> Any:
    """A 0.25 m ball colliding as its convex hull, grown 0.3 m by a Displace modifier (shown in the viewport only,
    or in renders too)."""
    ball = D.sphere("Ball", loc, 0.25, rb=None)
    grow = ball.modifiers.new("Grow", "DISPLACE")
    grow.strength, grow.mid_level = 0.3, 0.0
    grow.show_render = not viewport_only
    D._rb(ball, "ACTIVE", "CONVEX_HULL", mesh_source="FINAL", collision_margin=0.001)
    return ball


def masked_stilt(defect: bool, frames: int = 45) -> Any:
    """A ball dropped on the ground, colliding as its convex hull; its mesh also holds a 0.6 m cone under it that a
    Mask modifier cuts from every frame. Defect: the hull is built from the mesh before modifiers (mesh source
    BASE), so the ball lands on the cone's tip and stands on air. Twin: the same mesh and Mask, the hull built
    from the evaluated mesh (FINAL): it collides as it renders."""
    import bpy  # noqa: I001 - bpy first: it makes bmesh importable
    import bmesh

    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    ball = D.sphere("Ball", (0, 0, 1.2), 0.25, rb=None)
    n0 = len(ball.data.vertices)
    bm = bmesh.new()
    bm.from_mesh(ball.data)
    cone = bmesh.ops.create_cone(bm, cap_ends=True, segments=8, radius1=0.2, radius2=0.02, depth=0.6)
    for v in cone["verts"]:
        v.co.z -= 0.3
    bm.to_mesh(ball.data)
    bm.free()
    ball.vertex_groups.new(name="Shown").add(list(range(n0)), 1.0, "REPLACE")
    ball.modifiers.new("Cut", "MASK").vertex_group = "Shown"
    D._rb(ball, "ACTIVE", "CONVEX_HULL", mesh_source="BASE" if defect else "FINAL", collision_margin=0.001)
    bpy.context.view_layer.update()
    D.bake()
    return sc


def removed_deflector(defect: bool, frames: int = 45) -> Any:
    """A ball dropped beside a tilted plank that deflects it sideways in mid-fall. Defect: the plank is moved 30 m away
    after the bake, which is kept: the ball turns in mid-air with nothing there (a helper taken away after the
    bake; deleting it outright breaks Bullet's cache, which the restarted runs see anyway). Twin: the plank
    stays."""
    import math

    return _helper_in_the_fall(defect, frames, ("Plank", (0.1, 0, 1.2), (0.8, 0.6, 0.05), math.radians(35)), 2.2)


def _helper_in_the_fall(taken_away: bool, frames: int, helper: tuple, drop_z: float) -> Any:
    """A 0.1 m ball dropped from `drop_z` past a static helper box (name, location, size, tilt about y) that deflects
    it; `taken_away`: the helper is moved 30 m off after the bake, which is kept."""
    import bpy

    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    name, loc, dims, tilt = helper
    ob = D.box(name, loc, dims, rb="PASSIVE")
    ob.rotation_euler = (0.0, tilt, 0.0)
    D.sphere("Ball", (0, 0, drop_z), 0.1)
    bpy.context.view_layer.update()
    D.bake()
    if taken_away:
        ob.location.x += 30.0
        bpy.context.view_layer.update()
    return sc


def visibility_swap(defect: bool, frames: int = 40) -> Any:
    """A ball dropped onto the ground and a second ball resting 1 m beside it. Defect: the first renders up to frame
    19 and the second from frame 20 on (hide_render keyed): the picture shows one ball jump 1 m in a frame while
    each ball is simulated. Twin: the same keys, but both balls render on every frame."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    first, second = D.sphere("Ball", (0, 0, 1.5), 0.2), D.sphere("Ball2", (1.0, 0, 0.2), 0.2)
    for f, hide in ((1, False), (19, False), (20, True), (frames, True)):
        first.hide_render, second.hide_render = hide and defect, (not hide) and defect
        first.keyframe_insert("hide_render", frame=f)
        second.keyframe_insert("hide_render", frame=f)
    D.bake()
    return sc


def built_swap(defect: bool, frames: int = 40) -> Any:
    """The visibility swap made with Build modifiers (no keyframe anywhere): the falling ball's faces are removed at
    frame 20 and the resting ball's are built then. Twin: both Build modifiers finish before the run starts (every
    frame shows both balls whole)."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    first, second = D.sphere("Ball", (0, 0, 1.5), 0.2), D.sphere("Ball2", (1.0, 0, 0.2), 0.2)
    for ob, reverse in ((first, True), (second, False)):
        m = ob.modifiers.new("Build", "BUILD")
        m.frame_start, m.frame_duration, m.use_reverse = (19 if defect else -30), 1, reverse and defect
    D.bake()
    return sc


def lens_jump(defect: bool, frames: int = 40) -> Any:
    """A ball dropped onto the ground, filmed by a camera whose focal length is keyed. Defect: constant keys jump it
    from 35 to 60 mm at frame 20 (a cut: everything on screen jumps in size). Twin: it zooms from 35 to 60 mm over
    the run (about 1.4 % a frame)."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    cam = D.camera(sc)
    D.ground()
    D.sphere("Ball", (0, 0, 1.5), 0.2)
    keys = [(1, 35.0), (19, 35.0), (20, 60.0), (frames, 60.0)] if defect else [(1, 35.0), (frames, 60.0)]
    for f, mm in keys:
        cam.data.lens = mm
        cam.data.keyframe_insert("lens", frame=f)
    if defect:
        D.hold_keys(cam.data)
    D.bake()
    return sc


def zero_scale_prop(defect: bool, frames: int = 40) -> Any:
    """A ball dropped onto the ground beside a prop at scale 0 (a way to put an object away). Defect: the prop's
    scale is keyed from 0 to 1 at frame 20 (it appears). Twin: it stays at scale 0 (still: the zero matrix is no
    rotation and no change of scale)."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    D.sphere("Ball", (0, 0, 1.5), 0.2)
    prop = D.box("Prop", (1.0, 0, 0.3), (0.6, 0.6, 0.6), rb=None)
    prop.scale = (0.0, 0.0, 0.0)
    prop.keyframe_insert("scale", frame=1)
    prop.keyframe_insert("scale", frame=19)
    prop.scale = (1.0, 1.0, 1.0) if defect else (0.0, 0.0, 0.0)
    prop.keyframe_insert("scale", frame=20)
    D.bake()
    return sc


def camera_cut(defect: bool, frames: int = 40) -> Any:
    """A ball dropped onto the ground, filmed by a camera that timeline markers switch to a second camera at frame 20.
    Defect: the second camera stands 1 m to the side (a cut: everything on screen jumps). Twin: it stands where the
    first does (the same picture)."""
    import bpy

    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    cam = D.camera(sc)
    D.ground()
    D.sphere("Ball", (0, 0, 1.5), 0.2)
    other = bpy.data.objects.new("Camera2", cam.data.copy())
    sc.collection.objects.link(other)
    other.matrix_world = cam.matrix_world.copy()
    other.location.x += 1.0 if defect else 0.0
    sc.timeline_markers.new("Start", frame=1).camera = cam
    sc.timeline_markers.new("Cut", frame=20).camera = other
    D.bake()
    return sc


def camera_jump(defect: bool, frames: int = 40) -> Any:
    """A ball dropped onto the ground, filmed by a keyed camera. Defect: constant keys teleport it 0.5 m sideways at
    frame 20. Twin: it dollies 3 m over the run (up to 11 cm a frame) and pans, eased in and out (a moving camera is no
    cut)."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    cam = D.camera(sc)
    D.ground()
    D.sphere("Ball", (0, 0, 1.5), 0.2)
    keys = [(1, 0.0), (19, 0.0), (20, 0.5), (frames, 0.5)] if defect else [(1, -1.5), (frames, 1.5)]
    x0 = cam.location.x
    for f, dx in keys:
        cam.location.x = x0 + dx
        cam.rotation_euler.z = 0.0 if defect else 0.1 * dx
        cam.keyframe_insert("location", frame=f)
        cam.keyframe_insert("rotation_euler", frame=f)
    if defect:
        D.hold_keys(cam)
    D.bake()
    return sc


def cloth_shell(defect: bool, frames: int = 45, res: int = 12) -> Any:
    """A cloth falls flat onto the floor. Defect: its collision `distance_min` is 0.1 m, so it comes to rest
    a hand's breadth above the floor it lies on in every frame. Twin: distance_min 0.005 m (it lies on it)."""
    import bpy

    sc = D.reset(frames)
    D.camera(sc)
    bpy.ops.mesh.primitive_plane_add(size=10, location=(0, 0, 0))
    floor = bpy.context.active_object
    floor.name = "Floor"
    floor.modifiers.new("Collision", "COLLISION")
    floor.collision.thickness_outer = 0.01
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=res, y_subdivisions=res, size=1.5, location=(0, 0, 0.6))
    cl = bpy.context.active_object
    cl.name = "Sheet"
    cm = cl.modifiers.new("Cloth", "CLOTH")
    cm.settings.quality = 4
    cm.collision_settings.distance_min = 0.1 if defect else 0.005
    cm.point_cache.frame_end = frames
    D.bake()
    return sc


def _sheet_stage(frames: int, res: int) -> tuple[Any, Any, float]:
    """An empty scene with a camera and a 1.5 m grid "Sheet" 1.5 m up: (scene, sheet, the sheet's largest local y)."""
    import bpy

    sc = D.reset(frames)
    D.camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=res, y_subdivisions=res, size=1.5, location=(0, 0, 1.5))
    cl = bpy.context.active_object
    cl.name = "Sheet"
    return sc, cl, max(v.co.y for v in cl.data.vertices)


def pinned_drape(defect: bool, frames: int = 40, res: int = 12) -> Any:
    """A cloth pinned along one edge hangs down and sways. Defect: nothing rendered is there to hold the pinned
    edge (it hangs from air). Twin: a rendered rail runs under the pinned edge (a curtain on its rod)."""
    sc, cl, ymax = _sheet_stage(frames, res)
    vg = cl.vertex_groups.new(name="pin")
    vg.add([v.index for v in cl.data.vertices if v.co.y > ymax - 1e-4], 1.0, "REPLACE")
    cm = cl.modifiers.new("Cloth", "CLOTH")
    cm.settings.quality = 4
    cm.settings.vertex_group_mass = "pin"
    cm.point_cache.frame_end = frames
    if not defect:
        D.box("Rail", (0, ymax, 1.47), (1.7, 0.04, 0.04))
    D.bake()
    return sc


def strung_drape(defect: bool, frames: int = 40, res: int = 12) -> Any:
    """Defect: the sheet hangs by two loose edges (1.25 m strings that render nothing) from one pinned vertex on a
    rendered rail 1 m beyond its edge: every pin is on material, the strings are not. Twin: `pinned_drape`'s, the
    sheet pinned along its edge on the rail under it."""
    import bpy  # noqa: F401, I001 - bpy first: it makes bmesh importable
    import bmesh

    if not defect:
        return pinned_drape(False, frames, res)
    sc, cl, ymax = _sheet_stage(frames, res)
    xs = [v.co.x for v in cl.data.vertices]
    corners = [v.index for v in cl.data.vertices if v.co.y > ymax - 1e-4 and v.co.x in (min(xs), max(xs))]
    bm = bmesh.new()
    bm.from_mesh(cl.data)
    bm.verts.ensure_lookup_table()
    ends = [bm.verts[i] for i in corners]
    hook = bm.verts.new((0.0, ymax + 1.0, 0.0))
    for v in ends:
        bm.edges.new((hook, v))
    bm.to_mesh(cl.data)
    bm.free()
    vg = cl.vertex_groups.new(name="pin")
    vg.add([len(cl.data.vertices) - 1], 1.0, "REPLACE")
    cm = cl.modifiers.new("Cloth", "CLOTH")
    cm.settings.quality = 4
    cm.settings.vertex_group_mass = "pin"
    cm.point_cache.frame_end = frames
    D.box("Rail", (0, ymax + 1.0, 1.47), (1.7, 0.04, 0.04))
    D.bake()
    return sc


def goal_jelly(defect: bool, frames: int = 40) -> Any:
    """A soft ball with Blender's default goal (every vertex held at 0.7 towards its own mesh). Defect: it starts
    in mid-air and hangs there on its goals. Twin: it starts resting on the ground (the goals only shape it)."""
    sc = D.reset(frames)
    D.camera(sc)
    D.rigid_world(sc, frames)
    D.ground().modifiers.new("Collision", "COLLISION")
    ball = D.sphere("Jelly", (0, 0, 1.5 if defect else 0.3), 0.3, rb=None)
    m = ball.modifiers.new("Softbody", "SOFT_BODY")
    m.settings.bend = 5.0  # stiff enough that the resting twin keeps its shape (the default sags through itself)
    m.settings.pull = m.settings.push = 0.9
    m.point_cache.frame_end = frames
    D.sphere("Faller", (1.2, 0, 1.5), 0.25)  # something the solver moves in both variants
    D.bake()
    return sc


def ghost_shelf(defect: bool, frames: int = 45) -> Any:
    """A ball dropped onto a rendered shelf above the ground. Defect: the shelf and the ball share no collision
    collection, so the ball falls straight through the shelf every frame shows (fast: it is inside it on no
    sampled frame). Twin: they share one, and the ball lands on the shelf."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    shelf = D.box("Shelf", (0, 0, 0.8), (1.2, 1.2, 0.04), rb="PASSIVE")
    D.sphere("Ball", (0, 0, 2.5), 0.2)
    if defect:
        shelf.rigid_body.collision_collections = [i == 1 for i in range(20)]
    D.bake()
    return sc


def first_step_kick(defect: bool, frames: int = 60) -> Any:
    """A ball beside the corner of a small platform, its collision hull grown 0.3 m by a Displace modifier.
    Defect: the modifier is shown in the viewport only and the hull overlaps the platform on frame 1 while the
    rendered ball does not touch it, so Bullet's first step kicks the ball away; it then falls 20 m off the
    stage (a fall whose energy dwarfs the kick). Twin: the modifier renders too and the ball starts clear of the
    platform, then glances off its corner and falls the same way."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.box("Platform", (0, 0, -0.1), (1.0, 1.0, 0.2), rb="PASSIVE")
    _grown_ball((0.7, 0, 0.2 if defect else 1.2), viewport_only=defect)
    D.bake()
    return sc


def sleeping_crate(defect: bool, frames: int = 40) -> Any:
    """A crate that starts deactivated (Bullet's sleep: it stays put until something hits it). Defect: it starts
    0.8 m above the ground and hangs there, held by nothing. Twin: it starts resting on the ground (a settled
    body put to sleep so it does not jitter)."""
    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    D.ground()
    crate = D.box("Crate", (0, 0, 1.0 if defect else 0.2), (0.4, 0.4, 0.4), rb="ACTIVE")
    crate.rigid_body.use_deactivation = crate.rigid_body.use_start_deactivated = True
    D.sphere("Faller", (1.2, 0, 1.5), 0.25)  # something the solver moves in both variants
    D.bake()
    return sc


def _two_part_mesh(name: str, parts: list[tuple[tuple, tuple]], clear_second: bool) -> Any:
    """One mesh object of axis-aligned boxes ((centre), (half sizes)); the second box's faces get a material
    that Workbench draws with nothing when `clear_second`."""
    import bpy

    verts, faces = [], []
    for c, h in parts:
        k = len(verts)
        verts += [(c[0] + a * h[0], c[1] + b * h[1], c[2] + z * h[2]) for a in (-1, 1) for b in (-1, 1) for z in (-1, 1)]
        faces += [tuple(k + i for i in f) for f in
                  [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]]
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    paint, part = bpy.data.materials.new(name + "Paint"), bpy.data.materials.new(name + "PartPaint")
    part.diffuse_color = (0.5, 0.5, 0.5, 0.0 if clear_second else 1.0)
    me.materials.append(paint)
    me.materials.append(part)
    for p in me.polygons[6:12]:
        p.material_index = 1
    me.update()
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def _sheet(z: float, res: int, frames: int) -> Any:
    """A 1.5 m cloth grid named "Sheet" at height `z` (quality 4, cached over `frames`); its cloth modifier."""
    import bpy

    bpy.ops.mesh.primitive_grid_add(x_subdivisions=res, y_subdivisions=res, size=1.5, location=(0, 0, z))
    cl = bpy.context.active_object
    cl.name = "Sheet"
    cm = cl.modifiers.new("Cloth", "CLOTH")
    cm.settings.quality = 4
    cm.point_cache.frame_end = frames
    return cm


def clear_block_cloth(defect: bool, frames: int = 40, res: int = 12) -> Any:
    """A cloth falls onto a floor mesh that also holds a block (a second material on the block's faces), and
    drapes over the block. Defect: the block's material renders nothing, so the frames show a cloth draped over
    air. Twin: the block renders."""

    sc = D.reset(frames)
    sc.render.engine = "BLENDER_WORKBENCH"
    sc.display.shading.color_type = "MATERIAL"
    D.camera(sc)
    floor = _two_part_mesh("Floor", [((0, 0, -0.05), (3, 3, 0.05)), ((0, 0, 0.25), (0.3, 0.3, 0.25))], defect)
    floor.modifiers.new("Collision", "COLLISION")
    _sheet(0.9, res, frames)
    D.bake()
    return sc


def viewport_grown_floor(defect: bool, frames: int = 40, res: int = 12) -> Any:
    """A cloth falls onto a floor whose collision mesh comes from a Displace modifier above its Collision modifier
    in the stack (0.15 m). Defect: the Displace is shown in the viewport only, so the cloth lies 0.15 m above the
    rendered floor in every frame. Twin: it renders too (the rendered floor is the one the cloth lies on)."""
    import bpy

    sc = D.reset(frames)
    D.camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=4, size=6, location=(0, 0, 0))
    floor = bpy.context.active_object
    floor.name = "Floor"
    grow = floor.modifiers.new("Grow", "DISPLACE")
    grow.strength, grow.mid_level = 0.15, 0.0
    grow.show_render = not defect
    floor.modifiers.new("Collision", "COLLISION")
    _sheet(0.6, res, frames)
    D.bake()
    return sc


def post_collision_floor(defect: bool, frames: int = 40, res: int = 12) -> Any:
    """A cloth falls onto a floor lowered 0.15 m by a Displace modifier. Defect: the Displace sits after the floor's
    Collision modifier, so Blender collides with the floor as it was before it and the cloth lies 0.15 m above the
    rendered floor in every frame (shown in the viewport and in renders alike: no render difference reveals it).
    Twin: the Displace sits before the Collision modifier (the cloth lies on the floor it renders)."""
    import bpy

    sc = D.reset(frames)
    D.camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=4, size=6, location=(0, 0, 0))
    floor = bpy.context.active_object
    floor.name = "Floor"
    if defect:
        floor.modifiers.new("Collision", "COLLISION")
    low = floor.modifiers.new("Lower", "DISPLACE")
    low.strength, low.mid_level = -0.15, 0.0
    if not defect:
        floor.modifiers.new("Collision", "COLLISION")
    _sheet(0.45, res, frames)
    D.bake()
    return sc


def keyed_shrink(defect: bool, frames: int = 40, res: int = 12) -> Any:
    """A cloth falls onto the floor. Defect: its shrink factor is keyed from 0 to 0.4 over frames 10-30 (the cloth
    contracts with no force doing it: a property no list of "physical constants" names). Twin: the same key at a
    constant value (keyed, but nothing changes)."""

    sc = D.reset(frames)
    D.camera(sc)
    D.box("Floor", (0, 0, -0.05), (6, 6, 0.1)).modifiers.new("Collision", "COLLISION")
    cm = _sheet(0.6, res, frames)
    for f, v in ((10, 0.0), (30, 0.4 if defect else 0.0)):
        cm.settings.shrink_min = v
        cm.settings.keyframe_insert("shrink_min", frame=f)
    D.bake()
    return sc


def is_viewport_floor(defect: bool, frames: int = 45) -> Any:
    """A ball dropped onto a slab whose geometry-nodes tree lifts it by 0.25 m where an "Is Viewport" node says so.
    Defect: lifted in the viewport only (the solver's slab is 0.25 m above the rendered one: the ball rests on air
    in every frame). Twin: lifted in both (the node is there, the two configurations agree)."""
    from physcodegym.probes.defects.defects_hiding import lift_node_group

    sc = D.reset(frames)
    D.rigid_world(sc, frames)
    D.camera(sc)
    slab = D.box("Slab", (0, 0, -0.05), (4, 4, 0.1))
    ng, xyz = lift_node_group("Lift")
    iv, sw = ng.nodes.new("GeometryNodeIsViewport"), ng.nodes.new("GeometryNodeSwitch")
    sw.input_type = "FLOAT"
    sw.inputs["False"].default_value = 0.0 if defect else 0.25
    sw.inputs["True"].default_value = 0.25
    ng.links.new(iv.outputs[0], sw.inputs["Switch"])
    ng.links.new(sw.outputs[0], xyz.inputs["Z"])
    slab.modifiers.new("Lift", "NODES").node_group = ng
    D._rb(slab, "PASSIVE", "CONVEX_HULL", mesh_source="FINAL", collision_margin=0.001)
    D.sphere("Ball", (0, 0, 1.5), 0.25)
    D.bake()
    return sc


def clear_plate(defect: bool, frames: int = 45) -> Any:
    """One passive mesh: a floor and, 0.5 m above it, a plate (a second material on the plate's faces) that
    catches a dropped parcel. Defect: the plate's material renders nothing (Workbench alpha 0), so every frame
    shows the parcel resting on air, while Bullet collides with every face of the mesh. Twin: the plate renders."""
    sc = D.reset(frames)
    sc.render.engine = "BLENDER_WORKBENCH"
    sc.display.shading.color_type = "MATERIAL"
    D.rigid_world(sc, frames)
    D.camera(sc)
    ground = _two_part_mesh("Ground", [((0, 0, -0.05), (4, 4, 0.05)), ((0, 0, 0.5), (0.6, 0.6, 0.02))], defect)
    D._rb(ground, "PASSIVE", "MESH")
    D.box("Parcel", (0, 0, 1.2), (0.3, 0.3, 0.3), rb="ACTIVE", mass=0.5)
    D.bake()
    return sc


BUILDERS = {"keyed_world": keyed_world, "field_hold": field_hold, "shapekey_ball": shapekey_ball, "offscreen_owner": offscreen_owner, "alpha_shelf": alpha_shelf, "keyed_bounce": keyed_bounce, "gn_instance": gn_instance, "bad_params": bad_params,
            "render_only_motion": render_only_motion, "viewport_grown_collider": viewport_grown_collider,
            "cloth_shell": cloth_shell, "pinned_drape": pinned_drape, "strung_drape": strung_drape,
            "goal_jelly": goal_jelly, "ghost_shelf": ghost_shelf, "first_step_kick": first_step_kick,
            "sleeping_crate": sleeping_crate, "clear_plate": clear_plate, "clear_block_cloth": clear_block_cloth,
            "viewport_grown_floor": viewport_grown_floor, "keyed_shrink": keyed_shrink,
            "post_collision_floor": post_collision_floor,
            "is_viewport_floor": is_viewport_floor, "masked_stilt": masked_stilt,
            "removed_deflector": removed_deflector, "visibility_swap": visibility_swap, "camera_cut": camera_cut,
            "camera_jump": camera_jump, "built_swap": built_swap, "zero_scale_prop": zero_scale_prop,
            "lens_jump": lens_jump}


@pytest.fixture(scope="session")
def audited_more() -> Any:
    """audited_more(case, defect) -> AuditReport (each scene built, baked and audited once per session)."""
    from physcodegym.probes.audit.audit import audit_scene

    cache: dict[tuple[str, bool], AuditReport] = {}

    def get(case: str, defect: bool) -> AuditReport:
        if (case, defect) not in cache:
            cache[(case, defect)] = audit_scene(BUILDERS[case](defect))
        return cache[(case, defect)]

    return get


# (case, kind that must be found, objects that finding must name)
CASES = [
    ("keyed_world", "scripted_motion", {"Ball"}),
    ("field_hold", "hidden_support", {"Crate", "Lift"}),
    ("shapekey_ball", "scripted_motion", {"Ball"}),
    ("offscreen_owner", "scripted_motion", {"Ball"}),
    ("alpha_shelf", "hidden_support", {"Parcel", "Shelf"}),
    ("keyed_bounce", "non_physical_parameter", {"Ball"}),
    ("gn_instance", "scripted_motion", {"Plate"}),
    ("bad_params", "non_physical_parameter", {"Crate"}),
    ("bad_params", "non_physical_parameter", {"Ground", "Ball"}),
    ("render_only_motion", "scripted_motion", {"Ball"}),
    ("viewport_grown_collider", "collider_mismatch", {"Ball", "Ground"}),
    ("cloth_shell", "collider_mismatch", {"Sheet", "Floor"}),
    ("pinned_drape", "hidden_support", {"Sheet"}),
    ("strung_drape", "hidden_support", {"Sheet"}),
    ("goal_jelly", "hidden_support", {"Jelly"}),
    ("ghost_shelf", "no_contact_response", {"Ball", "Shelf"}),
    ("first_step_kick", "energy_gain", {"Ball"}),
    ("sleeping_crate", "hidden_support", {"Crate"}),
    ("clear_plate", "collider_mismatch", {"Parcel", "Ground"}),
    ("clear_block_cloth", "hidden_support", {"Sheet", "Floor"}),
    ("viewport_grown_floor", "collider_mismatch", {"Sheet", "Floor"}),
    ("post_collision_floor", "collider_mismatch", {"Sheet", "Floor"}),
    ("keyed_shrink", "non_physical_parameter", {"Sheet"}),
    ("is_viewport_floor", "collider_mismatch", {"Ball", "Slab"}),
    ("masked_stilt", "collider_mismatch", {"Ball"}),
    ("removed_deflector", "stale_cache", {"Ball"}),  # the helper moved after the bake: re-bake, nothing scripted
    ("visibility_swap", "scripted_motion", {"Ball"}),
    ("visibility_swap", "scripted_motion", {"Ball2"}),
    ("camera_cut", "scripted_motion", {"Camera", "Camera2"}),
    ("camera_jump", "scripted_motion", {"Camera"}),
    ("built_swap", "scripted_motion", {"Ball"}),
    ("built_swap", "scripted_motion", {"Ball2"}),
    ("zero_scale_prop", "scripted_motion", {"Prop"}),
    ("lens_jump", "scripted_motion", {"Camera"}),
]


@pytest.mark.parametrize("case,kind,objects", CASES, ids=[f"{c}-{'-'.join(sorted(o))}" for c, _, o in CASES])
def test_mechanism_found_and_twin_clean(audited_more, case, kind, objects):
    bad = audited_more(case, True)
    assert bad.meta["solvers_off"]["ran"], bad.meta["solvers_off"]
    hits = [f for f in bad.by_kind(kind) if objects <= set(f.objects)]
    assert hits, f"{case}: expected {kind} on {objects}, got {[(f.kind, f.objects, f.message) for f in bad.findings]}"
    twin = audited_more(case, False)
    assert twin.meta["solvers_off"]["ran"], twin.meta["solvers_off"]
    assert twin.findings == [], [(f.kind, f.objects, f.message) for f in twin.findings]


def test_keyed_world_switch_is_removed_in_the_solvers_off_run(audited_more):
    """The world's keyframe is named among what the solvers-off run switched off, and the simulated ball
    of the twin is not 'still moving' there."""
    twin = audited_more("keyed_world", False)
    off = twin.meta["solvers_off"]
    assert any("rigidbody_world.enabled" in s and "removed" in s for s in off["switched_off"]), off["switched_off"]
    assert "Ball" not in off["still_moving"], off["still_moving"]


def test_shape_key_motion_is_a_deformation(audited_more):
    """The object never moves; the solvers-off run sees its vertices move (sampled because of the key)."""
    off = audited_more("shapekey_ball", True).meta["solvers_off"]["still_moving"]
    assert "deform" in off.get("Ball", {}), off


def test_animated_constant_names_its_path_and_values(audited_more):
    hits = [f for f in audited_more("keyed_bounce", True).by_kind("non_physical_parameter") if f.evidence.get("param") == "animated_constant"]
    assert [f.evidence["path"] for f in hits] == ["objects['Ground'].rigid_body.restitution"], [f.evidence for f in hits]
    ev = hits[0].evidence
    assert ev["first"] == [pytest.approx(0.3)] and ev["last"] == [pytest.approx(1.0)], ev


def test_the_audit_reads_the_render_side_and_says_where_the_viewport_differs(audited_more):
    """The divergence is named (modifier path, both visibilities), and the live scene is left as it was found."""
    import bpy
    from physcodegym.probes.audit.audit import audit_scene

    bad = audited_more("viewport_grown_collider", True)
    rows = bad.scene["render_divergences"]
    assert rows == [{"path": "bpy.data.objects['Ball'].modifiers['Grow']", "type": "DISPLACE", "viewport": True,
                     "render": False}], rows
    assert audited_more("viewport_grown_collider", False).scene["render_divergences"] == []
    audit_scene(viewport_grown_collider(True), solvers_off=False, render_check=False)
    grow = bpy.data.objects["Ball"].modifiers["Grow"]  # the live scene, put back as built
    assert grow.show_viewport and not grow.show_render


def test_an_is_viewport_node_is_read_as_in_a_render_and_put_back(audited_more):
    """The "Is Viewport" node is named among the divergences with the object that uses it, and after the audit the
    live node tree is as it was built (the node still feeds the switch; no constant left behind)."""
    import bpy
    from physcodegym.probes.audit.audit import audit_scene

    rows = audited_more("is_viewport_floor", True).scene["render_divergences"]
    assert [(r["type"], r["objects"]) for r in rows] == [("IS_VIEWPORT", ["Slab"])], rows
    audit_scene(is_viewport_floor(True), solvers_off=False, render_check=False)
    ng = bpy.data.node_groups["Lift"]
    assert [n.bl_idname for n in ng.nodes].count("FunctionNodeInputBool") == 0
    iv = next(n for n in ng.nodes if n.bl_idname == "GeometryNodeIsViewport")
    assert iv.outputs[0].is_linked and iv.outputs[0].links[0].to_node.bl_idname == "GeometryNodeSwitch"


def test_a_turn_in_mid_air_with_nothing_there_is_read_from_the_free_flight(audited_more):
    """The deflection is found by the free-flight check (every frame), not only by a restarted run (by chance); the
    re-simulation departs too, so it is named a stale cache (the scene was changed after its bake)."""
    hits = [f for f in audited_more("removed_deflector", True).by_kind("stale_cache")
            if "free_frames_checked" in f.evidence]
    assert hits and hits[0].objects == ["Ball"] and hits[0].value > 1.0, hits


def test_a_single_knock_in_mid_air_is_read_from_the_free_flight():
    """A ball falling past a small post that clips its edge (two frames off gravity), the post taken away after the
    bake: a knock that short is read wherever it falls. With the post left in place the same bake is clean."""
    from physcodegym.probes.audit.audit import audit_scene

    def knock(defect: bool) -> Any:
        return _helper_in_the_fall(defect, 40, ("Post", (0.13, 0, 1.3), (0.1, 0.1, 0.1), 0.0), 2.4)

    bad = [f for f in audit_scene(knock(True)).by_kind("stale_cache") if "free_frames_checked" in f.evidence]
    assert bad and bad[0].objects == ["Ball"], bad
    twin = [f for f in audit_scene(knock(False)).findings if "free_frames_checked" in f.evidence]
    assert twin == [], twin


def test_a_visibility_swap_says_where_each_ball_appears_or_vanishes(audited_more):
    """Each ball's finding names the frame it switches at and the sampled runs it is hidden on; the twin's keys (which
    hide nothing) are read per frame too and name nothing."""
    bad = {f.objects[0]: f for f in audited_more("visibility_swap", True).by_kind("scripted_motion")
           if f.evidence.get("cause") == "visibility_switch"}
    assert set(bad) == {"Ball", "Ball2"}, bad
    assert bad["Ball"].evidence["switch_frames"] == [20] and bad["Ball"].evidence["hidden_frames"]["runs"] == [[20, 40]]
    assert bad["Ball2"].evidence["hidden_frames"]["runs"] == [[1, 19]]
    twin = audited_more("visibility_swap", False)
    assert twin.scene["appearance_varies"] and twin.scene["hidden_frames"] == {}, twin.scene
