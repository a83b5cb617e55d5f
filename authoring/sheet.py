"""A contact sheet of the task set and a measure of how different its scenes are (no bpy).

Why: the benchmark's value rests on tasks that are different scenes, not recolours of one. A picture of every
task's reference at one moment shows that at a glance; the numbers say it without a viewer. Each reference is
decoded once, at one frame (`at_s`), into a small greyscale thumbnail; two tasks' thumbnails are compared by
their mean absolute difference in grey levels (0 = the same picture, 1 = black against white). A template's
seeds share objects and mechanism, so their pairs are expected to be closer than pairs of different templates:
the figure reports both medians, and the closest pair of different templates (the one a reader should look at).
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


def frame_at(video: Path, at_s: float) -> np.ndarray:
    """The reference frame at `at_s` seconds as RGB uint8 (the last frame when the clip is shorter)."""
    import cv2

    cap = cv2.VideoCapture(str(video))
    try:
        fps = cap.get(cv2.CAP_PROP_FPS) or 30.0
        n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        cap.set(cv2.CAP_PROP_POS_FRAMES, max(0, min(n - 1, round(at_s * fps))))
        ok, bgr = cap.read()
    finally:
        cap.release()
    if not ok:
        raise ValueError(f"{video}: no frame at {at_s} s")
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


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
    cv2.putText(tile, label[:30], (3, TILE[1] + 12), cv2.FONT_HERSHEY_SIMPLEX, 0.36, (20, 20, 20), 1, cv2.LINE_AA)
    return tile


def build_sheet(tasks: list[SheetTask], out: Path, at_s: float = 3.0, columns: int = 8,
                progress: Any = None) -> dict[str, Any]:
    """Write the contact sheet (PNG, or JPEG for a .jpg name; tasks sorted by group, then template, then id) and
    return the distinctness document. `progress(done, total)` is called after each decoded reference."""
    import cv2
    from physcodegym.core import atomic

    tasks = sorted(tasks, key=lambda t: (t.group, t.template, t.id))
    tiles, thumbs = [], {}
    for i, t in enumerate(tasks):
        rgb = frame_at(t.video, at_s)
        tiles.append(_tile(rgb, f"{t.id}  ({t.group})"))
        grey = cv2.cvtColor(cv2.resize(rgb, THUMB, interpolation=cv2.INTER_AREA), cv2.COLOR_RGB2GRAY)
        thumbs[t.id] = grey.astype(np.float32) / 255.0
        if progress:
            progress(i + 1, len(tasks))
    if not tiles:
        raise ValueError("no task has a reference video to show")
    rows = -(-len(tiles) // columns)
    blank = np.full_like(tiles[0], 255)
    grid = [np.hstack([tiles[r * columns + c] if r * columns + c < len(tiles) else blank for c in range(columns)])
            for r in range(rows)]
    suffix = out.suffix.lower() or ".png"
    params = [cv2.IMWRITE_JPEG_QUALITY, 85] if suffix in (".jpg", ".jpeg") else []
    ok, data = cv2.imencode(suffix, cv2.cvtColor(np.vstack(grid), cv2.COLOR_RGB2BGR), params)
    if not ok:
        raise ValueError(f"could not encode the contact sheet as {suffix}")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_bytes(out, data.tobytes())
    doc = distinctness(thumbs, {t.id: t.template for t in tasks})
    return {"sheet": str(out), "at_s": at_s, **doc}
