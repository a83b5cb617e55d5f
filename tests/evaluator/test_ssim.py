"""S_ssim: agreement with scikit-image's Gaussian SSIM on real Workbench renders, and expected orderings."""

from __future__ import annotations

import numpy as np
import pytest
from physcodegym.metrics.ssim import gaussian_kernel, s_ssim, ssim_frame, ssim_per_frame
from skimage.metrics import structural_similarity


def _skimage(a: np.ndarray, b: np.ndarray) -> float:
    kw = {"data_range": 255, "gaussian_weights": True, "sigma": 1.5, "use_sample_covariance": False}
    if a.ndim == 3:
        kw["channel_axis"] = -1
    return float(structural_similarity(a, b, **kw))


def test_matches_skimage_on_real_workbench_renders(rendered_pair):
    a, b = rendered_pair
    pairs = [(a[i], b[i]) for i in range(4)] + [(a[0], a[3]), (b[1], a[2])]
    ours = [ssim_frame(x, y) for x, y in pairs]
    ref = [_skimage(x, y) for x, y in pairs]
    diff = np.abs(np.array(ours) - np.array(ref))
    assert diff.max() <= 1e-4, diff
    assert min(ref) < 0.99  # the twins really differ, so the comparison is not between identical frames


def test_per_frame_video_matches_frame_function(rendered_pair):
    a, b = rendered_pair
    pf = ssim_per_frame(a, b)
    assert pf.shape == (4,)
    assert np.allclose(pf, [ssim_frame(x, y) for x, y in zip(a, b, strict=True)], atol=1e-12)


def test_gray_and_odd_sizes_match_skimage():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (37, 53), dtype=np.uint8)
    y = np.clip(x.astype(int) + rng.integers(-30, 30, x.shape), 0, 255).astype(np.uint8)
    assert abs(ssim_frame(x, y) - _skimage(x, y)) <= 1e-4


def test_kernel_is_scipy_11_tap():
    k = gaussian_kernel()
    assert k.shape == (11,) and abs(k.sum() - 1) < 1e-12 and k[5] == k.max()


def test_identical_is_one_shifted_and_blank_are_lower(rendered_pair):
    a, _ = rendered_pair
    same = s_ssim(a, a)
    assert same.value == pytest.approx(1.0, abs=1e-6)
    shifted = s_ssim(a, np.roll(a, 6, axis=2))
    blank = s_ssim(a, np.zeros_like(a))
    assert blank.value < shifted.value < same.value
    assert len(shifted.per_frame) == 4


def test_shape_mismatch_is_refused(rendered_pair):
    a, _ = rendered_pair
    with pytest.raises(ValueError, match="shapes differ"):
        ssim_per_frame(a, a[:, :100])
