import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Matrix, Vector

FRAMES = 240

# Everything a family member varies (tasks/packs/zigzag_run/family.py draws it from a seed).
PARAMS = {'bin_rgb': [0.85, 0.84, 0.8],
 'board_rgb': [0.7, 0.6, 0.45],
 'camera_loc': [0.242, -0.959, 0.802],
 'camera_target': [0.0, 0.0, 0.332],
 'exposure': -1.35,
 'floor_rgb': [0.3, 0.3, 0.32],
 'lens': 25.7,
 'marble_colour': ['Red', [0.8, 0.05, 0.05]],
 'marble_friction': 0.44,
 'marble_mass': 0.0076,
 'marble_r': 0.009,
 'marble_start': 0.048,
 'roll_deg': 1.9,
 'samples': 2,
 'sky_strength': 0.28,
 'sun_angle_deg': 4.1,
 'sun_azimuth_deg': -8.3,
 'sun_elevation_deg': 30.5,
 'sun_energy': 3.71,
 'table_rgb': [0.36, 0.36, 0.38],
 'table_size': [1.4, 0.8],
 'top_z': 0.664,
 'track_deg': 7.8,
 'track_drop': 0.066,
 'track_len': 0.474,
 'tracks': [['white', [0.85, 0.85, 0.82]],
            ['orange', [0.9, 0.35, 0.04]],
            ['green', [0.12, 0.45, 0.18]],
            ['red', [0.7, 0.08, 0.05]],
            ['natural', [0.75, 0.6, 0.4]]],
 'wall_rgb': [0.6, 0.62, 0.68]}
def reset_scene():
    """Cycles on the CPU with a phone-like look: AgX, few samples plus OpenImageDenoise (measured in build.json)."""
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
    cy.adaptive_threshold = 0.05
    cy.max_bounces = 2  # measured on this shared 2-core machine: 2 spp + 2 bounces + OIDN ~2.7 CPU s a frame
    cy.diffuse_bounces, cy.glossy_bounces = 1, 1
    cy.transmission_bounces, cy.transparent_max_bounces = 4, 8
    cy.use_denoising = True
    cy.denoiser = "OPENIMAGEDENOISE"
    cy.denoising_prefilter = "FAST"
    cy.seed = 3
    sc.view_settings.view_transform = "AgX"
    sc.view_settings.look = "AgX - Base Contrast"
    sc.view_settings.exposure = PARAMS["exposure"]
    sc.render.use_persistent_data = True  # keep the scene synced between frames (about 1.5 CPU s a frame less)
    sc.render.image_settings.file_format = "PNG"
    sc.render.image_settings.color_mode = "RGB"
    sky(sc)
    return sc


def sky(sc):
    """Physical sky (multiple scattering, no disc: the sun lamp casts the soft shadows) seen through the room."""
    world = bpy.data.worlds.new("World")
    world.color = (0.5, 0.55, 0.62)
    nt = world.node_tree
    bg = nt.nodes.get("Background") or nt.nodes.new("ShaderNodeBackground")
    tex = nt.nodes.new("ShaderNodeTexSky")
    tex.sky_type = "MULTIPLE_SCATTERING"
    tex.sun_disc = False
    tex.sun_elevation = math.radians(PARAMS["sun_elevation_deg"])
    tex.sun_rotation = math.radians(PARAMS["sun_azimuth_deg"])
    nt.links.new(tex.outputs["Color"], bg.inputs["Color"])
    bg.inputs["Strength"].default_value = PARAMS["sky_strength"]
    out = nt.nodes.get("World Output") or nt.nodes.new("ShaderNodeOutputWorld")
    nt.links.new(bg.outputs["Background"], out.inputs["Surface"])
    sc.world = world


def material(name, rgb, rough=0.5, metal=0.0, kind="plain", scale=12.0, bump=0.15):
    """Principled BSDF with procedural variation: `wood` grain bands, `plain` mottling, `brushed` metal, `plaster`.

    Texture coordinates are the object's own, so the pattern moves with the body (what renders is what moved).
    diffuse_color stays the base colour: the task's role colours are read from it.
    """
    m = bpy.data.materials.new(name)
    m.diffuse_color = (rgb[0], rgb[1], rgb[2], 1.0)
    m.roughness = rough
    m.metallic = metal
    nt = m.node_tree
    bsdf = nt.nodes.get("Principled BSDF")
    if bsdf is None:
        bsdf = nt.nodes.new("ShaderNodeBsdfPrincipled")
        out = nt.nodes.get("Material Output") or nt.nodes.new("ShaderNodeOutputMaterial")
        nt.links.new(bsdf.outputs["BSDF"], out.inputs["Surface"])
    bsdf.inputs["Metallic"].default_value = metal
    coord = nt.nodes.new("ShaderNodeTexCoord")
    if kind == "wood":
        tex = nt.nodes.new("ShaderNodeTexWave")
        tex.wave_type = "BANDS"
        tex.bands_direction = "X"
        tex.inputs["Scale"].default_value = scale * 0.4
        tex.inputs["Distortion"].default_value = 6.0
        tex.inputs["Detail"].default_value = 3.0
        lo, hi = 0.62, 1.12
    else:
        tex = nt.nodes.new("ShaderNodeTexNoise")
        tex.inputs["Scale"].default_value = scale
        tex.inputs["Detail"].default_value = 6.0
        lo, hi = {"plain": (0.88, 1.08), "brushed": (0.9, 1.05), "plaster": (0.9, 1.04)}.get(kind, (0.88, 1.08))
    nt.links.new(coord.outputs["Object"], tex.inputs["Vector"])
    ramp = nt.nodes.new("ShaderNodeValToRGB")
    ramp.color_ramp.elements[0].color = (rgb[0] * lo, rgb[1] * lo, rgb[2] * lo, 1.0)
    ramp.color_ramp.elements[1].color = (min(rgb[0] * hi, 1.0), min(rgb[1] * hi, 1.0), min(rgb[2] * hi, 1.0), 1.0)
    nt.links.new(tex.outputs["Fac"], ramp.inputs["Fac"])
    nt.links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
    rr = nt.nodes.new("ShaderNodeMapRange")
    rr.inputs["To Min"].default_value = max(rough - 0.12, 0.02)
    rr.inputs["To Max"].default_value = min(rough + 0.12, 1.0)
    nt.links.new(tex.outputs["Fac"], rr.inputs["Value"])
    nt.links.new(rr.outputs["Result"], bsdf.inputs["Roughness"])
    bp = nt.nodes.new("ShaderNodeBump")
    bp.inputs["Strength"].default_value = bump
    bp.inputs["Distance"].default_value = 0.002
    nt.links.new(tex.outputs["Fac"], bp.inputs["Height"])
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
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    for v in bm.verts:
        v.co = Vector((v.co.x * size[0], v.co.y * size[1], v.co.z * size[2]))
    if bevel > 0:  # rounded edges catch highlights like real boards; the hull stays inside the box
        bmesh.ops.bevel(bm, geom=list(bm.edges), offset=bevel, segments=2, affect="EDGES")
    return mesh_object(name, bm, loc, rot, mat)


def sphere(name, r, loc, mat, subdiv=3):
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=32, v_segments=16, radius=r)
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


def rigid_world(substeps=40, iterations=40):
    sc = bpy.context.scene
    if sc.rigidbody_world is None:
        bpy.ops.rigidbody.world_add()
    w = sc.rigidbody_world
    w.substeps_per_frame = substeps
    w.solver_iterations = iterations
    w.point_cache.frame_start = 1
    w.point_cache.frame_end = FRAMES
    return w


def joint(name, loc, rot, ob1, ob2, kind="HINGE"):
    emp = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(emp)
    emp.location = loc
    emp.rotation_euler = rot
    emp.empty_display_size = 0.03
    bpy.context.view_layer.objects.active = emp
    bpy.ops.rigidbody.constraint_add(type=kind)
    c = emp.rigid_body_constraint
    c.object1, c.object2 = ob1, ob2
    return c


def camera(loc, target, lens=26.0, roll_deg=0.0):
    """Phone-like camera: 36 mm sensor, about 26 mm focal length, held by hand (a small roll)."""
    cam = bpy.data.cameras.new("Camera")
    cam.sensor_width = 36.0
    cam.lens = lens
    cam.clip_start = 0.02
    ob = bpy.data.objects.new("Camera", cam)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = loc
    d = Vector(target) - Vector(loc)
    q = d.to_track_quat("-Z", "Y")
    q = q @ Matrix.Rotation(math.radians(roll_deg), 4, "Z").to_quaternion()
    ob.rotation_euler = q.to_euler()
    bpy.context.scene.camera = ob
    return ob


def sun():
    """Sun lamp matching the sky's sun; a few degrees of angular size soften the shadows."""
    li = bpy.data.lights.new("Sun", "SUN")
    li.energy = PARAMS["sun_energy"]
    li.angle = math.radians(PARAMS["sun_angle_deg"])
    ob = bpy.data.objects.new("Sun", li)
    bpy.context.scene.collection.objects.link(ob)
    el, az = math.radians(PARAMS["sun_elevation_deg"]), math.radians(PARAMS["sun_azimuth_deg"])
    direction = Vector((math.cos(el) * math.sin(az), -math.cos(el) * math.cos(az), math.sin(el)))
    ob.rotation_euler = direction.to_track_quat("Z", "Y").to_euler()
    return ob


def room(table_size, table_rgb, wall_rgb, floor_rgb):
    """Wooden tabletop (top face at z = 0) in front of a plaster wall, on a floor."""
    top = box("Table", (table_size[0], table_size[1], 0.04), (0, 0, -0.02), material("TableWood", table_rgb, 0.45, kind="wood", scale=6.0, bump=0.05))
    box("Wall", (6.0, 0.05, 3.0), (0, table_size[1] / 2 + 0.5, 0.8), material("WallPlaster", wall_rgb, 0.9, kind="plaster", scale=30.0, bump=0.08))
    box("Floor", (6.0, 4.0, 0.05), (0, 0, -0.76), material("FloorTiles", floor_rgb, 0.6, kind="plain", scale=3.0, bump=0.05))
    return top


def bake_save_render():
    sc = bpy.context.scene
    sc.frame_set(1)
    bpy.ops.ptcache.bake_all(bake=True)
    bpy.ops.wm.save_as_mainfile(filepath="scene.blend")
    sc.render.filepath = "//frames/"
    bpy.ops.render.render(animation=True)


def track(k, P, paint, y0):
    """Track k: an inclined channel along X (even k falls towards +x, odd towards -x) with a drop slot and an end stop
    at its low end. Returns (low-end slot centre x, floor z at the high end)."""
    a = math.radians(P["track_deg"])
    L, r = P["track_len"], P["marble_r"]
    s = 1 if k % 2 == 0 else -1
    gap = 2 * r + 0.016
    z_hi = P["top_z"] - k * (L * math.tan(a) + P["track_drop"])
    t = 0.008
    # floor: from the high end (x = -s*L/2, lengthened by 0.03 under the previous slot) to the slot
    x_hi = -s * (L / 2 + 0.03)
    x_lo = s * (L / 2 - gap)
    Lf = abs(x_lo - x_hi) / math.cos(a)
    cx = (x_hi + x_lo) / 2
    z_top_c = z_hi - math.tan(a) * abs(cx - x_hi)
    rot = (0, s * a, 0)
    n = {0: "TrackA", 1: "TrackB", 2: "TrackC", 3: "TrackD", 4: "TrackE"}[k]
    floor = box(f"{n}Floor", (Lf, 2 * r + 0.012, t), (cx, y0, z_top_c - t / 2 / math.cos(a)), paint, rot=rot, bevel=0.001)
    rigid(floor, "PASSIVE", "BOX", friction=0.5)
    x_end = s * L / 2
    Lr = abs(x_end - x_hi) / math.cos(a)
    crx = (x_end + x_hi) / 2
    crz = z_hi - math.tan(a) * abs(crx - x_hi) + 0.006
    for side, dy, hr in (("Back", r + 0.006 + 0.003, 0.03), ("Front", -(r + 0.006 + 0.003), 0.02)):  # a low front rail shows the marble
        rail = box(f"{n}Rail{side}", (Lr, 0.006, hr), (crx, y0 + dy, crz - (0.03 - hr) / 2), paint, rot=rot, bevel=0.001)
        rigid(rail, "PASSIVE", "BOX", friction=0.3)
    z_lo = z_hi - math.tan(a) * abs(x_end - x_hi)
    stop = box(f"{n}Stop", (0.008, 2 * r + 0.03, 0.045), (x_end + s * 0.004, y0, z_lo + 0.01), paint, bevel=0.001)
    rigid(stop, "PASSIVE", "BOX", friction=0.3)
    return s * (L / 2 - gap / 2), z_hi


def build():
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=40, iterations=40)
    table = room(P["table_size"], P["table_rgb"], P["wall_rgb"], P["floor_rgb"])
    rigid(table, "PASSIVE", "BOX", friction=0.5)
    r = P["marble_r"]
    y0 = 0.0
    yb = r + 0.012 + 0.0005
    K = len(P["tracks"])
    L = P["track_len"]
    H = P["top_z"] + 0.08
    board = box("Board", (L + 0.16, 0.018, H), (0.0, yb + 0.009, H / 2), material("PlywoodBoard", P["board_rgb"], 0.6, kind="wood", scale=8.0, bump=0.05), bevel=0.002)
    rigid(board, "PASSIVE", "BOX", friction=0.5)
    # the foot stands behind the board's front face, so the bin in front of it sits flat on the table
    foot = box("BoardFoot", (L + 0.2, 0.1, 0.015), (0.0, yb + 0.05, 0.0075), material("FootWood", P["board_rgb"], 0.6, kind="wood", scale=8.0), bevel=0.002)
    rigid(foot, "PASSIVE", "BOX")
    slot_x = 0.0
    for k, (cname, rgb) in enumerate(P["tracks"]):
        slot_x, z_hi = track(k, P, material(f"{cname.capitalize()}TrackPaint", rgb, 0.35, kind="plain", scale=30.0, bump=0.04), y0)
        if k == 0:
            a = math.radians(P["track_deg"])
            x0 = -(L / 2 + 0.03) + P["marble_start"] * math.cos(a) + 0.01
            z0 = z_hi - math.tan(a) * (x0 + L / 2 + 0.03) + r / math.cos(a) + 0.0005
            mname, mrgb = P["marble_colour"]
            marble = sphere("Marble", r, (x0, y0, z0), material(f"{mname}GlassyMarble", mrgb, 0.05, kind="plain", scale=80.0, bump=0.0))
            rigid(marble, "ACTIVE", "SPHERE", mass=P["marble_mass"], friction=P["marble_friction"], bounce=0.15, margin=0.0005, lin=0.02, ang=0.3)
    # catch bin under the last slot, standing on the table
    m = material("BinEnamel", P["bin_rgb"], 0.3, kind="plain", scale=20.0, bump=0.03)
    bw, bd, bh = 0.1, 0.06, 0.035
    bx = slot_x + (0.02 if slot_x > 0 else -0.02)
    by = yb - 0.0005 - bd / 2  # open back against the board's front face
    base = box("Bin", (bw, bd, 0.006), (bx, by, 0.003), m, bevel=0.001)
    rigid(base, "PASSIVE", "BOX", friction=0.6)
    for nm, sz, loc in ((f"BinWall{1}", (0.006, bd, bh), (bx - bw / 2 + 0.003, by, bh / 2)), (f"BinWall{2}", (0.006, bd, bh), (bx + bw / 2 - 0.003, by, bh / 2)),
                        (f"BinWall{3}", (bw, 0.006, bh), (bx, by - bd / 2 + 0.003, bh / 2))):
        w = box(nm, sz, loc, m)
        rigid(w, "PASSIVE", "BOX", friction=0.6)
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["roll_deg"])
    sun()
    return sc


build()
bake_save_render()
