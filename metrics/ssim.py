"""S_ssim: per-frame SSIM of candidate vs reference, matching scikit-image's Gaussian SSIM.

Definition matched (to 1e-4 per frame; measured far tighter): `skimage.metrics.structural_similarity(ref, cand,
channel_axis=-1, data_range=255, gaussian_weights=True, sigma=1.5, use_sample_covariance=False)`:
an 11-tap Gaussian (sigma 1.5, truncated at 3.5 sigma, normalised), per channel, the SSIM map cropped by the
filter radius (5 px) on every side, mean per channel, then mean over channels. Because the crop equals the filter
radius, no pixel that is kept ever reads past the border, so the border mode cannot change the result.

Speed: OpenCV separable filters and arithmetic in float32 into pre-allocated buffers; only four local moments
are filtered (E[x], E[y], E[x^2 + y^2], E[xy]: SSIM needs vx + vy, not each), on data centred at 128 so the
variance terms do not cancel badly in float32 (agreement with the float64 reference ~1e-7 per frame).
"""

from __future__ import annotations

import cv2
import numpy as np
from physcodegym.metrics.results import MetricResult

SIGMA = 1.5
TRUNCATE = 3.5
RADIUS = int(TRUNCATE * SIGMA + 0.5)  # 5, as scipy.ndimage derives it
K1, K2 = 0.01, 0.03
DATA_RANGE = 255.0


def gaussian_kernel(sigma: float = SIGMA, radius: int = RADIUS) -> np.ndarray:
    """The normalised 1-D Gaussian scipy.ndimage.gaussian_filter uses (radius int(truncate*sigma+0.5))."""
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    k = np.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


_KERNEL = gaussian_kernel()
_KERNEL32 = _KERNEL.astype(np.float32)
_CENTRE = (128.0, 128.0, 128.0, 128.0)
C1 = (K1 * DATA_RANGE) ** 2
C2 = (K2 * DATA_RANGE) ** 2


class _Workspace:
    """Pre-allocated float32 buffers: fresh 2.7 MB arrays per operation cost more than the arithmetic itself."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.buf = [np.empty(shape, np.float32) for _ in range(10)]

    def ssim(self, ref: np.ndarray, cand: np.ndarray) -> float:
        X, Y, ux, uy, t1, t2, sxy, pxy, a1, b1 = self.buf
        k, bd, r = _KERNEL32, cv2.BORDER_REFLECT, RADIUS
        # Centre on 128 so E[x^2] - E[x]^2 is computed from values <= 128^2 (float32 keeps ~1e-7 per frame).
        cv2.subtract(ref, _CENTRE, dst=X, dtype=cv2.CV_32F)
        cv2.subtract(cand, _CENTRE, dst=Y, dtype=cv2.CV_32F)
        cv2.sepFilter2D(X, -1, k, k, dst=ux, borderType=bd)
        cv2.sepFilter2D(Y, -1, k, k, dst=uy, borderType=bd)
        cv2.multiply(X, X, dst=t1)
        cv2.multiply(Y, Y, dst=t2)
        cv2.add(t1, t2, dst=t1)
        cv2.sepFilter2D(t1, -1, k, k, dst=sxy, borderType=bd)  # E[x^2 + y^2]: only vx + vy is needed
        cv2.multiply(X, Y, dst=t1)
        cv2.sepFilter2D(t1, -1, k, k, dst=pxy, borderType=bd)  # E[xy]
        cv2.multiply(ux, uy, dst=t1)  # ux*uy (centred)
        cv2.multiply(ux, ux, dst=t2)
        cv2.multiply(uy, uy, dst=X)
        cv2.add(t2, X, dst=t2)  # ux^2 + uy^2 (centred)
        cv2.add(ux, uy, dst=Y)
        cv2.subtract(sxy, t2, dst=sxy)
        cv2.add(sxy, (C2,) * 4, dst=sxy)  # B2 = vx + vy + C2
        cv2.subtract(pxy, t1, dst=pxy)
        cv2.addWeighted(pxy, 2.0, pxy, 0.0, C2, dst=pxy)  # A2 = 2 vxy + C2
        # Un-centre the means: mx = ux + 128, so 2 mx my and mx^2 + my^2 follow from the centred terms.
        cv2.addWeighted(t1, 2.0, Y, 256.0, 2 * 128.0**2 + C1, dst=a1)  # A1 = 2 mx my + C1
        cv2.addWeighted(t2, 1.0, Y, 256.0, 2 * 128.0**2 + C1, dst=b1)  # B1 = mx^2 + my^2 + C1
        cv2.multiply(a1, pxy, dst=a1)
        cv2.multiply(b1, sxy, dst=b1)
        cv2.divide(a1, b1, dst=a1)
        h, w = self.shape[:2]
        m = cv2.mean(a1[r : h - r, r : w - r])  # per-channel means, accumulated in double
        return float(sum(m[: self.shape[2]]) / self.shape[2])


def _as_hwc(a: np.ndarray) -> np.ndarray:
    return a[..., None] if a.ndim == 2 else a


def ssim_frame(ref: np.ndarray, cand: np.ndarray) -> float:
    """SSIM of two (H, W, C) uint8 frames (C <= 4), mean over channels (scikit-image's definition above)."""
    ref, cand = _as_hwc(ref), _as_hwc(cand)
    if ref.shape != cand.shape:
        raise ValueError(f"frame shapes differ: {ref.shape} vs {cand.shape}")
    if min(ref.shape[:2]) < 2 * RADIUS + 1:
        raise ValueError(f"frames must be at least {2 * RADIUS + 1} pixels on each side, got {ref.shape[:2]}")
    return _Workspace(ref.shape).ssim(ref, cand)


def ssim_per_frame(ref: np.ndarray, cand: np.ndarray, progress: bool = False) -> np.ndarray:
    """Per-frame SSIM of two (F, H, W, 3) uint8 videos."""
    if ref.shape != cand.shape:
        raise ValueError(f"video shapes differ: {ref.shape} vs {cand.shape}")
    if ref.ndim != 4 or len(ref) == 0:
        raise ValueError(f"expected (F, H, W, C) videos, got {ref.shape}")
    ws = _Workspace(ref.shape[1:])
    out = np.empty(len(ref), np.float64)
    it = range(len(ref))
    if progress:
        from rich.progress import track

        it = track(it, description="SSIM", transient=True)
    for i in it:
        out[i] = ws.ssim(ref[i], cand[i])
    return out


def s_ssim(ref: np.ndarray, cand: np.ndarray, progress: bool = False) -> MetricResult:
    """S_ssim = mean per-frame SSIM, clipped to [0, 1] (SSIM itself can be slightly negative)."""
    pf = ssim_per_frame(ref, cand, progress=progress)
    raw = float(pf.mean())
    return MetricResult.ok(
        "S_ssim", raw, per_frame=[float(v) for v in pf], details={"raw_mean": raw, "frames": len(pf)}
    )
