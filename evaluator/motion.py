"""S_mot: the Physics-IQ motion score (SPEC §4), vectorised over frames.

Mask per frame (Physics-IQ's steps): grayscale -> 5x5 Gaussian blur (sigma 0, so OpenCV derives 1.1) ->
running-average background (accumulateWeighted, alpha 0.3, updated *before* differencing; the first frame
initialises it and has an empty mask) -> background to uint8 (convertScaleAbs) -> absdiff -> threshold
strictly above 10 -> morphological open then close with a 5x5 ones kernel. Masks are compared at a quarter of
640x360 (bilinear resize to 160x90, then > 127), over all frames.

S_mot = mean(spatial IoU of the any-time masks, weighted IoU of the per-pixel moving fractions); both are
1.0 when neither video moves anywhere (0/0).

Only the background recursion is sequential (one accumulateWeighted per frame, exactly as the reference does);
colour conversion, blur, differencing, threshold, morphology and resizing run on whole frame stacks (frames as
channels: OpenCV filters each channel independently).
"""

from __future__ import annotations

import cv2
import numpy as np
from physcodegym.evaluator.results import MetricResult

ALPHA = 0.3
THRESHOLD = 10
BLUR_KSIZE = (5, 5)
KERNEL = np.ones((5, 5), np.uint8)
MASK_SIZE = (160, 90)  # (width, height): a quarter of 640x360
_MAX_CH = 256  # OpenCV handles up to 512 channels; keep chunks well inside


def _per_channel_chunks(stack: np.ndarray, fn) -> np.ndarray:
    """Apply a 2-D OpenCV op to every (H, W) slice of (F, H, W) by treating frames as channels."""
    out = []
    for s in range(0, len(stack), _MAX_CH):
        hwc = np.ascontiguousarray(stack[s : s + _MAX_CH].transpose(1, 2, 0))
        r = fn(hwc)
        if r.ndim == 2:
            r = r[..., None]
        out.append(r.transpose(2, 0, 1))
    return np.ascontiguousarray(np.concatenate(out, axis=0))


def motion_masks(frames: np.ndarray, threshold: int = THRESHOLD, full_res: bool = False) -> np.ndarray:
    """(F, 90, 160) bool motion masks of an (F, H, W, 3) uint8 RGB video (full_res: (F, H, W) before resizing)."""
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"expected (F, H, W, 3) uint8 RGB frames, got {frames.shape} {frames.dtype}")
    f, h, w, _ = frames.shape
    gray = cv2.cvtColor(frames.reshape(f * h, w, 3), cv2.COLOR_RGB2GRAY).reshape(f, h, w)
    blur = _per_channel_chunks(gray, lambda a: cv2.GaussianBlur(a, BLUR_KSIZE, 0))
    bg = np.empty_like(blur)
    avg = blur[0].astype(np.float64)
    bg[0] = blur[0]  # first frame: background == frame, so its mask is empty
    for t in range(1, f):
        cv2.accumulateWeighted(blur[t], avg, ALPHA)
        bg[t] = cv2.convertScaleAbs(avg)
    diff = cv2.absdiff(blur.reshape(f * h, w), bg.reshape(f * h, w)).reshape(f, h, w)
    binary = np.where(diff > threshold, np.uint8(255), np.uint8(0))
    binary[0] = 0
    binary = _per_channel_chunks(
        binary, lambda a: cv2.morphologyEx(cv2.morphologyEx(a, cv2.MORPH_OPEN, KERNEL), cv2.MORPH_CLOSE, KERNEL)
    )
    if full_res:
        return binary > 0
    small = _per_channel_chunks(binary, lambda a: cv2.resize(a, MASK_SIZE, interpolation=cv2.INTER_LINEAR))
    return small > 127


def spatial_iou(ref_masks: np.ndarray, cand_masks: np.ndarray) -> float:
    """IoU of the pixels that move at any time (1.0 when neither moves)."""
    a, b = ref_masks.any(axis=0), cand_masks.any(axis=0)
    union = int(np.logical_or(a, b).sum())
    return 1.0 if union == 0 else int(np.logical_and(a, b).sum()) / union


def weighted_iou(ref_masks: np.ndarray, cand_masks: np.ndarray) -> float:
    """sum min(w, w') / sum max(w, w'), w = fraction of frames a pixel moves (1.0 when neither moves)."""
    ca = ref_masks.sum(axis=0, dtype=np.int64)
    cb = cand_masks.sum(axis=0, dtype=np.int64)
    den = int(np.maximum(ca, cb).sum())  # the common 1/F cancels; integer sums are exact
    return 1.0 if den == 0 else int(np.minimum(ca, cb).sum()) / den


def per_frame_iou(ref_masks: np.ndarray, cand_masks: np.ndarray) -> np.ndarray:
    """IoU of each frame's masks (1.0 where both are empty): the curve kept for the report."""
    inter = np.logical_and(ref_masks, cand_masks).sum(axis=(1, 2))
    union = np.logical_or(ref_masks, cand_masks).sum(axis=(1, 2))
    return np.where(union == 0, 1.0, inter / np.maximum(union, 1))


def motion_score(ref_masks: np.ndarray, cand_masks: np.ndarray) -> dict:
    """Spatial IoU, weighted IoU and their mean (S_mot) from two mask stacks of equal shape."""
    if ref_masks.shape != cand_masks.shape:
        raise ValueError(f"mask stacks differ in shape: {ref_masks.shape} vs {cand_masks.shape}")
    s = spatial_iou(ref_masks, cand_masks)
    wi = weighted_iou(ref_masks, cand_masks)
    return {
        "S_mot": (s + wi) / 2,
        "spatial_iou": s,
        "weighted_iou": wi,
        "ref_moving_pixels": int(ref_masks.any(axis=0).sum()),
        "cand_moving_pixels": int(cand_masks.any(axis=0).sum()),
        "frames": int(ref_masks.shape[0]),
    }


def s_mot(
    ref: np.ndarray | None = None,
    cand: np.ndarray | None = None,
    ref_masks: np.ndarray | None = None,
    cand_masks: np.ndarray | None = None,
) -> MetricResult:
    """S_mot from videos (or from masks already computed, e.g. a cached reference)."""
    rm = motion_masks(ref) if ref_masks is None else ref_masks
    cm = motion_masks(cand) if cand_masks is None else cand_masks
    d = motion_score(rm, cm)
    value = d.pop("S_mot")
    return MetricResult.ok("S_mot", value, per_frame=[float(v) for v in per_frame_iou(rm, cm)], details=d)
