"""The stored-path scan (`probes.scene.render_safety.stored_paths`) reports paths a scene carries, not Blender's own.

In-process bpy, no bake: a few seconds. A Workbench scene lit by a studio light references the `.sl` file inside
the Blender install; a truth program with that lighting was refused as `path-outside-run` until the scan skipped
studio lights. The twin: an output path of a compositor-free scene that leads outside is still listed.
"""

from __future__ import annotations

import bpy
from physcodegym.probes.scene import render_safety


def _fresh_scene() -> bpy.types.Scene:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene


def test_a_studio_light_is_not_a_stored_path() -> None:
    sc = bpy.data.scenes.new("Lit")  # a factory reset unloads the studio lights, so a scene of its own
    sc.render.engine = "BLENDER_WORKBENCH"
    sc.display.shading.light = "STUDIO"
    names = [lt.name for lt in bpy.context.preferences.studio_lights]  # reading them loads the install's lights
    assert "studio.sl" in names, names
    sc.display.shading.studio_light = "studio.sl"
    light = sc.display.shading.selected_studio_light
    assert light is not None and light.path  # control: the scene does reference a file of the install
    paths = render_safety.stored_paths(bpy)
    assert not [p for _, p in paths if p == light.path], paths


def test_a_cache_folder_outside_is_still_listed() -> None:
    _fresh_scene()
    ob = bpy.data.objects.new("Cloth", bpy.data.meshes.new("Cloth"))
    bpy.context.scene.collection.objects.link(ob)
    mod = ob.modifiers.new("Cloth", "CLOTH")
    mod.point_cache.use_external = True
    mod.point_cache.filepath = "/elsewhere/cache"
    assert "/elsewhere/cache" in [p for _, p in render_safety.stored_paths(bpy)]
