"""Tiny scene programs the scripted agent writes (a ball dropped on a plane, Workbench)."""

from __future__ import annotations

HEADER = '''import bpy

bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, 240
sc.render.fps = 30
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
sc.render.engine = "BLENDER_WORKBENCH"
sc.display.render_aa = "OFF"  # 3.5x faster a frame than the default 8 samples; the re-render uses the same setting
sc.render.image_settings.file_format = "PNG"
bpy.ops.mesh.primitive_uv_sphere_add(radius=0.3, location=(0, 0, 2.5), segments=16, ring_count=8)
ball = bpy.context.active_object
ball.name = "Ball"
bpy.ops.rigidbody.object_add()
ball.rigid_body.restitution = 0.5
ball.rigid_body.collision_shape = "SPHERE"
mat = bpy.data.materials.new("Red")
mat.diffuse_color = (0.9, 0.1, 0.1, 1.0)
ball.data.materials.append(mat)
'''

GROUND = '''bpy.ops.mesh.primitive_plane_add(size=6)
ground = bpy.context.active_object
ground.name = "Ground"
bpy.ops.rigidbody.object_add()
ground.rigid_body.type = "PASSIVE"
'''

TAIL = '''sc.rigidbody_world.point_cache.frame_start = 1
sc.rigidbody_world.point_cache.frame_end = 240
bpy.ops.object.camera_add(location=(0, -8, 1.5), rotation=(1.5, 0, 0))
sc.camera = bpy.context.active_object
bpy.ops.object.light_add(type="SUN", location=(0, 0, 5))
bpy.ops.ptcache.bake_all(bake=True)
bpy.ops.wm.save_as_mainfile(filepath="scene.blend")
sc.render.filepath = "frames/####"
bpy.ops.render.render(animation=True)
'''

# first attempt: a typo in the ground set-up makes the program crash
CRASHING = HEADER + GROUND.replace('ground.rigid_body.type = "PASSIVE"', 'ground.rigid_body.kind = "PASSIVE"') + TAIL
FIXED = HEADER + GROUND + TAIL
