"""Motion of a world-matrix track (`probes.scene.physics.pose_motion`, shared by the audit's moving set and the solvers-off
comparison): an object kept at scale 0 is still, one grown from nothing moves.

Why: the zero matrix was read as a rotation (120 degrees) and a scale change relative to 0 as 100 %, so a static
prop scaled to nothing in ball_bounce's truth "still moved with every solver switched off" (S_val 0.5)."""

from __future__ import annotations

import numpy as np
import pytest


def _track(scales: list[float], turn: float = 0.0) -> np.ndarray:
    m = np.tile(np.eye(4), (len(scales), 1, 1))
    for i, s in enumerate(scales):
        a = turn * i / max(len(scales) - 1, 1)
        c, n = np.cos(a), np.sin(a)
        m[i, :3, :3] = np.array([[c, -n, 0], [n, c, 0], [0, 0, 1]]) * s
        m[i, :3, 3] = (0.3, 0.3, 0.1)
    return m


def test_an_object_kept_at_scale_zero_is_still():
    from physcodegym.probes.scene.physics import moves, pose_motion

    st = pose_motion(_track([0.0] * 10))
    assert st["rotation"] == 0.0 and st["scale"] == 0.0 and not st["step"].any() and not moves(st), st


def test_an_object_grown_from_nothing_moves():
    from physcodegym.probes.scene.physics import moves, pose_motion

    st = pose_motion(_track([0.0] * 5 + [1.0] * 5))
    assert st["scale"] == 1.0 and st["rotation"] == 0.0 and moves(st), st


def test_a_turning_object_at_unit_scale_is_read_as_before():
    from physcodegym.probes.scene.physics import pose_motion

    st = pose_motion(_track([1.0] * 10, turn=0.5))
    assert st["rotation"] == pytest.approx(0.5, abs=1e-9) and st["scale"] == pytest.approx(0.0, abs=1e-12), st
