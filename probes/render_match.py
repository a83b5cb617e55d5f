"""Rendered frames vs the saved scene: the frames a program hands in must be renders of the scene it saves.

A program renders its frames and saves `scene.blend` itself, so nothing forces the two to be the same scene:
it could render a keyframed fake (or a time-warped render of a real simulation, frame i drawn from another
scene time) and then save a clean simulation. The audit and S_val read the saved scene; S_ssim and S_mot read
the frames. This check re-renders a few frames of the saved scene (its own engine and camera, at a quarter of
the size, few samples) and compares *where the picture changes* from the first frame, in the handed-in frames
and in the re-render. Motion masks, not pixels, so sample noise, denoising and a missing image texture do not
matter; a mover that is somewhere else on screen does. A frame agrees when the changed regions overlap
(each covered by the other within a pixel of tolerance); too many disagreeing frames give `scripted_motion`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

RENDER_PERCENT = 25  # re-render at this percentage of the scene's resolution (640x360 -> 160x90)
MATCH_FRAMES = 6  # frames re-rendered (evenly spaced after the first, which is the reference of both masks)
SLOW_ENGINE_FRAMES = 3  # ... with EEVEE, whose CPU renders take seconds even at 160x90 (measured 5-13 s a frame)
DIFF_LEVEL = 25  # levels (0-255) of any colour channel for a pixel to count as changed
MIN_CHANGED_PX = 12  # a frame where neither picture changes this much says nothing
AGREE_MIN = 0.4  # min(share of the frames' change covered by the re-render's, and the reverse) for a frame to agree
DISAGREE_FRAC = 0.5  # more than this share of the informative frames disagree: a finding
MAX_SAMPLES = 8  # Cycles samples / EEVEE TAA samples of the re-render (motion masks ignore sample noise)
STILL_SHARE = 0.3  # with every moving thing hidden and the camera held, a frame whose picture still changes by
# this share of its full re-render's change (and at least MIN_CHANGED_PX) changes with no motion


def _changed(stack: np.ndarray) -> np.ndarray:
    """(K, H, W, 3) int16 -> (K, H, W) bool: pixels that differ from the first image by more than DIFF_LEVEL."""
    return (np.abs(stack - stack[:1]) > DIFF_LEVEL).any(axis=3)


def _dilate(m: np.ndarray) -> np.ndarray:
    out = m.copy()
    out[1:] |= m[:-1]
    out[:-1] |= m[1:]
    out[:, 1:] |= m[:, :-1]
    out[:, :-1] |= m[:, 1:]
    return out


def agreement(a: np.ndarray, b: np.ndarray) -> float | None:
    """How well two change masks agree: min of the share of `a` within a pixel of `b` and the reverse; None when
    neither changes enough to say anything."""
    na, nb = int(a.sum()), int(b.sum())
    if na < MIN_CHANGED_PX and nb < MIN_CHANGED_PX:
        return None
    if na == 0 or nb == 0:
        return 0.0
    return float(min((a & _dilate(b)).sum() / na, (b & _dilate(a)).sum() / nb))


def _render(scene: Any, frames: list[int], out: Path, hide: list[str] | None = None,
            freeze_camera: bool = False) -> list[Path]:
    """Render `frames` of `scene` as it is saved (engine, camera, world), small and with few samples; the render
    settings are put back afterwards (the panel audits the artist's live scene). `hide`: objects left out of
    the render; `freeze_camera`: render every frame from the camera's pose on the first one."""
    import bpy

    r = scene.render
    ims = r.image_settings
    saved: list[tuple[Any, str, Any]] = [(r, "resolution_percentage", r.resolution_percentage),
                                         (r, "filepath", r.filepath), (ims, "media_type", ims.media_type),
                                         (ims, "file_format", ims.file_format), (ims, "color_mode", ims.color_mode)]
    if r.engine == "CYCLES":
        saved += [(scene.cycles, "samples", scene.cycles.samples)]
        scene.cycles.samples = min(scene.cycles.samples, MAX_SAMPLES)
    elif r.engine.startswith("BLENDER_EEVEE"):
        saved += [(scene.eevee, "taa_render_samples", scene.eevee.taa_render_samples)]
        scene.eevee.taa_render_samples = min(scene.eevee.taa_render_samples, MAX_SAMPLES)
    if r.engine == "CYCLES":
        saved += [(scene.cycles, "use_animated_seed", scene.cycles.use_animated_seed)]
        scene.cycles.use_animated_seed = False  # the same noise on every frame: only the scene's changes differ
    cur = scene.frame_current
    paths = []
    hidden = [o for o in (scene.objects.get(n) for n in hide or []) if o is not None and not o.hide_render]
    cam0 = scene.camera
    still = None
    try:
        for o in hidden:
            o.hide_render = True
        if freeze_camera and cam0 is not None:
            scene.frame_set(int(frames[0]))
            still = bpy.data.objects.new("_pcg_still_camera", cam0.data)
            scene.collection.objects.link(still)
            still.matrix_world = cam0.matrix_world.copy()
            scene.camera = still
        r.resolution_percentage = RENDER_PERCENT
        ims.media_type = "IMAGE"
        ims.file_format = "PNG"
        ims.color_mode = "RGB"
        for f in frames:
            scene.frame_set(int(f))
            p = out / f"{'still_' if hide else ''}{int(f):04d}.png"
            r.filepath = str(p)
            with bpy.context.temp_override(scene=scene):
                bpy.ops.render.render(write_still=True, scene=scene.name)
            paths.append(p)
    finally:
        for o in hidden:
            o.hide_render = False
        if still is not None:
            scene.camera = cam0
            bpy.data.objects.remove(still, do_unlink=True)
        restore_settings(saved)
        scene.frame_set(cur)
    return paths


def restore_settings(saved: list[tuple[Any, str, Any]]) -> None:
    """Put back (owner, attribute, value) render settings, last first (probes run on the artist's live scene)."""
    for owner, attr, val in reversed(saved):
        try:
            setattr(owner, attr, val)
        except (TypeError, AttributeError):  # pragma: no cover - a setting this build does not have
            pass


def render_match(scene: Any, samples: Any, frames_dir: Path, audit: Any) -> dict[str, Any]:
    """Re-render a few frames of the saved scene and compare their change masks with the handed-in frames';
    adds a `scripted_motion` finding to `audit` when most informative frames disagree."""
    import cv2

    files = sorted(p for p in Path(frames_dir).glob("*.png") if p.stem.isdigit())
    n = len(samples.frames)
    if len(files) < 2:
        return {"state": "skipped", "reason": f"{len(files)} numbered PNG frames"}
    if n < 2 or scene.camera is None:  # the saved scene cannot have made these frames: no re-render to hide behind
        why = "has no camera" if scene.camera is None else f"has {n} frame(s) against {len(files)} handed-in frames"
        _cannot_render(audit, samples, f"the saved scene {why}", len(files))
        return {"state": "mismatch", "reason": f"the saved scene {why}"}
    # frame file k (1-based) is the k-th frame of the scene's range
    k = SLOW_ENGINE_FRAMES if scene.render.engine.startswith("BLENDER_EEVEE") else MATCH_FRAMES
    ks = np.unique(np.linspace(0, min(len(files), n) - 1, k + 1).astype(int))
    scene_frames = [int(samples.frames[k]) for k in ks]
    with tempfile.TemporaryDirectory(prefix="pcg_render_match_") as td:
        try:
            rendered = _render(scene, scene_frames, Path(td))
        except RuntimeError as e:  # it rendered for the program with the same Blender: not a reason to pass
            _cannot_render(audit, samples, f"re-rendering the saved scene failed ({e})", len(files))
            return {"state": "error", "reason": f"re-render failed: {e}"}
        re_imgs, sub_imgs = [], []
        for k, p in zip(ks, rendered, strict=True):
            a = cv2.imread(str(p), cv2.IMREAD_COLOR)
            b = cv2.imread(str(files[k]), cv2.IMREAD_COLOR)
            if a is None or b is None:
                return {"state": "error", "reason": f"cannot decode {p if a is None else files[k]}"}
            h, w = a.shape[:2]
            re_imgs.append(a)
            sub_imgs.append(cv2.resize(b, (w, h), interpolation=cv2.INTER_AREA))
        hide = _movers(scene, samples, audit)
        try:
            still_paths = _render(scene, scene_frames, Path(td), hide=hide, freeze_camera=True)
        except RuntimeError as e:
            return {"state": "error", "reason": f"re-render without the moving things failed: {e}"}
        still_imgs = [cv2.imread(str(p), cv2.IMREAD_COLOR) for p in still_paths]
        if any(im is None for im in still_imgs):
            return {"state": "error", "reason": "cannot decode the re-render without the moving things"}
    re_c = _changed(np.stack(re_imgs).astype(np.int16))
    still_c = _changed(np.stack(still_imgs).astype(np.int16))
    sub_c = _changed(np.stack(sub_imgs).astype(np.int16))
    rows = []
    for i in range(1, len(ks)):
        ag = agreement(sub_c[i], re_c[i])
        rows.append({"frame": scene_frames[i], "file": files[ks[i]].name, "agreement": None if ag is None else
                     round(ag, 4), "changed_px_frames": int(sub_c[i].sum()), "changed_px_rerender": int(re_c[i].sum())})
        rows[-1]["changed_px_without_movers"] = int(still_c[i].sum())
    _still_finding(audit, scene, samples, rows, still_c, re_c, ks, hide)
    told = [r for r in rows if r["agreement"] is not None]
    bad = [r for r in told if r["agreement"] < AGREE_MIN]
    doc = {"state": "ok", "frames": rows, "engine": scene.render.engine, "size": list(re_c.shape[1:][::-1]),
           "disagree": len(bad), "informative": len(told), "hidden_for_still_render": hide}
    if told and len(bad) > DISAGREE_FRAC * len(told):
        movers = _moving_objects(audit)
        audit.add(
            kind="scripted_motion",
            objects=movers[:8],
            frames=[bad[0]["frame"], bad[-1]["frame"]],
            value=round(float(np.mean([r["agreement"] for r in bad])), 4),
            unit="agreement of change masks",
            message=(f"the handed-in frames are not renders of the saved scene: on {len(bad)} of {len(told)} frames "
                     f"the picture changes elsewhere than in a re-render of scene.blend (agreement below {AGREE_MIN}); "
                     "the video shows motion the saved simulation does not produce"),
            evidence={"cause": "render_mismatch", "frames": rows, "agree_min": AGREE_MIN, "diff_level": DIFF_LEVEL},
        )
    return doc


def _movers(scene: Any, samples: Any, audit: Any) -> list[str]:
    """What may change the picture legitimately: every moving object (not the camera, which is held instead) and
    every particle emitter (its particles move even where it does not)."""
    out = [n for n in audit.moving if audit.info.get(n, {}).get("type") != "CAMERA"]
    out += [k.split("/", 1)[0] for k in samples.particles]
    out += [o.name for o in scene.objects if len(getattr(o, "particle_systems", []))]
    return sorted(set(out) - {scene.camera.name if scene.camera else ""})


def _still_finding(audit: Any, scene: Any, samples: Any, rows: list[dict[str, Any]], still_c: np.ndarray,
                   re_c: np.ndarray, ks: np.ndarray, hide: list[str]) -> None:
    """The picture changes with every moving thing hidden and the camera held: an animated texture, a video on a
    card, a sequencer or compositor image, animated light. Nothing in the simulation moves there."""
    bad = []
    for i in range(1, len(ks)):
        n_still, n_full = int(still_c[i].sum()), int(re_c[i].sum())
        if n_still >= MIN_CHANGED_PX and n_still >= STILL_SHARE * max(n_full, MIN_CHANGED_PX):
            bad.append(i)
    informative = [i for i in range(1, len(ks)) if int(re_c[i].sum()) >= MIN_CHANGED_PX or int(still_c[i].sum())]
    if not bad or len(bad) <= DISAGREE_FRAC * max(len(informative), 1):
        return
    region = still_c[bad].any(axis=0)
    objects = _static_under(scene, samples, audit, region) or ([scene.camera.name] if scene.camera else [])
    share = float(np.mean([still_c[i].sum() / max(re_c[i].sum(), 1) for i in bad]))
    audit.add(
        kind="scripted_motion",
        objects=objects,
        frames=[rows[bad[0] - 1]["frame"], rows[bad[-1] - 1]["frame"]],
        value=round(min(share, 1.0), 4),
        unit="share of the on-screen change",
        message=(f"the picture changes with every moving object hidden and the camera held (on {len(bad)} of "
                 f"{len(informative)} frames, {min(share, 1.0):.0%} of the change): an animated texture, image, "
                 "sequencer strip or light, not a simulation, makes it"),
        evidence={"cause": "change_without_motion", "hidden": hide, "frames": rows, "still_share": STILL_SHARE},
    )


def _static_under(scene: Any, samples: Any, audit: Any, region: np.ndarray) -> list[str]:
    """Rendered static objects whose first-frame screen box covers most of `region` (at most three)."""
    import cv2
    from physcodegym.probes import physics as ph
    from physcodegym.probes.screen import SCREEN_H, SCREEN_W, _boxes, _project

    reg = cv2.resize(region.astype(np.uint8), (SCREEN_W, SCREEN_H), interpolation=cv2.INTER_NEAREST).astype(bool)
    yy, xx = np.mgrid[0:SCREEN_H, 0:SCREEN_W]
    statics = [n for n in audit.geom.meshes if n not in audit.moving and ph.rendered(audit.info[n])]
    hits = []
    fidx = np.array([0])
    boxes = _boxes(audit.geom, statics, fidx)
    for n in statics:
        pr = _project(scene, samples, boxes[n], fidx)
        if pr is None or np.isnan(pr).all():
            continue
        (x0, y0), (x1, y1) = np.nanmin(pr[0], axis=0), np.nanmax(pr[0], axis=0)
        cover = int((reg & (xx >= x0) & (xx <= x1) & (yy >= y0) & (yy <= y1)).sum())
        if cover:
            hits.append((cover, n))
    return [n for _, n in sorted(hits, reverse=True)[:3]]


def _moving_objects(audit: Any) -> list[str]:
    """The moving objects a finding names (not the camera or lights)."""
    return sorted(n for n in audit.moving if audit.info.get(n, {}).get("type") not in ("CAMERA", "LIGHT"))


def _cannot_render(audit: Any, samples: Any, why: str, n_files: int) -> None:
    movers = _moving_objects(audit)
    frames = [int(samples.frames[0]), int(samples.frames[-1])] if len(samples.frames) else [1, n_files]
    audit.add(kind="scripted_motion", objects=movers[:8] or sorted(audit.info)[:1], frames=frames, value=0.0,
              unit="agreement of change masks",
              message=f"the {n_files} handed-in frames cannot be renders of the saved scene: {why}",
              evidence={"cause": "render_mismatch", "reason": why})
