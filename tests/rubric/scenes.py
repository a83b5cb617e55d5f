"""Small real Blender scenes for the rubric tests: a ball rolls into a target ball on a table.

`python tests/rubric/scenes.py --pcg-out OUT_DIR --pcg-variant VARIANT` builds, bakes and saves OUT_DIR/scene.blend.
Variants differ from "truth" by exactly one defect so each check is tested on a twin pair.
"""

from __future__ import annotations

import sys
from pathlib import Path

FRAME_END = 75


def build(out: Path, variant: str = "truth") -> None:
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, FRAME_END
    sc.render.fps = 30
    sc.render.resolution_x, sc.render.resolution_y = 640, 360

    def mat(name: str, rgb: tuple[float, float, float]) -> bpy.types.Material:
        m = bpy.data.materials.new(name)
        m.diffuse_color = (*rgb, 1.0)
        return m

    def rb(ob: bpy.types.Object, kind: str, shape: str) -> None:
        with bpy.context.temp_override(object=ob, active_object=ob, selected_objects=[ob]):
            bpy.ops.rigidbody.object_add(type=kind)
        ob.rigid_body.collision_shape = shape

    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0, 0, -0.1))
    table = bpy.context.active_object
    table.name = "Table"
    table.scale = (8, 3, 0.2)
    table.data.materials.append(mat("Wood", (0.4, 0.25, 0.1)))
    rb(table, "PASSIVE", "BOX")
    table.rigid_body.friction = 0.5

    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.25, segments=24, ring_count=12, location=(-2.0, 0, 0.25))
    inc = bpy.context.active_object
    inc.name = "CueBall"
    inc.data.materials.append(mat("White", (0.9, 0.9, 0.9)))
    rb(inc, "ACTIVE", "SPHERE")
    inc.rigid_body.mass = 1.0
    inc.rigid_body.restitution = 0.9
    # kinematic hand-off: 3 m/s along +x for frames 1..4, then the solver takes over
    inc.rigid_body.kinematic = True
    inc.keyframe_insert("rigid_body.kinematic", frame=4)
    inc.rigid_body.kinematic = False
    inc.keyframe_insert("rigid_body.kinematic", frame=5)
    inc.location = (-2.0, 0, 0.25)
    inc.keyframe_insert("location", frame=1)
    inc.location = (-2.0 + 3.0 * 3 / 30, 0, 0.25)
    inc.keyframe_insert("location", frame=4)
    for fc in inc.animation_data.action.layers[0].strips[0].channelbag(inc.animation_data.action_slot).fcurves:
        for kp in fc.keyframe_points:
            kp.interpolation = "LINEAR" if fc.data_path == "location" else "CONSTANT"

    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.25, segments=24, ring_count=12, location=(0.0, 0, 0.25))
    tgt = bpy.context.active_object
    tgt.name = "RedBall"
    tgt.data.materials.append(mat("Red", (0.8, 0.05, 0.05)))
    rb(tgt, "ACTIVE", "SPHERE")
    tgt.rigid_body.mass = 1.0
    tgt.rigid_body.restitution = 0.9

    if variant == "ghost":
        # the target is keyframed to slide away; the cue ball passes through it (no shared collision collection)
        tgt.rigid_body.kinematic = True
        tgt.location = (0.0, 0, 0.25)
        tgt.keyframe_insert("location", frame=16)
        tgt.location = (2.5, 0, 0.25)
        tgt.keyframe_insert("location", frame=60)
        inc.rigid_body.collision_collections = [i in (0, 1) for i in range(20)]
        tgt.rigid_body.collision_collections = [i in (2,) for i in range(20)]
        table.rigid_body.collision_collections = [i in (0, 1, 2) for i in range(20)]
    elif variant in ("nocollide", "nocollide_passive"):
        # the cue ball has no collision collection in common with the target: it rolls straight through
        inc.rigid_body.collision_collections = [i in (0, 1) for i in range(20)]
        tgt.rigid_body.collision_collections = [i in (2,) for i in range(20)]
        table.rigid_body.collision_collections = [i in (0, 1, 2) for i in range(20)]
        if variant == "nocollide_passive":
            tgt.rigid_body.type = "PASSIVE"  # nothing can move it, not even an operative collider

    if variant in ("windy", "windy_far"):
        # a wind blowing along +y that the task admits as a role; windy_far's is out of range of every body
        bpy.ops.object.effector_add(type="WIND", location=(0, -3 if variant == "windy" else -40, 0.25), rotation=(-1.5708, 0, 0))
        w = bpy.context.active_object
        w.name = "Wind"
        w.field.strength = 6.0
        if variant == "windy_far":
            w.field.use_max_distance = True
            w.field.distance_max = 1.0

    bpy.ops.object.camera_add(location=(0, -9, 3.0), rotation=(1.28, 0, 0))
    sc.camera = bpy.context.active_object
    bpy.ops.object.light_add(type="SUN", location=(0, 0, 5))
    sc.rigidbody_world.point_cache.frame_end = FRAME_END
    bpy.ops.ptcache.bake_all(bake=True)
    out.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(out / "scene.blend"))


if __name__ == "__main__":
    # `--pcg-out DIR [--pcg-variant V]` for the tests; with neither it is the test task's truth program
    # (the sandbox leaves its own arguments in sys.argv, so plain positionals cannot be used)
    argv = sys.argv
    out = Path(argv[argv.index("--pcg-out") + 1]) if "--pcg-out" in argv else Path.cwd()
    variant = argv[argv.index("--pcg-variant") + 1] if "--pcg-variant" in argv else "truth"
    build(out, variant)
