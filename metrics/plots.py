"""`score --plot`: per-frame SSIM / LPIPS / motion-IoU curves and the two motion masks side by side."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from physcodegym.core import atomic
from physcodegym.tasks.schema import FPS


def overlap_image(ref_masks: np.ndarray, cand_masks: np.ndarray) -> np.ndarray:
    """RGB overlap of the any-time masks: reference only red, candidate only green, both yellow."""
    a, b = ref_masks.any(axis=0), cand_masks.any(axis=0)
    img = np.zeros((*a.shape, 3), np.float32)
    img[a & ~b] = (0.9, 0.15, 0.15)
    img[b & ~a] = (0.15, 0.8, 0.2)
    img[a & b] = (0.95, 0.85, 0.1)
    return img


def write_score_plot(path: Path, doc: dict, ref_masks: np.ndarray, cand_masks: np.ndarray) -> Path:
    """Write the PNG atomically and return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = plt.figure(figsize=(13, 7), dpi=100)
    gs = fig.add_gridspec(2, 3, height_ratios=[1.0, 1.0])
    ax = fig.add_subplot(gs[0, :])
    pf = doc.get("per_frame", {})
    labels = {"S_ssim": "SSIM", "S_lpips": "1 - LPIPS (clipped)", "motion_iou": "motion-mask IoU"}
    for key, label in labels.items():
        ys = pf.get(key)
        if ys:
            ax.plot(np.arange(len(ys)) / FPS, ys, label=f"{label} (mean {np.mean(ys):.3f})", lw=1.2)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("per-frame score")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    m = doc.get("metrics", {})
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    ax.set_title(
        f"{doc.get('task')}: S_ssim {fmt(m.get('S_ssim'))}  S_lpips {fmt(m.get('S_lpips'))}"
        f"  S_mot {fmt(m.get('S_mot'))}  S_tot {fmt(doc.get('S_tot'))}",
        fontsize=10,
    )
    wr = ref_masks.mean(axis=0)
    wc = cand_masks.mean(axis=0)
    vmax = max(float(wr.max()), float(wc.max()), 1e-6)
    for i, (img, title) in enumerate(
        [(wr, "reference: fraction of frames moving"), (wc, "candidate: fraction of frames moving")]
    ):
        a = fig.add_subplot(gs[1, i])
        a.imshow(img, cmap="magma", vmin=0, vmax=vmax, interpolation="nearest")
        a.set_title(title, fontsize=9)
        a.axis("off")
    det = doc.get("details", {}).get("S_mot", {})
    a = fig.add_subplot(gs[1, 2])
    a.imshow(overlap_image(ref_masks, cand_masks), interpolation="nearest")
    a.set_title(
        f"overlap (red ref, green cand, yellow both)\nspatial IoU {fmt(det.get('spatial_iou'))}"
        f"  weighted IoU {fmt(det.get('weighted_iou'))}",
        fontsize=9,
    )
    a.axis("off")
    fig.tight_layout()
    with atomic.replacing(path, ".png") as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
    return path
