import math
import random

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Matrix, Vector

FRAMES = 240

# Everything a family member varies (tasks/packs/cloth_drape/family.py draws it from a seed).
PARAMS = {'bending': 0.027,
 'camera_loc': [-0.375, -1.206, 0.728],
 'camera_target': [0.0, 0.0, 0.167],
 'cavity': False,
 'cloth_colour': ['Yellow', [0.9, 0.75, 0.1], 0.8],
 'cloth_loc': [0.001, -0.008, 0.438],
 'cloth_rot_deg': 37.2,
 'cloth_size': 0.569,
 'grid': 18,
 'lens': 35.0,
 'mass': 0.15,
 'obstacle': 'teapot',
 'obstacle_dims': [0.12, 0.096],
 'obstacle_material': ['CreamPorcelainTeapot', [0.9, 0.85, 0.7], 0.3],
 'obstacle_name': 'Teapot',
 'obstacle_rot_deg': 21.2,
 'obstacle_top': 0.222,
 'quality': 5,
 'smooth': True,
 'stiffness': 24.0,
 'studio_light': 'rim.sl',
 'subsurf': 0,
 'table_rgb': [0.45, 0.28, 0.14],
 'table_size': [1.4, 0.9],
 'world_rgb': [0.62, 0.66, 0.6]}


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


def teapot(mat):
    """A teapot-like body: squashed sphere, lid knob, spout and handle, merged into one mesh."""
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=32, v_segments=16, radius=0.12)
    for v in bm.verts:
        v.co.z *= 0.8
    parts = []
    knob = bmesh.new()
    bmesh.ops.create_uvsphere(knob, u_segments=12, v_segments=8, radius=0.025)
    parts.append((knob, Matrix.Translation((0, 0, 0.1))))
    spout = bmesh.new()
    bmesh.ops.create_cone(spout, cap_ends=True, segments=12, radius1=0.03, radius2=0.014, depth=0.14)
    parts.append((spout, Matrix.Translation((0.14, 0, 0.03)) @ Matrix.Rotation(math.radians(50), 4, "Y")))
    handle = bmesh.new()
    bmesh.ops.create_cone(handle, cap_ends=True, segments=12, radius1=0.015, radius2=0.015, depth=0.12)
    parts.append((handle, Matrix.Translation((-0.13, 0, 0.01)) @ Matrix.Rotation(math.radians(-20), 4, "Y")))
    for p, mtx in parts:
        me = bpy.data.meshes.new("tmp")
        p.transform(mtx)
        p.to_mesh(me)
        p.free()
        bm.from_mesh(me)
        bpy.data.meshes.remove(me)
    return mesh_object("Teapot", bm, (0.0, 0.0, 0.096), mat=mat, smooth=True)


def obstacle(mat):
    """The body the cloth drapes over, standing on the table: the teapot, a ball, a box or an upright drum."""
    P = PARAMS
    kind, name, dims = P["obstacle"], P["obstacle_name"], P["obstacle_dims"]
    if kind == "teapot":
        return teapot(mat)
    if kind == "ball":
        return sphere(name, dims[0], (0.0, 0.0, dims[0]), mat, subdiv=4)
    rot = (0.0, 0.0, math.radians(P["obstacle_rot_deg"]))
    if kind == "box":
        return box(name, (dims[0], dims[1], dims[2]), (0.0, 0.0, dims[2] / 2), mat, rot=rot)
    return cylinder(name, dims[0], dims[1], (0.0, 0.0, dims[1] / 2), mat, rot=rot, segs=48)


def build():
    P = PARAMS
    sc = reset_scene()
    table = room(tuple(P["table_size"]), tuple(P["table_rgb"]))
    collider(table, thickness=0.005, damping=0.5, friction=0.8)
    mname, mrgb, mrough = P["obstacle_material"]
    pot = obstacle(material(mname, tuple(mrgb), mrough))
    collider(pot, thickness=0.008, damping=0.5, friction=0.8)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=P["grid"], y_subdivisions=P["grid"], size=P["cloth_size"], location=tuple(P["cloth_loc"]))
    cloth = bpy.context.active_object
    cloth.name = "Cloth"
    cloth.data.name = "Cloth"
    cloth.rotation_euler = (0.0, 0.0, math.radians(P["cloth_rot_deg"]))
    cname, crgb, crough = P["cloth_colour"]
    cloth.data.materials.append(material(f"{cname}CheckCloth", tuple(crgb), crough))
    if P["smooth"]:
        for poly in cloth.data.polygons:
            poly.use_smooth = True
    cm = cloth.modifiers.new("Cloth", "CLOTH")
    s = cm.settings
    s.quality = P["quality"]
    s.mass = P["mass"]
    s.tension_stiffness = s.compression_stiffness = P["stiffness"]
    s.bending_stiffness = P["bending"]
    cm.collision_settings.distance_min = 0.004
    cm.collision_settings.use_self_collision = True
    cm.collision_settings.self_distance_min = 0.006
    cm.collision_settings.self_friction = 5.0
    cm.collision_settings.collision_quality = 3
    cm.point_cache.frame_start, cm.point_cache.frame_end = 1, FRAMES
    if P["subsurf"]:
        cloth.modifiers.new("Smooth", "SUBSURF").levels = P["subsurf"]
    camera(tuple(P["camera_loc"]), tuple(P["camera_target"]), lens=P["lens"])
    sun()
    return sc

build()
bake_save_render()
