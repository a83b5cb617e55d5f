"""LPIPS plumbing with torch installed (the optional `.[lpips]` extra). Skipped only when torch/lpips are absent.

The AlexNet backbone's ImageNet weights are not on this offline machine, so the plumbing tests use a randomly
initialised backbone (lpips' pnet_rand=True) and say so in their names: they check batching, scaling, clipping and
the per-frame curve, not perceptual quality.
"""

from __future__ import annotations

import numpy as np
import pytest

# Imported at collection on purpose: an xdist worker imports torch here, before any test loads bpy. torch imported
# after bpy in one process crashed the worker (segmentation fault in triton's import, measured 2026-12-08).
torch = pytest.importorskip("torch", reason="torch is not installed (optional extra: pip install -e '.[lpips]')")
pytest.importorskip("lpips", reason="lpips is not installed (optional extra: pip install -e '.[lpips]')")

from physcodegym.metrics import lpips_metric  # noqa: E402
from physcodegym.metrics.results import MetricState  # noqa: E402


def test_missing_backbone_weights_report_the_searched_path(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path / "hub"))
    v = np.zeros((2, 64, 96, 3), np.uint8)
    r = lpips_metric.s_lpips(v, v)
    want = tmp_path / "hub" / "checkpoints" / lpips_metric.BACKBONE_FILE
    assert r.state == MetricState.uncomputable and r.value is None
    assert str(want) in r.reason and r.details["searched"] == str(want)


def test_random_backbone_plumbing_identical_frames_score_one(rendered_pair):
    a, _ = rendered_pair
    r = lpips_metric.s_lpips(a, a, random_backbone=True, batch_size=3)  # 4 frames: a full and a partial batch
    assert r.state == MetricState.ok and r.value == pytest.approx(1.0, abs=1e-6)
    assert len(r.per_frame) == 4 and "random" in r.details["backbone"]


def test_random_backbone_plumbing_batches_agree_and_distance_orders(rendered_pair):
    a, b = rendered_pair
    d1 = lpips_metric.lpips_distances(a, b, random_backbone=True, batch_size=1)
    d4 = lpips_metric.lpips_distances(a, b, random_backbone=True, batch_size=4)
    assert np.allclose(d1, d4, atol=1e-5)  # batching does not change per-frame values
    blank = lpips_metric.lpips_distances(a, np.zeros_like(a), random_backbone=True)
    assert (d1 > 0).all() and (blank > d1).all()
    r = lpips_metric.s_lpips(a, b, random_backbone=True)
    assert r.per_frame == pytest.approx(list(np.clip(1 - d4, 0, 1)), abs=1e-5)
    assert r.value == pytest.approx(float(np.mean(r.per_frame)))


def test_inputs_are_scaled_to_minus_one_one(monkeypatch):
    seen = {}

    class Spy(torch.nn.Module):
        def forward(self, x, y):
            seen["min"], seen["max"] = float(x.min()), float(x.max())
            return torch.zeros(x.shape[0], 1, 1, 1)

    monkeypatch.setattr(lpips_metric, "_model", lambda rb, dev: Spy())
    v = np.zeros((2, 16, 16, 3), np.uint8)
    v[1] = 255
    lpips_metric.lpips_distances(v, v, random_backbone=True)
    assert seen == {"min": -1.0, "max": 1.0}
