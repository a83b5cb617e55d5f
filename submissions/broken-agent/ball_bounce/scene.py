"""Broken example (crash): builds part of the scene, then dies on a misspelt API call."""
import bpy

bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, 240
bpy.ops.mesh.primitive_uv_sphere_add(radius=0.3, location=(0, 0, 2))
ball = bpy.context.active_object
bpy.ops.rigidbody.object_add()
ball.rigid_body.restitution_factor = 0.8  # AttributeError: the property is `restitution`
