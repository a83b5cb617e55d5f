import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Matrix, Vector

FRAMES = 240

# Everything a family member varies (tasks/packs/paddle_wheel/family.py draws it from a seed).
PARAMS = {'axle_h': 0.198,
 'ball_kind': ['steel', [0.75, 0.76, 0.78], 0.15, 1.0],
 'ball_mass': 0.1338,
 'ball_r': 0.016,
 'ball_s': [0.045, 0.183, 0.321, 0.459],
 'bearing_damping': 0.79,
 'camera_loc': [-0.131, -0.676, 0.392],
 'camera_target': [-0.035, 0.0, 0.188],
 'chute_colour': 'yellow',
 'chute_deg': 8.9,
 'chute_len': 0.539,
 'chute_rgb': [0.85, 0.65, 0.1],
 'drop_x': 0.073,
 'exposure': -0.86,
 'flag_colour': ['Blue', [0.08, 0.2, 0.7]],
 'floor_rgb': [0.3, 0.3, 0.32],
 'frame_rgb': [0.5, 0.05, 0.04],
 'hub_r': 0.017,
 'lens': 27.8,
 'paddle_len': 0.089,
 'paddle_mass': 0.0679,
 'paddle_rgb': [0.72, 0.55, 0.33],
 'paddle_thick': 0.005,
 'paddle_width': 0.083,
 'paddles': 5,
 'roll_deg': 0.3,
 'samples': 2,
 'sky_strength': 0.47,
 'sun_angle_deg': 4.2,
 'sun_azimuth_deg': 23.5,
 'sun_elevation_deg': 51.9,
 'sun_energy': 3.28,
 'table_rgb': [0.2, 0.12, 0.07],
 'table_size': [1.4, 0.8],
 'tray_rgb': [0.85, 0.83, 0.78],
 'wall_rgb': [0.7, 0.74, 0.78]}
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


def wheel(P):
    """Hub on a horizontal axle (world Y) with radial paddles glued to it; returns (hub, paddles)."""
    H, rh = P["axle_h"], P["hub_r"]
    W = P["paddle_width"]
    wood = material("PaddleWood", P["paddle_rgb"], 0.55, kind="wood", scale=30.0, bump=0.1)
    fname, frgb = P["flag_colour"]
    flag = material(f"{fname}PaintedPaddle", frgb, 0.4)
    hub = cylinder("Hub", rh, W + 0.02, (0.0, 0.0, H), material("SteelHub", [0.6, 0.6, 0.62], 0.3, 1.0, kind="brushed"), rot=(math.pi / 2, 0, 0), segs=24)
    rigid(hub, "ACTIVE", "CYLINDER", mass=0.1, friction=0.5, lin=0.0, ang=P["bearing_damping"])
    paddles = []
    L = P["paddle_len"]
    for i in range(P["paddles"]):
        th = 2 * math.pi * i / P["paddles"] + math.radians(15.0)
        r = rh + 0.0005 + L / 2  # the inner edge sits on the hub: the glue joint is where they touch
        loc = (r * math.cos(th), 0.0, H + r * math.sin(th))
        rj = rh + 0.0005
        pivot = (rj * math.cos(th), 0.0, H + rj * math.sin(th))
        p = box(f"Paddle{i + 1}", (L, W, P["paddle_thick"]), loc, flag if i == 0 else wood, rot=(0, -th, 0), bevel=0.0015)
        rigid(p, "ACTIVE", "BOX", mass=P["paddle_mass"], friction=0.5, bounce=0.1, lin=P["bearing_damping"] / 2, ang=P["bearing_damping"])
        joint(f"Glue{i + 1}", pivot, (0, -th, 0), hub, p, kind="FIXED")
        paddles.append(p)
    return hub, paddles


def stand(P):
    """Two dark posts on a foot plate carry the axle; the passive right post holds the hinge."""
    H, W = P["axle_h"], P["paddle_width"]
    metal = material("FramePaint", P["frame_rgb"], 0.45, kind="plain", scale=40.0, bump=0.05)
    yo = (W + 0.02) / 2 + 0.003 + 0.01
    posts = []
    for side, y in (("Back", yo), ("Front", -yo)):
        p = box(f"Post{side}", (0.03, 0.02, H + 0.03), (0.0, y, (H + 0.03) / 2 + 0.0061), metal, bevel=0.002)
        rigid(p, "PASSIVE", "BOX", friction=0.5)
        posts.append(p)
    return posts


def chute(P):
    """Open channel falling towards the wheel; its floor stops short of an end wall, leaving a drop slot."""
    H, R = P["axle_h"], P["hub_r"] + 0.0005 + P["paddle_len"]
    a = math.radians(P["chute_deg"])
    r = P["ball_r"]
    gap = 2 * r + 0.014
    x_end = P["drop_x"] - gap / 2
    z_end = H + R + 0.035
    Lc = P["chute_len"]
    paint = material("ChutePaint", P["chute_rgb"], 0.35, kind="plain", scale=25.0, bump=0.05)
    t = 0.008
    cx = x_end - math.cos(a) * Lc / 2
    cz = z_end + math.sin(a) * Lc / 2 - t / 2
    floor = box("ChuteFloor", (Lc, 2 * r + 0.012, t), (cx, 0.0, cz), paint, rot=(0, a, 0), bevel=0.001)
    rigid(floor, "PASSIVE", "BOX", friction=0.4)
    Lr = Lc + gap / math.cos(a) + 0.01
    rx = cx + math.cos(a) * (Lr - Lc) / 2
    rz = cz - math.sin(a) * (Lr - Lc) / 2 + 0.012
    for side, y in (("Back", r + 0.006 + 0.003), ("Front", -(r + 0.006 + 0.003))):
        rail = box(f"ChuteRail{side}", (Lr, 0.006, 0.026), (rx, y, rz), paint, rot=(0, a, 0), bevel=0.001)
        rigid(rail, "PASSIVE", "BOX", friction=0.3)
    wx = P["drop_x"] + gap / 2 + 0.004
    end = box("ChuteStop", (0.008, 2 * r + 0.03, 0.05), (wx, 0.0, z_end + 0.01), paint, bevel=0.001)
    rigid(end, "PASSIVE", "BOX", friction=0.3)
    # the back post rises to an arm under the chute's low end (x = 0); a wooden leg carries the high end
    fz = z_end + math.tan(a) * x_end - t / math.cos(a) - 0.0005
    post = bpy.context.scene.objects["PostBack"]
    yp = post.location.y
    metal = post.data.materials[0]
    riser = box("PostRiser", (0.02, 0.02, fz - 0.012 - (P["axle_h"] + 0.0361)), (0.0, yp, (fz - 0.012 + P["axle_h"] + 0.0361) / 2), metal, bevel=0.002)
    rigid(riser, "PASSIVE", "BOX")
    arm = box("ChuteArm", (0.025, yp + 0.015 + r + 0.012, 0.012), (0.0, (yp + 0.015 - r - 0.012) / 2, fz - 0.006), metal, bevel=0.002)
    rigid(arm, "PASSIVE", "BOX")
    hx = cx - math.cos(a) * Lc / 2 + 0.03
    hz = cz + math.sin(a) * (Lc / 2 - 0.03) - t / 2
    leg = box("ChuteLeg", (0.02, 0.02, hz), (hx, 0.0, hz / 2), material("LegWood", P["paddle_rgb"], 0.6, kind="wood", scale=20.0), bevel=0.002)
    rigid(leg, "PASSIVE", "BOX")
    balls = []
    bname, brgb, brough, bmetal = P["ball_kind"]
    bm = material(f"{bname.capitalize()}Balls", brgb, brough, bmetal, kind="brushed", scale=60.0, bump=0.02)
    for i, s in enumerate(P["ball_s"]):
        bx = x_end - math.cos(a) * s
        bz = z_end + math.sin(a) * s + r + 0.0005
        b = sphere(f"Ball{i + 1}", r, (bx, 0.0, bz), bm)
        rigid(b, "ACTIVE", "SPHERE", mass=P["ball_mass"], friction=0.4, bounce=0.2, margin=0.0005, lin=0.02, ang=0.3)
        balls.append(b)
    return balls


def tray(P):
    """Shallow tray under the wheel that catches the balls."""
    m = material("TrayEnamel", P["tray_rgb"], 0.3, kind="plain", scale=20.0, bump=0.03)
    base = box("Tray", (0.44, 0.2, 0.006), (0.0, 0.0, 0.003), m, bevel=0.001)
    rigid(base, "PASSIVE", "BOX", friction=0.5)
    for nm, sz, loc in (("TrayWallL", (0.006, 0.2, 0.035), (-0.217, 0, 0.0175)), ("TrayWallR", (0.006, 0.2, 0.035), (0.217, 0, 0.0175)),
                        ("TrayWallB", (0.44, 0.006, 0.035), (0, 0.097, 0.0175)), ("TrayWallF", (0.44, 0.006, 0.035), (0, -0.097, 0.0175))):
        w = box(nm, sz, loc, m)
        rigid(w, "PASSIVE", "BOX", friction=0.5)


def build():
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=40, iterations=40)
    table = room(P["table_size"], P["table_rgb"], P["wall_rgb"], P["floor_rgb"])
    rigid(table, "PASSIVE", "BOX", friction=0.5)
    posts = stand(P)
    hub, _ = wheel(P)
    joint("Axle", (0.0, 0.0, P["axle_h"]), (math.pi / 2, 0, 0), posts[0], hub, kind="HINGE")
    tray(P)
    chute(P)
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["roll_deg"])
    sun()
    return sc


build()
bake_save_render()
