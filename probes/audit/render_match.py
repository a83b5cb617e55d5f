"""Rendered frames vs the saved scene: the frames a program hands in must be renders of the saved scene.

A program renders its frames and saves `scene.blend` itself, so nothing forces the two to be the same scene:
it could render a keyframed fake (or a time-warped render of a real simulation, frame i drawn from another
scene time) and then save a clean simulation. The audit and S_val read the saved scene; S_ssim and S_mot read
the frames. This check re-renders frames of the saved scene (its own engine and camera, at a quarter of the
size, few samples) and compares *where the picture changes*, in the handed-in frames and in the re-render.
Motion masks, not pixels, so sample noise, denoising and a missing image texture do not matter; a mover that
is somewhere else on screen does.

Which frames: every frame the time budget allows. A fake may cover only a window of the video (the ball bounces
higher between two checked frames), so a handful of evenly spaced frames is not enough: frame 1 and
`MATCH_FRAMES` frames on a grid with a secret random phase come first, then the remaining frames in a secret
random order until `RENDER_BUDGET_S` is spent (Workbench re-renders 80-130 of a shipped task's 240 frames
when idle), `CYCLES_BUDGET_S` with Cycles (no denoiser: about 130), and at least `MIN_COVER` of the frames unless
`HARD_CAP_S` runs out. EEVEE scenes are re-rendered with Cycles standing in (EEVEE's CPU renders take seconds a
frame). The re-render with the moving things hidden follows the same order with `STILL_BUDGET_S`. A fake
window of a few frames among 240 is then compared on several of its frames, whichever they are. Both are drawn
at audit time from the operating system's random source, so a program cannot know which frames will be compared.

Two masks per frame:
- *since the first frame*: a wholesale swap (another scene's motion) changes other regions on most frames: more
  than `DISAGREE_FRAC` of the informative frames disagreeing is a finding;
- *since `LAG_FRAMES` earlier*: where a mover is now and was a moment ago. A fake confined to a window shares
  the first-frame footprint with the truth (both masks hold where the ball started, so the first kind agrees
  about half way), but not the current one: `RUN_MIN` consecutive compared frames where what the handed-in
  frames show changing is mostly not where the re-render changes is a finding too (one-sided, see `_covered`).
A frame disagrees when the changed regions do not overlap (each covered by the other within a pixel of
tolerance, below `AGREE_MIN`).
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.probes.scene.render_safety import no_file_outputs, no_stored_code

RENDER_PERCENT = 25  # re-render at this percentage of the scene's resolution (640x360 -> 160x90)
MATCH_FRAMES = 6  # frames always re-rendered after the first (on a grid with a random phase)
RENDER_BUDGET_S = 1.2  # s: more frames are re-rendered, in a random order, until this is spent (measured at 160x90:
# Workbench 0.009-0.015 s a frame (the render call itself; writing the PNG is 1 ms), so 80-130 of a shipped task's 240
# when idle)
CYCLES_BUDGET_S = 4.0  # s: the same with Cycles (0.03 s a frame at 160x90, 8 samples, no denoiser: about 130 of 240;
# a Cycles run spends 0.6 s a frame or more on its own renders)
STILL_BUDGET_S = 0.5  # s: ... and re-rendered again with the moving things hidden (the same order)
MIN_COVER = 1 / 8  # past its budget the re-render goes on to this share of the frames (30 of 240) ...
HARD_CAP_S = 45.0  # ... unless this is spent: a scene made slow to render cannot shrink the check to a few frames
SUBDIVISION_CAP = 1  # subdivision levels of the re-render (Simplify): cloth_drape's render level 2 made a 160x90
# Workbench frame cost 0.11 s, level 1 about half; the change masks agreed 0.995 at either (the render creates its
# depsgraph anew each frame, so the subdivision is re-evaluated every time)
STAND_IN = "CYCLES"  # EEVEE scenes are re-rendered with Cycles (EEVEE on a CPU: 5-13 s a frame at 160x90); the masks
# compare where each sequence changes, which the engine's shading does not move
LAG_FRAMES = 6  # scene frames between the two pictures of a "since a moment ago" mask
RUN_MIN = 3  # consecutive compared frames whose recent change disagrees: a fake window, not noise
DIFF_LEVEL = 25  # levels (0-255) of any colour channel for a pixel to count as changed
MIN_CHANGED_PX = 12  # a frame where neither picture changes this much says nothing
RUN_PX = 2 * MIN_CHANGED_PX  # a frame of a run changes at least this much in the handed-in frames
AGREE_MIN = 0.4  # min(share of the frames' change covered by the re-render's, and the reverse) for a frame to agree
AGREE_MIN_STAND_IN = 0.2  # ... when Cycles stands in for EEVEE: the engines shade edges and shadows differently
# (an honest EEVEE scene against its Cycles re-render: lowest agreement 0.52, since a moment ago 0.65; a mover
# drawn elsewhere agrees 0.0)
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


def _covered(moved: np.ndarray, explained: np.ndarray) -> float | None:
    """Share of the pixels that changed in the handed-in frames (`moved`) within a pixel of a change in the
    re-render (`explained`, at half the level: a change just above the level in one picture and just below it
    in the other is the same change; a waving flag's shading is mostly such changes). One-sided: the re-render
    may change more (a drop a pixel wide survives a native small render but not the averaging down of a full
    one), what the frames show moving must be where the saved scene moves. None below `RUN_PX` changed pixels
    (a sliver of shading says nothing about where a thing is)."""
    n = int(moved.sum())
    if n < RUN_PX:
        return None
    return float((moved & _dilate(explained)).sum() / n)


def frame_order(n: int, minimum: int, rng: random.Random) -> list[int]:
    """Indices 0..n-1 in the order they are re-rendered: 0 (the reference of the masks), then `minimum` on an even
    grid shifted by a random phase, then every other index in a random order (the caller stops when its time is
    spent). Drawn from `rng`: the audit passes the operating system's random source."""
    if n <= 1:
        return list(range(n))
    step = (n - 1) / max(minimum, 1)
    phase = rng.random() * step
    grid = sorted({min(n - 1, max(1, int(round(phase + k * step)))) for k in range(minimum)})
    rest = [i for i in range(1, n) if i not in set(grid)]
    rng.shuffle(rest)
    return [0, *grid, *rest]


def longest_run(flags: list[bool]) -> tuple[int, int]:
    """(start, length) of the longest run of True in `flags` ((0, 0) when there is none)."""
    best, start, cur = (0, 0), 0, 0
    for i, f in enumerate(flags):
        if f:
            if cur == 0:
                start = i
            cur += 1
            if cur > best[1]:
                best = (start, cur)
        else:
            cur = 0
    return best


def _render(scene: Any, frames: list[int], out: Path, hide: list[str] | None = None,
            freeze_camera: bool = False, budget_s: float | None = None, minimum: int = 0,
            cover: int = 0) -> list[Path]:
    """Render `frames` of `scene` as it is saved (engine, camera, world), small and with few samples; the render
    settings are put back afterwards (the panel audits the artist's live scene). `hide`: objects left out of
    the render; `freeze_camera`: render every frame from the camera's pose on the first one; `budget_s`: stop
    after the first `minimum` frames once this many seconds are spent, but not before `cover` frames unless
    HARD_CAP_S is spent (the paths say which were rendered). EEVEE renders with the Cycles stand-in."""
    import bpy

    r = scene.render
    ims = r.image_settings
    saved: list[tuple[Any, str, Any]] = [(r, "resolution_percentage", r.resolution_percentage),
                                         (r, "filepath", r.filepath), (ims, "media_type", ims.media_type),
                                         (ims, "file_format", ims.file_format), (ims, "color_mode", ims.color_mode)]
    if r.engine.startswith("BLENDER_EEVEE"):
        saved += [(r, "engine", r.engine)]
        r.engine = STAND_IN
    if r.engine == "CYCLES":
        saved += [(scene.cycles, "samples", scene.cycles.samples), (scene.cycles, "device", scene.cycles.device)]
        scene.cycles.samples = min(scene.cycles.samples, MAX_SAMPLES)
        scene.cycles.device = "CPU"
        saved += [(scene.cycles, "use_animated_seed", scene.cycles.use_animated_seed),
                  (scene.cycles, "use_denoising", scene.cycles.use_denoising)]
        scene.cycles.use_animated_seed = False  # the same noise on every frame: only the scene's changes differ
        scene.cycles.use_denoising = False  # the denoiser was 9/10 of a 160x90 frame's cost (0.25 s of 0.28 s)
    if r.engine == "BLENDER_WORKBENCH":
        # The handed-in frames are shrunk by area averaging (cv2.INTER_AREA over 4x4 pixels), which smooths their
        # edges whatever the program's anti-aliasing; a 160x90 re-render without it puts edges a pixel off. An
        # honest scene saved with render_aa "OFF" agreed 0.40 on its worst frame (AGREE_MIN's edge) and 0.97 with
        # the re-render anti-aliased (8 samples; the same scene rendered with them: 0.973), 29 frames compared.
        saved += [(scene.display, "render_aa", scene.display.render_aa)]
        scene.display.render_aa = "8"
    if _subdivision_only_at_tails(scene):
        saved += [(r, "use_simplify", r.use_simplify),
                  (r, "simplify_subdivision_render", r.simplify_subdivision_render)]
        cap = r.simplify_subdivision_render if r.use_simplify else SUBDIVISION_CAP
        r.use_simplify = True
        r.simplify_subdivision_render = min(cap, SUBDIVISION_CAP)
    cur = scene.frame_current
    paths = []
    hidden = [o for o in (scene.objects.get(n) for n in hide or []) if o is not None and not o.hide_render]
    cam0 = scene.camera
    still = None
    with no_file_outputs(), no_stored_code():  # no File Output writes, no stored Python on render (render_safety)
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
            t0 = time.perf_counter()
            for j, f in enumerate(frames):
                spent = time.perf_counter() - t0
                if budget_s is not None and j >= minimum and spent > budget_s and (j >= cover or spent > HARD_CAP_S):
                    break
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


def _subdivision_only_at_tails(scene: Any) -> bool:
    """Whether capping subdivision in the re-render changes nothing but smoothness: every Subdivision Surface
    or Multiresolution modifier in the scene is at the end of its stack. One before a cloth, collision, particle
    or geometry-nodes modifier would change what that modifier reads (a cloth baked on the subdivided mesh no
    longer matches its cache), so then the scene is re-rendered as it is."""
    subdiv = {"SUBSURF", "MULTIRES"}
    for o in scene.objects:
        mods = [m.type for m in getattr(o, "modifiers", [])]
        first = next((i for i, t in enumerate(mods) if t in subdiv), None)
        if first is not None and any(t not in subdiv for t in mods[first:]):
            return False
    return True


def restore_settings(saved: list[tuple[Any, str, Any]]) -> None:
    """Put back (owner, attribute, value) render settings, last first (probes run on the artist's live scene)."""
    for owner, attr, val in reversed(saved):
        try:
            setattr(owner, attr, val)
        except (TypeError, AttributeError):  # pragma: no cover - a setting this build does not have
            pass


def render_match(scene: Any, samples: Any, frames_dir: Path, audit: Any,
                 rng: random.Random | None = None) -> dict[str, Any]:
    """Re-render frames of the saved scene and compare their change masks with the handed-in frames'; adds a
    `scripted_motion` finding to `audit` when most informative frames disagree, or a run of frames does.
    `rng`: where the frame choice comes from (the operating system's random source unless a test passes one)."""
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
    minimum = MATCH_FRAMES
    order = frame_order(min(len(files), n), minimum, rng or random.SystemRandom())
    budget = RENDER_BUDGET_S if scene.render.engine == "BLENDER_WORKBENCH" else CYCLES_BUDGET_S
    cover = int(np.ceil(MIN_COVER * len(order)))
    with tempfile.TemporaryDirectory(prefix="pcg_render_match_") as td:
        try:
            rendered = _render(scene, [int(samples.frames[k]) for k in order], Path(td),
                               budget_s=budget, minimum=minimum + 1, cover=cover)
        except RuntimeError as e:  # it rendered for the program with the same Blender: not a reason to pass
            _cannot_render(audit, samples, f"re-rendering the saved scene failed ({e})", len(files))
            return {"state": "error", "reason": f"re-render failed: {e}"}
        got = sorted(zip(order[: len(rendered)], rendered, strict=True))  # by frame, the first frame first
        ks = np.array([k for k, _ in got])
        scene_frames = [int(samples.frames[k]) for k in ks]
        re_imgs, sub_imgs = [], []
        for k, p in got:
            a = cv2.imread(str(p), cv2.IMREAD_COLOR)
            b = cv2.imread(str(files[k]), cv2.IMREAD_COLOR)
            if a is None or b is None:
                return {"state": "error", "reason": f"cannot decode {p if a is None else files[k]}"}
            h, w = a.shape[:2]
            re_imgs.append(a)
            sub_imgs.append(cv2.resize(b, (w, h), interpolation=cv2.INTER_AREA))
        hide = _movers(scene, samples, audit)
        # the same order again (the first frame, the grid, then the random rest), with a smaller budget
        still_order = order[: len(rendered)]
        try:
            still_paths = _render(scene, [int(samples.frames[k]) for k in still_order], Path(td), hide=hide,
                                  freeze_camera=True, budget_s=STILL_BUDGET_S, minimum=minimum + 1)
        except RuntimeError as e:
            return {"state": "error", "reason": f"re-render without the moving things failed: {e}"}
        still_by_k = {k: cv2.imread(str(p), cv2.IMREAD_COLOR) for k, p in zip(still_order, still_paths, strict=False)}
        if any(im is None for im in still_by_k.values()):
            return {"state": "error", "reason": "cannot decode the re-render without the moving things"}
    re_s, sub_s = np.stack(re_imgs).astype(np.int16), np.stack(sub_imgs).astype(np.int16)
    re_c, sub_c = _changed(re_s), _changed(sub_s)
    has_still = np.array([int(k) in still_by_k for k in ks])
    blank = np.zeros_like(re_imgs[0])
    still_s = np.stack([still_by_k.get(int(k), blank) for k in ks]).astype(np.int16)
    still_c = _changed(still_s) & has_still[:, None, None]
    lag = _lagged(scene_frames)
    rows = []
    for i in range(1, len(ks)):
        ag = agreement(sub_c[i], re_c[i])
        row = {"frame": scene_frames[i], "file": files[ks[i]].name, "agreement": None if ag is None else round(ag, 4),
               "changed_px_frames": int(sub_c[i].sum()), "changed_px_rerender": int(re_c[i].sum()),
               "changed_px_without_movers": int(still_c[i].sum()) if has_still[i] else None}
        j = lag[i]
        if j is not None:
            sub_d = np.abs(sub_s[i] - sub_s[j]).max(axis=2)
            re_d = np.abs(re_s[i] - re_s[j]).max(axis=2)
            sub_r = sub_d > DIFF_LEVEL
            ag_r = _covered(sub_r, re_d > DIFF_LEVEL // 2)
            row.update(since_frame=scene_frames[j], recent_agreement=None if ag_r is None else round(ag_r, 4))
        rows.append(row)
    _still_finding(audit, scene, samples, rows, still_c, re_c, has_still, hide)
    told = [r for r in rows if r["agreement"] is not None]
    eng = scene.render.engine
    agree_min = AGREE_MIN_STAND_IN if eng.startswith("BLENDER_EEVEE") else AGREE_MIN
    bad = [r for r in told if r["agreement"] < agree_min]
    recent = [r for r in rows if r.get("recent_agreement") is not None]
    run_at, run_len = longest_run([r["recent_agreement"] < agree_min for r in recent])
    window = recent[run_at: run_at + run_len]
    doc = {"state": "ok", "frames": rows, "engine": eng, "size": list(re_c.shape[1:][::-1]),
           "rendered_with": STAND_IN if eng.startswith("BLENDER_EEVEE") else eng,
           "compared": len(rows), "compared_without_movers": int(has_still[1:].sum()),
           "of_frames": min(len(files), n), "disagree": len(bad), "informative": len(told),
           "recent_disagree_run": [window[0]["frame"], window[-1]["frame"]] if window else None,
           "hidden_for_still_render": hide}
    if told and len(bad) > DISAGREE_FRAC * len(told):
        _mismatch(audit, bad, "agreement", len(rows), agree_min,
                  f"on {len(bad)} of {len(told)} frames the picture changes elsewhere than in a re-render of "
                  f"scene.blend (agreement below {agree_min}); the video shows motion the saved simulation does not "
                  "produce", {"frames": bad[:40]})
    elif run_len >= RUN_MIN:
        _mismatch(audit, window, "recent_agreement", len(rows), agree_min,
                  f"frames {window[0]['frame']}-{window[-1]['frame']}: on {run_len} consecutive compared frames the "
                  f"picture changes elsewhere than in a re-render of scene.blend over the last {LAG_FRAMES}+ frames "
                  f"(agreement below {agree_min}); the video shows motion there that the saved simulation does not "
                  "produce", {"window": window[:40], "run_min": RUN_MIN, "lag_frames": LAG_FRAMES})
    return doc


def _mismatch(audit: Any, rows: list[dict[str, Any]], key: str, compared: int, agree_min: float, says: str,
              evidence: dict[str, Any]) -> None:
    """`scripted_motion` (cause `render_mismatch`) on the disagreeing `rows`, valued by their mean `key`."""
    audit.add(
        kind="scripted_motion",
        objects=_moving_objects(audit)[:8],
        frames=[rows[0]["frame"], rows[-1]["frame"]],
        value=round(float(np.mean([r[key] for r in rows])), 4),
        unit="agreement of change masks",
        message=f"the handed-in frames are not renders of the saved scene: {says}",
        evidence={"cause": "render_mismatch", **evidence, "compared": compared, "agree_min": agree_min,
                  "diff_level": DIFF_LEVEL},
    )


def _lagged(frames: list[int]) -> list[int | None]:
    """For each compared frame (sorted), the index of the latest compared frame at least `LAG_FRAMES` earlier;
    None where there is none."""
    out: list[int | None] = []
    j = 0
    for i, f in enumerate(frames):
        while j + 1 < i and frames[j + 1] <= f - LAG_FRAMES:
            j += 1
        out.append(j if j < i and frames[j] <= f - LAG_FRAMES else None)
    return out


def _movers(scene: Any, samples: Any, audit: Any) -> list[str]:
    """What may change the picture legitimately: every moving object (not the camera, which is held instead) and
    every particle emitter (its particles move even where it does not)."""
    out = [n for n in audit.moving if audit.info.get(n, {}).get("type") != "CAMERA"]
    out += [k.split("/", 1)[0] for k in samples.particles]
    out += [o.name for o in scene.objects if len(getattr(o, "particle_systems", []))]
    return sorted(set(out) - {scene.camera.name if scene.camera else ""})


def _still_finding(audit: Any, scene: Any, samples: Any, rows: list[dict[str, Any]], still_c: np.ndarray,
                   re_c: np.ndarray, has_still: np.ndarray, hide: list[str]) -> None:
    """The picture changes with every moving thing hidden and the camera held: an animated texture, a video on a
    card, a sequencer or compositor image, animated light. Nothing in the simulation moves there. Judged on the
    frames re-rendered that way (`has_still`): most of them, or a run of `RUN_MIN` consecutive ones."""
    idx = [i for i in range(1, len(has_still)) if has_still[i]]
    flags = []
    for i in idx:
        n_still, n_full = int(still_c[i].sum()), int(re_c[i].sum())
        flags.append(n_still >= MIN_CHANGED_PX and n_still >= STILL_SHARE * max(n_full, MIN_CHANGED_PX))
    bad = [i for i, f in zip(idx, flags, strict=True) if f]
    informative = [i for i in idx if int(re_c[i].sum()) >= MIN_CHANGED_PX or int(still_c[i].sum())]
    if not bad:
        return
    if len(bad) <= DISAGREE_FRAC * max(len(informative), 1):  # not most frames: a run of them (a window) still is
        at, length = longest_run(flags)
        if length < RUN_MIN:
            return
        bad = idx[at: at + length]
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
        evidence={"cause": "change_without_motion", "hidden": hide, "frames": [rows[i - 1] for i in bad][:40],
                  "compared": len(rows), "still_share": STILL_SHARE},
    )


def _static_under(scene: Any, samples: Any, audit: Any, region: np.ndarray) -> list[str]:
    """Rendered static objects whose first-frame screen box covers most of `region` (at most three)."""
    import cv2
    from physcodegym.probes.scene import physics as ph
    from physcodegym.probes.scene.screen import SCREEN_H, SCREEN_W, _boxes, _project

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
