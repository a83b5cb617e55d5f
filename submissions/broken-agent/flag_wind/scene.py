"""Broken example (policy breach): tries to copy the reference video into the scene instead of simulating it."""
import bpy

bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
ref = bpy.data.movieclips.load("../../tasks/packs/flag_wind/reference.mp4")
sed = sc.sequence_editor_create()
sed.strips.new_movie("ref", "../../tasks/packs/flag_wind/reference.mp4", 1, 1)
sc.render.use_sequencer = True
sc.render.filepath = "//frames/"
bpy.ops.render.render(animation=True)
