import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Quaternion, Vector

PARAMS = {'ball_bounce': 0.93,
 'ball_colour': 'yellow',
 'ball_mass': 0.04,
 'ball_r': 0.052,
 'ball_rgb': [0.9, 0.75, 0.1],
 'ball_rough': 0.43,
 'ball_start': [-0.312, -0.023, 0.603],
 'block_colours': ['blue', 'green'],
 'block_mass': 0.077,
 'block_rgbs': [[0.1, 0.25, 0.7], [0.15, 0.55, 0.2]],
 'block_rots': [[4.8, -13.9, 60.9], [23.5, 40.7, 83.4]],
 'block_size': 0.075,
 'block_starts': [[-0.031, 0.095, 0.523], [0.132, 0.161, 0.455]],
 'camera_loc': [0.174, -1.103, 0.465],
 'camera_roll': 0.0,
 'camera_target': [0.0, 0.05, 0.36],
 'drum_colour': 'silver',
 'drum_h': 0.088,
 'drum_mass': 0.072,
 'drum_r': 0.049,
 'drum_rgb': [0.7, 0.7, 0.72],
 'drum_rot': [11.2, 0.0, 17.8],
 'drum_start': [0.226, -0.056, 0.307],
 'lawn_rgb': [0.24, 0.3, 0.12],
 'lens': 26.9,
 'mat_bounce': 0.6,
 'mat_colour': 'red',
 'mat_friction': 0.85,
 'mat_rgb': [0.7, 0.12, 0.1],
 'mat_size': [1.1, 0.75],
 'mat_thick': 0.029,
 'n_blocks': 2,
 'samples': 2,
 'sky_strength': 0.17,
 'sun_azim': -29.0,
 'sun_elev': 40.1,
 'sun_energy': 2.69,
 'wall_h': 0.69,
 'wall_rgb': [0.62, 0.5, 0.4],
 'wall_y': 3.22}

FRAMES = 240


def reset_scene():
    """Empty scene rendered like phone footage: Cycles on the CPU, AgX.

    Why 2 samples and one diffuse bounce: OpenImageDenoise cleans a few samples well at 640x360, and the render is
    most of a build (about 5.7 CPU s per frame at 4 samples against 8.9 at 8, measured on a shared machine).
    """
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, FRAMES
    sc.render.fps, sc.render.fps_base = 30, 1.0
    sc.render.resolution_x, sc.render.resolution_y = 640, 360
    sc.render.resolution_percentage = 100
    sc.render.engine = "CYCLES"
    cy = sc.cycles
    cy.device = "CPU"
    cy.samples = PARAMS["samples"]
    cy.use_adaptive_sampling = True
    cy.adaptive_threshold = 0.08
    cy.max_bounces = 3
    cy.diffuse_bounces = 1
    cy.glossy_bounces = 1
    cy.transmission_bounces = 4
    cy.transparent_max_bounces = 8
    cy.use_denoising = True
    cy.denoiser = "OPENIMAGEDENOISE"
    cy.denoising_prefilter = "FAST"
    cy.seed = 0
    sc.view_settings.view_transform = "AgX"
    sc.view_settings.look = "AgX - Medium High Contrast"
    sc.render.use_persistent_data = True  # static geometry is synced once for the whole animation
    sc.render.image_settings.file_format = "PNG"
    sc.render.image_settings.color_mode = "RGB"
    return sc


def sky(elevation_deg, azimuth_deg, strength=0.3, sun_energy=3.5, sun_angle_deg=3.0):
    """Physical sky for the ambient light and a sun lamp (a few degrees wide: soft shadow edges) along it."""
    sc = bpy.context.scene
    world = bpy.data.worlds.new("World")
    sc.world = world
    nt = world.node_tree
    bg = nt.nodes.get("Background") or nt.nodes.new("ShaderNodeBackground")
    out = nt.nodes.get("World Output") or nt.nodes.new("ShaderNodeOutputWorld")
    tex = nt.nodes.new("ShaderNodeTexSky")
    tex.sky_type = "MULTIPLE_SCATTERING"
    tex.sun_disc = False
    tex.sun_elevation = math.radians(elevation_deg)
    tex.sun_rotation = math.radians(azimuth_deg)
    nt.links.new(tex.outputs["Color"], bg.inputs["Color"])
    bg.inputs["Strength"].default_value = strength
    nt.links.new(bg.outputs["Background"], out.inputs["Surface"])
    li = bpy.data.lights.new("Sun", "SUN")
    li.energy = sun_energy
    li.angle = math.radians(sun_angle_deg)
    ob = bpy.data.objects.new("Sun", li)
    bpy.context.scene.collection.objects.link(ob)
    el, az = math.radians(elevation_deg), math.radians(azimuth_deg)
    toward_sun = Vector((math.sin(az) * math.cos(el), -math.cos(az) * math.cos(el), math.sin(el)))
    ob.rotation_euler = toward_sun.to_track_quat("Z", "Y").to_euler()
    return ob


def material(name, rgb, rough=0.5, metal=0.0, tex="noise", scale=6.0, vary=0.25, bump=0.15, detail=4.0):
    """Principled material whose colour, roughness and relief vary with a procedural texture.

    tex: 'noise' (plastic, paint, fabric), 'wood' (wave bands), 'stone' (voronoi cells) or 'none'.
    diffuse_color keeps the mean colour (what role sampling and the solid view read).
    """
    m = bpy.data.materials.new(name)
    m.diffuse_color = (rgb[0], rgb[1], rgb[2], 1.0)
    m.roughness = rough
    m.metallic = metal
    nt = m.node_tree
    bsdf = nt.nodes.get("Principled BSDF")
    if bsdf is None:
        bsdf = nt.nodes.new("ShaderNodeBsdfPrincipled")
        nt.links.new(bsdf.outputs[0], (nt.nodes.get("Material Output") or nt.nodes.new("ShaderNodeOutputMaterial")).inputs["Surface"])
    bsdf.inputs["Base Color"].default_value = (rgb[0], rgb[1], rgb[2], 1.0)
    bsdf.inputs["Roughness"].default_value = rough
    bsdf.inputs["Metallic"].default_value = metal
    if tex == "none":
        return m
    coord = nt.nodes.new("ShaderNodeTexCoord")
    if tex == "wood":
        t = nt.nodes.new("ShaderNodeTexWave")
        t.wave_type = "BANDS"
        t.inputs["Scale"].default_value = scale
        t.inputs["Distortion"].default_value = 6.0
        t.inputs["Detail"].default_value = detail
        fac = t.outputs["Fac"]
    elif tex == "stone":
        t = nt.nodes.new("ShaderNodeTexVoronoi")
        t.inputs["Scale"].default_value = scale
        fac = t.outputs["Distance"]
    else:
        t = nt.nodes.new("ShaderNodeTexNoise")
        t.inputs["Scale"].default_value = scale
        t.inputs["Detail"].default_value = detail
        fac = t.outputs["Fac"]
    nt.links.new(coord.outputs["Object"], t.inputs["Vector"])
    ramp = nt.nodes.new("ShaderNodeValToRGB")
    lo, hi = ramp.color_ramp.elements[0], ramp.color_ramp.elements[1]
    lo.color = (rgb[0] * (1 - vary), rgb[1] * (1 - vary), rgb[2] * (1 - vary), 1.0)
    hi.color = (min(1.0, rgb[0] * (1 + vary)), min(1.0, rgb[1] * (1 + vary)), min(1.0, rgb[2] * (1 + vary)), 1.0)
    nt.links.new(fac, ramp.inputs["Fac"])
    nt.links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
    rr = nt.nodes.new("ShaderNodeMapRange")
    rr.inputs["To Min"].default_value = rough * (1 - vary)
    rr.inputs["To Max"].default_value = min(1.0, rough * (1 + vary))
    nt.links.new(fac, rr.inputs["Value"])
    nt.links.new(rr.outputs["Result"], bsdf.inputs["Roughness"])
    if bump > 0:
        bp = nt.nodes.new("ShaderNodeBump")
        bp.inputs["Strength"].default_value = bump
        bp.inputs["Distance"].default_value = 0.002
        nt.links.new(fac, bp.inputs["Height"])
        nt.links.new(bp.outputs["Normal"], bsdf.inputs["Normal"])
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


def box(name, size, loc, mat, rot=(0, 0, 0), bevel=0.0):
    """Box of `size`; `bevel` rounds its edges a little (real blocks have no knife edges)."""
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    for v in bm.verts:
        v.co = Vector((v.co.x * size[0], v.co.y * size[1], v.co.z * size[2]))
    if bevel > 0:
        bmesh.ops.bevel(bm, geom=list(bm.edges), offset=bevel, segments=2, affect="EDGES", profile=0.5)
    return mesh_object(name, bm, loc, rot, mat, smooth=bevel > 0)


def sphere(name, r, loc, mat, subdiv=3, scale=(1.0, 1.0, 1.0)):
    bm = bmesh.new()
    bmesh.ops.create_icosphere(bm, subdivisions=subdiv, radius=r)
    for v in bm.verts:
        v.co = Vector((v.co.x * scale[0], v.co.y * scale[1], v.co.z * scale[2]))
    return mesh_object(name, bm, loc, (0, 0, 0), mat, smooth=True)


def cylinder(name, r, depth, loc, mat, rot=(0, 0, 0), segs=32, r2=None, smooth=True):
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=segs, radius1=r, radius2=r if r2 is None else r2, depth=depth)
    ob = mesh_object(name, bm, loc, rot, mat)
    if smooth:  # smooth sides, flat caps
        for p in ob.data.polygons:
            p.use_smooth = abs(p.normal.z) < 0.5
    return ob


def rigid(ob, kind="ACTIVE", shape="CONVEX_HULL", mass=1.0, friction=0.5, bounce=0.0, margin=0.001, lin=0.04, ang=0.1):
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


def camera(loc, target, lens=26.0, roll_deg=0.0):
    """Phone-like camera: 36 mm sensor, about 26 mm lens, held at hand height, slightly rolled."""
    cam = bpy.data.cameras.new("Camera")
    cam.sensor_width = 36.0
    cam.lens = lens
    cam.clip_start = 0.02
    ob = bpy.data.objects.new("Camera", cam)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = loc
    d = Vector(target) - Vector(loc)
    q = d.to_track_quat("-Z", "Y")
    q = q @ Quaternion((0.0, 0.0, 1.0), math.radians(roll_deg))
    ob.rotation_euler = q.to_euler()
    bpy.context.scene.camera = ob
    return ob


def bake_save_render():
    sc = bpy.context.scene
    sc.frame_set(1)
    bpy.ops.ptcache.bake_all(bake=True)
    bpy.ops.wm.save_as_mainfile(filepath="scene.blend")
    sc.render.filepath = "//frames/"
    bpy.ops.render.render(animation=True)


def build():
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=20, iterations=30)
    sky(P["sun_elev"], P["sun_azim"], strength=P["sky_strength"], sun_energy=P["sun_energy"])
    deck = box("Lawn", (8.0, 8.0, 0.1), (0.0, 1.5, -0.05), material("Grass", P["lawn_rgb"], 0.9, tex="noise", scale=90.0, vary=0.45, bump=0.6, detail=3.0))
    rigid(deck, "PASSIVE", "BOX", friction=0.6, bounce=0.5)
    mx, my, mt = P["mat_size"][0], P["mat_size"][1], P["mat_thick"]
    mat = box("PlayMat", (mx, my, mt), (0.0, 0.0, mt / 2), material("FoamMat", P["mat_rgb"], 0.8, tex="noise", scale=60.0, vary=0.12, bump=0.3), bevel=0.006)
    rigid(mat, "PASSIVE", "BOX", friction=P["mat_friction"], bounce=P["mat_bounce"])
    box("Wall", (14.0, 0.25, P["wall_h"]), (0.0, P["wall_y"], P["wall_h"] / 2), material("StoneWall", P["wall_rgb"], 0.85, tex="stone", scale=9.0, vary=0.3, bump=0.5))
    ball = sphere("Ball", P["ball_r"], P["ball_start"], material("RubberBall", P["ball_rgb"], P["ball_rough"], scale=14.0, vary=0.08, bump=0.05), subdiv=4)
    rigid(ball, "ACTIVE", "SPHERE", mass=P["ball_mass"], friction=0.8, bounce=P["ball_bounce"], lin=0.02, ang=0.6)
    s = P["block_size"]
    for i in range(P["n_blocks"]):
        b = box(f"Block{i + 1}", (s, s, s), P["block_starts"][i], material(f"BlockWood{i + 1}", P["block_rgbs"][i], 0.6, tex="wood", scale=9.0, vary=0.2, bump=0.1),
                rot=[math.radians(a) for a in P["block_rots"][i]], bevel=0.003)
        rigid(b, "ACTIVE", "BOX", mass=P["block_mass"], friction=0.6, bounce=0.15, lin=0.04, ang=0.2)
    drum = cylinder("Drum", P["drum_r"], P["drum_h"], P["drum_start"], material("DrumPaint", P["drum_rgb"], 0.35, scale=20.0, vary=0.1, bump=0.05),
                    rot=[math.radians(a) for a in P["drum_rot"]], segs=40)
    rigid(drum, "ACTIVE", "CYLINDER", mass=P["drum_mass"], friction=0.6, bounce=0.2, lin=0.04, ang=0.6)
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["camera_roll"])
    return sc


build()
bake_save_render()
