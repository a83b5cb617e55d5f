"""Time the metric kernels on one 240-frame 640x360 pair and print one JSON line.

Measures: decode (mp4 and PNG sequence), S_ssim (ours vs scikit-image's structural_similarity on the same frames,
with the largest per-frame difference), the motion score (masks for both videos + IoUs), and LPIPS when torch is
installed (with the real AlexNet weights if cached, else a random backbone, labelled as such).

    .venv/bin/python benchmarks/metrics_bench.py [--frames 240] [--skimage-frames 240] [--no-lpips]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np


def _clip(n: int, shift: float, seed: int) -> np.ndarray:
    """A textured background with a disk rolling across and a box sliding: motion and structure to score."""
    rng = np.random.default_rng(seed)
    bg = cv2.resize(rng.integers(40, 200, (45, 80, 3), dtype=np.uint8), (640, 360), interpolation=cv2.INTER_CUBIC)
    out = np.empty((n, 360, 640, 3), np.uint8)
    for i in range(n):
        f = bg.copy()
        x = 60 + (2.0 + shift) * i
        cv2.circle(f, (int(x * 16), 180 * 16), 30 * 16, (230, 40, 40), -1, lineType=cv2.LINE_AA, shift=4)
        cv2.rectangle(f, (500 - i, 60), (560 - i, 110), (40, 60, 220), -1)
        out[i] = f
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=240)
    ap.add_argument("--skimage-frames", type=int, default=None, help="frames for the scikit-image timing (default: all)")
    ap.add_argument("--no-lpips", action="store_true")
    args = ap.parse_args()

    from physcodegym.metrics.motion import motion_masks, motion_score
    from physcodegym.metrics.ssim import ssim_per_frame
    from physcodegym.metrics.video import load_video
    from skimage.metrics import structural_similarity

    n = args.frames
    res: dict = {"benchmark": "metrics", "frames": n, "size": "640x360", "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as td:
        ref_src, cand_src = _clip(n, 0.0, 0), _clip(n, 0.3, 0)
        mp4 = Path(td) / "ref.mp4"
        vw = cv2.VideoWriter(str(mp4), cv2.VideoWriter_fourcc(*"mp4v"), 30, (640, 360))
        for f in ref_src:
            vw.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
        vw.release()
        png = Path(td) / "frames"
        png.mkdir()
        for i, f in enumerate(cand_src, 1):
            cv2.imwrite(str(png / f"{i:04d}.png"), cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
        t = time.perf_counter()
        ref = load_video(mp4, expected_frames=n)
        res["decode_mp4_s"] = time.perf_counter() - t
        t = time.perf_counter()
        cand = load_video(png, expected_frames=n)
        res["decode_png_s"] = time.perf_counter() - t

    t = time.perf_counter()
    ours = ssim_per_frame(ref, cand)
    res["ssim_ours_s"] = time.perf_counter() - t
    k = min(n, args.skimage_frames or n)
    t = time.perf_counter()
    theirs = np.array(
        [
            structural_similarity(
                ref[i], cand[i], channel_axis=-1, data_range=255, gaussian_weights=True, sigma=1.5, use_sample_covariance=False
            )
            for i in range(k)
        ]
    )
    sk = time.perf_counter() - t
    res["ssim_skimage_frames"] = k
    res["ssim_skimage_s"] = sk * n / k  # scaled to all frames when a subset was timed
    res["ssim_speedup"] = res["ssim_skimage_s"] / res["ssim_ours_s"]
    res["ssim_max_abs_diff"] = float(np.abs(ours[:k] - theirs).max())
    res["S_ssim"] = float(ours.mean())

    t = time.perf_counter()
    d = motion_score(motion_masks(ref), motion_masks(cand))
    res["motion_s"] = time.perf_counter() - t
    res["S_mot"] = d["S_mot"]

    if not args.no_lpips:
        try:
            from physcodegym.metrics import lpips_metric

            ok, reason, _ = lpips_metric.availability()
            random = not ok
            t = time.perf_counter()
            dist = lpips_metric.lpips_distances(ref, cand, random_backbone=random)
            res["lpips_s"] = time.perf_counter() - t
            res["lpips_backbone"] = "random (weights absent: timing only)" if random else "alexnet imagenet"
            res["lpips_mean_distance"] = float(dist.mean())
        except ImportError as e:
            res["lpips_s"] = None
            res["lpips_reason"] = f"torch/lpips not installed: {e}"
    res["seconds_per_pair_without_lpips"] = res["decode_mp4_s"] + res["decode_png_s"] + res["ssim_ours_s"] + res["motion_s"]
    print(json.dumps({k: (round(v, 6) if isinstance(v, float) and not k.endswith("diff") else v) for k, v in res.items()}))


if __name__ == "__main__":
    main()
