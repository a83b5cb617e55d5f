import math
import random

import bpy  # isort: skip  (bmesh and mathutils exist only after bpy is imported)
import bmesh
from mathutils import Matrix, Quaternion, Vector

PARAMS = {'board_rgb': [0.42, 0.26, 0.13],
 'board_size': [0.8, 0.5, 0.04],
 'bounce': 0.1,
 'camera_loc': [0.42, -1.0, 0.5],
 'camera_roll': -1.0,
 'camera_target': [-0.14, 0.0, 0.16],
 'chute_angle': 34.0,
 'chute_friction': 0.5,
 'chute_len': 0.6,
 'chute_rgb': [0.62, 0.64, 0.66],
 'chute_width': 0.1,
 'cols': 3,
 'die_aspect': 1.0,
 'die_bevel': 0.22,
 'die_density': 1200.0,
 'die_friction': 0.8,
 'die_rgbs': [[0.85, 0.82, 0.74], [0.7, 0.08, 0.06]],
 'die_size': 0.016,
 'floor_rgb': [0.3, 0.3, 0.31],
 'key_azim': -35.0,
 'key_elev': 50.0,
 'key_energy': 60.0,
 'layers': 2,
 'layout_seed': 3,
 'lens': 30,
 'lip_h': 0.08,
 'lip_x': -0.16,
 'rows': 12,
 'samples': 2,
 'world_rgb': [0.05, 0.055, 0.06],
 'world_strength': 1.0}

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


def studio(rgb, strength, elev_deg, azim_deg, energy, dist=1.6, size=0.9):
    """Workshop lighting: a dim grey world for the ambient light and one big soft area lamp aimed at the board."""
    sc = bpy.context.scene
    world = bpy.data.worlds.new("World")
    sc.world = world
    nt = world.node_tree
    bg = nt.nodes.get("Background") or nt.nodes.new("ShaderNodeBackground")
    out = nt.nodes.get("World Output") or nt.nodes.new("ShaderNodeOutputWorld")
    bg.inputs["Color"].default_value = (rgb[0], rgb[1], rgb[2], 1.0)
    bg.inputs["Strength"].default_value = strength
    nt.links.new(bg.outputs["Background"], out.inputs["Surface"])
    li = bpy.data.lights.new("KeyLight", "AREA")
    li.energy = energy
    li.size = size
    li.color = (1.0, 0.93, 0.84)  # warm workshop lamp
    ob = bpy.data.objects.new("KeyLight", li)
    sc.collection.objects.link(ob)
    el, az = math.radians(elev_deg), math.radians(azim_deg)
    toward = Vector((math.sin(az) * math.cos(el), -math.cos(az) * math.cos(el), math.sin(el)))
    ob.location = toward * dist
    ob.rotation_euler = toward.to_track_quat("Z", "Y").to_euler()
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




def chute_mesh(length, width, wall_h, t):
    """Open trough in its own frame: floor top face at w = 0 from u = -length (upper end, closed by a back wall) to u = 0
    (the open lip), side walls `wall_h` high; built from boxes joined into one mesh."""
    bm = bmesh.new()
    parts = (
        ((-length / 2, 0.0, -t / 2), (length, width + 2 * t, t)),
        ((-length / 2, -(width + t) / 2, wall_h / 2), (length, t, wall_h)),
        ((-length / 2, (width + t) / 2, wall_h / 2), (length, t, wall_h)),
        ((-length - t / 2, 0.0, (wall_h - t) / 2), (t, width + 2 * t, wall_h + t)),
    )
    for c, s in parts:
        m = Matrix.Translation(c) @ Matrix.Diagonal((s[0], s[1], s[2], 1.0))
        bmesh.ops.create_cube(bm, size=1.0, matrix=m)
    return bm


def build():
    """Dice released at rest in a steep metal chute slide out of its open lower end and heap on a wooden board.

    Geometry: the board (a passive box) lies on the workshop floor; the chute is a passive open trough tilted
    `chute_angle` degrees down towards +x, its lip `lip_h` above the board's top at x = `lip_x`, held by two wooden
    posts standing on the floor behind the board. The dice (beveled cubes, box collision shapes, whose 1 mm margin lies
    inside the box) sit in a grid of `rows` x `cols` x `layers` in the chute's upper part, 3 mm above its floor and
    0.35 die sizes apart, each turned a little about the chute's normal; nothing touches at frame 1. Chute friction is low
    (steel), so they slide down as soon as the simulation starts.
    """
    P = PARAMS
    sc = reset_scene()
    rigid_world(substeps=20, iterations=20)
    studio(P["world_rgb"], P["world_strength"], P["key_elev"], P["key_azim"], P["key_energy"])
    floor = box("Floor", (8.0, 8.0, 0.1), (0.0, 1.5, -0.05),
                material("Concrete", P["floor_rgb"], 0.9, tex="noise", scale=18.0, vary=0.3, bump=0.3, detail=6.0))
    rigid(floor, "PASSIVE", "BOX", friction=0.6, bounce=0.2)
    bx, by, bz = P["board_size"]
    board = box("Board", (bx, by, bz), (0.0, 0.0, 0.001 + bz / 2),
                material("Wood", P["board_rgb"], 0.55, tex="wood", scale=3.0, vary=0.3, bump=0.1), bevel=0.003)
    rigid(board, "PASSIVE", "BOX", friction=0.8, bounce=P["bounce"])
    top = 0.001 + bz
    th = math.radians(P["chute_angle"])
    rot = Matrix.Rotation(th, 3, "Y")  # chute frame: u down the slope (+x), v across, w along the floor's normal
    lip = Vector((P["lip_x"], 0.0, top + P["lip_h"]))
    L, W, t, wall = P["chute_len"], P["chute_width"], 0.006, 0.05
    steel = material("Steel", P["chute_rgb"], 0.35, metal=0.85, tex="noise", scale=40.0, vary=0.15, bump=0.05)
    chute = mesh_object("Chute", chute_mesh(L, W, wall, t), lip, (0.0, th, 0.0), steel)
    rigid(chute, "PASSIVE", "MESH", friction=P["chute_friction"], bounce=0.1)
    pine = material("Pine", [0.55, 0.4, 0.24], 0.6, tex="wood", scale=6.0, vary=0.2, bump=0.05)
    foot = lip + rot @ Vector((-L + 0.03, 0.0, -t))  # underside of the chute near its upper end
    for k, side in enumerate((-1, 1)):
        y = side * (W / 2 - 0.012)  # under the chute's floor, inside its width
        h = foot.z - 0.001 - 0.002  # from the floor up to 1 mm below the chute's underside at its lowest point there
        post = box(f"Post{k + 1}", (0.03, 0.03, h), (foot.x - 0.02, y, 0.001 + h / 2), pine)
        rigid(post, "PASSIVE", "BOX", friction=0.6, bounce=0.1)
    rnd = random.Random(P["layout_seed"])
    s, asp = P["die_size"], P["die_aspect"]
    pitch = 1.35 * s * max(1.0, asp)
    mats = [material(f"Plastic{i + 1}", c, 0.3, tex="noise", scale=60.0, vary=0.08, bump=0.05) for i, c in enumerate(P["die_rgbs"])]
    mass = round(s * s * s * asp * P["die_density"] * 0.95, 5)  # the bevel takes about 5 % off the cube
    n = 0
    for r in range(P["rows"]):  # row 0 is the lowest down the slope: Die000 (bottom layer) is among the first to leave
        for layer in range(P["layers"]):
            for c in range(P["cols"]):
                u = -L + 0.01 + pitch * (P["rows"] - r - 0.5)
                v = (c - (P["cols"] - 1) / 2) * pitch
                w = 0.003 + s * asp / 2 + layer * pitch
                yaw = math.radians(rnd.uniform(-12.0, 12.0))
                m = rot @ Matrix.Rotation(yaw, 3, "Z")
                ob = box(f"Die{n:03d}", (s, s, s * asp), lip + rot @ Vector((u, v, w)), mats[n % len(mats)],
                         rot=m.to_euler(), bevel=P["die_bevel"] * s)
                rigid(ob, "ACTIVE", "BOX", mass=mass, friction=P["die_friction"], bounce=P["bounce"], lin=0.04, ang=0.1)
                n += 1
    camera(P["camera_loc"], P["camera_target"], lens=P["lens"], roll_deg=P["camera_roll"])
    return sc


build()
bake_save_render()
