"""Partial agent, flag_wind (hang): the agent's scene waits for its cloth to 'settle' before baking, measuring the
flag's motion on every pass; a flag in a steady wind never stops moving, so the loop never ends and the batch's
per-task timeout stops the run (recorded as a timeout, scored 0)."""
import bpy

bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, 240
bpy.ops.mesh.primitive_grid_add(x_subdivisions=20, y_subdivisions=12, size=0.6, location=(0.0, 0.0, 0.9))
flag = bpy.context.active_object
flag.rotation_euler = (1.5708, 0.0, 0.0)
cloth = flag.modifiers.new("Cloth", "CLOTH")
bpy.ops.object.effector_add(type="WIND", location=(-0.8, 0.0, 0.9))
wind = bpy.context.active_object
wind.field.strength = 60.0
previous = None
moving = True
while moving:  # waits for a steady state a flag in the wind never reaches
    sc.frame_set(1 if sc.frame_current >= 40 else sc.frame_current + 1)
    dg = bpy.context.evaluated_depsgraph_get()
    co = [v.co.copy() for v in flag.evaluated_get(dg).data.vertices]
    if previous is not None:
        moving = max((a - b).length for a, b in zip(co, previous, strict=True)) > 0.0
    previous = co
