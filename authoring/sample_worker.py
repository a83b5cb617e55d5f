"""Sample a saved native scene in a fresh bpy process (the build's measuring step).

    python -m physcodegym.authoring.sample_worker SCENE.blend OUT.npz OUT_roles.json [OBJECT ...]

Writes the SceneSamples npz (truth trajectories) and, for the named objects, their first-frame
screen position (object origin through the scene camera, origin top-left, the same convention as
probes.scene.roles) and their first material's diffuse colour. A fresh process means no state of the
program that built the scene (handlers, Python objects) can leak into the measurement.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from physcodegym.core import atomic

ALIVE = 3  # ParticleSystem alive_state enum value of 'ALIVE' (DEAD=1, UNBORN=2, ALIVE=3, DYING=4) measured in bpy 5.0.1


def _alive_masks(scene, samples) -> None:
    """Re-read particle alive states with the measured enum value (one pass, frames in order)."""
    import bpy

    keys = [(k.split("/", 1)[0], k) for k in samples.particles]
    if not keys:
        return
    for fi, f in enumerate(samples.frames):
        scene.frame_set(int(f))
        dg = bpy.context.evaluated_depsgraph_get()
        for obname, key in keys:
            ob = scene.objects[obname].evaluated_get(dg)
            psname = key.split("/", 1)[1]
            ps = ob.particle_systems[psname]
            n = len(ps.particles)
            st = np.empty(n, dtype=np.int32)
            if n:
                ps.particles.foreach_get("alive_state", st)
            mask = samples.particles_alive[key]
            mask[fi, :] = False
            mask[fi, :n] = st == ALIVE


def role_samples(scene, names: list[str]) -> dict:
    from bpy_extras.object_utils import world_to_camera_view

    scene.frame_set(scene.frame_start)
    out = {}
    for n in names:
        ob = scene.objects.get(n)
        if ob is None:
            out[n] = {"error": "object not in scene"}
            continue
        p = world_to_camera_view(scene, scene.camera, ob.matrix_world.translation)
        mats = [s.material for s in getattr(ob, "material_slots", []) if s.material is not None]
        if ob.particle_systems:  # a liquid role is its emitter; its colour is the particles' colour
            st = ob.particle_systems[0].settings
            inst = st.instance_object
            mats = [s.material for s in inst.material_slots if s.material is not None] if inst else []
        out[n] = {
            "screen_xy": [round(float(p.x), 4), round(float(1.0 - p.y), 4)],
            "in_view": bool(p.z > 0 and 0 <= p.x <= 1 and 0 <= p.y <= 1),
            "color_rgb": [round(float(c), 4) for c in mats[0].diffuse_color[:3]] if mats else None,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    a = sys.argv[1:] if argv is None else argv
    blend, out_npz, out_roles, names = Path(a[0]), Path(a[1]), Path(a[2]), a[3:]
    import bpy
    from physcodegym.probes.scene.sampling import sample_scene

    bpy.ops.wm.open_mainfile(filepath=str(blend))
    sc = bpy.context.scene
    samples = sample_scene(sc)
    _alive_masks(sc, samples)
    samples.save_npz(out_npz)
    atomic.write_text(out_roles, json.dumps(role_samples(sc, names), indent=1))
    return 0


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
