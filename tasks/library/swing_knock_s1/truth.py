import math

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Quaternion, Vector

PARAMS = {'ball_colour': 'orange',
 'ball_mass': 1.91,
 'ball_r': 0.088,
 'ball_rgb': [0.9, 0.4, 0.05],
 'beam_rgb': [0.62, 0.45, 0.28],
 'block_colours': ['yellow', 'green', 'purple', 'blue'],
 'block_gap': 0.006,
 'block_mass': 0.122,
 'block_rgbs': [[0.9, 0.7, 0.12], [0.2, 0.55, 0.22], [0.4, 0.2, 0.6], [0.12, 0.3, 0.7]],
 'block_size': 0.049,
 'block_yaws': [5.2, -10.0, -1.1, 4.4],
 'camera_loc': [0.007, -1.761, 0.685],
 'camera_roll': -1.9,
 'camera_target': [0.02, 0.0, 0.46],
 'clearance': 0.044,
 'ground_rgb': [0.42, 0.4, 0.37],
 'hedge_rgb': [0.16, 0.28, 0.1],
 'lens': 26.1,
 'link_gap': 0.012,
 'link_len': 0.158,
 'link_mass': 0.098,
 'n_blocks': 4,
 'n_links': 4,
 'release_deg': 38.1,
 'samples': 2,
 'sky_strength': 0.14,
 'sun_azim': -7.8,
 'sun_elev': 28.9,
 'sun_energy': 2.02}

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


def hinge(name, loc, ob1, ob2):
    """HINGE rigid-body constraint held by an empty at the joint; its local Z (the hinge axis) points along -y."""
    emp = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(emp)
    emp.empty_display_size = 0.02
    emp.location = loc
    emp.rotation_euler = (math.radians(90.0), 0.0, 0.0)
    bpy.context.view_layer.objects.active = emp
    bpy.ops.rigidbody.constraint_add(type="HINGE")
    c = emp.rigid_body_constraint
    c.object1, c.object2 = ob1, ob2
    c.disable_collisions = True
    return c


def build():
    """A heavy ball hangs from a wooden swing frame by a chain of steel links, each joint a HINGE (axis along y).

    Geometry: joint k sits at pivot + d * k * (link_len + link_gap), d the chain's direction at release; link k
    spans its joints less half a gap at each end, so nothing touches at frame 1; the ball's centre is half a gap
    plus its radius past the last joint. Hanging straight down the ball's bottom is `clearance` above the ground;
    the tower of blocks stands just right of that lowest point, so the ball hits it at full speed.
    """
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=40, iterations=40)
    sky(P["sun_elev"], P["sun_azim"], strength=P["sky_strength"], sun_energy=P["sun_energy"])
    ground = box("Ground", (8.0, 8.0, 0.1), (0.0, 1.5, -0.05), material("RubberSurface", P["ground_rgb"], 0.9, tex="noise", scale=70.0, vary=0.35, bump=0.5, detail=3.0))
    rigid(ground, "PASSIVE", "BOX", friction=0.7, bounce=0.2)
    box("Hedge", (14.0, 0.8, 1.3), (0.0, 3.2, 0.65), material("HedgeLeaves", P["hedge_rgb"], 0.95, tex="stone", scale=30.0, vary=0.5, bump=0.8))
    r, L, g, n = P["ball_r"], P["link_len"], P["link_gap"], P["n_links"]
    reach = n * (L + g) + g / 2 + r  # pivot to ball centre
    pz = P["clearance"] + r + reach
    piv = Vector((0.0, 0.0, pz))
    wood = material("FrameWood", P["beam_rgb"], 0.7, tex="wood", scale=5.0, vary=0.25, bump=0.2)
    beam_z = pz + g / 2 + 0.07 + 0.05
    box("Beam", (2.2, 0.1, 0.1), (0.0, 0.0, beam_z), wood, bevel=0.004)
    for sx in (-1.0, 1.0):
        box("PostL" if sx < 0 else "PostR", (0.09, 0.09, beam_z + 0.05), (sx * 1.0, 0.0, (beam_z + 0.05) / 2), wood, bevel=0.004)
    steel = material("Steel", (0.62, 0.62, 0.64), 0.3, metal=1.0, tex="noise", scale=40.0, vary=0.1, bump=0.05)
    bracket = box("Bracket", (0.06, 0.05, 0.07), (0.0, 0.0, pz + g / 2 + 0.035), steel, bevel=0.003)
    rigid(bracket, "PASSIVE", "BOX", friction=0.5)
    a = math.radians(P["release_deg"])
    d = Vector((-math.sin(a), 0.0, -math.cos(a)))  # released on the left, swings toward +x
    prev = bracket
    for k in range(n):
        j = piv + d * (k * (L + g))
        link = cylinder(f"Link{k + 1}", 0.008, L, j + d * ((L + g) / 2), steel, rot=(0.0, a, 0.0), segs=12)
        rigid(link, "ACTIVE", "CYLINDER", mass=P["link_mass"], friction=0.4, bounce=0.1, lin=0.04, ang=0.1)
        hinge(f"Joint{k + 1}", j, prev, link)
        prev = link
    jb = piv + d * (n * (L + g))
    ball = sphere("Ball", r, jb + d * (g / 2 + r), material("BallPaint", P["ball_rgb"], 0.35, scale=12.0, vary=0.08, bump=0.05), subdiv=4)
    rigid(ball, "ACTIVE", "SPHERE", mass=P["ball_mass"], friction=0.5, bounce=0.3, lin=0.04, ang=0.1)
    hinge("BallJoint", jb, prev, ball)
    s, gap = P["block_size"], P["block_gap"]
    x0 = r + s / 2 + gap
    for i in range(P["n_blocks"]):
        b = box(f"Block{i + 1}", (s, s, s), (x0, 0.0, s / 2 + i * (s + 0.0005)),
                material(f"BlockWood{i + 1}", P["block_rgbs"][i], 0.6, tex="wood", scale=9.0, vary=0.2, bump=0.1),
                rot=(0.0, 0.0, math.radians(P["block_yaws"][i])), bevel=0.003)
        rigid(b, "ACTIVE", "BOX", mass=P["block_mass"], friction=0.6, bounce=0.15, lin=0.04, ang=0.2)
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["camera_roll"])
    return sc


build()
bake_save_render()
