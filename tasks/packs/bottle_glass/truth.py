"""bottle_glass truth: juice poured from a tilted glass bottle into a tumbler; SPH particles, meshed by metaballs.

Why metaballs: the emitter's particles are not a geometry that a geometry-nodes tree can read (Object Info of the
emitter yields only its mesh), but a particle system that renders each particle as a metaball object makes Blender
fuse all those instances into one implicit surface. The surface therefore follows the baked particles only (what the
audit compares it with: probes/audit/derived.py). Determinism: the emitter seed is fixed; SPH results can still depend
on the process's threads and memory layout (see milk_pour), so particle positions are compared as a flow.
"""
import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Quaternion, Vector

PARAMS = {'blob_radius': 1.6,
 'bottle_len': 0.2,
 'bottle_r': 0.035,
 'bottle_rgb': [0.2, 0.45, 0.25],
 'bottle_tilt_deg': -60,
 'camera_loc': [0.06, -0.68, 0.33],
 'camera_target': [-0.02, 0.0, 0.17],
 'count': 550,
 'drop_size': 0.008,
 'glass_h': 0.13,
 'glass_r_bottom': 0.05,
 'glass_r_top': 0.058,
 'glass_xy': [0.02, 0.0],
 'lens': 26,
 'liquid_name': 'orange juice',
 'liquid_rgb': [0.95, 0.45, 0.05],
 'liquid_transmission': 0.6,
 'mouth_loc': [-0.05, 0.0, 0.3],
 'mouth_r': 0.011,
 'pour_frames': [12, 90],
 'roll_deg': -2.0,
 'samples': 2,
 'sky_strength': 0.35,
 'speed': 0.55,
 'sun_azim_deg': 140.0,
 'sun_elev_deg': 35.0,
 'sun_energy': 3.0,
 'table_rgb': [0.42, 0.26, 0.14],
 'viscosity': 0.6,
 'wall_rgb': [0.78, 0.75, 0.7]}

FRAMES = 240


def reset_scene():
    """Empty scene, 240 frames at 30 fps, Cycles on the CPU with the footage look (see the pack's build.json)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, FRAMES
    sc.render.fps, sc.render.fps_base = 30, 1.0
    sc.render.resolution_x, sc.render.resolution_y = 640, 360
    sc.render.resolution_percentage = 100
    sc.render.engine = "CYCLES"
    cy = sc.cycles
    cy.device = "CPU"
    cy.samples = PARAMS["samples"]  # few samples + OpenImageDenoise: the render is most of a build
    cy.use_adaptive_sampling = True
    cy.adaptive_threshold = 0.05
    cy.max_bounces = 6  # light through the tumbler crosses four glass faces and the juice
    cy.diffuse_bounces, cy.glossy_bounces = 1, 2
    cy.transparent_max_bounces = cy.transmission_bounces = 8
    cy.use_denoising = True
    cy.denoiser = "OPENIMAGEDENOISE"
    cy.denoising_prefilter = "FAST"
    cy.seed = 0
    sc.view_settings.view_transform = "AgX"
    sc.render.use_persistent_data = True  # static geometry is synced once for the whole animation
    sc.render.image_settings.file_format = "PNG"
    sc.render.image_settings.color_mode = "RGB"
    world = bpy.data.worlds.new("World")
    sc.world = world
    world.use_nodes = True
    nt = world.node_tree
    sky = nt.nodes.new("ShaderNodeTexSky")
    sky.sky_type = "MULTIPLE_SCATTERING"
    sky.sun_elevation = math.radians(PARAMS["sun_elev_deg"])
    sky.sun_rotation = math.radians(PARAMS["sun_azim_deg"])
    sky.sun_disc = False
    bg = nt.nodes["Background"]
    bg.inputs["Strength"].default_value = PARAMS["sky_strength"]
    nt.links.new(sky.outputs["Color"], bg.inputs["Color"])
    return sc


def sock(sockets, identifier):
    """A Mix node has float, vector and colour sockets of one name: pick by identifier."""
    return next(x for x in sockets if x.identifier == identifier)


def principled(name, rgb, rough=0.5, metal=0.0, transmission=0.0, ior=1.45, noise=None, bump=0.0):
    """Principled BSDF; `noise` = (scale, contrast) darkens the base colour by a noise texture, `bump` its height."""
    m = bpy.data.materials.new(name)
    m.use_nodes = True
    m.diffuse_color = (rgb[0], rgb[1], rgb[2], 1.0)
    nt = m.node_tree
    b = nt.nodes["Principled BSDF"]
    b.inputs["Base Color"].default_value = (rgb[0], rgb[1], rgb[2], 1.0)
    b.inputs["Roughness"].default_value = rough
    b.inputs["Metallic"].default_value = metal
    b.inputs["Transmission Weight"].default_value = transmission
    b.inputs["IOR"].default_value = ior
    if noise is not None:
        tx = nt.nodes.new("ShaderNodeTexNoise")
        tx.inputs["Scale"].default_value = noise[0]
        tx.inputs["Detail"].default_value = 6.0
        ramp = nt.nodes.new("ShaderNodeMix")
        ramp.data_type = "RGBA"
        sock(ramp.inputs, "A_Color").default_value = (rgb[0], rgb[1], rgb[2], 1.0)
        k = 1.0 - noise[1]
        sock(ramp.inputs, "B_Color").default_value = (rgb[0] * k, rgb[1] * k, rgb[2] * k, 1.0)
        nt.links.new(tx.outputs["Fac"], ramp.inputs["Factor"])
        nt.links.new(sock(ramp.outputs, "Result_Color"), b.inputs["Base Color"])
        rr = nt.nodes.new("ShaderNodeMapRange")
        rr.inputs["To Min"].default_value = rough * 0.7
        rr.inputs["To Max"].default_value = min(1.0, rough * 1.3)
        nt.links.new(tx.outputs["Fac"], rr.inputs["Value"])
        nt.links.new(rr.outputs["Result"], b.inputs["Roughness"])
        if bump > 0:
            bn = nt.nodes.new("ShaderNodeBump")
            bn.inputs["Strength"].default_value = bump
            nt.links.new(tx.outputs["Fac"], bn.inputs["Height"])
            nt.links.new(bn.outputs["Normal"], b.inputs["Normal"])
    return m


def wood(name, rgb, scale=6.0):
    """Wood grain: a wave texture stretched along x, distorted, mixed between two tones of `rgb`."""
    m = principled(name, rgb, 0.45)
    nt = m.node_tree
    b = nt.nodes["Principled BSDF"]
    tc = nt.nodes.new("ShaderNodeTexCoord")
    mp = nt.nodes.new("ShaderNodeMapping")
    mp.inputs["Scale"].default_value = (0.3, 3.0, 3.0)
    wv = nt.nodes.new("ShaderNodeTexWave")
    wv.inputs["Scale"].default_value = scale
    wv.inputs["Distortion"].default_value = 6.0
    wv.inputs["Detail"].default_value = 3.0
    mix = nt.nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    sock(mix.inputs, "A_Color").default_value = (rgb[0], rgb[1], rgb[2], 1.0)
    sock(mix.inputs, "B_Color").default_value = (rgb[0] * 0.6, rgb[1] * 0.55, rgb[2] * 0.5, 1.0)
    nt.links.new(tc.outputs["Object"], mp.inputs["Vector"])
    nt.links.new(mp.outputs["Vector"], wv.inputs["Vector"])
    nt.links.new(wv.outputs["Fac"], mix.inputs["Factor"])
    nt.links.new(sock(mix.outputs, "Result_Color"), b.inputs["Base Color"])
    bn = nt.nodes.new("ShaderNodeBump")
    bn.inputs["Strength"].default_value = 0.05
    nt.links.new(wv.outputs["Fac"], bn.inputs["Height"])
    nt.links.new(bn.outputs["Normal"], b.inputs["Normal"])
    return m


def camera(loc, target, lens=26.0, roll_deg=0.0):
    """Phone-like camera: 36 mm sensor, 24-28 mm focal length, held at hand height with a slight roll."""
    cam = bpy.data.cameras.new("Camera")
    cam.lens = lens
    cam.sensor_width = 36.0
    cam.clip_start = 0.02
    ob = bpy.data.objects.new("Camera", cam)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = loc
    d = Vector(target) - Vector(loc)
    q = d.to_track_quat("-Z", "Y")
    ob.rotation_euler = (q @ Quaternion((0, 0, 1), math.radians(roll_deg))).to_euler()
    bpy.context.scene.camera = ob
    return ob


def sun(energy=3.0, angle_deg=3.0):
    """Sun lamp matching the sky's sun direction; a few degrees of angle give soft shadows."""
    li = bpy.data.lights.new("Sun", "SUN")
    li.energy = energy
    li.angle = math.radians(angle_deg)
    ob = bpy.data.objects.new("Sun", li)
    bpy.context.scene.collection.objects.link(ob)
    el, az = math.radians(PARAMS["sun_elev_deg"]), math.radians(PARAMS["sun_azim_deg"])
    ob.rotation_euler = (math.pi / 2 - el, 0.0, az + math.pi / 2)
    return ob


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


def open_cup(name, r_bottom, r_top, height, loc, mat, segs=48):
    """Cylinder without its top face: particles can enter it."""
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=segs, radius1=r_bottom, radius2=r_top, depth=height)
    top = [f for f in bm.faces if f.calc_center_median().z > height / 2 - 1e-4]
    bmesh.ops.delete(bm, geom=top, context="FACES_ONLY")
    return mesh_object(name, bm, loc, (0, 0, 0), mat, smooth=True)


def collider(ob, thickness=0.01, damping=0.3, friction=0.3):
    ob.modifiers.new("Collision", "COLLISION")
    ob.collision.thickness_outer = thickness
    ob.collision.damping = damping
    ob.collision.cloth_friction = friction
    return ob


def bottle(name, r, length, mouth, tilt_deg, mat):
    """A wine-style bottle lying along its axis from the mouth back; a static prop (not simulated)."""
    bm = bmesh.new()
    prof = [(0.0, 0.0), (r * 0.32, 0.0), (r * 0.32, 0.06), (r * 0.4, 0.07), (r * 0.4, 0.08), (r, 0.12 + r * 0.4),
            (r, length), (0.0, length)]
    segs = 32
    rings = []
    for (rr, z) in prof:
        rings.append([bm.verts.new((rr * math.cos(2 * math.pi * i / segs), rr * math.sin(2 * math.pi * i / segs), z)) for i in range(segs)])
    for a, b in zip(rings[:-1], rings[1:]):
        for i in range(segs):
            j = (i + 1) % segs
            if a[i] is not a[j] or b[i] is not b[j]:
                bm.faces.new((a[i], a[j], b[j], b[i]))
    bmesh.ops.remove_doubles(bm, verts=bm.verts, dist=1e-6)
    bm.normal_update()
    ob = mesh_object(name, bm, tuple(mouth), (0.0, math.radians(tilt_deg), 0.0), mat, smooth=True)
    return ob


def liquid_surface(name, rgb, transmission, blob_radius):
    """Metaball element the particle system instances at every particle: Blender fuses the instances into one
    implicit surface (render resolution 1 cm, viewport 2 cm so bakes and sampling stay cheap)."""
    mb = bpy.data.metaballs.new(name)
    mb.resolution = 0.02
    mb.render_resolution = 0.01
    mb.threshold = 0.6
    el = mb.elements.new()
    el.radius = blob_radius
    m = principled(name + "Shader", rgb, 0.05, transmission=transmission, ior=1.34)
    b = m.node_tree.nodes["Principled BSDF"]
    b.inputs["Subsurface Weight"].default_value = 1.0 - transmission
    b.inputs["Subsurface Radius"].default_value = (0.01, 0.006, 0.002)
    mb.materials.append(m)
    ob = bpy.data.objects.new(name, mb)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = (0.0, 0.0, -3.0)
    return ob


def sph_emitter(em, surface, count, start, end, speed, size, viscosity, name="Juice"):
    """Legacy SPH particle liquid emitted from the faces of `em` along their normals; renders as `surface`."""
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
    st.mass = 0.01
    st.use_adaptive_subframes = False
    st.subframes = 5
    fl = st.fluid
    fl.solver = "DDR"
    fl.use_factor_radius = True
    fl.fluid_radius = 1.0
    fl.stiffness = 0.2
    fl.linear_viscosity = viscosity
    fl.rest_density = 1.0
    fl.use_factor_density = True
    ps.point_cache.frame_start = 1
    ps.point_cache.frame_end = FRAMES
    ps.seed = 7
    st.render_type = "OBJECT"
    st.instance_object = surface
    st.display_size = size
    em.show_instancer_for_render = False
    return ps


def build():
    P = PARAMS
    sc = reset_scene()
    table = box("Table", (1.4, 0.9, 0.05), (0, 0.15, -0.025), wood("Wood", P["table_rgb"]))
    collider(table, thickness=0.02, damping=0.5)
    ground = box("Ground", (8.0, 8.0, 0.05), (0, 0, -0.75), principled("Stone", (0.35, 0.34, 0.32), 0.85, noise=(30.0, 0.4), bump=0.2))
    collider(ground)
    box("Wall", (6.0, 0.05, 2.5), (0, 1.1, 0.53), principled("Plaster", P["wall_rgb"], 0.9, noise=(25.0, 0.08), bump=0.05))
    gx, gy = P["glass_xy"]
    glass_mat = principled("ClearGlass", (0.95, 0.97, 1.0), 0.02, transmission=1.0, ior=1.45)
    glass = open_cup("Glass", P["glass_r_bottom"], P["glass_r_top"], P["glass_h"], (gx, gy, P["glass_h"] / 2), glass_mat)
    collider(glass, thickness=0.012, damping=0.4)
    bottle("Bottle", P["bottle_r"], P["bottle_len"], P["mouth_loc"], P["bottle_tilt_deg"],
           principled("BottleGlass", P["bottle_rgb"], 0.05, transmission=0.9, ior=1.5))
    bm = bmesh.new()
    bmesh.ops.create_circle(bm, cap_ends=True, segments=12, radius=P["mouth_r"])
    mouth = mesh_object("Mouth", bm, tuple(P["mouth_loc"]), (0.0, math.radians(P["bottle_tilt_deg"]) + math.pi, 0.0))
    surface = liquid_surface("JuiceSurface", P["liquid_rgb"], P["liquid_transmission"], P["blob_radius"])
    sph_emitter(mouth, surface, P["count"], P["pour_frames"][0], P["pour_frames"][1], P["speed"], P["drop_size"], P["viscosity"])
    camera(tuple(P["camera_loc"]), tuple(P["camera_target"]), P["lens"], P["roll_deg"])
    sun(P["sun_energy"])
    return sc


def bake_save_render():
    sc = bpy.context.scene
    sc.frame_set(1)
    bpy.ops.ptcache.bake_all(bake=True)
    bpy.ops.wm.save_as_mainfile(filepath="scene.blend")
    sc.render.filepath = "//frames/"
    bpy.ops.render.render(animation=True)


build()
bake_save_render()
