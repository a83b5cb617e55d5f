"""Small native scenes with one known defect each (and their valid twins), built in-process.

They are the audit's test fixtures and benchmark scenes, and double as examples for the Blender panel:
every builder resets to an empty factory scene, builds, bakes and returns the scene. `defect=False`
gives the close valid twin. Each case is one finding kind of SPEC §5, or a way to hide one.
"""

from __future__ import annotations

import math
from typing import Any


def reset(frames: int = 90) -> Any:
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, frames
    sc.render.fps = 30
    sc.render.resolution_x, sc.render.resolution_y = 640, 360
    # Workbench renders without anti-aliasing: 3.5x faster a frame (60 frames at 640x360: 6.4 s against 22.8 s with
    # the default 8 samples, measured on a loaded 2-core machine), and the audit's re-render of a saved scene uses
    # the scene's own setting, so what the tests compare stays a render of the same settings
    sc.display.render_aa = "OFF"
    return sc


def hold_keys(idb: Any) -> None:
    """Every key of a data-block's active action holds its value until the next key (CONSTANT interpolation): a
    step, not a blend (Blender 5.0's layered actions: layer -> strip -> the slot's channel bag)."""
    ad = idb.animation_data
    for fc in ad.action.layers[0].strips[0].channelbag(ad.action_slot).fcurves:
        for k in fc.keyframe_points:
            k.interpolation = "CONSTANT"


def workbench_frames(sc: Any, width: int = 256, height: int = 144) -> None:
    """Render the scene's frames as small Workbench PNGs in material colours (the tests that hand frames to the
    audit: fast, and exactly the colours the settings give)."""
    sc.render.engine = "BLENDER_WORKBENCH"
    sc.display.shading.color_type = "MATERIAL"
    sc.render.resolution_x, sc.render.resolution_y = width, height
    sc.render.resolution_percentage = 100
    sc.render.image_settings.file_format = "PNG"


def rigid_world(sc: Any, frames: int) -> None:
    import bpy

    bpy.ops.rigidbody.world_add()
    sc.rigidbody_world.point_cache.frame_start = 1
    sc.rigidbody_world.point_cache.frame_end = frames


def camera(
    sc: Any, loc: tuple[float, float, float] = (0, -9, 2.5), target: tuple[float, float, float] = (0, 0, 1)
) -> Any:
    import bpy
    from mathutils import Vector

    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    sc.collection.objects.link(cam)
    cam.location = loc
    cam.rotation_euler = (Vector(target) - Vector(loc)).to_track_quat("-Z", "Y").to_euler()
    sc.camera = cam
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sc.collection.objects.link(sun)
    sun.rotation_euler = (0.6, 0.2, 0.3)
    return cam


def box(name: str, loc: tuple, dims: tuple, rb: str | None = None, shape: str = "BOX", **rbkw: Any) -> Any:
    """An origin-centred box mesh built from data (no operator state involved)."""
    import bpy

    if rb is None:
        rbkw = {}
    hx, hy, hz = (d / 2 for d in dims)
    verts = [(x, y, z) for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    me.update()
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = loc
    if rb:
        _rb(ob, rb, shape, **rbkw)
    return ob


def sphere(name: str, loc: tuple, r: float, rb: str | None = "ACTIVE", shape: str = "SPHERE", **rbkw: Any) -> Any:
    import bpy

    bpy.ops.mesh.primitive_uv_sphere_add(radius=r, location=loc, segments=24, ring_count=12)
    ob = bpy.context.active_object
    ob.name = name
    if rb:
        _rb(ob, rb, shape, **rbkw)
    return ob


def _rb(ob: Any, kind: str, shape: str, **kw: Any) -> None:
    import bpy

    for o in bpy.context.selected_objects:
        o.select_set(False)
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    bpy.ops.rigidbody.object_add(type=kind)
    ob.rigid_body.collision_shape = shape
    for k, v in kw.items():
        setattr(ob.rigid_body, k, v)


def bake() -> None:
    import bpy

    bpy.ops.ptcache.bake_all(bake=True)


def ground(size: float = 20.0, **kw: Any) -> Any:
    return box("Ground", (0, 0, -0.05), (size, size, 0.1), rb="PASSIVE", **kw)


def rigid_stage(frames: int, **ground_kw: Any) -> Any:
    """An empty scene with a rigid-body world, the default camera and a passive ground: how most builders start."""
    sc = reset(frames)
    rigid_world(sc, frames)
    camera(sc)
    ground(**ground_kw)
    return sc


def shading_material(how: str, hide: bool) -> Any:
    """A material whose shading hides the object (`hide`) or shows it, by `how`: "mix" (a Mix Shader towards
    Transparent), "camera_ray" (a Light Path factor), "value_alpha" (an alpha fed by a Value node); the twin has
    the same node shapes with an opaque result. "mix_keyed": the Mix Shader's factor keyed, opaque on the first
    frame and fully towards Transparent from the second on (`hide`) or only 0.3 of the way (the twin)."""
    import bpy

    m = bpy.data.materials.new(f"shelf_{how}_{hide}")
    m.use_nodes = True
    nt = m.node_tree
    out = next(n for n in nt.nodes if n.type == "OUTPUT_MATERIAL")
    bsdf = next(n for n in nt.nodes if n.type == "BSDF_PRINCIPLED")
    if how in ("mix", "camera_ray", "mix_keyed"):  # the surface mixed with a Transparent BSDF by a factor
        tr = nt.nodes.new("ShaderNodeBsdfTransparent")
        mix = nt.nodes.new("ShaderNodeMixShader")
        nt.links.new(bsdf.outputs[0], mix.inputs[1])
        nt.links.new(tr.outputs[0], mix.inputs[2])
        nt.links.new(mix.outputs[0], out.inputs["Surface"])
        fac = mix.inputs["Fac"]
    if how == "mix":
        fac.default_value = 1.0 if hide else 0.0
    elif how == "camera_ray":
        lp = nt.nodes.new("ShaderNodeLightPath")
        nt.links.new(lp.outputs["Is Camera Ray" if hide else "Is Shadow Ray"], fac)
    elif how == "mix_keyed":
        fac.default_value = 0.0
        fac.keyframe_insert("default_value", frame=1)
        fac.default_value = 1.0 if hide else 0.3
        fac.keyframe_insert("default_value", frame=2)
        for fc in nt.animation_data.action.layers[0].strips[0].channelbags[0].fcurves:
            for kp in fc.keyframe_points:
                kp.interpolation = "CONSTANT"
    elif how == "value_alpha":
        v = nt.nodes.new("ShaderNodeValue")
        v.outputs[0].default_value = 0.0 if hide else 1.0
        nt.links.new(v.outputs[0], bsdf.inputs["Alpha"])
    return m


# ---------------------------------------------------------------------------- valid scenes
def bouncing_ball(frames: int = 90, pumped: bool = False) -> Any:
    """A ball dropped on the ground. `pumped`: a hidden FORCE field under the ground switches on at
    frame 46 and lifts the resting ball (work with no counterpart in the video)."""
    import bpy

    sc = rigid_stage(frames, restitution=0.8)
    sphere("Ball", (0, 0, 2.0), 0.25, restitution=0.8)
    if pumped:
        bpy.ops.object.effector_add(type="FORCE", location=(0, 0, -0.5))
        f = bpy.context.active_object
        f.name = "Pump"
        f.field.strength = 0.0
        f.field.keyframe_insert("strength", frame=45)
        f.field.strength = 1500.0
        f.field.keyframe_insert("strength", frame=46)
    bake()
    return sc


def dominoes(frames: int = 120, n: int = 5) -> Any:
    """A ball rolls down a ramp and topples a row of dominoes."""
    sc = reset(frames)
    rigid_world(sc, frames)
    camera(sc, (4, -9, 3), (3, 0, 0.5))
    ground(friction=0.6)
    ramp = box("Ramp", (-1.2, 0, 0.6), (2.6, 1.0, 0.1), rb="PASSIVE")
    ramp.rotation_euler = (0, math.radians(25), 0)
    sphere("Ball", (-2.1, 0, 1.35), 0.2, mass=2.0, friction=0.6)
    for i in range(n):
        box(f"Domino{i}", (0.9 + 0.35 * i, 0, 0.3), (0.08, 0.5, 0.6), rb="ACTIVE", mass=0.2, friction=0.5)
    bake()
    return sc


def rod_to(ob: Any, world_point: tuple, width: float = 0.04) -> None:
    """Add to `ob`'s mesh a square rod from its origin to `world_point` (one rigid body: a bob and its rod);
    `ob` is neither rotated nor scaled."""
    import bpy  # noqa: F401, I001 - bpy first: it makes bmesh and mathutils importable
    import bmesh
    from mathutils import Matrix, Vector

    tip = Vector(world_point) - Vector(ob.location)
    length = tip.length
    rot = Vector((0.0, 0.0, 1.0)).rotation_difference(tip.normalized()).to_matrix().to_4x4()
    m = Matrix.Translation(tip / 2) @ rot @ Matrix.Diagonal((width, width, length, 1.0))
    bm = bmesh.new()
    bm.from_mesh(ob.data)
    bmesh.ops.create_cube(bm, size=1.0, matrix=m)
    bm.to_mesh(ob.data)
    bm.free()


def pendulum(frames: int = 90, rod: bool = True) -> Any:
    """A bob on a rod, on a hinge (rigid-body constraint) at the rod's top, swinging from 60 degrees. `rod`
    False: the bob alone, 1.5 m from the hinge (a link no frame shows)."""
    import bpy

    sc = rigid_stage(frames)
    pivot = box("Pivot", (0, 0, 3.0), (0.1, 0.4, 0.1), rb="PASSIVE")
    L = 1.5
    a = math.radians(60)
    bob = box("Bob", (L * math.sin(a), 0, 3.0 - L * math.cos(a)), (0.3, 0.3, 0.3), rb="ACTIVE", shape="MESH", mass=1.0)
    if rod:
        rod_to(bob, (0.0, 0.0, 3.0))  # the material that carries the hinge: a rod from the bob up to the pivot
    bob.rigid_body.collision_collections[0] = False
    bob.rigid_body.collision_collections[1] = True
    emp = bpy.data.objects.new("Hinge", None)
    sc.collection.objects.link(emp)
    emp.location = (0, 0, 3.0)
    emp.rotation_euler = (math.radians(90), 0, 0)
    bpy.context.view_layer.objects.active = emp
    bpy.ops.rigidbody.constraint_add(type="HINGE")
    emp.rigid_body_constraint.object1 = pivot
    emp.rigid_body_constraint.object2 = bob
    bake()
    return sc


def flag(frames: int = 40, wind: float = 800.0, res: int = 16) -> Any:
    """A cloth flag pinned to a pole and blown by wind (wind on cloth is plausible and must not be flagged; the
    pole is what holds the pinned edge, so the audit sees material there)."""
    import bpy

    sc = reset(frames)
    camera(sc)
    bpy.ops.mesh.primitive_grid_add(
        x_subdivisions=res, y_subdivisions=res, size=2, location=(0, 0, 2), rotation=(math.pi / 2, 0, 0)
    )
    fl = bpy.context.active_object
    fl.name = "Flag"
    me = fl.data
    xs = [v.co.x for v in me.vertices]
    left = [v.index for v in me.vertices if abs(v.co.x - min(xs)) < 1e-6]
    vg = fl.vertex_groups.new(name="pin")
    vg.add(left, 1.0, "REPLACE")
    bpy.ops.mesh.primitive_cylinder_add(radius=0.03, depth=3.2, location=(-1.03, 0, 1.6))
    bpy.context.active_object.name = "Pole"
    cm = fl.modifiers.new("Cloth", "CLOTH")
    cm.settings.vertex_group_mass = "pin"
    cm.settings.quality = 5
    cm.point_cache.frame_end = frames
    bpy.ops.object.effector_add(type="WIND", location=(0, -3, 2), rotation=(-math.pi / 2, 0, 0))
    bpy.context.active_object.name = "Wind"
    bpy.context.active_object.field.strength = wind
    bake()
    return sc


# ---------------------------------------------------------------------------- defects
def embedded_eggs(defect: bool = True, frames: int = 60) -> Any:
    """Resting eggs inside the table slab (they collide only with the floor) vs eggs on the table top."""
    sc = rigid_stage(frames)
    table = box("Table", (0, 0, 0.15), (2.0, 1.0, 0.3), rb="PASSIVE")
    for i in range(3):
        z = 0.2 if defect else 0.6
        egg = sphere(f"Egg{i}", (-0.6 + 0.6 * i, 0, z), 0.1, mass=0.06)
        egg.scale = (1.0, 1.0, 1.0)
        if defect:
            egg.rigid_body.collision_collections[1] = True
            egg.rigid_body.collision_collections[0] = False
    gnd = sc.objects["Ground"]
    gnd.rigid_body.collision_collections[1] = True  # the floor collides with both
    assert table.rigid_body.collision_collections[0]
    bake()
    return sc


def oversized_proxy(defect: bool = True, frames: int = 60) -> Any:
    """A ball whose mesh has a joined decoration far out, so its SPHERE collider is oversized."""
    import bpy

    sc = rigid_stage(frames)
    ball = sphere("Ball", (0, 0, 0.5), 0.25, rb=None)
    if defect:
        bpy.ops.mesh.primitive_cube_add(size=0.05, location=(0, 0, 1.2))
        deco = bpy.context.active_object
        bpy.ops.object.select_all(action="DESELECT")
        deco.select_set(True)
        ball.select_set(True)
        bpy.context.view_layer.objects.active = ball
        bpy.ops.object.join()
    _rb(ball, "ACTIVE", "SPHERE")
    bake()
    return sc


def wrong_shape(defect: bool = True, frames: int = 45) -> Any:
    """A cube that collides as a sphere (defect) vs as a box."""
    sc = rigid_stage(frames)
    box("Crate", (0, 0, 0.6), (0.5, 0.5, 0.5), rb="ACTIVE", shape="SPHERE" if defect else "BOX")
    bake()
    return sc


def pass_through(defect: bool = True, frames: int = 90) -> Any:
    """A ball rolls down a ramp into a rendered wall; the wall has no collider (defect) or a passive one."""
    sc = rigid_stage(frames, friction=0.6)
    ramp = box("Ramp", (-1.2, 0, 0.6), (2.6, 1.0, 0.1), rb="PASSIVE")
    ramp.rotation_euler = (0, math.radians(25), 0)
    sphere("Ball", (-2.1, 0, 1.35), 0.2, mass=2.0, friction=0.6)
    box("Wall", (1.2, 0, 0.5), (0.3, 2.0, 1.0), rb=None if defect else "PASSIVE")
    bake()
    return sc


def invisible_shelf(defect: bool = True, frames: int = 60) -> Any:
    """A box resting on a shelf that does not render (defect) vs a rendered shelf."""
    sc = rigid_stage(frames)
    shelf = box("Shelf", (0, 0, 1.0), (1.0, 0.6, 0.05), rb="PASSIVE")
    shelf.hide_render = defect
    box("Parcel", (0, 0, 1.3), (0.3, 0.3, 0.3), rb="ACTIVE", mass=0.5)
    bake()
    return sc


def keyframed_ball(defect: bool = True, frames: int = 60) -> Any:
    """A ball that falls by keyframes (defect) vs by the solver."""
    sc = rigid_stage(frames)
    if defect:
        b = sphere("Ball", (0, 0, 2.0), 0.25, rb=None)
        for f, z in ((1, 2.0), (20, 0.25), (35, 1.2), (50, 0.25)):
            b.location.z = z
            b.keyframe_insert("location", index=2, frame=f)
    else:
        sphere("Ball", (0, 0, 2.0), 0.25)
    bake()
    return sc


HANDLER_PROGRAM = """import bpy

def push_ball(scene, depsgraph=None):
    ob = scene.objects["Ball"]
    ob.location.x = -2.0 + 0.05 * scene.frame_current

bpy.app.handlers.frame_change_pre.append(push_ball)
"""


def handler_ball(defect: bool = True, frames: int = 45) -> Any:
    """A non-physics ball moved by a frame_change_pre handler (registered live in this process)."""
    import bpy

    sc = rigid_stage(frames)
    sphere("Ball", (-2.0, 0, 0.25), 0.25, rb=None if defect else "ACTIVE")
    if defect:

        def push_ball(scene: Any, depsgraph: Any = None) -> None:
            ob = scene.objects["Ball"]
            ob.location.x = -2.0 + 0.05 * scene.frame_current

        bpy.app.handlers.frame_change_pre.append(push_ball)
    bake()
    return sc


def clear_user_handlers() -> None:
    import bpy

    for ev in ("frame_change_pre", "frame_change_post", "depsgraph_update_pre", "depsgraph_update_post"):
        lst = getattr(bpy.app.handlers, ev)
        for fn in list(lst):
            if getattr(fn, "__name__", "") == "push_ball":
                lst.remove(fn)


def attractor(defect: bool = True, frames: int = 60) -> Any:
    """A falling ball pulled sideways by a negative FORCE field (defect) vs no field."""
    import bpy

    sc = rigid_stage(frames)
    sphere("Ball", (0, 0, 3.0), 0.25)
    if defect:
        bpy.ops.object.effector_add(type="FORCE", location=(2.5, 0, 1.0))
        f = bpy.context.active_object
        f.name = "Attractor"
        f.field.strength = -40.0
    bake()
    return sc


def crumpling_cloth(defect: bool = True, frames: int = 50, res: int = 14) -> Any:
    """A long cloth strip falls and folds onto the ground; without self-collision it crosses itself."""
    import bpy

    sc = reset(frames)
    camera(sc)
    bpy.ops.mesh.primitive_plane_add(size=10, location=(0, 0, 0))
    gnd = bpy.context.active_object
    gnd.name = "Floor"
    gnd.modifiers.new("Collision", "COLLISION")
    bpy.ops.mesh.primitive_grid_add(
        x_subdivisions=res, y_subdivisions=res * 3, size=1, location=(0, 0, 2.0), rotation=(math.pi / 2, 0, 0)
    )
    cl = bpy.context.active_object
    cl.name = "Sheet"
    cl.scale = (1.0, 3.0, 1.0)
    bpy.ops.object.transform_apply(scale=True)
    cl.location.z = 2.0
    cm = cl.modifiers.new("Cloth", "CLOTH")
    cm.settings.quality = 4
    cm.collision_settings.use_self_collision = not defect
    cm.point_cache.frame_end = frames
    bake()
    return sc


def static_scene(frames: int = 30) -> Any:
    """Nothing moves and nothing is simulated."""
    sc = reset(frames)
    camera(sc)
    box("Block", (0, 0, 0.5), (1, 1, 1))
    sphere("Ball", (2, 0, 0.5), 0.5, rb=None)
    return sc


def exploding_cloth(defect: bool = True, frames: int = 40) -> Any:
    """A sheet with absurd stiffness at the lowest quality step blows up (defect) vs default settings."""
    import bpy

    sc = reset(frames)
    camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=10, y_subdivisions=10, size=2, location=(0, 0, 2))
    cl = bpy.context.active_object
    cl.name = "Sheet"
    cm = cl.modifiers.new("Cloth", "CLOTH")
    s = cm.settings
    if defect:
        s.quality = 1
        s.mass = 0.001
        for k in ("tension_stiffness", "compression_stiffness", "shear_stiffness", "bending_stiffness"):
            setattr(s, k, 5e4)
    cm.point_cache.frame_end = frames
    bake()
    return sc


def hidden_floor(defect: bool = True, frames: int = 60) -> Any:
    """A ball bouncing on a table; the table renders but has no collider and an invisible plane at its
    top does the work (defect), vs a table that is its own passive collider."""
    sc = reset(frames)
    rigid_world(sc, frames)
    camera(sc)
    box("Table", (0, 0, 0.4), (2.0, 1.2, 0.1), rb=None if defect else "PASSIVE", restitution=0.7)
    if defect:
        inv = box("Catcher", (0, 0, 0.4), (2.0, 1.2, 0.1), rb="PASSIVE", restitution=0.7)
        inv.hide_render = True
    sphere("Ball", (0, 0, 1.6), 0.15, restitution=0.7)
    bake()
    return sc


def driven_ball(how: str = "driver", frames: int = 45) -> Any:
    """A ball moved by a driver (`how="driver"`), a Follow Path constraint (`"path"`), or by the solver
    (`"solver"`, the valid twin)."""
    import bpy

    sc = rigid_stage(frames)
    if how == "solver":
        sphere("Ball", (0, 0, 1.5), 0.25)
    elif how == "driver":
        b = sphere("Ball", (0, 0, 1.5), 0.25, rb=None)
        d = b.driver_add("location", 2).driver
        d.type = "SCRIPTED"
        d.expression = "1.5 - 0.03 * frame"
    elif how == "path":
        b = sphere("Ball", (0, 0, 0.25), 0.25, rb=None)
        bpy.ops.curve.primitive_bezier_curve_add(location=(0, 0, 0.25))
        path = bpy.context.active_object
        path.name = "Track"
        path.data.path_duration = frames
        c = b.constraints.new("FOLLOW_PATH")
        c.target = path
        c.use_fixed_location = False
        path.data.use_path = True
        path.data.eval_time = 0
        path.data.keyframe_insert("eval_time", frame=1)
        path.data.eval_time = frames
        path.data.keyframe_insert("eval_time", frame=frames)
    else:
        raise ValueError(how)
    bake()
    return sc


# ------------------------------------------------- concealment mechanisms (motion that hides, SPEC §5)
def _keys_to_nla(ob: Any) -> None:
    """Move the object's active action into an NLA strip (the active action is left empty)."""
    ad = ob.animation_data
    act = ad.action
    track = ad.nla_tracks.new()
    track.strips.new(act.name, int(act.frame_range[0]), act)
    ad.action = None


def nla_ball(defect: bool = True, frames: int = 60) -> Any:
    """A rigid ball whose keyframes live in an NLA strip. Defect: the rigid-body world is switched off, so
    the strip moves the ball. Twin: the world is on and the solver overrides the strip (the ball falls)."""
    sc = rigid_stage(frames)
    b = sphere("Ball", (0, 0, 2.0), 0.25)
    for f, x, z in ((1, 0.0, 2.0), (20, 0.5, 0.25), (35, 1.0, 1.2), (50, 1.5, 0.25), (60, 2.0, 0.25)):
        b.location = (x, 0, z)
        b.keyframe_insert("location", frame=f)
    _keys_to_nla(b)
    if defect:
        sc.rigidbody_world.enabled = False
    bake()
    return sc


def _time_offset_group(name: str, amplitude: float, use_time: bool) -> Any:
    """A geometry-nodes group that lifts every point by `amplitude` x sin(scene seconds) (or by a constant)."""
    import bpy

    ng = bpy.data.node_groups.new(name, "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    gi, go = ng.nodes.new("NodeGroupInput"), ng.nodes.new("NodeGroupOutput")
    sp = ng.nodes.new("GeometryNodeSetPosition")
    xyz = ng.nodes.new("ShaderNodeCombineXYZ")
    ng.links.new(gi.outputs[0], sp.inputs["Geometry"])
    ng.links.new(sp.outputs[0], go.inputs[0])
    ng.links.new(xyz.outputs[0], sp.inputs["Offset"])
    if use_time:
        t = ng.nodes.new("GeometryNodeInputSceneTime")
        sin = ng.nodes.new("ShaderNodeMath")
        sin.operation = "SINE"
        mul = ng.nodes.new("ShaderNodeMath")
        mul.operation = "MULTIPLY"
        mul.inputs[1].default_value = amplitude
        ng.links.new(t.outputs["Seconds"], sin.inputs[0])
        ng.links.new(sin.outputs[0], mul.inputs[0])
        ng.links.new(mul.outputs[0], xyz.inputs["Z"])
    else:
        xyz.inputs["Z"].default_value = amplitude
    return ng


def gn_cloth(defect: bool = True, frames: int = 40, res: int = 10) -> Any:
    """A "cloth" sheet. Defect: the cloth is pinned everywhere (the solver moves nothing) and a geometry-nodes
    modifier reading the scene time heaves it. Twin: an unpinned cloth falls onto a collider, the
    geometry-nodes modifier adds only a constant offset."""
    import bpy

    sc = reset(frames)
    camera(sc)
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=res, y_subdivisions=res, size=1.5, location=(0, 0, 1.0))
    cl = bpy.context.active_object
    cl.name = "Sheet"
    cm = cl.modifiers.new("Cloth", "CLOTH")
    cm.settings.quality = 3
    cm.point_cache.frame_end = frames
    if defect:
        vg = cl.vertex_groups.new(name="pin")
        vg.add([v.index for v in cl.data.vertices], 1.0, "REPLACE")
        cm.settings.vertex_group_mass = "pin"
    gm = cl.modifiers.new("Heave", "NODES")
    gm.node_group = _time_offset_group("Heave", 0.6 if defect else 0.0, use_time=defect)
    bake()
    return sc


def follower_ball(defect: bool = True, frames: int = 60) -> Any:
    """A visible ball parented to a falling rigid carrier block. Defect: the carrier does not render (the
    visible ball's motion is owned by a hidden body). Twin: the carrier renders."""
    sc = rigid_stage(frames)
    carrier = box("Carrier", (0, 0, 2.0), (0.4, 0.4, 0.2), rb="ACTIVE")
    ball = sphere("Ball", (0, 0, 2.3), 0.15, rb=None)
    ball.parent = carrier
    ball.matrix_parent_inverse = carrier.matrix_world.inverted()
    if defect:
        carrier.hide_render = True
    bake()
    return sc


def slow_gravity(defect: bool = True, frames: int = 60) -> Any:
    """A falling ball. Defect: gravity weight 0.25 with the solver clock at 2x (the same fall, other physics)
    and a far-away wind field as a decoy. Twin: Earth gravity, clock 1."""
    import bpy

    sc = rigid_stage(frames, restitution=0.5)
    sphere("Ball", (0, 0, 2.5), 0.25, restitution=0.5)
    if defect:
        sc.rigidbody_world.effector_weights.gravity = 0.25
        sc.rigidbody_world.time_scale = 2.0
        bpy.ops.object.effector_add(type="WIND", location=(40, 40, 0))
        w = bpy.context.active_object
        w.name = "Decoy"
        w.field.strength = 5.0
        w.field.shape = "POINT"  # a plane wind measures distance along its axis only: it would reach the ball
        w.field.use_max_distance = True
        w.field.distance_max = 1.0
    bake()
    return sc


def static_overlap(defect: bool = True, frames: int = 30) -> Any:
    """Two rendered solids that never move. Defect: one is sunk 8 cm into the other. Twin: they touch."""
    sc = rigid_stage(frames)
    box("Crate", (0, 0, 0.3), (0.6, 0.6, 0.6), rb="PASSIVE")
    box("Lid", (0, 0, 0.6 + 0.1 - (0.08 if defect else 0.0)), (0.8, 0.8, 0.2), rb="PASSIVE")
    sphere("Ball", (2, 0, 1.5), 0.2)
    bake()
    return sc


def folded_sheet(defect: bool = True, frames: int = 20) -> Any:
    """A pinned (static) cloth sheet. Defect: its mesh is folded through itself. Twin: folded without crossing."""
    import bpy

    sc = reset(frames)
    camera(sc)
    n = 8
    verts, faces = [], []
    for j in range(2 * n + 1):  # a strip folded back over itself at j = n
        for i in range(n + 1):
            x = i / n
            if j <= n:
                y, z = j / n, 1.0
            else:
                # the return leg comes back through the first (defect) or 10 cm above it (twin)
                k = j - n
                y = 1.0 - k / n
                z = 1.0 + (0.35 - 0.6 * k / n if defect else 0.1)
            verts.append((x, y, z))
    for j in range(2 * n):
        for i in range(n):
            a = j * (n + 1) + i
            faces.append((a, a + 1, a + n + 2, a + n + 1))
    me = bpy.data.meshes.new("Sheet")
    me.from_pydata(verts, [], faces)
    me.update()
    ob = bpy.data.objects.new("Sheet", me)
    sc.collection.objects.link(ob)
    vg = ob.vertex_groups.new(name="pin")
    vg.add(list(range(len(verts))), 1.0, "REPLACE")
    cm = ob.modifiers.new("Cloth", "CLOTH")
    cm.settings.vertex_group_mass = "pin"
    cm.point_cache.frame_end = frames
    sphere("Ball", (3, 0, 1.5), 0.2, rb=None)
    bake()
    return sc


def _emitter(name: str, loc: tuple, count: int, frames: int, physics: str = "NEWTON", size: float = 0.3,
             tap: bool = True) -> Any:
    """A plane that drops `count` particles in frames 1-5 and does not render itself. `tap`: a rendered box
    ("Tap", no collider) sits 1 cm above it, so the drops leave something the frames show
    (`probes.audit.static_defects.sourceless`)."""
    import bpy

    if tap:
        box("Tap", (loc[0], loc[1], loc[2] + 0.03), (size, size, 0.04))
    bpy.ops.mesh.primitive_plane_add(size=size, location=loc)
    em = bpy.context.active_object
    em.name = name
    em.modifiers.new("Drops", "PARTICLE_SYSTEM")
    ps = em.particle_systems[-1]
    st = ps.settings
    st.count = count
    st.frame_start, st.frame_end = 1, 5
    st.lifetime = 1000
    st.physics_type = physics
    st.normal_factor = 0.0
    st.render_type = "HALO"
    ps.point_cache.frame_end = frames
    em.show_instancer_for_render = False
    return em


def born_inside(defect: bool = True, frames: int = 30) -> Any:
    """Particles emitted from a plane. Defect: the emitter sits inside a rendered crate, so drops are born in
    solid material. Twin: the emitter is above the crate."""
    sc = reset(frames)
    camera(sc)
    crate = box("Crate", (0, 0, 0.5), (1.0, 1.0, 1.0))
    crate.modifiers.new("Collision", "COLLISION")
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    _emitter("Spout", (0, 0, 0.5 if defect else 1.6), 60, frames, tap=not defect)
    bake()
    return sc


def sourceless(defect: bool = True, frames: int = 30) -> Any:
    """Drops fall onto a floor from a plane that does not render. Defect: nothing rendered is near the plane,
    so the drops appear in mid-air. Twin: a rendered tap sits 1 cm above it."""
    sc = reset(frames)
    camera(sc)
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    _emitter("Spout", (0, 0, 1.2), 60, frames, tap=not defect)
    bake()
    return sc


def speck_source(defect: bool = True, frames: int = 30) -> Any:
    """Drops fall onto a floor from a 3 cm plane that does not render, high in the air. Defect: the only rendered
    thing beside it is a 4 mm speck 1 cm above it, too small to be the source a frame shows. Twin: a 3 cm tap
    sits there instead."""
    import bpy

    sc = reset(frames)
    camera(sc)
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    _emitter("Spout", (0, 0, 1.2), 60, frames, size=0.03, tap=not defect)
    if defect:
        bpy.ops.mesh.primitive_uv_sphere_add(radius=0.002, location=(0, 0, 1.21))
        bpy.context.active_object.name = "Speck"
    bake()
    return sc


def keyed_emitter(defect: bool = True, frames: int = 30) -> Any:
    """Drops fall from a plane that does not render, 1 cm under a wide rendered hopper. Defect: the plane is
    keyframed across the hopper while it emits (frames 1-20), so where the drops are born is scripted (they stay near
    rendered material, so only the emitter's motion tells). Twin: the plane stays still."""
    sc = reset(frames)
    camera(sc)
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    box("Hopper", (0, 0, 1.23), (1.4, 0.4, 0.04))
    em = _emitter("Spout", (0, 0, 1.2), 60, frames, tap=False)
    em.particle_systems[0].settings.frame_end = 20
    if defect:
        em.location.x = -0.5
        em.keyframe_insert("location", index=0, frame=1)
        em.location.x = 0.5
        em.keyframe_insert("location", index=0, frame=20)
    bake()
    return sc


def hidden_tray(defect: bool = True, frames: int = 30) -> Any:
    """Drops fall on a rendered tray. Defect: the tray has no collider; an invisible collider plate 2 mm
    inside it catches the drops. Twin: the tray is its own collider."""
    sc = reset(frames)
    camera(sc)
    tray = box("Tray", (0, 0, 0.5), (1.2, 1.2, 0.06))
    if defect:
        shelf = box("Catcher", (0, 0, 0.5 + 0.03 - 0.002 - 0.01), (1.2, 1.2, 0.02))
        shelf.modifiers.new("Collision", "COLLISION")
        shelf.hide_render = True
    else:
        tray.modifiers.new("Collision", "COLLISION")
    _emitter("Spout", (0, 0, 1.4), 60, frames)
    bake()
    return sc


def steered_drops(defect: bool = True, frames: int = 30) -> Any:
    """Drops fall from a tap onto a floor. Defect: their physics is BOIDS, rules that steer each particle (flight,
    goals, flocking), not a solver of forces. Twin: Newtonian drops."""
    sc = reset(frames)
    camera(sc)
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    _emitter("Spout", (0, 0, 1.5), 60, frames, physics="BOIDS" if defect else "NEWTON")
    bake()
    return sc


def liquid_attractor(defect: bool = True, frames: int = 30) -> Any:
    """Drops fall onto a floor. Defect: a keyframed attracting FORCE field pulls them sideways. Twin: no field."""
    import bpy

    sc = reset(frames)
    camera(sc)
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    _emitter("Spout", (0, 0, 1.5), 60, frames)
    if defect:
        bpy.ops.object.effector_add(type="FORCE", location=(1.5, 0, 0.8))
        f = bpy.context.active_object
        f.name = "Pull"
        f.field.strength = 0.0
        f.field.keyframe_insert("strength", frame=1)
        f.field.strength = -30.0
        f.field.keyframe_insert("strength", frame=8)
    bake()
    return sc


# ---------------------------------------------------------------------------- validity classes (honest twins)
def pinned_flag(pole: str = "curve", frames: int = 24, res: int = 10) -> Any:
    """A cloth flag pinned along its left edge to a decorative pole with no physics settings. `pole`: "curve" (a
    bevelled curve), "text" (a text object extruded into a post), "instance" (an empty instancing a collection
    that holds a cylinder mesh), "mesh" (a cylinder mesh) or "none" (no pole: the pins hold the flag in mid-air).
    Every pole renders, so only "none" hangs from nothing."""
    import bpy

    sc = reset(frames)
    camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=res, y_subdivisions=res, size=2, location=(0, 0, 2),
                                    rotation=(math.pi / 2, 0, 0))
    fl = bpy.context.active_object
    fl.name = "Flag"
    xs = [v.co.x for v in fl.data.vertices]
    vg = fl.vertex_groups.new(name="pin")
    vg.add([v.index for v in fl.data.vertices if abs(v.co.x - min(xs)) < 1e-6], 1.0, "REPLACE")
    if pole == "curve":
        cu = bpy.data.curves.new("PoleCurve", "CURVE")
        cu.dimensions = "3D"
        sp = cu.splines.new("POLY")
        sp.points.add(1)
        sp.points[0].co = (-1.03, 0, 0, 1)
        sp.points[1].co = (-1.03, 0, 3.2, 1)
        cu.bevel_depth = 0.03
        sc.collection.objects.link(bpy.data.objects.new("Pole", cu))
    elif pole == "text":
        tx = bpy.data.curves.new("PoleText", "FONT")
        tx.body = "I"
        tx.size = 4.6
        tx.extrude = 0.03
        ob = bpy.data.objects.new("Pole", tx)
        sc.collection.objects.link(ob)
        ob.rotation_euler = (math.pi / 2, 0, 0)
        bpy.context.view_layer.update()
        lo = min(c[0] for c in ob.bound_box)
        hi = max(c[0] for c in ob.bound_box)
        ob.location = (-1.0 - (hi - lo) / 2 - (lo + hi) / 2, 0, 0)  # the glyph's stem centred behind the pinned edge
    elif pole in ("instance", "mesh"):
        bpy.ops.mesh.primitive_cylinder_add(radius=0.03, depth=3.2, location=(0, 0, 1.6))
        src = bpy.context.active_object
        if pole == "mesh":
            src.name = "Pole"
            src.location.x = -1.03
        else:
            src.name = "PoleSource"
            col = bpy.data.collections.new("Props")  # linked to no scene: it renders only through the instance
            for c in list(src.users_collection):
                c.objects.unlink(src)
            col.objects.link(src)
            inst = bpy.data.objects.new("Pole", None)
            inst.instance_type = "COLLECTION"
            inst.instance_collection = col
            inst.location = (-1.03, 0, 0)
            sc.collection.objects.link(inst)
    cm = fl.modifiers.new("Cloth", "CLOTH")
    cm.settings.vertex_group_mass = "pin"
    cm.settings.quality = 4
    cm.point_cache.frame_end = frames
    bake()
    return sc


def field_lift(defect: bool = True, frames: int = 40) -> Any:
    """A ball held still 2 m up. Defect: a FORCE field under it carries its weight (strength tuned to hover, damped
    so it settles). Twin: it rests on a rendered pedestal, no field."""
    import bpy

    sc = rigid_stage(frames)
    sphere("Ball", (0, 0, 2.0), 0.2, mass=1.0, linear_damping=0.9)
    if defect:
        bpy.ops.object.effector_add(type="FORCE", location=(0, 0, 0.5))
        f = bpy.context.active_object
        f.name = "Lift"
        f.field.strength = 295.0  # measured: 290 sinks 2 mm a frame, 300 rises 2 mm a frame
    else:
        box("Pedestal", (0, 0, 0.9), (0.4, 0.4, 1.8), rb="PASSIVE")
    bake()
    return sc


def replayed_motor(defect: bool = True, frames: int = 60) -> Any:
    """The hinge pendulum, swinging freely. Defect: a MOTOR joint about the hinge axis whose angular target velocity
    is keyed, frame by frame, to the free swing's own (so the swing looks like the free one, and a re-bake without the
    motor moves the bob by a few cm at most). Twin: the same MOTOR joint with its motor off (present, constant,
    changing nothing)."""
    import bpy

    sc = reset(frames)
    rigid_world(sc, frames)
    camera(sc)
    ground()
    pivot = box("Pivot", (0, 0, 3.0), (0.1, 0.4, 0.1), rb="PASSIVE")
    a = math.radians(60)
    bob = box("Bob", (1.5 * math.sin(a), 0, 3.0 - 1.5 * math.cos(a)), (0.3, 0.3, 0.3), rb="ACTIVE", shape="MESH",
              mass=1.0)
    rod_to(bob, (0, 0, 3.0))
    bob.rigid_body.collision_collections[0] = False
    bob.rigid_body.collision_collections[1] = True

    def joint(kind: str, name: str, rot: tuple) -> Any:
        emp = bpy.data.objects.new(name, None)
        sc.collection.objects.link(emp)
        emp.location = (0, 0, 3.0)
        emp.rotation_euler = rot
        bpy.context.view_layer.objects.active = emp
        bpy.ops.rigidbody.constraint_add(type=kind)
        c = emp.rigid_body_constraint
        c.object1, c.object2 = pivot, bob
        return c

    joint("HINGE", "Hinge", (math.radians(90), 0, 0))
    bake()
    ang = []
    for f in range(1, frames + 1):
        sc.frame_set(f)
        m = bob.matrix_world.to_3x3()
        ang.append(math.atan2(m[0][2], m[2][2]))  # the swing angle about world Y
    for i in range(1, len(ang)):  # unwrapped
        while ang[i] - ang[i - 1] > math.pi:
            ang[i] -= 2 * math.pi
        while ang[i] - ang[i - 1] < -math.pi:
            ang[i] += 2 * math.pi
    fps = sc.render.fps
    w = [(ang[min(i + 1, frames - 1)] - ang[max(i - 1, 0)]) * fps / (min(i + 1, frames - 1) - max(i - 1, 0))
         for i in range(frames)]
    bpy.ops.ptcache.free_bake_all()
    sc.frame_set(1)
    c = joint("MOTOR", "Pump", (0, 0, math.radians(90)))  # the motor's X axis along world Y, the hinge's axis
    c.motor_ang_max_impulse = 1.0
    c.use_motor_ang = defect
    if defect:
        for f in range(1, frames + 1):
            c.motor_ang_target_velocity = -w[f - 1]  # measured: this sign replays the swing (3.5 cm off at most)
            c.keyframe_insert("motor_ang_target_velocity", frame=f)
    bake()
    return sc


def stale_ball(defect: bool = True, frames: int = 45) -> Any:
    """A ball dropped on the ground. Defect: baked at half gravity, then gravity put back to Earth's (Blender keeps
    the bake: a stale cache). Twin: baked at Earth's gravity, the same assignment made after the bake."""
    sc = rigid_stage(frames)
    sphere("Ball", (0, 0, 3.0), 0.2)
    if defect:
        sc.gravity = (0.0, 0.0, -4.905)
    bake()
    sc.gravity = (0.0, 0.0, -9.81)
    return sc


STALE_PROGRAM = """import bpy
sc = bpy.context.scene
sc.gravity = (0.0, 0.0, -4.905)
bpy.ops.ptcache.bake_all(bake=True)
sc.gravity = (0.0, 0.0, -9.81)
"""  # the program text of `stale_ball` (the audit names its edit after the bake)


def tight_fold(defect: bool = True, frames: int = 12) -> Any:
    """A pinned, still cloth strip folded back over itself. Defect: the returning leg dips through the first one
    right beside the fold (the nearest vertices of the crossing triangles are two edge rings apart, which the
    moving-cloth check leaves out as bending). Twin: it rises away from the fold."""
    import bpy

    sc = reset(frames)
    camera(sc)
    n = 8
    verts, faces = [], []
    for j in range(2 * n + 1):
        for i in range(n + 1):
            if j <= n:
                y, z = j / n, 1.0
            else:
                k = j - n
                y = 1.0 - k / n
                # 2 cm over the first leg one row from the fold, then (defect) through it on the next row
                z = 1.02 if k == 1 else (1.0 - 0.1 * (k - 1) if defect else 1.0 + 0.06 * k)
            verts.append((i / n, y, z))
    for j in range(2 * n):
        for i in range(n):
            a = j * (n + 1) + i
            faces.append((a, a + 1, a + n + 2, a + n + 1))
    me = bpy.data.meshes.new("Strip")
    me.from_pydata(verts, [], faces)
    me.update()
    ob = bpy.data.objects.new("Strip", me)
    sc.collection.objects.link(ob)
    ob.vertex_groups.new(name="pin").add(list(range(len(verts))), 1.0, "REPLACE")
    cm = ob.modifiers.new("Cloth", "CLOTH")
    cm.settings.vertex_group_mass = "pin"
    cm.point_cache.frame_end = frames
    sphere("Ball", (3, 0, 1.5), 0.2, rb=None)
    bake()
    return sc


def instanced_ball(how: str = "keyed", frames: int = 30) -> Any:
    """A ball with no physics drawn only through an EMPTY that instances its collection (the ball's own collection
    is linked to no scene), resting on the ground. `how`: "keyed" the empty's location is keyed, sliding the ball
    1.5 m along the ground (scripted motion carried by an object of no geometry type); "switch" the empty's
    hide_render is keyed off at mid-run (the ball vanishes); "still" the honest twin, an instancing empty that
    never changes (the instanced decor of an artist's scene)."""
    import bpy

    sc = rigid_stage(frames)
    sphere("Drop", (1.5, 0, 1.0), 0.2)  # a simulated body beside it: the scene is not static as a whole
    ball = sphere("Ball", (0, 0, 0), 0.2, rb=None)
    col = bpy.data.collections.new("BallSet")
    for c in list(ball.users_collection):
        c.objects.unlink(ball)
    col.objects.link(ball)
    carrier = bpy.data.objects.new("Carrier", None)
    carrier.instance_type = "COLLECTION"
    carrier.instance_collection = col
    sc.collection.objects.link(carrier)
    carrier.location = (-0.75, 0.0, 0.2)
    if how == "keyed":
        carrier.keyframe_insert("location", frame=1)
        carrier.location.x = 0.75
        carrier.keyframe_insert("location", frame=frames)
    elif how == "switch":
        carrier.hide_render = False
        carrier.keyframe_insert("hide_render", frame=1)
        carrier.hide_render = True
        carrier.keyframe_insert("hide_render", frame=frames // 2)
        hold_keys(carrier)
    bake()
    return sc


RENDERED_LIQUIDS = ("drops", "metaball", "gn_surface", "offset", "drift", "keyed_blob", "hidden_blob", "gn_keyed")


def _metaball_drop(name: str, radius: float) -> Any:
    """A metaball object with one ball element: instanced by a particle system, every particle's ball joins the
    family of `name` (the object without a ".001" suffix), whose evaluated surface is the fused liquid."""
    import bpy

    mb = bpy.data.metaballs.new(name)
    mb.resolution = mb.render_resolution = 0.04
    el = mb.elements.new()
    el.radius = radius
    ob = bpy.data.objects.new(name, mb)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def rendered_liquid(how: str = "drops", frames: int = 24) -> Any:
    """Simulated drops (legacy SPH, 40 particles) fall from a tap onto a floor; what renders of them is `how`:

    - "drops" (honest): each particle draws a small sphere parked below the floor (the shipped liquids' look);
    - "metaball" (honest): each particle draws a metaball ball, fused into one surface by the family's base object
      (parked below the floor): a surface meshed from the particles that a solver moves;
    - "gn_surface" (honest): "metaball", and a mesh whose geometry-nodes modifier reads the fused surface (Object
      Info) and remeshes it (Mesh to Points, Points to Volume, Volume to Mesh) renders instead of it;
    - "offset": "drops", but the sphere's mesh is built 5 units above its origin, so every rendered drop hangs
      0.25 m (5 x the particle size) over its particle; the sphere itself is hidden from renders;
    - "drift": "drops", but the hidden sphere carries a geometry-nodes modifier that lifts it 0.6 m per second of
      scene time: every rendered drop rises off its particle;
    - "keyed_blob": "metaball", and a keyframed member of the family slides a ball of liquid across the floor;
    - "hidden_blob": "keyed_blob" with the member's hide_render on: it draws nothing itself, its ball still fuses
      into the base's surface;
    - "gn_keyed": "gn_surface", and the remesh moves its output by the location of a keyframed empty (Object Info
      -> Set Position offset) that slides 1.5 m sideways over the run."""
    if how not in RENDERED_LIQUIDS:
        raise ValueError(f"rendered_liquid: how must be one of {RENDERED_LIQUIDS}, not {how!r}")
    sc = reset(frames)
    camera(sc)
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    em = _emitter("Spout", (0, 0, 1.0), 40, frames, physics="FLUID")
    st = em.particle_systems[0].settings
    st.particle_size = 0.05
    st.render_type = "OBJECT"
    if how in ("drops", "offset", "drift"):
        drop = sphere("Drop", (0, 0, -5), 1.0, rb=None)
        st.instance_object = drop
        if how in ("offset", "drift"):
            drop.hide_render = True  # the particles still draw it
        if how == "offset":
            drop.data.transform(__import__("mathutils").Matrix.Translation((0, 0, 5.0)))
        if how == "drift":
            ng = _time_offset_group("PCG_Drift", 0.0, use_time=False)
            t = ng.nodes.new("GeometryNodeInputSceneTime")
            mul = ng.nodes.new("ShaderNodeMath")
            mul.operation = "MULTIPLY"
            mul.inputs[1].default_value = 0.6 / 0.05  # in the drop's own space, scaled by the particle size
            ng.links.new(t.outputs["Seconds"], mul.inputs[0])
            ng.links.new(mul.outputs[0], ng.nodes["Combine XYZ"].inputs["Z"])
            drop.modifiers.new("PCG_Drift", "NODES").node_group = ng
    else:
        base = _metaball_drop("Liquid", 2.0)
        base.location = (0, 0, -5)
        st.instance_object = base
        if how in ("gn_surface", "gn_keyed"):
            surf = _gn_remesh(base)
            if how == "gn_keyed":
                _keyed_offset(surf, frames)
        if how in ("keyed_blob", "hidden_blob"):
            blob = _metaball_drop("Liquid.001", 0.15)
            blob.location = (-1.0, 0, 0.1)
            blob.keyframe_insert("location", frame=1)
            blob.location.x = 1.0
            blob.keyframe_insert("location", frame=frames)
            blob.hide_render = how == "hidden_blob"
    bake()
    return sc


def _gn_remesh(source: Any) -> Any:
    """A mesh object whose geometry-nodes modifier remeshes `source`'s evaluated surface (Object Info -> Mesh to
    Points -> Points to Volume -> Volume to Mesh); `source` stops rendering, the remeshed surface renders."""
    import bpy

    ng = bpy.data.node_groups.new("PCG_Remesh", "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    go = ng.nodes.new("NodeGroupOutput")
    oi = ng.nodes.new("GeometryNodeObjectInfo")
    oi.inputs["Object"].default_value = source
    oi.transform_space = "RELATIVE"
    m2p = ng.nodes.new("GeometryNodeMeshToPoints")
    p2v = ng.nodes.new("GeometryNodePointsToVolume")
    p2v.inputs["Radius"].default_value = 0.04
    v2m = ng.nodes.new("GeometryNodeVolumeToMesh")
    ng.links.new(oi.outputs["Geometry"], m2p.inputs["Mesh"])
    ng.links.new(m2p.outputs[0], p2v.inputs["Points"])
    ng.links.new(p2v.outputs[0], v2m.inputs["Volume"])
    ng.links.new(v2m.outputs[0], go.inputs[0])
    me = bpy.data.meshes.new("LiquidSurface")
    surf = bpy.data.objects.new("LiquidSurface", me)
    bpy.context.scene.collection.objects.link(surf)
    surf.modifiers.new("PCG_Remesh", "NODES").node_group = ng
    source.hide_render = True
    return surf


def _keyed_offset(surf: Any, frames: int) -> Any:
    """Append to `surf`'s geometry-nodes tree a Set Position whose offset is the location of a keyframed empty
    ("Mover", sliding 1.5 m along x over the run)."""
    import bpy

    mover = bpy.data.objects.new("Mover", None)
    bpy.context.scene.collection.objects.link(mover)
    mover.keyframe_insert("location", frame=1)
    mover.location.x = 1.5
    mover.keyframe_insert("location", frame=frames)
    ng = surf.modifiers[0].node_group
    go = next(n for n in ng.nodes if n.type == "GROUP_OUTPUT")
    last = go.inputs[0].links[0].from_socket
    oi = ng.nodes.new("GeometryNodeObjectInfo")
    oi.inputs["Object"].default_value = mover
    sp = ng.nodes.new("GeometryNodeSetPosition")
    ng.links.new(last, sp.inputs["Geometry"])
    ng.links.new(oi.outputs["Location"], sp.inputs["Offset"])
    ng.links.new(sp.outputs[0], go.inputs[0])
    return mover


def stone_in_liquid(surface: str = "metaball", frames: int = 36) -> Any:
    """A pebble (active rigid body) dropped into a well that SPH drops (200, legacy FLUID physics) fill around it;
    it comes to rest on the floor under the liquid. `surface`: what renders of the liquid:

    - "metaball" (honest): the drops draw metaball balls fused into one surface (the shipped liquids' look since
      bottle_glass), a surface derived from the particles, so the pebble lies in liquid, not in a solid;
    - "mesh": a plain closed box renders as the pool instead (no particle makes it, no collider): the pebble
      falls through a rendered solid it cannot touch."""
    if surface not in ("metaball", "mesh"):
        raise ValueError(f"stone_in_liquid: surface must be 'metaball' or 'mesh', not {surface!r}")
    sc = reset(frames)
    rigid_world(sc, frames)
    camera(sc, loc=(0, -3, 1.2), target=(0, 0, 0.1))
    floor = box("Floor", (0, 0, -0.05), (6, 6, 0.1), rb="PASSIVE")
    floor.modifiers.new("Collision", "COLLISION")
    w, h, t = 0.3, 0.3, 0.02
    for i, (loc, dims) in enumerate((((w / 2 + t / 2, 0, h / 2), (t, w + 2 * t, h)),
                                     ((-w / 2 - t / 2, 0, h / 2), (t, w + 2 * t, h)),
                                     ((0, w / 2 + t / 2, h / 2), (w, t, h)), ((0, -w / 2 - t / 2, h / 2), (w, t, h)))):
        wall = box(f"Wall{i}", loc, dims, rb="PASSIVE")
        wall.modifiers.new("Collision", "COLLISION")
    em = _emitter("Spout", (0, 0, 0.8), 200, frames, physics="FLUID", size=0.2, tap=False)
    box("Tap", (0, 0, 0.86), (0.2, 0.2, 0.04))
    st = em.particle_systems[0].settings
    st.particle_size = 0.03
    if surface == "metaball":
        st.render_type = "OBJECT"
        base = _metaball_drop("Liquid", 2.0)
        base.location = (0, 0, -5)
        st.instance_object = base
    else:
        box("Liquid", (0, 0, 0.06), (w - 0.01, w - 0.01, 0.12))
    sphere("Pebble", (0.0, 0.0, 0.5), 0.04)
    bake()
    return sc
