"""Does a collider put anything in the rendered frames? Render it alone and count what it covers.

Why: "rendered" was read from settings (hide_render, camera visibility, holdout, a Transparent BSDF or a
Principled alpha of 0 wired straight to the output). A material can hide an object in many other ways:
a Mix Shader towards Transparent, a Light Path "Is Camera Ray" factor, an alpha fed by a Value node. A
collider hidden like that supports or steers bodies while the audit calls it visible material. So every
collider that the settings call rendered and that is in the camera's view is rendered alone (every other
geometry object left out, lights, world, view layers and compositor kept), small, on the frame where the camera
sees it best, and compared with the same frame rendered with no geometry at all: the pixels that differ are what
it adds to the final picture. So whatever hides it (its shading, a view layer, a compositor that outputs a layer
without it) hides it here too. One that changes next to nothing of its projected box is `measured_invisible` and
from then on is a hidden collider like any other (its effect is measured by counterfactual; a hidden
collider that changes nothing costs nothing).

Alone, so an occluded support (a table leg behind the top) is not mistaken for an invisible one. Cycles
renders it, on the CPU, for Cycles and EEVEE scenes (EEVEE's CPU renders take seconds even this small, and
its node semantics for transparency are the same). Workbench scenes are not rendered unless a compositor or a
second view layer makes their picture (`picture_composed`): Workbench draws
exactly the viewport colour and alpha the settings give (`probes.scene.sampling._transparent_in_engine` reads
them), and its GPU renders crashed a long-lived process that had opened many files (measured: the
self-test matrix segfaulted in a Workbench probe render after 32 minutes).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.probes.scene.render_safety import no_file_outputs
from physcodegym.probes.scene.sampling import appearance_varies, id_curves, rendering_view_layers

VIS_PERCENT = 25  # render at this percentage of the scene's resolution (640x360 -> 160x90)
VIS_SAMPLES = 4  # Cycles samples: coverage needs no clean shading
LEVEL_SEEN = 12  # a pixel shows the object when any colour channel differs by more than this (0-255) from the
# same frame rendered with no geometry at all
MIN_EXPECTED_PX = 30  # an object whose projected box covers fewer pixels is too small to judge
INVISIBLE_SHARE = 0.01  # covering at most this share of its projected box (and at most 2 px): it shows nothing
INVISIBLE_PX = 2
PROBE_FRAMES = 9  # frames where each object's view is measured; it is rendered alone on the one it is seen best
MAX_PASSES = 40  # probe renders at most (objects whose boxes do not overlap share one)


def projected_box(scene: Any, ob: Any) -> tuple[tuple[float, float, float, float], bool] | None:
    """The 2D box (x0, y0, x1, y1, pixels at the probe's resolution, y down from the top row) of the corners of
    `ob`'s world bounding box in front of the scene camera, clipped to the image, and whether some corner is
    behind the camera (then the box does not bound what it covers); None when wholly behind the camera."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    cam = scene.camera
    if cam is None:
        return None
    pts = [world_to_camera_view(scene, cam, ob.matrix_world @ Vector(c)) for c in ob.bound_box]
    front = [p for p in pts if p.z > 0]
    if not front:
        return None
    xs = np.clip([p.x for p in front], 0.0, 1.0)
    ys = np.clip([p.y for p in front], 0.0, 1.0)
    w, h = _size(scene)
    box = (float(xs.min() * w), float((1.0 - ys.max()) * h), float(xs.max() * w), float((1.0 - ys.min()) * h))
    # part of it behind the camera: the box of the corners in front does not bound what it covers on screen
    return box, len(front) < len(pts)


def projected_box_px(scene: Any, ob: Any) -> float:
    """Pixels (at the probe's resolution) of `projected_box`; 0 when it is wholly behind the camera or out of
    view."""
    pb = projected_box(scene, ob)
    return 0.0 if pb is None else _area(pb[0])


def _area(box: tuple[float, ...]) -> float:
    return float((box[2] - box[0]) * (box[3] - box[1]))


def _probe_frames(scene: Any, varies: bool) -> list[int]:
    """PROBE_FRAMES evenly spaced frames; when what renders can change per frame (`sampling.appearance_varies`),
    one more inside each gap, placed by a hash of the saved file so a program cannot know which frames are looked
    at (the verdict stays the same for the same file)."""
    import hashlib

    import bpy

    lo, hi = int(scene.frame_start), int(scene.frame_end)
    frames = sorted({int(round(x)) for x in np.linspace(lo, hi, PROBE_FRAMES)})
    if not varies:
        return frames
    h = hashlib.sha256(f"{scene.name}|{lo}|{hi}".encode())
    path = Path(bpy.data.filepath) if bpy.data.filepath else None
    if path is not None and path.is_file():
        with open(path, "rb") as fh:
            h.update(fh.read(1 << 22))
    seed = h.digest()
    extra = []
    for i, (a, b) in enumerate(zip(frames, frames[1:], strict=False)):
        if b - a > 1:
            extra.append(a + 1 + seed[i % len(seed)] % (b - a - 1))
    return sorted(set(frames) | set(extra))


View = tuple[int, float, "tuple[float, ...] | None"]  # (frame, projected px, box or None when no box bounds it)


def _views(scene: Any, names: list[str], frames: list[int]) -> dict[str, list[View]]:
    """{name: [(frame, projected px, box or None when no box bounds it)]} on each of `frames`."""
    import bpy

    views: dict[str, list[View]] = {}
    for f in frames:
        scene.frame_set(f)
        dg = bpy.context.evaluated_depsgraph_get()
        for n in names:
            ob = scene.objects.get(n)
            if ob is None:
                continue
            pb = projected_box(scene, ob)
            px = 0.0 if pb is None else _area(pb[0])
            if ob.type == "MESH" and not len(ob.evaluated_get(dg).data.vertices):
                px = 0.0  # no geometry on this frame (a Build modifier, geometry nodes): judged where it has some
            views.setdefault(n, []).append((f, px, None if pb is None or pb[1] else pb[0]))  # None: render it alone
    return views


def _best_frames(views: dict[str, list[tuple[int, float, Any]]]) -> dict[str, tuple[int, float, Any]]:
    """For each object the view where its projected box is largest. A moving body is judged where the camera
    sees it best (before, every object was judged on the first frame, where a ball that rolls into view later
    was "out of view", so a ball hidden by its shading that topples the dominoes was never judged)."""
    return {n: max(v, key=lambda x: x[1]) for n, v in views.items()}


def _passes(items: list[tuple[str, int, Any]]) -> list[tuple[int, list[str]]]:
    """Group the (object, frame, box) views to judge into probe renders: on one frame, objects whose boxes do not
    overlap (a pixel apart) share a render, each judged inside its own box, which its neighbours' pixels cannot
    reach. Static colliders first, in the order given."""
    out: list[tuple[int, list[str], list[tuple[float, ...]]]] = []
    for n, f, bx in items:
        if bx is None:  # no box that bounds it: alone
            out.append((f, [n], [(-1e9, -1e9, 1e9, 1e9)]))
            continue
        for frame, group, boxes in out:
            if frame == f and not any(bx[0] < o[2] + 1 and o[0] < bx[2] + 1 and bx[1] < o[3] + 1 and o[1] < bx[3] + 1
                                      for o in boxes):
                group.append(n)
                boxes.append(bx)
                break
        else:
            out.append((f, [n], [bx]))
    return [(f, g) for f, g, _ in out]


def _less_seen(rec: dict[str, Any], prev: dict[str, Any]) -> bool:
    """Whether view `rec` shows the object less than `prev` (an unreadable render never replaces a reading)."""
    if rec.get("covered_px") is None:
        return False
    if prev.get("covered_px") is None or rec["invisible"] and not prev["invisible"]:
        return True
    return not prev["invisible"] and rec["covered_px"] / max(rec["expected_px"], 1.0) < \
        prev["covered_px"] / max(prev["expected_px"], 1.0)


def _size(scene: Any) -> tuple[int, int]:
    r = scene.render
    return (max(1, int(r.resolution_x * VIS_PERCENT / 100)), max(1, int(r.resolution_y * VIS_PERCENT / 100)))


def picture_composed(scene: Any) -> bool:
    """Whether the final picture is made by more than one view layer's render: a compositor in use, or more than
    one view layer that renders. Then even Workbench's settings do not say what a frame shows (a compositor can
    output a layer from which a collider is excluded), so Workbench scenes are probed too."""
    r = scene.render
    comp = getattr(scene, "compositing_node_group", None) or getattr(scene, "node_tree", None)
    return bool((r.use_compositing and comp is not None and len(comp.nodes) > 0)
                or len(rendering_view_layers(scene)) > 1)


def _probe_render(bpy: Any, cv2: Any, scene: Any, geo: list[Any], show: set[str], path: Path) -> Any:
    """Render the current frame with only the geometry objects in `show`; the picture (BGR) or None."""
    for o in geo:
        o.hide_render = o.name not in show
    scene.render.filepath = str(path)
    with no_file_outputs(), bpy.context.temp_override(scene=scene):
        bpy.ops.render.render(write_still=True, scene=scene.name)
    return cv2.imread(str(path), cv2.IMREAD_COLOR)


def _probe_items(names: list[str], views: dict[str, Any], best: dict[str, Any], varies: bool, engine: str,
                 out: dict[str, dict[str, Any]]) -> list[tuple[str, int, Any]]:
    """(name, frame, box) to probe-render: each object on its best frame, or on every frame where it is in view
    when the scene's look varies (hidden on one is hidden); one too small to judge gets its record in `out`."""
    items: list[tuple[str, int, Any]] = []
    for name in names:
        if name not in best:
            continue
        frame, expected, bx = best[name]
        if expected < MIN_EXPECTED_PX:
            out[name] = {"covered_px": None, "expected_px": round(expected, 1), "invisible": False,
                         "engine": engine, "why": "too small or out of the camera's view to judge"}
        elif varies:
            items += [(name, f, b) for f, px, b in views[name] if px >= MIN_EXPECTED_PX]
        else:
            items.append((name, frame, bx))
    return items


def _probe_record(img: Any, base: Any, expected: float, bx: Any, group_size: int, engine: str, frame: int,
                  k: int) -> dict[str, Any]:
    """What one object adds to the picture on one probe render: pixels that differ from the render without any
    geometry (only inside its own box when the render is shared with other objects)."""
    if img is None or base is None or img.shape != base.shape:
        return {"covered_px": None, "expected_px": round(expected, 1), "invisible": False,
                "engine": engine, "why": "the probe render could not be read"}
    shows = np.abs(img.astype(np.int16) - base.astype(np.int16)).max(axis=2) > LEVEL_SEEN
    if bx is not None and group_size > 1:  # shared render: only its own box is its
        x0, y0 = max(0, int(np.floor(bx[0])) - 1), max(0, int(np.floor(bx[1])) - 1)
        shows = shows[y0:int(np.ceil(bx[3])) + 1, x0:int(np.ceil(bx[2])) + 1]
    covered = int(shows.sum())
    return {"covered_px": covered, "expected_px": round(expected, 1), "engine": engine,
            "frame": frame, "probe_render": k, "shared_render_with": group_size - 1,
            "invisible": covered <= max(INVISIBLE_PX, INVISIBLE_SHARE * expected)}


def _keep_least_seen(out: dict[str, dict[str, Any]], name: str, rec: dict[str, Any]) -> None:
    """The frame an object shows least on is its record; the frames judged are counted."""
    prev = out.get(name)
    if prev is None or "judged_frames" not in prev or _less_seen(rec, prev):
        rec["judged_frames"] = (prev or {}).get("judged_frames", 0) + 1
        out[name] = rec
    else:
        prev["judged_frames"] += 1


def coverage(scene: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    """Render each named object alone; {name: {"covered_px", "expected_px", "invisible", "engine"}}.

    The scene's render settings and every object's render visibility are put back afterwards (the panel runs
    this on the artist's live scene)."""
    import bpy
    from physcodegym.probes.audit.render_match import restore_settings

    out: dict[str, dict[str, Any]] = {}
    if scene.camera is None or not names or (scene.render.engine == "BLENDER_WORKBENCH"
                                             and not picture_composed(scene)):
        return out
    r = scene.render
    ims = r.image_settings
    engine = r.engine if not r.engine.startswith("BLENDER_EEVEE") else "CYCLES"
    saved: list[tuple[Any, str, Any]] = [
        (r, "engine", r.engine), (r, "resolution_percentage", r.resolution_percentage), (r, "filepath", r.filepath),
        (r, "use_sequencer", r.use_sequencer), (ims, "media_type", ims.media_type),
        (ims, "file_format", ims.file_format), (ims, "color_mode", ims.color_mode)]
    if engine == "CYCLES":
        saved += [(scene.cycles, "samples", scene.cycles.samples),
                  (scene.cycles, "use_denoising", scene.cycles.use_denoising)]
    geo = [o for o in scene.objects if o.type in ("MESH", "CURVE", "SURFACE", "META", "FONT", "CURVES",
                                                   "POINTCLOUD", "VOLUME", "GREASEPENCIL")]
    hide0 = {o.name: o.hide_render for o in geo}
    cur = scene.frame_current
    # a keyed or driven hide_render would undo the probe's own (each render evaluates the frame again): the
    # empty render then showed a keyed shelf and the shelf "added nothing"; muted for the probe, put back after
    muted = [fc for o in geo for fc in id_curves(o) if fc.data_path == "hide_render" and not fc.mute]
    import cv2

    with tempfile.TemporaryDirectory(prefix="pcg_vis_") as td:
        try:
            for fc in muted:
                fc.mute = True
            r.engine = engine
            if engine == "CYCLES":
                scene.cycles.samples = VIS_SAMPLES
                scene.cycles.use_denoising = False
            r.resolution_percentage = VIS_PERCENT
            # through the scene's own compositor (and its view layers and film) as the frames were made: what the
            # object adds to the final picture, against the same picture without any geometry. The sequencer is
            # left out (a strip showing another scene would hide everything; the render check reports that).
            r.use_sequencer = False
            ims.media_type = "IMAGE"
            ims.file_format = "PNG"
            ims.color_mode = "RGB"
            empty: dict[int, Any] = {}
            varies = bool(appearance_varies(scene))
            views = _views(scene, names, _probe_frames(scene, varies))
            best = _best_frames(views)
            items = _probe_items(names, views, best, varies, engine, out)
            box_at = {(n, f): (px, b) for n, v in views.items() for f, px, b in v}
            cap = MAX_PASSES * (3 if varies else 1)
            for k, (frame, group) in enumerate(_passes(items)):
                if k >= cap:
                    for name in group:
                        out.setdefault(name, {"covered_px": None, "expected_px": round(best[name][1], 1),
                                              "invisible": False, "engine": engine,
                                              "why": f"not judged: more than {cap} probe renders"})
                    continue
                if scene.frame_current != frame:
                    scene.frame_set(frame)
                if frame not in empty:
                    empty[frame] = _probe_render(bpy, cv2, scene, geo, set(), Path(td) / f"empty_{frame}.png")
                img = _probe_render(bpy, cv2, scene, geo, set(group), Path(td) / f"{k:04d}.png")
                base = empty[frame]
                for name in group:
                    expected, bx = box_at[(name, frame)]
                    _keep_least_seen(out, name, _probe_record(img, base, expected, bx, len(group), engine, frame, k))
        finally:
            for fc in muted:
                fc.mute = False
            for o in geo:
                o.hide_render = hide0[o.name]
            restore_settings(saved)
            scene.frame_set(cur)
    return out
