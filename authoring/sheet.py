"""A contact sheet of the task set and a measure of how different its scenes are (no bpy).

Why: the benchmark's value rests on tasks that are different scenes, not recolours of one. A picture of every
task's reference at one moment shows that at a glance; the numbers say it without a viewer. Each reference is
decoded once, at one frame (`at_s`), into a small greyscale thumbnail; two tasks' thumbnails are compared by
their mean absolute difference in grey levels (0 = the same picture, 1 = black against white). A template's
seeds share objects and mechanism, so their pairs are expected to be closer than pairs of different templates:
the figure reports both medians, and the closest pair of different templates (the one a reader should look at).

The same comparison is made per subcategory on two more signatures, because a recolour can hide in the overall
medians: the first frame (the layout as an agent first sees it) and the motion mask (which thumbnail pixels ever
change over the clip, sampled every half second; distance 1 - IoU), so "the templates of a subcategory move
different things in different places" is a number. Every reference is decoded once, in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np

TILE = (192, 108)  # pixels of one tile on the sheet (the references are 640x360)
THUMB = (64, 36)  # pixels of the thumbnail the distances are measured on
LABEL_H = 16  # pixels under each tile for its id


@dataclass(frozen=True)
class SheetTask:
    """One task on the sheet: id, its template (family, or itself), (sub)category, reference video."""

    id: str
    template: str
    group: str
    video: Path


MASK_STEP_S = 0.5  # seconds between the frames a motion mask is built from
MASK_LEVEL = 0.06  # grey change (0-1) between two samples that counts a thumbnail pixel as moving


@dataclass(frozen=True)
class VideoSample:
    """What the sheet needs of one reference, from one decoding pass: frames (RGB) and the motion mask."""

    first: np.ndarray
    at: np.ndarray
    middle: np.ndarray
    last: np.ndarray
    motion: np.ndarray  # bool THUMB mask: pixels whose grey level changed by MASK_LEVEL between samples


def _grey_thumb(rgb: np.ndarray) -> np.ndarray:
    import cv2

    small = cv2.resize(rgb, THUMB, interpolation=cv2.INTER_AREA)
    return cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0


def sample_video(video: Path, at_s: float) -> VideoSample:
    """Decode `video` once, front to back: its first, `at_s`, middle and last frames and its motion mask."""
    import cv2

    cap = cv2.VideoCapture(str(video))
    try:
        fps = cap.get(cv2.CAP_PROP_FPS) or 30.0
        step = max(1, round(MASK_STEP_S * fps))
        frames: dict[int, np.ndarray] = {}
        thumbs: list[np.ndarray] = []
        i = 0
        while True:
            ok, bgr = cap.read()
            if not ok:
                break
            if i == 0 or i == round(at_s * fps) or i % step == 0:
                rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
                frames[i] = rgb
                if i % step == 0:
                    thumbs.append(_grey_thumb(rgb))
            last_bgr = bgr
            i += 1
    finally:
        cap.release()
    if i == 0:
        raise ValueError(f"{video}: no frame could be decoded")
    n = i
    last = cv2.cvtColor(last_bgr, cv2.COLOR_BGR2RGB)
    at_i = min(n - 1, round(at_s * fps))
    mid_i = min(frames, key=lambda k: abs(k - (n - 1) / 2))
    moving = np.zeros(THUMB[::-1], bool)
    for a, b in zip(thumbs, thumbs[1:], strict=False):
        moving |= np.abs(b - a) > MASK_LEVEL
    return VideoSample(first=frames[0], at=frames.get(at_i, last), middle=frames[mid_i], last=last, motion=moving)


def mask_distance(a: np.ndarray, b: np.ndarray) -> float:
    """1 - IoU of two motion masks (0: the same pixels move; 1: no moving pixel in common; two still clips: 0)."""
    union = np.logical_or(a, b).sum()
    return 0.0 if union == 0 else 1.0 - float(np.logical_and(a, b).sum()) / float(union)


def _pairs(ids: list[str], template: dict[str, str], dist: Any) -> tuple[list[float], list[float]]:
    within, across = [], []
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            (within if template[a] == template[b] else across).append(dist(a, b))
    return within, across


def _med(xs: list[float]) -> float | None:
    return round(median(xs), 4) if xs else None


def by_group(samples: dict[str, VideoSample], template: dict[str, str], group: dict[str, str]) -> dict[str, Any]:
    """Per subcategory: how far apart its templates' first frames and motion masks are, against seeds of one
    template (medians of pair distances; None where a subcategory has one template or no seeds)."""
    firsts = {k: _grey_thumb(v.first) for k, v in samples.items()}
    out: dict[str, Any] = {}
    for g in sorted(set(group.values())):
        ids = sorted(k for k in samples if group[k] == g)
        fw, fa = _pairs(ids, template, lambda a, b: float(np.abs(firsts[a] - firsts[b]).mean()))
        mw, ma = _pairs(ids, template, lambda a, b: mask_distance(samples[a].motion, samples[b].motion))
        out[g] = {"tasks": len(ids), "templates": len({template[k] for k in ids}),
                  "first_frame": {"within_template": _med(fw), "across_templates": _med(fa)},
                  "motion_mask": {"within_template": _med(mw), "across_templates": _med(ma)}}
    return out


def distinctness(thumbs: dict[str, np.ndarray], template: dict[str, str]) -> dict[str, Any]:
    """Medians of the pairwise thumbnail distance within templates and across them, and the closest cross pair."""
    ids = sorted(thumbs)
    within, across = [], []
    closest: tuple[float, str, str] | None = None
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            d = float(np.abs(thumbs[a] - thumbs[b]).mean())
            if template[a] == template[b]:
                within.append(d)
            else:
                across.append(d)
                if closest is None or d < closest[0]:
                    closest = (d, a, b)
    return {"tasks": len(ids), "templates": len(set(template.values())),
            "median_within_template": round(median(within), 4) if within else None,
            "median_across_templates": round(median(across), 4) if across else None,
            "closest_across": ({"distance": round(closest[0], 4), "tasks": [closest[1], closest[2]]}
                               if closest else None),
            "measure": f"mean absolute grey difference (0-1) of {THUMB[0]}x{THUMB[1]} thumbnails"}


def _tile(rgb: np.ndarray, label: str) -> np.ndarray:
    import cv2

    tile = np.full((TILE[1] + LABEL_H, TILE[0], 3), 255, np.uint8)
    tile[: TILE[1]] = cv2.resize(rgb, TILE, interpolation=cv2.INTER_AREA)
    cv2.putText(tile, label[:42], (3, TILE[1] + 12), cv2.FONT_HERSHEY_SIMPLEX, 0.36, (20, 20, 20), 1, cv2.LINE_AA)
    return tile


def build_sheet(tasks: list[SheetTask], out: Path, at_s: float = 3.0, columns: int = 8,
                progress: Any = None, per_template: bool = False) -> dict[str, Any]:
    """Write the contact sheet (PNG, or JPEG for a .jpg name; tasks sorted by group, then template, then id) and
    return the distinctness document. `per_template`: one row per template (first, middle and last frame of its
    first task) instead of every task at `at_s`. `progress(done, total)` is called after each decoded reference."""
    import cv2
    from physcodegym.core import atomic

    tasks = sorted(tasks, key=lambda t: (t.group, t.template, t.id))
    samples: dict[str, VideoSample] = {}
    for i, t in enumerate(tasks):
        samples[t.id] = sample_video(t.video, at_s)
        if progress:
            progress(i + 1, len(tasks))
    if not samples:
        raise ValueError("no task has a reference video to show")
    if per_template:  # one row per template: its first task's first, middle and last frames
        rows, seen = [], set()
        for t in tasks:
            if t.template in seen:
                continue
            seen.add(t.template)
            v = samples[t.id]
            rows.append(np.hstack([_tile(v.first, f"{t.id}  ({t.group}) 0 s"), _tile(v.middle, "middle"),
                                   _tile(v.last, "last")]))
        picture = np.vstack(rows)
    else:
        tiles = [_tile(samples[t.id].at, f"{t.id}  ({t.group})") for t in tasks]
        n_rows = -(-len(tiles) // columns)
        blank = np.full_like(tiles[0], 255)
        picture = np.vstack([np.hstack([tiles[r * columns + c] if r * columns + c < len(tiles) else blank
                                        for c in range(columns)]) for r in range(n_rows)])
    suffix = out.suffix.lower() or ".png"
    params = [cv2.IMWRITE_JPEG_QUALITY, 85] if suffix in (".jpg", ".jpeg") else []
    ok, data = cv2.imencode(suffix, cv2.cvtColor(picture, cv2.COLOR_RGB2BGR), params)
    if not ok:
        raise ValueError(f"could not encode the contact sheet as {suffix}")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_bytes(out, data.tobytes())
    template = {t.id: t.template for t in tasks}
    doc = distinctness({k: _grey_thumb(v.at) for k, v in samples.items()}, template)
    groups = by_group(samples, template, {t.id: t.group for t in tasks})
    return {"sheet": str(out), "at_s": at_s, "per_template": per_template, **doc, "by_group": groups,
            "by_group_measure": "first frames: mean absolute grey difference of thumbnails; motion masks: 1 - IoU "
                                f"of the thumbnail pixels that change by {MASK_LEVEL} between samples {MASK_STEP_S} s "
                                "apart"}
