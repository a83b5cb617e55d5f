import math
import random

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Matrix, Vector

FRAMES = 240

# Everything a family member varies (tasks/packs/bead_pile/family.py draws it from a seed).
PARAMS = {'bead_bounce': 0.14,
 'bead_colours': [['Orange', [0.95, 0.42, 0.05]],
                  ['Black', [0.04, 0.04, 0.05]],
                  ['Yellow', [0.95, 0.8, 0.05]]],
 'bead_friction': 0.86,
 'bead_mass': 0.0044,
 'bead_radius': 0.011,
 'bead_rough': 0.54,
 'camera_loc': [-0.083, -1.229, 0.584],
 'camera_target': [0.018, 0.0, 0.317],
 'cavity': True,
 'funnel_colour': ['Red', [0.8, 0.1, 0.1], 0.4],
 'funnel_depth': 0.112,
 'funnel_loc': [0.036, 0.016, 0.453],
 'funnel_radii': [0.0259, 0.101],
 'layer_dz': 0.0275,
 'layer_z0': 0.529,
 'layers': 8,
 'layout_seed': 6102,
 'lens': 31.5,
 'per_layer': 8,
 'ring_radius': 0.047,
 'studio_light': 'outdoor.sl',
 'table_rgb': [0.45, 0.28, 0.14],
 'table_size': [1.4, 0.9],
 'tray_colour': ['Blue', [0.25, 0.4, 0.7], 0.5],
 'tray_friction': 0.75,
 'tray_size': [0.4, 0.29],
 'world_rgb': [0.55, 0.6, 0.66]}


def reset_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, FRAMES
    sc.render.fps, sc.render.fps_base = 30, 1.0
    sc.render.resolution_x, sc.render.resolution_y = 640, 360
    sc.render.resolution_percentage = 100
    sc.render.engine = "BLENDER_WORKBENCH"
    sh = sc.display.shading
    sh.light = "STUDIO"
    sh.color_type = "MATERIAL"
    sh.show_shadows = True
    sh.studio_light = PARAMS["studio_light"]
    sh.show_cavity = PARAMS["cavity"]
    sc.display.render_aa = "FXAA"
    sc.render.image_settings.file_format = "PNG"
    sc.render.image_settings.color_mode = "RGB"
    world = bpy.data.worlds.new("World")
    world.color = tuple(PARAMS["world_rgb"])
    sc.world = world
    return sc


def material(name, rgb, rough=0.5, metal=0.0):
    m = bpy.data.materials.new(name)
    m.diffuse_color = (rgb[0], rgb[1], rgb[2], 1.0)
    m.roughness = rough
    m.metallic = metal
    return m


def mesh_object(name, bm, loc=(0, 0, 0), rot=(0, 0, 0), mat=None, smooth=False):
    me = bpy.data.meshes.new(name)
    bm.to_mesh(me)
    bm.free()
    if smooth:
        for p in me.polygons:
            p.use_smooth = True
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = loc
    ob.rotation_euler = rot
    if mat is not None:
        me.materials.append(mat)
    return ob


def box(name, size, loc, mat, rot=(0, 0, 0)):
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    for v in bm.verts:
        v.co = Vector((v.co.x * size[0], v.co.y * size[1], v.co.z * size[2]))
    return mesh_object(name, bm, loc, rot, mat)


def sphere(name, r, loc, mat, subdiv=3):
    bm = bmesh.new()
    bmesh.ops.create_icosphere(bm, subdivisions=subdiv, radius=r)
    return mesh_object(name, bm, loc, (0, 0, 0), mat, smooth=True)


def cylinder(name, r, depth, loc, mat, rot=(0, 0, 0), segs=32, r2=None):
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=segs, radius1=r, radius2=r if r2 is None else r2, depth=depth)
    return mesh_object(name, bm, loc, rot, mat, smooth=False)


def rigid(ob, kind="ACTIVE", shape="CONVEX_HULL", mass=1.0, friction=0.5, bounce=0.0, margin=0.002, lin=0.04, ang=0.1):
    with bpy.context.temp_override(object=ob, active_object=ob, selected_objects=[ob]):
        bpy.ops.rigidbody.object_add()
    rb = ob.rigid_body
    rb.type = kind
    rb.collision_shape = shape
    rb.mass = mass
    rb.friction = friction
    rb.restitution = bounce
    rb.use_margin = True
    rb.collision_margin = margin
    rb.linear_damping = lin
    rb.angular_damping = ang
    return rb


def rigid_world(substeps=20, iterations=30):
    sc = bpy.context.scene
    if sc.rigidbody_world is None:
        bpy.ops.rigidbody.world_add()
    w = sc.rigidbody_world
    w.substeps_per_frame = substeps
    w.solver_iterations = iterations
    w.point_cache.frame_start = 1
    w.point_cache.frame_end = FRAMES
    return w


def camera(loc, target, lens=35.0):
    cam = bpy.data.cameras.new("Camera")
    cam.lens = lens
    ob = bpy.data.objects.new("Camera", cam)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = loc
    d = Vector(target) - Vector(loc)
    ob.rotation_euler = d.to_track_quat("-Z", "Y").to_euler()
    bpy.context.scene.camera = ob
    return ob


def sun(rot=(0.7, 0.2, 0.4), energy=3.0):
    li = bpy.data.lights.new("Sun", "SUN")
    li.energy = energy
    ob = bpy.data.objects.new("Sun", li)
    bpy.context.scene.collection.objects.link(ob)
    ob.rotation_euler = rot
    return ob


def room(table_size=(1.6, 1.0), table_mat_rgb=(0.45, 0.28, 0.14), wall=True):
    """Wooden tabletop (top face at z = 0) in front of a plain wall."""
    wood = material("Wood", table_mat_rgb, 0.6)
    top = box("Table", (table_size[0], table_size[1], 0.05), (0, 0, -0.025), wood)
    if wall:
        wm = material("Wall", (0.78, 0.76, 0.72), 0.9)
        box("Wall", (6.0, 0.05, 3.0), (0, table_size[1] / 2 + 0.6, 0.8), wm)
        fm = material("Floor", (0.32, 0.33, 0.36), 0.9)
        box("Floor", (6.0, 4.0, 0.05), (0, 0, -0.78), fm)
    return top


def bake_save_render():
    sc = bpy.context.scene
    sc.frame_set(1)
    bpy.ops.ptcache.bake_all(bake=True)
    bpy.ops.wm.save_as_mainfile(filepath="scene.blend")
    sc.render.filepath = "//frames/"
    bpy.ops.render.render(animation=True)


def open_cup(name, r_bottom, r_top, height, loc, mat, segs=32):
    """Cylinder without its top face (a glass, a tray wall): particles and bodies can enter it."""
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=segs, radius1=r_bottom, radius2=r_top, depth=height)
    top = [f for f in bm.faces if f.calc_center_median().z > height / 2 - 1e-4]
    bmesh.ops.delete(bm, geom=top, context="FACES_ONLY")
    return mesh_object(name, bm, loc, (0, 0, 0), mat)


def collider(ob, thickness=0.01, damping=0.3, friction=0.3):
    ob.modifiers.new("Collision", "COLLISION")
    ob.collision.thickness_outer = thickness
    ob.collision.damping = damping
    ob.collision.cloth_friction = friction
    return ob


def sph_emitter(em, count, start, end, speed, size, drop_rgb, subframes=5, mass=0.01, stiffness=0.2, name="Liquid"):
    """Legacy SPH particle liquid emitted from the faces of `em` along their normals; drawn as small spheres."""
    em.modifiers.new(name, "PARTICLE_SYSTEM")
    ps = em.particle_systems[-1]
    st = ps.settings
    st.name = name
    st.count = count
    st.frame_start, st.frame_end = start, end
    st.lifetime = 1000
    st.emit_from = "FACE"
    st.use_emit_random = True
    st.normal_factor = speed
    st.physics_type = "FLUID"
    st.particle_size = size
    st.mass = mass
    st.use_adaptive_subframes = False
    st.subframes = subframes
    fl = st.fluid
    fl.solver = "DDR"
    fl.use_factor_radius = True
    fl.fluid_radius = 1.0
    fl.stiffness = stiffness
    fl.linear_viscosity = 0.5
    fl.rest_density = 1.0
    fl.use_factor_density = True
    ps.point_cache.frame_start = 1
    ps.point_cache.frame_end = FRAMES
    ps.seed = 7
    drop = sphere(name + "Drop", 1.0, (0, 0, -5), material(name + "Colour", drop_rgb, 0.2), subdiv=1)
    st.render_type = "OBJECT"
    st.instance_object = drop
    st.particle_size = size
    st.display_size = size
    em.show_instancer_for_render = False
    return ps


def hinge(name, loc, rot, ob1, ob2, kind="HINGE"):
    emp = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(emp)
    emp.location = loc
    emp.rotation_euler = rot
    bpy.context.view_layer.objects.active = emp
    bpy.ops.rigidbody.constraint_add(type=kind)
    c = emp.rigid_body_constraint
    c.object1, c.object2 = ob1, ob2
    return c


def build():
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=30, iterations=20)
    table = room(tuple(P["table_size"]), tuple(P["table_rgb"]))
    rigid(table, "PASSIVE", "BOX", friction=0.6, margin=0.001)
    tname, trgb, trough = P["tray_colour"]
    tray_mat = material(f"{tname}Tray", tuple(trgb), trough)
    tx, ty = P["tray_size"]
    tray = box("Tray", (tx, ty, 0.01), (0.0, 0.0, 0.005), tray_mat)
    rigid(tray, "PASSIVE", "BOX", friction=P["tray_friction"], margin=0.001)
    for nm, loc, sz in (
        ("TrayWallFront", (0.0, -ty / 2, 0.025), (tx, 0.01, 0.04)),
        ("TrayWallBack", (0.0, ty / 2, 0.025), (tx, 0.01, 0.04)),
        ("TrayWallLeft", (-tx / 2, 0.0, 0.025), (0.01, ty, 0.04)),
        ("TrayWallRight", (tx / 2, 0.0, 0.025), (0.01, ty, 0.04)),
    ):
        w = box(nm, sz, loc, tray_mat)
        rigid(w, "PASSIVE", "BOX", friction=P["tray_friction"], margin=0.001)
    # funnel held above the tray (static, open at both ends)
    bm = bmesh.new()
    r1, r2 = P["funnel_radii"]
    bmesh.ops.create_cone(bm, cap_ends=False, segments=32, radius1=r1, radius2=r2, depth=P["funnel_depth"])
    fname, frgb, frough = P["funnel_colour"]
    funnel = mesh_object("Funnel", bm, tuple(P["funnel_loc"]), mat=material(f"{fname}Funnel", tuple(frgb), frough))
    funnel.modifiers.new("Solid", "SOLIDIFY").thickness = 0.004
    rigid(funnel, "PASSIVE", "MESH", friction=0.2, margin=0.001)
    rnd = random.Random(P["layout_seed"])
    colours = [(n, tuple(c)) for n, c in P["bead_colours"]]
    mats = [material(f"{n}Bead", c, P["bead_rough"]) for n, c in colours]
    fx, fy = P["funnel_loc"][0], P["funnel_loc"][1]
    k_n = P["per_layer"]
    n = 0
    for layer in range(P["layers"]):
        for k in range(k_n):
            ang = 2 * math.pi * k / k_n + layer * 0.35
            rr = P["ring_radius"] * (0.4 + 0.6 * rnd.random())
            loc = (fx + rr * math.cos(ang), fy + rr * math.sin(ang), P["layer_z0"] + layer * P["layer_dz"] + rnd.random() * 0.005)
            b = sphere(f"Bead{n:03d}", P["bead_radius"], loc, mats[n % len(mats)], subdiv=1)
            rigid(b, "ACTIVE", "SPHERE", mass=P["bead_mass"], friction=P["bead_friction"], bounce=P["bead_bounce"], margin=0.0005, lin=0.1, ang=0.95)
            n += 1
    camera(tuple(P["camera_loc"]), tuple(P["camera_target"]), lens=P["lens"])
    sun()
    return sc

build()
bake_save_render()
