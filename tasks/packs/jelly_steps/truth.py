import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Quaternion, Vector

PARAMS = {'ball_r': 0.075,
 'pots': [[-0.35, 0.3, 0.1], [1.1, 0.42, 0.13]],
 'wall_h': 1.1,
 'wall_rgb': [0.62, 0.5, 0.36],
 'ball_rgb': [0.9, 0.25, 0.05],
 'ball_subdiv': 3,
 'camera_loc': [0.62, -1.8, 0.62],
 'camera_roll': -1.0,
 'camera_target': [0.6, 0.0, 0.28],
 'drop_dx': 0.2,
 'drop_h': 0.2,
 'ground_rgb': [0.3, 0.27, 0.23],
 'landing': 0.6,
 'lens': 26,
 'n_steps': 4,
 'rise': 0.13,
 'samples': 2,
 'sb_bend': 1.0,
 'sb_damping': 0.5,
 'sb_friction': 0.5,
 'sb_mass': 0.3,
 'sb_pull': 0.5,
 'sb_push': 0.5,
 'sky_strength': 0.12,
 'step_rgb': [0.5, 0.43, 0.34],
 'step_width': 1.0,
 'sun_azim': -40.0,
 'sun_elev': 32.0,
 'sun_energy': 2.4,
 'tread': 0.28}

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


def collider(ob, thickness=0.01, inner=0.02, damping=0.1, friction=5.0):
    """A COLLISION modifier: what the soft body's points bounce off."""
    ob.modifiers.new("Collision", "COLLISION")
    c = ob.collision
    c.thickness_outer = thickness
    c.thickness_inner = inner
    c.damping = damping
    c.cloth_friction = friction
    return ob


def steps_mesh(n, rise, tread, landing, width):
    """Solid flight of `n` steps going down towards +x: the top tread (a landing `landing` deep) ends at x = 0, step k's
    front edge is at x = k * tread and its tread at height (n - k) * rise; the flight ends on the ground at
    x = (n - 1) * tread. One closed prism: the side profile extruded across y."""
    prof = [(-landing, 0.0), ((n - 1) * tread, 0.0)]
    for k in range(n - 1, -1, -1):
        prof.append((k * tread, (n - k) * rise))
        prof.append(((k - 1) * tread if k > 0 else -landing, (n - k) * rise))
    prof[-1] = (-landing, n * rise)
    # profile in order: bottom back, bottom front, up the front faces of the steps, back along the top
    pts = []
    for x, z in prof:
        if not pts or (abs(pts[-1][0] - x) > 1e-9 or abs(pts[-1][1] - z) > 1e-9):
            pts.append((x, z))
    bm = bmesh.new()
    a = [bm.verts.new((x, -width / 2, z)) for x, z in pts]
    b = [bm.verts.new((x, width / 2, z)) for x, z in pts]
    m = len(pts)
    bm.faces.new(a)
    bm.faces.new(list(reversed(b)))
    for i in range(m):
        j = (i + 1) % m
        bm.faces.new((a[i], b[i], b[j], a[j]))
    bmesh.ops.recalc_face_normals(bm, faces=bm.faces)
    bmesh.ops.triangulate(bm, faces=[f for f in bm.faces if len(f.verts) > 4], quad_method="BEAUTY", ngon_method="EAR_CLIP")
    return bm


def soft_ball(name, r, loc, mat, subdiv):
    """Icosphere whose every edge is a soft-body spring (no goal: nothing holds it, it falls freely)."""
    bm = bmesh.new()
    bmesh.ops.create_icosphere(bm, subdivisions=subdiv, radius=r)
    ob = mesh_object(name, bm, loc, (0, 0, 0), mat, smooth=True)
    P = PARAMS
    sbm = ob.modifiers.new("Softbody", "SOFT_BODY")
    s = sbm.settings
    s.use_goal = False
    s.mass = P["sb_mass"]
    s.friction = P["sb_friction"]  # air drag
    s.use_edges = True
    s.pull = P["sb_pull"]
    s.push = P["sb_push"]
    s.damping = P["sb_damping"]
    s.bend = P["sb_bend"]
    s.use_stiff_quads = True
    s.shear = 1.0
    s.use_self_collision = False
    s.use_edge_collision = False
    s.use_face_collision = False
    s.use_auto_step = True
    s.step_min = 10
    s.step_max = 300
    s.error_threshold = 0.05
    sbm.point_cache.frame_start = 1
    sbm.point_cache.frame_end = FRAMES
    ob.modifiers.new("Smooth", "SUBSURF").levels = 1
    return ob


def bake_save_render():
    sc = bpy.context.scene
    sc.frame_set(1)
    bpy.ops.ptcache.bake_all(bake=True)
    bpy.ops.wm.save_as_mainfile(filepath="scene.blend")
    sc.render.filepath = "//frames/"
    bpy.ops.render.render(animation=True)


def build():
    """A soft jelly ball let go above the front edge of a flight of garden steps bounces down them onto the paving.

    Geometry: the ground's top is z = 0; the steps (one closed stone prism with a COLLISION modifier) go down towards +x,
    the top tread's front edge at x = 0. The ball (an icosphere with a SOFT_BODY modifier, no goal) is held at rest
    `drop_h` above the top tread, its centre `drop_dx` radii beyond the front edge, so it lands on the nosing, is thrown
    forward and bounces from tread to tread.
    """
    P = PARAMS
    sc = reset_scene()
    sky(P["sun_elev"], P["sun_azim"], strength=P["sky_strength"], sun_energy=P["sun_energy"])
    ground = mesh_object("Ground", _box(40.0, 40.0, 0.1), (0.0, 10.0, -0.05), (0, 0, 0),
                         material("Paving", P["ground_rgb"], 0.9, tex="stone", scale=6.0, vary=0.3, bump=0.4))
    collider(ground, thickness=0.01, inner=0.04, damping=0.1)
    n, rise, tread = P["n_steps"], P["rise"], P["tread"]
    steps = mesh_object("Steps", steps_mesh(n, rise, tread, P["landing"], P["step_width"]), (0.0, 0.0, 0.0), (0, 0, 0),
                        material("StepStone", P["step_rgb"], 0.85, tex="noise", scale=14.0, vary=0.25, bump=0.4, detail=6.0))
    collider(steps, thickness=0.01, inner=0.04, damping=0.1)
    wall = mesh_object("GardenWall", _box(6.0, 0.2, P["wall_h"]), (0.5, P["step_width"] / 2 + 0.45, P["wall_h"] / 2), (0, 0, 0),
                       material("Plaster", P["wall_rgb"], 0.9, tex="noise", scale=5.0, vary=0.15, bump=0.3, detail=8.0))
    clay = material("Terracotta", [0.62, 0.28, 0.15], 0.7, tex="noise", scale=20.0, vary=0.15, bump=0.2)
    leaf = material("Leaves", [0.12, 0.3, 0.08], 0.8, tex="noise", scale=30.0, vary=0.4, bump=0.5)
    for k, (x, y, pr) in enumerate(P["pots"]):  # scenery: planters on the landing and the paving, away from the ball's path
        z0 = 0.0 if x > (n - 1) * tread else n * rise
        bm = bmesh.new()  # one object: a clay pot with a round shrub planted in it (material 0 clay, 1 leaves)
        bmesh.ops.create_cone(bm, cap_ends=True, segments=32, radius1=pr * 0.75, radius2=pr, depth=pr * 1.6)
        shrub = bmesh.ops.create_icosphere(bm, subdivisions=3, radius=pr * 1.1)["verts"]
        for v in shrub:
            v.co.z = v.co.z * 0.8 + pr * 1.3
        for f in bm.faces:
            f.material_index = 1 if f.verts[0] in set(shrub) else 0
            f.smooth = f.material_index == 1
        ob = mesh_object(f"Pot{k + 1}", bm, (x, y, z0 + pr * 0.8), (0, 0, 0), clay)
        ob.data.materials.append(leaf)
    r = P["ball_r"]
    loc = (P["drop_dx"] * r, 0.0, n * rise + P["drop_h"] + r)
    jelly = material("Jelly", P["ball_rgb"], 0.2, tex="noise", scale=8.0, vary=0.1, bump=0.0)
    bsdf = jelly.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Subsurface Weight"].default_value = 0.6  # light scatters inside the gel: a soft, glowing rim
    bsdf.inputs["Subsurface Scale"].default_value = 0.5 * r
    bsdf.inputs["Coat Weight"].default_value = 0.4  # wet, glossy skin
    bsdf.inputs["Coat Roughness"].default_value = 0.08
    soft_ball("Ball", r, loc, jelly, P["ball_subdiv"])
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["camera_roll"])
    return sc


def _box(sx, sy, sz):
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    for v in bm.verts:
        v.co = Vector((v.co.x * sx, v.co.y * sy, v.co.z * sz))
    return bm


build()
bake_save_render()
