import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Matrix, Vector

FRAMES = 240

# Everything a family member varies (tasks/packs/skittles/family.py draws it from a seed).
PARAMS = {'arm_len': 0.415,
 'ball_colour': ['Black', [0.03, 0.03, 0.035], 0.25],
 'ball_mass': 0.201,
 'ball_r': 0.035,
 'camera_loc': [0.076, -0.908, 0.396],
 'camera_target': [0.0, 0.0, 0.2],
 'exposure': -1.1,
 'floor_rgb': [0.3, 0.3, 0.32],
 'gallows_rgb': [0.62, 0.46, 0.28],
 'lens': 25.3,
 'pin_dx': 0.037,
 'pin_dy': 0.036,
 'pin_h': 0.111,
 'pin_mass': 0.026,
 'pin_r': 0.016,
 'pin_rgb': [0.9, 0.88, 0.82],
 'pin_rows': [1, 2, 3],
 'pin_x0': 0.054,
 'pivot': [0.0, 0.469],
 'release_deg': 65.1,
 'rod_rgb': [0.55, 0.56, 0.58],
 'roll_deg': -0.6,
 'samples': 2,
 'sky_strength': 0.33,
 'stripe_colour': ['Green', [0.08, 0.45, 0.15]],
 'sun_angle_deg': 2.5,
 'sun_azimuth_deg': 21.7,
 'sun_elevation_deg': 26.3,
 'sun_energy': 3.0,
 'table_rgb': [0.6, 0.48, 0.34],
 'table_size': [1.4, 0.8],
 'wall_rgb': [0.84, 0.74, 0.66]}
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


def pin_mesh(name, P, loc, mats):
    """Lathed skittle: wide belly, narrow neck, round head; the top band uses the stripe material (index 1)."""
    h, rmax = P["pin_h"], P["pin_r"]
    prof = [(0.0, 0.55), (0.03, 0.8), (0.17, 1.0), (0.32, 0.95), (0.5, 0.65), (0.64, 0.45), (0.72, 0.5), (0.82, 0.6), (0.92, 0.5), (0.98, 0.25), (1.0, 0.0)]
    zc = 0.4 * h  # Bullet puts the centre of mass at the origin: keep the origin where a skittle's mass centre is
    bm = bmesh.new()
    segs = 20
    rings = []
    for zf, rf in prof:
        if rf == 0.0:
            rings.append([bm.verts.new((0.0, 0.0, zf * h - zc))])
            continue
        rings.append([bm.verts.new((rf * rmax * math.cos(2 * math.pi * j / segs), rf * rmax * math.sin(2 * math.pi * j / segs), zf * h - zc)) for j in range(segs)])
    bm.faces.new(list(reversed(rings[0])))
    for i in range(len(rings) - 1):
        a, b = rings[i], rings[i + 1]
        for j in range(segs):
            if len(b) == 1:
                f = bm.faces.new((a[j], a[(j + 1) % segs], b[0]))
            else:
                f = bm.faces.new((a[j], a[(j + 1) % segs], b[(j + 1) % segs], b[j]))
            f.material_index = 1 if 0.6 <= prof[i][0] < 0.7 else 0
            f.smooth = True
    ob = mesh_object(name, bm, (loc[0], loc[1], loc[2] + zc), (0, 0, 0), None)
    for m in mats:
        ob.data.materials.append(m)
    return ob


def pendulum(P):
    """Ball on a stiff rod hanging from a hinge on the gallows arm, raised to the left and let go."""
    px, hp = P["pivot"]
    L, r = P["arm_len"], P["ball_r"]
    th = math.radians(P["release_deg"])
    ux, uz = -math.sin(th), -math.cos(th)  # unit vector pivot -> ball
    bname, brgb, brough = P["ball_colour"]
    ball = sphere("Ball", r, (px + L * ux, 0.0, hp + L * uz), material(f"{bname}LignumBall", brgb, brough, kind="wood", scale=25.0, bump=0.05))
    rigid(ball, "ACTIVE", "SPHERE", mass=P["ball_mass"], friction=0.4, bounce=0.3, lin=0.01, ang=0.05)
    rl = L - r
    c = rl / 2
    rod = cylinder("Rod", 0.0035, rl, (px + c * ux, 0.0, hp + c * uz), material("SteelRod", P["rod_rgb"], 0.3, 1.0, kind="brushed", scale=50.0), rot=(0, th, 0), segs=12)
    rigid(rod, "ACTIVE", "CYLINDER", mass=0.01, friction=0.3, lin=0.01, ang=0.05)
    rod.rigid_body.collision_collections = [i == 19 for i in range(20)]  # a thin rod: only the ball strikes
    joint("RodGlue", (px + rl * ux, 0.0, hp + rl * uz), (0, th, 0), rod, ball, kind="FIXED")
    return ball, rod


def gallows(P):
    """Upright post behind the lane with an arm reaching over it; a bracket at the arm's end carries the pivot."""
    px, hp = P["pivot"]
    wood = material("GallowsWood", P["gallows_rgb"], 0.5, kind="wood", scale=12.0, bump=0.06)
    yb = 0.16
    post = box("Gallows", (0.03, 0.03, hp + 0.03), (px, yb, (hp + 0.03) / 2), wood, bevel=0.003)
    rigid(post, "PASSIVE", "BOX")
    arm = box("GallowsArm", (0.03, yb - 0.008 + 0.015, 0.025), (px, (yb + 0.008 - 0.015) / 2 + 0.0075, hp + 0.0175), wood, bevel=0.003)
    rigid(arm, "PASSIVE", "BOX")
    br = box("PivotBracket", (0.016, 0.01, 0.03), (px, 0.011, hp), material("BracketBrass", [0.75, 0.55, 0.25], 0.3, 1.0, kind="brushed"), bevel=0.001)
    rigid(br, "PASSIVE", "BOX")
    return br


def pins(P):
    """Skittles in a triangle pointing at the ball's path (head pin first)."""
    body = material("PinMaple", P["pin_rgb"], 0.35, kind="wood", scale=18.0, bump=0.03)
    sname, srgb = P["stripe_colour"]
    stripe = material(f"{sname}PinStripe", srgb, 0.35)
    px = P["pivot"][0]
    out = []
    k = 0
    for i, n in enumerate(P["pin_rows"]):
        for j in range(n):
            k += 1
            x = px + P["pin_x0"] + i * P["pin_dx"]
            y = (j - (n - 1) / 2) * P["pin_dy"]
            p = pin_mesh(f"Pin{k}", P, (x, y, 0.001), [body, stripe])  # resting on its 1 mm collision margin
            rigid(p, "ACTIVE", "CONVEX_HULL", mass=P["pin_mass"], friction=0.4, bounce=0.3, lin=0.04, ang=0.1)
            out.append(p)
    return out


def build():
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=40, iterations=40)
    table = room(P["table_size"], P["table_rgb"], P["wall_rgb"], P["floor_rgb"])
    rigid(table, "PASSIVE", "BOX", friction=0.5)
    bracket = gallows(P)
    _, rod = pendulum(P)
    px, hp = P["pivot"]
    joint("Pivot", (px, 0.0, hp), (math.pi / 2, 0, 0), bracket, rod, kind="HINGE")
    pins(P)
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["roll_deg"])
    sun()
    return sc


build()
bake_save_render()
