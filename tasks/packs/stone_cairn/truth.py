import math
import random

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Quaternion, Vector

PARAMS = {'backdrop': [[-2.6, 5.5, 0.7], [3.4, 7.0, 1.1], [1.6, 4.2, 0.35]],
 'boulder_aspect': 0.8,
 'boulder_h': 0.34,
 'boulder_r': 0.4,
 'boulder_rgb': [0.24, 0.23, 0.21],
 'boulder_seed': 7,
 'camera_loc': [0.55, -2.35, 1.0],
 'camera_roll': 1.0,
 'camera_target': [0.22, 0.0, 0.52],
 'density': 2600.0,
 'drop_aspect': 0.8,
 'drop_dx': 0.02,
 'drop_gap': 0.45,
 'drop_h': 0.05,
 'drop_r': 0.11,
 'drop_rgb': [0.34, 0.3, 0.26],
 'drop_seed': 21,
 'drop_tilt': -12.0,
 'drop_yaw': 20.0,
 'friction': 0.7,
 'gap': 0.0025,
 'ground_rgb': [0.13, 0.17, 0.06],
 'lens': 28,
 'n_base': 2,
 'n_stones': 5,
 'samples': 2,
 'shifts': [[0.0, 0.0], [0.0, 0.0], [0.08, 0.0], [0.095, 0.0], [0.11, 0.0]],
 'sky_strength': 0.16,
 'stone_aspect': [0.78, 0.8, 0.75, 0.82, 0.8],
 'stone_h': [0.07, 0.06, 0.05, 0.045, 0.04],
 'stone_r': [0.18, 0.15, 0.12, 0.1, 0.08],
 'stone_rgbs': [[0.3, 0.29, 0.27], [0.38, 0.33, 0.27], [0.22, 0.22, 0.24], [0.4, 0.38, 0.34], [0.3, 0.25, 0.2]],
 'stone_seeds': [1, 2, 3, 4, 5],
 'stone_yaws': [10.0, -25.0, 40.0, 5.0, -15.0],
 'sun_azim': 65.0,
 'sun_elev': 22.0,
 'sun_energy': 2.2}

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


def rigid(ob, kind="ACTIVE", shape="CONVEX_HULL", mass=1.0, friction=0.5, bounce=0.0, margin=0.001, lin=0.04, ang=0.1, use_margin=True):
    with bpy.context.temp_override(object=ob, active_object=ob, selected_objects=[ob]):
        bpy.ops.rigidbody.object_add()
    rb = ob.rigid_body
    rb.type = kind
    rb.collision_shape = shape
    rb.mass = mass
    rb.friction = friction
    rb.restitution = bounce
    rb.use_margin = use_margin
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


def stone_mesh(r, aspect, h, seed, rings=((-0.5, 0.8), (-0.15, 1.0), (0.25, 0.96), (0.5, 0.78)), n=11):
    """Flattened, slightly irregular stone: rings of points round an irregular outline, convex hull of them.

    The first and last rings are flat, so the stone has a flat bottom and top (what lets a cairn stand); `r` is the
    outline's semi-major axis along x, `aspect` the minor to major ratio, `h` the thickness; origin at the middle.
    """
    rnd = random.Random(seed)
    angles = sorted((k + rnd.uniform(-0.3, 0.3)) * 2 * math.pi / n for k in range(n))
    radii = [rnd.uniform(0.88, 1.06) for _ in range(n)]
    bm = bmesh.new()
    for zf, sc in rings:
        for a, f in zip(angles, radii):
            bm.verts.new((r * sc * f * math.cos(a), r * aspect * sc * f * math.sin(a), h * zf))
    bmesh.ops.convex_hull(bm, input=list(bm.verts))
    bmesh.ops.recalc_face_normals(bm, faces=list(bm.faces))
    return bm


def hull_object(name, bm, loc, mat, rot=(0, 0, 0)):
    """Mesh object from a convex-hull bmesh: flat top and bottom faces, smooth sides."""
    volume = bm.calc_volume()
    ob = mesh_object(name, bm, loc, rot, mat)
    for p in ob.data.polygons:
        p.use_smooth = abs(p.normal.z) < 0.9
    return ob, volume


def build():
    """A cairn of flattened stones on a boulder in a meadow; one more stone is let go above it and lands on its edge.

    Geometry: the boulder's top is a flat face at `boulder_h`; stone k rests on stone k-1 (or the boulder) with a
    `gap` (2.5 mm: the two 1 mm collision margins plus 0.5 mm) between them, its centre shifted by `shifts[k]` in x and y; every stone has a flat bottom and top, so the stack stands
    at frame 1. The last stone is held at rest `drop_gap` above the top stone, its centre `drop_dx` beyond the top
    stone's centre along +x, tilted `drop_tilt` degrees; it falls on the top stone's edge, which tips the upper stones
    off the cairn while the `n_base` lower stones stay. Masses are the hull volumes times the stone density.
    """
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=40, iterations=40)
    sky(P["sun_elev"], P["sun_azim"], strength=P["sky_strength"], sun_energy=P["sun_energy"])
    ground = box("Ground", (80.0, 80.0, 0.1), (0.0, 20.0, -0.05),
                 material("Meadow", P["ground_rgb"], 0.95, tex="noise", scale=45.0, vary=0.45, bump=0.6, detail=6.0))
    rigid(ground, "PASSIVE", "BOX", friction=0.8, bounce=0.1)
    rock = material("BoulderRock", P["boulder_rgb"], 0.85, tex="stone", scale=9.0, vary=0.3, bump=0.6)
    br, bh = P["boulder_r"], P["boulder_h"]
    bm = stone_mesh(br, P["boulder_aspect"], bh, P["boulder_seed"], rings=((0.0, 0.86), (0.35, 1.0), (0.75, 0.9), (1.0, 0.72)), n=15)
    boulder, _ = hull_object("Boulder", bm, (0.0, 0.0, 0.001), rock)
    rigid(boulder, "PASSIVE", "CONVEX_HULL", friction=P["friction"], bounce=0.1)
    for i, (x, y, s) in enumerate(P["backdrop"]):  # distant rocks: scenery only, far from anything that moves
        bm = stone_mesh(s, 0.8, s * 0.9, 100 + i, rings=((0.0, 0.9), (0.4, 1.0), (0.8, 0.7), (1.0, 0.35)), n=12)
        hull_object(f"FarRock{i + 1}", bm, (x, y, 0.0), rock, rot=(0.0, 0.0, 0.7 * i))
    z = bh + 0.001
    top = Vector((0.0, 0.0, 0.0))
    for k in range(P["n_stones"]):
        r, asp, h = P["stone_r"][k], P["stone_aspect"][k], P["stone_h"][k]
        sx, sy = P["shifts"][k]
        mat = material(f"StoneRock{k + 1}", P["stone_rgbs"][k], 0.8, tex="stone", scale=14.0, vary=0.25, bump=0.35)
        z += P["gap"]
        ob, vol = hull_object(f"Stone{k + 1}", stone_mesh(r, asp, h, P["stone_seeds"][k]), (sx, sy, z + h / 2), mat,
                              rot=(0.0, 0.0, math.radians(P["stone_yaws"][k])))
        rigid(ob, "ACTIVE", "CONVEX_HULL", mass=round(vol * P["density"], 3), friction=P["friction"], bounce=0.1, lin=0.04, ang=0.1)
        z += h
        top = Vector((sx, sy, z))
    r, asp, h = P["drop_r"], P["drop_aspect"], P["drop_h"]
    tilt = math.radians(P["drop_tilt"])
    lift = h / 2 * math.cos(tilt) + r * math.sin(abs(tilt))  # lowest point of the tilted stone below its centre
    mat = material("DropRock", P["drop_rgb"], 0.8, tex="stone", scale=14.0, vary=0.25, bump=0.35)
    ob, vol = hull_object("DropStone", stone_mesh(r, asp, h, P["drop_seed"]), top + Vector((P["drop_dx"], 0.0, P["drop_gap"] + lift)), mat,
                          rot=(0.0, tilt, math.radians(P["drop_yaw"])))
    rigid(ob, "ACTIVE", "CONVEX_HULL", mass=round(vol * P["density"], 3), friction=P["friction"], bounce=0.1, lin=0.04, ang=0.1)
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["camera_roll"])
    return sc


build()
bake_save_render()
