import math
import random

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Matrix, Vector

PARAMS = {'air_damping': 0.87,
 'bending': 0.42,
 'camera_loc': [0.22, -1.44, 0.66],
 'camera_target': [0.0, 0.0, 0.42],
 'cavity': True,
 'cloth_mass': 0.004,
 'flag_colour': 'orange',
 'flag_h': 0.28,
 'flag_rgb': [0.92, 0.4, 0.05],
 'flag_w': 0.45,
 'grid': [20, 14],
 'lens': 37,
 'pole_h': 0.72,
 'pole_rgb': [0.25, 0.14, 0.06],
 'pole_x': -0.34,
 'studio_light': 'studio.sl',
 'table_rgb': [0.52, 0.36, 0.2],
 'tension': 21.0,
 'wind_loc': [-0.8, -0.3, 0.57],
 'wind_noise': 1.21,
 'wind_seed': 2,
 'wind_strength': 367.0,
 'wind_yaw_deg': 35,
 'world_rgb': [0.4, 0.45, 0.55]}
FRAMES = 240


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


def sph_emitter(em, count, start, end, speed, size, drop_rgb, subframes=5, mass=0.01, stiffness=0.2, name="Liquid", viscosity=0.5):
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
    fl.linear_viscosity = viscosity
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
    room((1.4, 0.9), table_mat_rgb=tuple(P["table_rgb"]))
    wood = material("DarkWoodPole", P["pole_rgb"], 0.6)
    px, ph = P["pole_x"], P["pole_h"]
    cylinder("PoleBase", 0.08, 0.03, (px, 0.0, 0.015), wood)
    cylinder("Pole", 0.01, ph, (px, 0.0, ph / 2), wood, segs=16)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=P["grid"][0], y_subdivisions=P["grid"][1], size=1.0, location=(0.0, 0.0, 0.0))
    flag = bpy.context.active_object
    flag.name = "Flag"
    flag.data.name = "Flag"
    me = flag.data
    W, H = P["flag_w"], P["flag_h"]
    for v in me.vertices:
        v.co = Vector(((v.co.x + 0.5) * W, 0.0, (v.co.y - 0.5) * H))
    flag.location = (px + 0.01, 0.0, ph - 0.01)
    pins = [v.index for v in me.vertices if v.co.x < 1e-4]
    vg = flag.vertex_groups.new(name="pin")
    vg.add(pins, 1.0, "REPLACE")
    flag.data.materials.append(material("BlueFlagFabric", P["flag_rgb"], 0.8))
    cm = flag.modifiers.new("Cloth", "CLOTH")
    s = cm.settings
    s.vertex_group_mass = "pin"
    s.quality = 5
    s.mass = P["cloth_mass"]
    s.air_damping = P["air_damping"]
    s.tension_stiffness = s.compression_stiffness = P["tension"]
    s.bending_stiffness = P["bending"]
    cm.point_cache.frame_start, cm.point_cache.frame_end = 1, FRAMES
    bpy.ops.object.effector_add(type="WIND", location=tuple(P["wind_loc"]), rotation=(0.0, math.radians(90), math.radians(P["wind_yaw_deg"])))
    wind = bpy.context.active_object
    wind.name = "Wind"
    wind.field.strength = P["wind_strength"]
    wind.field.noise = P["wind_noise"]
    wind.field.seed = P["wind_seed"]
    wind.field.flow = 0.0
    camera(tuple(P["camera_loc"]), tuple(P["camera_target"]), lens=P["lens"])
    sun()
    return sc

build()
bake_save_render()
