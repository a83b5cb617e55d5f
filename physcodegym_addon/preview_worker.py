"""Child entry point: render one frame of a saved scene copy with the preview engine of the preferences.

`python -m physcodegym.physcodegym_addon.preview_worker BLEND FRAME ENGINE OUT.png` (bpy in the child;
the panel's process never renders, so an EEVEE preview on a CPU does not freeze the UI).
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str] | None = None) -> int:
    blend, frame, engine, out = (argv or sys.argv[1:])[:4]
    import bpy
    from physcodegym.probes.scene.render_safety import install_load_guard

    install_load_guard()  # stored code and paths off as the copy loads (docs/THREAT_MODEL.md)
    bpy.ops.wm.open_mainfile(filepath=blend)
    sc = bpy.context.scene
    if sc.camera is None:
        print(json.dumps({"ok": False, "error": "the scene has no camera"}))
        return 2
    sc.render.engine = engine
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
    sc.render.use_sequencer = False
    sc.render.image_settings.file_format = "PNG"
    if engine == "CYCLES":
        sc.cycles.device, sc.cycles.samples = "CPU", 16
    elif engine == "BLENDER_EEVEE":
        sc.eevee.taa_render_samples = 16
    for f in range(sc.frame_start, int(frame) + 1):  # step so unbaked simulations reach the frame
        sc.frame_set(f)
    sc.render.filepath = out
    from physcodegym.probes.scene.render_safety import no_file_outputs

    with no_file_outputs():  # a reconstruction's File Output nodes must not write from the panel's process
        bpy.ops.render.render(write_still=True)
    print(json.dumps({"ok": True, "png": out, "frame": int(frame), "engine": engine}))
    return 0


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
