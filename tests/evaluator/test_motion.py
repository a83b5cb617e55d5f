"""S_mot: the vectorised Physics-IQ motion score vs a straightforward per-frame reference, and hand-worked clips."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from physcodegym.metrics.motion import motion_masks, motion_score, per_frame_iou, s_mot

H, W, F = 360, 640, 240


# ---- per-frame reference, written step by step after the Physics-IQ benchmark's mask generator and IoU code ----
def _reference_masks(frames_rgb: np.ndarray) -> list[np.ndarray]:
    masks = []
    kernel = np.ones((5, 5), np.uint8)
    avg = None
    for i, rgb in enumerate(frames_rgb):
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)  # Physics-IQ reads BGR frames with OpenCV
        g = cv2.GaussianBlur(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), (5, 5), 0)
        if i == 0:
            avg = g.astype("float")
            m = np.zeros_like(g, dtype=np.uint8)
        else:
            cv2.accumulateWeighted(g, avg, 0.3)
            d = cv2.absdiff(g, cv2.convertScaleAbs(avg))
            _, m = cv2.threshold(d, 10, 255, cv2.THRESH_BINARY)
            m = cv2.morphologyEx(m, cv2.MORPH_OPEN, kernel)
            m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, kernel)
        small = cv2.resize(m, (m.shape[1] // 4, m.shape[0] // 4))
        masks.append((small > 127).astype(np.uint8))
    return masks


def _reference_score(ref_rgb: np.ndarray, cand_rgb: np.ndarray) -> tuple[float, float]:
    a, b = _reference_masks(ref_rgb), _reference_masks(cand_rgb)
    sa = (np.max(a, axis=0) > 0).astype(np.uint8) * 255
    sb = (np.max(b, axis=0) > 0).astype(np.uint8) * 255
    union = np.logical_or(sa, sb).sum()
    spatial = 1.0 if union == 0 else np.logical_and(sa, sb).sum() / union
    wa = np.sum(a, axis=0, dtype=np.uint16) / len(a)
    wb = np.sum(b, axis=0, dtype=np.uint16) / len(b)
    inter, uni = np.minimum(wa, wb), np.maximum(wa, wb)
    valid = uni > 0
    weighted = 1.0 if valid.sum() == 0 else np.sum(inter[valid]) / np.sum(uni[valid])
    return float(spatial), float(weighted)


# ---- clips ----
def _texture(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = cv2.resize(rng.integers(40, 200, (45, 80, 3), dtype=np.uint8), (W, H), interpolation=cv2.INTER_CUBIC)
    return t


def _disk_clip(start: int = 0, speed: float = 2.0, x0: float = 80, y: int = 180, r: int = 30, n: int = F, seed: int = 0,
               color=(230, 40, 40), noise: float = 0.0) -> np.ndarray:
    """A disk that rests at x0 until `start`, then rolls right at `speed` px/frame over a textured background."""
    bg = _texture(seed)
    rng = np.random.default_rng(seed + 1)
    out = np.empty((n, H, W, 3), np.uint8)
    for i in range(n):
        f = bg.copy()
        x = x0 + speed * max(0, i - start)
        cv2.circle(f, (int(round(x * 16)), y * 16), r * 16, color, -1, lineType=cv2.LINE_AA, shift=4)
        if noise:
            f = np.clip(f + rng.normal(0, noise, f.shape), 0, 255).astype(np.uint8)
        out[i] = f
    return out


def _flash(on: list[int], off: list[int] | None = None, n: int = F) -> np.ndarray:
    """Whole-frame black/white switches: white from each `on` frame, black again from each `off` frame."""
    v = np.zeros((n, H, W, 3), np.uint8)
    events = sorted([(t, 255) for t in on] + [(t, 0) for t in (off or [])])
    level = 0
    for i in range(n):
        for t, lv in events:
            if t == i:
                level = lv
        v[i] = level
    return v


# ---- agreement with the reference ----
@pytest.mark.parametrize(
    "ref_kw,cand_kw",
    [
        ({}, {"start": 20}),  # same disk, delayed start
        ({"noise": 3.0}, {"speed": 3.0, "noise": 3.0, "seed": 4}),  # noisy texture, faster disk
        ({}, {"y": 160, "r": 22, "color": (30, 200, 60)}),  # another, overlapping path
    ],
)
def test_vectorised_matches_physics_iq_reference_to_1e6(ref_kw, cand_kw):
    n = 90  # the steps are frame-local or recursive; 90 frames exercise them fully and keep the test quick
    ref, cand = _disk_clip(n=n, **ref_kw), _disk_clip(n=n, **cand_kw)
    want_s, want_w = _reference_score(ref, cand)
    got = motion_score(motion_masks(ref), motion_masks(cand))
    assert abs(got["spatial_iou"] - want_s) <= 1e-6
    assert abs(got["weighted_iou"] - want_w) <= 1e-6
    assert abs(got["S_mot"] - (want_s + want_w) / 2) <= 1e-6
    # the masks themselves are identical, frame by frame
    assert np.array_equal(motion_masks(ref).astype(np.uint8), np.stack(_reference_masks(ref)))
    assert 0.0 < got["S_mot"] < 1.0


def test_masks_are_quarter_resolution_and_first_frame_is_empty():
    v = _disk_clip(n=30)
    m = motion_masks(v)
    assert m.shape == (30, 90, 160) and m.dtype == bool
    assert not m[0].any() and m[1:].any()


# ---- hand-worked values ----
def test_identical_moving_disk_scores_one():
    v = _disk_clip()
    r = s_mot(v, v)
    assert r.value == 1.0 and r.details["spatial_iou"] == 1.0 and r.details["weighted_iou"] == 1.0
    assert r.details["ref_moving_pixels"] > 0


def test_static_videos_are_zero_over_zero_cases_scoring_one():
    still = np.repeat(_texture()[None], 60, axis=0)
    d = motion_score(motion_masks(still), motion_masks(still))
    assert d["ref_moving_pixels"] == 0 and d["spatial_iou"] == 1.0 and d["weighted_iou"] == 1.0 and d["S_mot"] == 1.0


def test_static_candidate_against_moving_reference_scores_zero():
    moving = _disk_clip(n=60)
    still = np.repeat(moving[:1], 60, axis=0)
    d = motion_score(motion_masks(moving), motion_masks(still))
    assert d["spatial_iou"] == 0.0 and d["weighted_iou"] == 0.0 and d["S_mot"] == 0.0


def test_flash_moves_every_pixel_for_exactly_eight_frames():
    # black -> white at frame 10: background 255(1 - 0.7^(n+1)); |diff| rounds to 179, 125, ..., 15 (n = 0..7) > 10,
    # then 10 (n = 8) which is not strictly above the threshold
    m = motion_masks(_flash(on=[10], n=40))
    assert (m.sum(axis=0) == 8).all()
    assert m[10:18].all() and not m[:10].any() and not m[18:].any()


def test_flash_on_and_off_halves_the_weighted_iou():
    # same pixels move in both (spatial IoU 1); the candidate moves 16 frames per pixel, the reference 8: 8/16
    ref, cand = _flash(on=[10], n=120), _flash(on=[10], off=[80], n=120)
    d = motion_score(motion_masks(ref), motion_masks(cand))
    assert d["spatial_iou"] == 1.0 and d["weighted_iou"] == 0.5 and d["S_mot"] == 0.75


def test_time_offset_keeps_spatial_and_weighted_iou_but_not_per_frame_iou():
    ref, cand = _flash(on=[10], n=120), _flash(on=[60], n=120)
    rm, cm = motion_masks(ref), motion_masks(cand)
    assert motion_score(rm, cm)["S_mot"] == 1.0  # Physics-IQ's spatial/weighted IoU ignore timing
    pf = per_frame_iou(rm, cm)
    assert (pf[10:18] == 0.0).all() and (pf[60:68] == 0.0).all() and pf[0] == 1.0 and pf[30] == 1.0


def test_disjoint_motion_regions_score_zero_and_shifted_disk_scores_lower():
    left = _disk_clip(n=80, x0=40, speed=1.0, y=90)
    right = _disk_clip(n=80, x0=420, speed=1.0, y=270)
    assert motion_score(motion_masks(left), motion_masks(right))["S_mot"] == 0.0
    shifted = _disk_clip(n=80, x0=40, speed=1.0, y=110)
    s = motion_score(motion_masks(left), motion_masks(shifted))["S_mot"]
    assert 0.0 < s < 1.0
