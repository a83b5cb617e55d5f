import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Quaternion, Vector

PARAMS = {'ball_mass': 0.0064,
 'ball_r': 0.038,
 'ball_start': [-0.04, -0.12],
 'box_mass': 0.048,
 'box_rgb': [0.6, 0.45, 0.3],
 'box_size': [0.12, 0.08, 0.06],
 'box_start': [0.23, 0.19, 20.3],
 'camera_loc': [0.62, -2.18, 1.03],
 'camera_roll': 0.8,
 'camera_target': [0.55, 0.1, 0.48],
 'cup_colours': ['red', 'white'],
 'cup_h': 0.088,
 'cup_mass': 0.0072,
 'cup_r': [0.026, 0.038],
 'cup_rgbs': [[0.75, 0.1, 0.08], [0.9, 0.9, 0.87]],
 'cup_starts': [[-0.42, 0.13], [-0.24, -0.02]],
 'friction': 0.8,
 'ground_friction': 0.9,
 'hedge_rgb': [0.08, 0.18, 0.05],
 'lawn_rgb': [0.24, 0.3, 0.12],
 'leaf_mass': 0.0033,
 'leaf_rgbs': [[0.5, 0.2, 0.05], [0.75, 0.35, 0.05], [0.6, 0.45, 0.1]],
 'leaf_size': [0.09, 0.055],
 'leaf_starts': [[0.01, 0.14, 54.0], [0.3, -0.11, 9.0], [-0.48, -0.2, 22.8]],
 'lens': 26.4,
 'n_cups': 2,
 'n_leaves': 3,
 'samples': 2,
 'sky_strength': 0.17,
 'sun_azim': -22.7,
 'sun_elev': 56.8,
 'sun_energy': 2.61,
 'table_h': 0.74,
 'table_rgb': [0.55, 0.4, 0.24],
 'table_size': [1.4, 0.8],
 'wind_flow': 0.16,
 'wind_height': 0.8,
 'wind_radius': 0.3,
 'wind_strength': 2.87,
 'wind_yaw_deg': 0.0}

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


def leaf(name, length, width, thick, loc, yaw_deg, mat):
    """Flat leaf: an almond outline (pointed both ends) extruded a few millimetres."""
    bm = bmesh.new()
    n = 16
    verts = []
    for i in range(n):
        t = 2 * math.pi * i / n
        x = 0.5 * length * math.cos(t)
        y = 0.5 * width * math.sin(t) * (0.55 + 0.45 * abs(math.sin(t)))
        verts.append(bm.verts.new((x, y, -thick / 2)))
    face = bm.faces.new(verts)
    ext = bmesh.ops.extrude_face_region(bm, geom=[face])
    bmesh.ops.translate(bm, vec=(0.0, 0.0, thick), verts=[e for e in ext["geom"] if isinstance(e, bmesh.types.BMVert)])
    bmesh.ops.recalc_face_normals(bm, faces=list(bm.faces))
    return mesh_object(name, bm, loc, (0.0, 0.0, math.radians(yaw_deg)), mat)


def paper_ball(name, r, loc, mat):
    """Crumpled paper: an icosphere with deterministic dents (sums of sines), flat shaded."""
    bm = bmesh.new()
    bmesh.ops.create_icosphere(bm, subdivisions=2, radius=r)
    for v in bm.verts:
        x, y, z = v.co
        k = 1.0 + 0.12 * math.sin(17 * x / r + 1.3) * math.sin(13 * y / r + 0.4) + 0.08 * math.sin(11 * z / r + 2.1)
        v.co = v.co * k
    return mesh_object(name, bm, loc, (0.3, 0.5, 0.2), mat)


def on_top(ob, top):
    """Lift `ob` so its lowest vertex is 1 mm above height `top` (resting contact at frame 1, no overlap)."""
    bpy.context.view_layer.update()
    low = min((ob.matrix_world @ v.co).z for v in ob.data.vertices)
    ob.location.z += top + 0.001 - low


def build():
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=20, iterations=30)
    sky(P["sun_elev"], P["sun_azim"], strength=P["sky_strength"], sun_energy=P["sun_energy"])
    lawn = box("Lawn", (10.0, 10.0, 0.1), (0.5, 2.0, -0.05), material("Grass", P["lawn_rgb"], 0.9, tex="noise", scale=90.0, vary=0.45, bump=0.6, detail=3.0))
    rigid(lawn, "PASSIVE", "BOX", friction=P["ground_friction"], bounce=0.1)
    box("Hedge", (12.0, 0.8, 1.3), (0.5, 3.2, 0.65), material("HedgeLeaves", P["hedge_rgb"], 0.85, tex="stone", scale=40.0, vary=0.5, bump=0.8))
    tx, ty = P["table_size"]
    th = P["table_h"]
    wood = material("TableWood", P["table_rgb"], 0.65, tex="wood", scale=5.0, vary=0.3, bump=0.2)
    top = box("Table", (tx, ty, 0.04), (0.0, 0.0, th - 0.02), wood, bevel=0.004)
    rigid(top, "PASSIVE", "BOX", friction=P["friction"], bounce=0.2)
    for i, (sx, sy) in enumerate(((-1, -1), (1, -1), (-1, 1), (1, 1))):
        leg = box(f"Leg{i + 1}", (0.05, 0.05, th - 0.04), (sx * (tx / 2 - 0.08), sy * (ty / 2 - 0.08), (th - 0.04) / 2), wood)
        rigid(leg, "PASSIVE", "BOX", friction=P["friction"], bounce=0.2)
    rt = th  # table top
    r1, r2 = P["cup_r"]
    for i in range(P["n_cups"]):
        x, y = P["cup_starts"][i]
        cup = cylinder(f"Cup{i + 1}", r1, P["cup_h"], (x, y, rt + P["cup_h"] / 2 + 0.001),
                       material(f"CupPaper{i + 1}", P["cup_rgbs"][i], 0.6, scale=30.0, vary=0.08, bump=0.05), segs=32, r2=r2)
        rigid(cup, "ACTIVE", "CONVEX_HULL", mass=P["cup_mass"], friction=0.9, bounce=0.2, lin=0.04, ang=0.85)
    ball = paper_ball("PaperBall", P["ball_r"], (P["ball_start"][0], P["ball_start"][1], rt + P["ball_r"] * 1.3),
                      material("CrumpledPaper", [0.85, 0.84, 0.78], 0.85, tex="stone", scale=25.0, vary=0.2, bump=0.6))
    on_top(ball, rt)
    rigid(ball, "ACTIVE", "CONVEX_HULL", mass=P["ball_mass"], friction=0.8, bounce=0.2, lin=0.04, ang=0.3)
    bx, by, bz = P["box_size"]
    cbox = box("Box", (bx, by, bz), (P["box_start"][0], P["box_start"][1], rt + bz / 2 + 0.001),
               material("Cardboard", P["box_rgb"], 0.8, scale=40.0, vary=0.12, bump=0.1), rot=(0.0, 0.0, math.radians(P["box_start"][2])), bevel=0.002)
    rigid(cbox, "ACTIVE", "BOX", mass=P["box_mass"], friction=0.9, bounce=0.1, lin=0.04, ang=0.2)
    ll, lw = P["leaf_size"]
    for i in range(P["n_leaves"]):
        x, y, yaw = P["leaf_starts"][i]
        lf = leaf(f"Leaf{i + 1}", ll, lw, 0.003, (x, y, rt + 0.0025), yaw, material(f"LeafSkin{i + 1}", P["leaf_rgbs"][i], 0.6, scale=30.0, vary=0.25, bump=0.1))
        rigid(lf, "ACTIVE", "CONVEX_HULL", mass=P["leaf_mass"], friction=0.6, bounce=0.05, lin=0.04, ang=0.3)
    # Steady wind from the left along +x (the field's Z axis), constant from frame 1. Tube falloff: it blows over the
    # table top (within wind_radius of a horizontal axis at wind_height); near the lawn behind the table there is none,
    # so what is blown off comes to rest on the grass. flow: the push fades as a body approaches the air speed.
    bpy.ops.object.effector_add(type="WIND", location=(-1.6, 0.0, P["wind_height"]), rotation=(0.0, math.radians(90.0), math.radians(P["wind_yaw_deg"])))
    wind = bpy.context.active_object
    wind.name = "Wind"
    f = wind.field
    f.strength = P["wind_strength"]
    f.flow = P["wind_flow"]
    f.noise = 0.0
    f.falloff_type = "TUBE"
    f.falloff_power = 0.0
    f.use_radial_max = True
    f.radial_max = P["wind_radius"]
    f.radial_falloff = 0.0
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["camera_roll"])
    return sc


build()
bake_save_render()
