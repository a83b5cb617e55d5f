"""Broken example (missing frames): a correct little scene that renders only the first 12 of 240 frames."""
import os

import bpy

bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, 12  # should be 240
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
sc.render.engine = "BLENDER_WORKBENCH"
bpy.ops.mesh.primitive_plane_add(size=10)
bpy.ops.rigidbody.object_add(type="PASSIVE")
bpy.ops.mesh.primitive_cylinder_add(radius=0.4, depth=1.0, location=(0, 0, 0.5))
bpy.ops.object.camera_add(location=(0, -6, 2), rotation=(1.35, 0, 0))
sc.camera = bpy.context.active_object
bpy.ops.object.light_add(type="SUN", location=(0, 0, 6))
sc.render.image_settings.file_format = "PNG"
sc.render.filepath = "//frames/"
bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))
bpy.ops.render.render(animation=True)
