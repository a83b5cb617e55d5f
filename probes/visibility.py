"""Does a collider put anything in the rendered frames? Render it alone and count what it covers.

Why: "rendered" was read from settings (hide_render, camera visibility, holdout, a Transparent BSDF or a
Principled alpha of 0 wired straight to the output). A material can hide an object in many other ways:
a Mix Shader towards Transparent, a Light Path "Is Camera Ray" factor, an alpha fed by a Value node. A
collider hidden like that supports or steers bodies while the audit calls it visible material. So every
collider that the settings call rendered and that is in the camera's view is rendered once, alone (every
other geometry object left out, lights and world kept), small, on a transparent film: the pixels its alpha
covers are what it shows. One that covers next to nothing of its projected box is `measured_invisible` and
from then on is a hidden collider like any other (its effect is measured by counterfactual; a hidden
collider that changes nothing costs nothing).

Alone, so an occluded support (a table leg behind the top) is not mistaken for an invisible one. Cycles
renders it, on the CPU, for Cycles and EEVEE scenes (EEVEE's CPU renders take seconds even this small, and
its node semantics for transparency are the same). Workbench scenes are not rendered: Workbench draws
exactly the viewport colour and alpha the settings give (`probes.sampling._transparent_in_engine` reads
them), and its GPU renders crashed a long-lived process that had opened many files (measured: the
self-test matrix segfaulted in a Workbench probe render after 32 minutes).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

VIS_PERCENT = 25  # render at this percentage of the scene's resolution (640x360 -> 160x90)
VIS_SAMPLES = 4  # Cycles samples: coverage needs no clean shading
ALPHA_SEEN = 0.1  # a pixel shows the object when its alpha exceeds this
MIN_EXPECTED_PX = 30  # an object whose projected box covers fewer pixels is too small to judge
INVISIBLE_SHARE = 0.01  # covering at most this share of its projected box (and at most 2 px): it shows nothing
INVISIBLE_PX = 2


def projected_box_px(scene: Any, ob: Any) -> float:
    """Pixels (at the probe's resolution) of the 2D box of `ob`'s world bounding box seen by the scene camera,
    clipped to the image; 0 when it is wholly behind the camera or out of view."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    cam = scene.camera
    if cam is None:
        return 0.0
    pts = [world_to_camera_view(scene, cam, ob.matrix_world @ Vector(c)) for c in ob.bound_box]
    front = [p for p in pts if p.z > 0]
    if not front:
        return 0.0
    xs = np.clip([p.x for p in front], 0.0, 1.0)
    ys = np.clip([p.y for p in front], 0.0, 1.0)
    w, h = _size(scene)
    return float((xs.max() - xs.min()) * w * (ys.max() - ys.min()) * h)


def _size(scene: Any) -> tuple[int, int]:
    r = scene.render
    return (max(1, int(r.resolution_x * VIS_PERCENT / 100)), max(1, int(r.resolution_y * VIS_PERCENT / 100)))


def coverage(scene: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    """Render each named object alone; {name: {"covered_px", "expected_px", "invisible", "engine"}}.

    The scene's render settings and every object's render visibility are put back afterwards (the panel runs
    this on the artist's live scene)."""
    import bpy
    from physcodegym.probes.render_match import restore_settings

    out: dict[str, dict[str, Any]] = {}
    if scene.camera is None or not names or scene.render.engine == "BLENDER_WORKBENCH":
        return out
    r = scene.render
    ims = r.image_settings
    engine = r.engine if not r.engine.startswith("BLENDER_EEVEE") else "CYCLES"
    saved: list[tuple[Any, str, Any]] = [
        (r, "engine", r.engine), (r, "resolution_percentage", r.resolution_percentage), (r, "filepath", r.filepath),
        (r, "film_transparent", r.film_transparent), (ims, "media_type", ims.media_type),
        (ims, "file_format", ims.file_format), (ims, "color_mode", ims.color_mode)]
    if engine == "CYCLES":
        saved += [(scene.cycles, "samples", scene.cycles.samples),
                  (scene.cycles, "use_denoising", scene.cycles.use_denoising)]
    geo = [o for o in scene.objects if o.type in ("MESH", "CURVE", "SURFACE", "META", "FONT", "CURVES",
                                                   "POINTCLOUD", "VOLUME", "GREASEPENCIL")]
    hide0 = {o.name: o.hide_render for o in geo}
    cur = scene.frame_current
    import cv2

    with tempfile.TemporaryDirectory(prefix="pcg_vis_") as td:
        try:
            r.engine = engine
            if engine == "CYCLES":
                scene.cycles.samples = VIS_SAMPLES
                scene.cycles.use_denoising = False
            r.resolution_percentage = VIS_PERCENT
            r.film_transparent = True
            ims.media_type = "IMAGE"
            ims.file_format = "PNG"
            ims.color_mode = "RGBA"
            scene.frame_set(scene.frame_start)
            for name in names:
                ob = scene.objects.get(name)
                if ob is None:
                    continue
                expected = projected_box_px(scene, ob)
                if expected < MIN_EXPECTED_PX:
                    out[name] = {"covered_px": None, "expected_px": round(expected, 1), "invisible": False,
                                 "engine": engine, "why": "too small or out of the camera's view to judge"}
                    continue
                for o in geo:
                    o.hide_render = o.name != name
                p = Path(td) / f"{len(out):04d}.png"
                r.filepath = str(p)
                with bpy.context.temp_override(scene=scene):
                    bpy.ops.render.render(write_still=True, scene=scene.name)
                img = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
                if img is None or img.ndim != 3 or img.shape[2] != 4:
                    out[name] = {"covered_px": None, "expected_px": round(expected, 1), "invisible": False,
                                 "engine": engine, "why": "the probe render has no alpha"}
                    continue
                alpha = img[..., 3].astype(np.float64) / (65535.0 if img.dtype == np.uint16 else 255.0)
                covered = int((alpha > ALPHA_SEEN).sum())
                out[name] = {"covered_px": covered, "expected_px": round(expected, 1), "engine": engine,
                             "invisible": covered <= max(INVISIBLE_PX, INVISIBLE_SHARE * expected)}
        finally:
            for o in geo:
                o.hide_render = hide0[o.name]
            restore_settings(saved)
            scene.frame_set(cur)
    return out
