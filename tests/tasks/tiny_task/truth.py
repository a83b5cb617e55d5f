"""A tiny task for the build tests: a ball dropped on a slab, 48 frames of Cycles at 96x54 (the set's render
recipe at a size that costs a fraction of a second a frame). Not a shipped task: it lives under tests/."""

import bpy  # isort: skip  (bmesh exists only after bpy is imported)
import bmesh

FRAMES = 48


def reset_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, FRAMES
    sc.render.fps, sc.render.fps_base = 30, 1.0
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 96, 54, 100
    sc.render.engine = "CYCLES"
    cy = sc.cycles
    cy.device = "CPU"
    cy.samples = 8
    cy.use_adaptive_sampling = True
    cy.adaptive_threshold = 0.05
    cy.max_bounces = 4
    cy.use_denoising = True
    cy.denoiser = "OPENIMAGEDENOISE"
    cy.denoising_prefilter = "FAST"
    sc.render.image_settings.file_format = "PNG"
    sc.render.image_settings.color_mode = "RGB"
    world = bpy.data.worlds.new("World")
    world.color = (0.5, 0.55, 0.6)
    sc.world = world
    return sc


def mesh(name, make, loc, rgb):
    bm = bmesh.new()
    make(bm)
    me = bpy.data.meshes.new(name)
    bm.to_mesh(me)
    bm.free()
    mat = bpy.data.materials.new(name + "Mat")
    mat.diffuse_color = (*rgb, 1.0)
    mat.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (*rgb, 1.0)
    me.materials.append(mat)
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = loc
    return ob


def rigid(ob, kind, shape):
    with bpy.context.temp_override(object=ob, active_object=ob, selected_objects=[ob]):
        bpy.ops.rigidbody.object_add()
    ob.rigid_body.type = kind
    ob.rigid_body.collision_shape = shape
    ob.rigid_body.restitution = 0.6


def build():
    sc = reset_scene()
    bpy.ops.rigidbody.world_add()
    sc.rigidbody_world.point_cache.frame_end = FRAMES
    slab = mesh("Slab", lambda bm: bmesh.ops.create_cube(bm, size=1.0), (0, 0, -0.05), (0.5, 0.35, 0.2))
    slab.scale = (1.0, 1.0, 0.1)
    rigid(slab, "PASSIVE", "BOX")
    ball = mesh("Ball", lambda bm: bmesh.ops.create_icosphere(bm, subdivisions=2, radius=0.08), (0, 0, 0.5),
                (0.8, 0.1, 0.05))
    rigid(ball, "ACTIVE", "SPHERE")
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    cam.location = (0.0, -1.6, 0.35)
    cam.rotation_euler = (1.45, 0.0, 0.0)
    sc.collection.objects.link(cam)
    sc.camera = cam
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sun.rotation_euler = (0.6, 0.2, 0.3)
    sc.collection.objects.link(sun)


build()
sc = bpy.context.scene
sc.frame_set(1)
bpy.ops.ptcache.bake_all(bake=True)
bpy.ops.wm.save_as_mainfile(filepath="scene.blend")
sc.render.filepath = "//frames/"
bpy.ops.render.render(animation=True)
