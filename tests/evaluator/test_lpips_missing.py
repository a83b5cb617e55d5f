"""S_lpips without torch or without the AlexNet weights: reported missing with the reason, never a number."""

from __future__ import annotations

import sys

import numpy as np
from physcodegym.metrics import lpips_metric
from physcodegym.metrics.results import MetricState


def test_without_torch_lpips_is_uncomputable_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError, as on the default set-up
    v = np.zeros((2, 36, 64, 3), np.uint8)
    r = lpips_metric.s_lpips(v, v)
    assert r.state == MetricState.uncomputable and r.value is None
    assert "[lpips]" in r.reason
