"""Rendered motion vs native motion: objects that move on screen but are static in the saved scene.

Handlers do not survive in a `.blend`, so a program that moved an object from a frame-change handler
leaves a saved scene where that object never moves, while its rendered frames show it moving. This
check projects every natively moving object's world AABB through the scene camera (numpy, all frames
at once), takes the screen regions that change in the rendered frames (downscaled grayscale difference
against the first frame, decoded once), and attributes changed pixels that no native motion explains
to the static objects whose first-frame footprint they cover.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

SCREEN_W, SCREEN_H = 160, 90  # analysis resolution
DIFF_LEVEL = 25  # grey levels (0-255) for a pixel to count as changed
MAX_FRAMES = 48  # frames decoded (evenly spaced)
UNEXPLAINED_MIN = 0.25  # fraction of a static object's footprint that changes with no native mover there


def _project(scene: Any, samples: Any, pts: np.ndarray, fidx: np.ndarray) -> np.ndarray | None:
    """(K, N, 3) world points at sample indices `fidx` -> (K, N, 2) pixels at SCREEN_W x SCREEN_H (camera per frame)."""
    import bpy

    cam = scene.camera
    if cam is None:
        return None
    dg = bpy.context.evaluated_depsgraph_get()
    rx, ry = scene.render.resolution_x, scene.render.resolution_y
    proj = np.array(cam.calc_matrix_camera(dg, x=rx, y=ry, scale_x=scene.render.pixel_aspect_x, scale_y=scene.render.pixel_aspect_y))
    if cam.name in samples.names:
        cw = samples.matrices[samples.index(cam.name)][np.asarray(fidx)]  # (K, 4, 4): the camera at those frames
    else:
        cw = np.repeat(np.array(cam.matrix_world)[None], pts.shape[0], axis=0)
    view = np.linalg.inv(cw)
    h = np.concatenate([pts, np.ones(pts.shape[:2] + (1,))], axis=2)
    clip = np.einsum("ij,fjk,fnk->fni", proj, view, h)
    w = clip[..., 3:4]
    w = np.where(np.abs(w) < 1e-9, 1e-9, w)
    ndc = clip[..., :2] / w
    px = (ndc[..., 0] + 1) / 2 * SCREEN_W
    py = (1 - (ndc[..., 1] + 1) / 2) * SCREEN_H
    out = np.stack([px, py], axis=-1)
    out[(clip[..., 3] <= 0)] = np.nan  # behind the camera
    return out


def _boxes(geom: Any, names: list[str], fidx: np.ndarray) -> dict[str, np.ndarray]:
    out = {}
    for n in names:
        b = geom.aabbs(n)[fidx]  # (K, 2, 3)
        c = np.stack([np.stack([b[:, i, 0], b[:, j, 1], b[:, k, 2]], axis=1) for i in (0, 1) for j in (0, 1) for k in (0, 1)], axis=1)
        out[n] = c  # (K, 8, 3)
    return out


def screen_motion_check(scene: Any, samples: Any, frames_dir: Path, audit: Any) -> dict[str, Any]:
    """Compare rendered frame changes with native motion; adds `scripted_motion` findings to `audit`."""
    import cv2

    files = sorted(p for p in Path(frames_dir).glob("*.png") if p.stem.isdigit())
    if len(files) < 2:
        return {"state": "skipped", "reason": f"{len(files)} numbered PNG frames in {frames_dir}"}
    sel = np.unique(np.linspace(0, len(files) - 1, num=min(MAX_FRAMES, len(files))).astype(int))
    files = [files[i] for i in sel]
    fnums = np.array([int(p.stem) for p in files])
    fidx = np.array([int(np.argmin(np.abs(samples.frames - f))) for f in fnums])
    imgs = []
    for p in files:
        im = cv2.imread(str(p), cv2.IMREAD_GRAYSCALE)
        if im is None:
            return {"state": "error", "reason": f"cannot decode {p}"}
        imgs.append(cv2.resize(im, (SCREEN_W, SCREEN_H), interpolation=cv2.INTER_AREA))
    stack = np.stack(imgs).astype(np.int16)
    changed = (np.abs(stack - stack[0]) > DIFF_LEVEL).any(axis=0)
    geom = audit.geom
    movers = [n for n in geom.meshes if n in audit.moving]
    statics = [n for n in geom.meshes if n not in audit.moving and audit.info[n].get("hide_render") is False]
    explained = np.zeros_like(changed)
    yy, xx = np.mgrid[0:SCREEN_H, 0:SCREEN_W]
    boxes = _boxes(geom, movers + statics, fidx)
    for n in movers:
        pr = _project(scene, samples, boxes[n], fidx)
        if pr is None:
            return {"state": "skipped", "reason": "scene has no camera"}
        for k in range(len(fidx)):
            p = pr[k]
            if np.isnan(p).all():
                continue
            x0, y0 = np.nanmin(p, axis=0) - 2
            x1, y1 = np.nanmax(p, axis=0) + 2
            explained |= (xx >= x0) & (xx <= x1) & (yy >= y0) & (yy <= y1)
    unexplained = changed & ~explained
    suspects = []
    for n in statics:
        pr = _project(scene, samples, boxes[n][:1], fidx[:1])
        if pr is None or np.isnan(pr).all():
            continue
        x0, y0 = np.nanmin(pr[0], axis=0)
        x1, y1 = np.nanmax(pr[0], axis=0)
        foot = (xx >= x0) & (xx <= x1) & (yy >= y0) & (yy <= y1)
        area = int(foot.sum())
        if area < 4:
            continue
        frac = float((unexplained & foot).sum() / area)
        if frac >= UNEXPLAINED_MIN:
            suspects.append((n, frac))
    for n, frac in suspects:
        audit.add(
            kind="scripted_motion",
            objects=[n],
            frames=[int(fnums[0]), int(fnums[-1])],
            value=round(frac, 4),
            unit="fraction of footprint",
            message=f"{n} is static in the saved scene but {frac:.0%} of its on-screen footprint changes in the rendered frames "
            "with no native motion there (moved by a handler or script that the .blend does not keep)",
            evidence={"frames_checked": [int(f) for f in fnums], "analysis_size": [SCREEN_W, SCREEN_H], "diff_level": DIFF_LEVEL},
        )
    return {
        "state": "ok",
        "frames_checked": len(files),
        "changed_fraction": round(float(changed.mean()), 5),
        "unexplained_fraction": round(float(unexplained.mean()), 5),
        "suspects": [{"object": n, "fraction": round(f, 4)} for n, f in suspects],
    }
