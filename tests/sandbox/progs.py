"""Scene programs used by the sandbox tests (tiny real Blender scenes, rendered with Workbench)."""

from __future__ import annotations

SCENE = '''
import bpy
import os
bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, {frames}
bpy.ops.mesh.primitive_plane_add(size=20)
bpy.ops.rigidbody.object_add(type='PASSIVE')
bpy.ops.mesh.primitive_uv_sphere_add(location=(0, 0, 3))
ball = bpy.context.active_object
bpy.ops.rigidbody.object_add()
mat = bpy.data.materials.new("Red")
mat.diffuse_color = (0.8, 0.1, 0.1, 1.0)
ball.data.materials.append(mat)
bpy.ops.object.camera_add(location=(0, -12, 3), rotation=(1.45, 0, 0))
sc.camera = bpy.context.active_object
bpy.ops.object.light_add(type='SUN', location=(0, 0, 10))
sc.rigidbody_world.point_cache.frame_end = sc.frame_end
bpy.ops.ptcache.bake_all(bake=True)
sc.render.engine = 'BLENDER_WORKBENCH'
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = {w}, {h}, 100
sc.render.image_settings.file_format = 'PNG'
sc.render.filepath = "//frames/"
bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))
{render}
'''


def scene(frames: int = 3, w: int = 640, h: int = 360, render: str = "bpy.ops.render.render(animation=True)") -> str:
    return SCENE.format(frames=frames, w=w, h=h, render=render)
