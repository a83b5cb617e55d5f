"""Baseline-vs-intervened trajectory plot as an image, drawn with numpy only.

Inside Blender only numpy is guaranteed (matplotlib is not), so the plot is rasterised here: height z(t)
on the left, horizontal distance from the start on the right; baseline grey, intervened coloured.
"""

from __future__ import annotations

from typing import Any

import numpy as np

W, H = 640, 300
COLORS = [(0.95, 0.3, 0.55), (0.2, 0.7, 1.0), (1.0, 0.75, 0.1), (0.4, 0.9, 0.4), (0.8, 0.5, 1.0)]


def _line(img: np.ndarray, xs: np.ndarray, ys: np.ndarray, color: tuple[float, float, float], thick: int = 1) -> None:
    """Polyline by dense sampling between consecutive points (no antialiasing: it is a diagnostic)."""
    for i in range(len(xs) - 1):
        n = int(max(abs(xs[i + 1] - xs[i]), abs(ys[i + 1] - ys[i]))) + 2
        px = np.linspace(xs[i], xs[i + 1], n).round().astype(int)
        py = np.linspace(ys[i], ys[i + 1], n).round().astype(int)
        for dx in range(-(thick // 2), thick // 2 + 1):
            for dy in range(-(thick // 2), thick // 2 + 1):
                qx, qy = np.clip(px + dx, 0, img.shape[1] - 1), np.clip(py + dy, 0, img.shape[0] - 1)
                img[qy, qx, :3] = color


def render_plot(tracks: dict[str, dict[str, Any]]) -> np.ndarray:
    """RGBA float image (H, W, 4), row 0 at the top, of baseline vs intervened tracks {branch: {obj: (F,3)}}."""
    img = np.ones((H, W, 4), dtype=np.float32) * np.array([0.12, 0.12, 0.12, 1.0], dtype=np.float32)
    base = {k: np.asarray(v, dtype=np.float64) for k, v in tracks.get("baseline", {}).items() if len(v)}
    inter = {k: np.asarray(v, dtype=np.float64) for k, v in tracks.get("intervened", {}).items() if len(v)}
    allt = list(base.values()) + list(inter.values())
    if not allt:
        return img
    pad, half = 24, W // 2
    panels = [(pad, half - pad // 2), (half + pad // 2, W - pad)]

    def series(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return t[:, 2], np.linalg.norm(t[:, :2] - t[0, :2], axis=1)

    nmax = max(len(t) for t in allt)
    lims = []
    for k in range(2):
        vals = np.concatenate([series(t)[k] for t in allt])
        lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
        if hi - lo < 1e-6:
            lo, hi = lo - 0.5, hi + 0.5
        lims.append((lo, hi))
    for (x0, x1), _ in zip(panels, lims, strict=True):
        img[pad : H - pad, x0 : x0 + 1, :3] = 0.5
        img[H - pad : H - pad + 1, x0:x1, :3] = 0.5

    def draw(t: np.ndarray, color: tuple[float, float, float], thick: int) -> None:
        for k, ((x0, x1), (lo, hi)) in enumerate(zip(panels, lims, strict=True)):
            y = series(t)[k]
            ok = np.isfinite(y)
            xs = x0 + np.arange(len(y))[ok] / max(1, nmax - 1) * (x1 - x0)
            ys = (H - pad) - (y[ok] - lo) / (hi - lo) * (H - 2 * pad)
            _line(img, xs, ys, color, thick)

    for t in base.values():
        draw(t, (0.65, 0.65, 0.65), 3)
    for i, t in enumerate(inter.values()):
        draw(t, COLORS[i % len(COLORS)], 1)
    return img


def to_blender_image(img: np.ndarray, name: str, filepath: str | None = None) -> Any:
    """Store the RGBA array as a Blender image (flipped: Blender rows start at the bottom); optionally save a PNG."""
    import bpy

    h, w = img.shape[:2]
    im = bpy.data.images.get(name)
    if im is None or tuple(im.size) != (w, h):
        if im is not None:
            bpy.data.images.remove(im)
        im = bpy.data.images.new(name, width=w, height=h, alpha=True)
    im.pixels.foreach_set(np.ascontiguousarray(img[::-1]).ravel())
    im.update()
    if filepath:
        im.filepath_raw = filepath
        im.file_format = "PNG"
        im.save()
    return im
