"""Broken example (hang): a settling loop that never converges; the batch's timeout stops it."""
import bpy

bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0, 0, 0.1))
cube = bpy.context.active_object
residual = 1.0
while residual > 0.0:  # waits for a residual that never reaches zero
    residual = max(residual * 0.5, 1e-300)
