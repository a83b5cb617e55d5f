"""garden_fountain truth: a small stone birdbath fountain in a garden. A brass pipe in the middle of a round stone bowl
(on a stone column) shoots a slightly leaning jet of water up; the water rises, arcs over, falls back into the bowl and
spreads over its floor; the jet stops and the water settles in the bowl.

Liquid: legacy SPH particles emitted from a small disk at the pipe's mouth, rendered as one surface by a metaball
family fed by the particles (the method of bottle_glass; what probes/audit/derived.py compares with the particles).
Everything the water meets collides: the bowl (a closed revolved solid), the pipe, the column and the ground.
Determinism: the emitter seed is fixed; SPH results can still depend on threads and memory layout (see milk_pour),
so particle positions are compared as a flow.
"""
import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Quaternion, Vector

PARAMS = {'blob_radius': 1.8,
 'bowl_h': 0.1,
 'bowl_damping': 0.7,
 'bowl_r': 0.3,
 'bowl_rgb': [0.3, 0.26, 0.2],
 'bowl_wall': 0.035,
 'camera_loc': [0.2, -0.88, 0.98],
 'camera_target': [0.0, 0.02, 0.74],
 'column_h': 0.55,
 'column_r': 0.08,
 'count': 600,
 'drop_size': 0.011,
 'floor_t': 0.03,
 'hedge_rgb': [0.1, 0.22, 0.06],
 'jet_frames': [6, 126],
 'lens': 26,
 'mouth_r': 0.007,
 'nozzle_h': 0.04,
 'paving_rgb': [0.3, 0.28, 0.25],
 'roll_deg': 1.5,
 'samples': 2,
 'sky_strength': 0.22,
 'speed': 2.6,
 'stone_name': 'grey stone',
 'stiffness': 0.2,
 'fluid_radius': 1.0,
 'sun_azim_deg': 120.0,
 'sun_elev_deg': 40.0,
 'sun_energy': 1.6,
 'tilt_azim_deg': 0.0,
 'tilt_deg': 12.0,
 'viscosity': 0.5,
 'water_rgb': [0.7, 0.85, 0.9]}

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


def collider(ob, thickness=0.01, damping=0.3, friction=0.3):
    ob.modifiers.new("Collision", "COLLISION")
    ob.collision.thickness_outer = thickness
    ob.collision.damping = damping
    ob.collision.cloth_friction = friction
    ob.collision.damping_factor = damping  # particles lose this share of their speed along the normal
    ob.collision.friction_factor = friction
    return ob


def revolve(name, prof, loc, mat, segs=48):
    """Closed solid of revolution about z from a profile [(r, z), ...] that starts and ends on the axis."""
    bm = bmesh.new()
    rings = []
    for (rr, z) in prof:
        rings.append([bm.verts.new((rr * math.cos(2 * math.pi * i / segs), rr * math.sin(2 * math.pi * i / segs), z)) for i in range(segs)])
    for a, b in zip(rings[:-1], rings[1:]):
        for i in range(segs):
            j = (i + 1) % segs
            bm.faces.new((a[i], a[j], b[j], b[i]))
    bmesh.ops.remove_doubles(bm, verts=bm.verts, dist=1e-6)
    bmesh.ops.recalc_face_normals(bm, faces=bm.faces)
    return mesh_object(name, bm, loc, (0, 0, 0), mat, smooth=True)


def liquid_surface(name, rgb, blob_radius):
    """Metaball element the particle system instances at every particle: Blender fuses the instances into one
    implicit surface (render resolution 1 cm, viewport 2 cm so bakes and sampling stay cheap)."""
    mb = bpy.data.metaballs.new(name)
    mb.resolution = 0.02
    mb.render_resolution = 0.01
    mb.threshold = 0.6
    el = mb.elements.new()
    el.radius = blob_radius
    m = principled(name + "Shader", rgb, 0.02, transmission=1.0, ior=1.333)
    mb.materials.append(m)
    ob = bpy.data.objects.new(name, mb)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = (0.0, 0.0, -3.0)
    return ob


def sph_emitter(em, surface, count, start, end, speed, size, viscosity, stiffness, radius, name="Water"):
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
    fl.fluid_radius = radius
    fl.stiffness = stiffness
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
    paving = principled("Paving", P["paving_rgb"], 0.8, noise=(18.0, 0.35), bump=0.25)
    ground = box("Ground", (8.0, 8.0, 0.05), (0, 0, -0.025), paving)
    collider(ground, thickness=0.02, damping=0.5)
    hedge = principled("Hedge", P["hedge_rgb"], 0.7, noise=(45.0, 0.8), bump=1.0)
    hedge_ob = box("Hedge", (10.0, 0.8, 1.6), (0.0, 1.7, 0.8), hedge)
    collider(hedge_ob, thickness=0.02, damping=0.5)  # a splashed drop stops at the hedge
    stone = principled("Stone", P["bowl_rgb"], 0.8, noise=(9.0, 0.45), bump=0.3)
    # the column: a tapered stone shaft on a square plinth
    ch, cr = P["column_h"], P["column_r"]
    plinth = box("Plinth", (cr * 3.2, cr * 3.2, 0.06), (0, 0, 0.03), stone)
    collider(plinth, thickness=0.01, damping=0.5)
    column = revolve("Column", [(0.0, 0.0), (cr * 1.15, 0.0), (cr, ch * 0.5), (cr * 1.25, ch - 0.03), (cr * 1.25, ch), (0.0, ch)],
                     (0, 0, 0.06), stone)
    collider(column, thickness=0.01, damping=0.5)
    # the bowl: a closed revolved stone solid, its origin at the centre of its box (what particles_inside reads)
    R, H, tw, tf = P["bowl_r"], P["bowl_h"], P["bowl_wall"], P["floor_t"]
    prof = [(0.0, -H / 2), (R * 0.55, -H / 2), (R * 0.92, -H / 2 + H * 0.35), (R, H / 2 - 0.012), (R - 0.01, H / 2),
            (R - tw + 0.008, H / 2), (R - tw, H / 2 - 0.01), (R - tw - 0.012, -H / 2 + tf + 0.01), (R - tw - 0.03, -H / 2 + tf), (0.0, -H / 2 + tf)]
    bz = 0.06 + ch + 0.001 + H / 2
    bowl = revolve("Bowl", prof, (0, 0, bz), stone, segs=64)
    collider(bowl, thickness=0.012, damping=P["bowl_damping"], friction=0.1)
    floor_z = bz - H / 2 + tf
    # the nozzle: a vertical brass pipe (an open tube, as a pipe is) standing 1 mm above the bowl's floor; the
    # pool around it wets it as water wets a pipe. Its mouth leans by tilt_deg.
    brass = principled("Brass", (0.78, 0.56, 0.25), 0.3, metal=1.0)
    nh = P["nozzle_h"]
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=False, segments=24, radius1=0.012, radius2=0.009, depth=nh)
    pipe = mesh_object("Pipe", bm, (0, 0, floor_z + 0.001 + nh / 2), (0, 0, 0), brass, smooth=True)
    collider(pipe, thickness=0.003, damping=0.4)
    bm = bmesh.new()
    bmesh.ops.create_circle(bm, cap_ends=True, segments=12, radius=P["mouth_r"])
    t, az = math.radians(P["tilt_deg"]), math.radians(P["tilt_azim_deg"])
    mouth = mesh_object("Mouth", bm, (0, 0, floor_z + 0.001 + nh + 0.004), (0.0, t, az))
    surface = liquid_surface("WaterSurface", P["water_rgb"], P["blob_radius"])
    sph_emitter(mouth, surface, P["count"], P["jet_frames"][0], P["jet_frames"][1], P["speed"], P["drop_size"], P["viscosity"],
                P["stiffness"], P["fluid_radius"])
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
