"""Which particles a rubric check or a counterfactual measure counts (`probes.branches.counterfactual.alive_particles`).

On sample arrays shaped like a real SPH sample (unborn drops wait at the emitter with finite positions, as the
sampler reads them from bpy): a frame with no live drop has nothing to count, so a `contacts` criterion cannot
pass on frame 1 through drops not yet born, and `particles_inside` on a frame where every drop died is no fraction.
"""

from __future__ import annotations

import numpy as np
from physcodegym.probes.branches.counterfactual import alive_particles
from physcodegym.samples import SceneSamples

KEY = "Mouth/Water"


def _samples(alive: np.ndarray) -> SceneSamples:
    nf, n = alive.shape
    P = np.zeros((nf, n, 3), np.float32)
    P[:, :, 2] = 0.044  # every drop, born or not, has a finite place (the unborn ones at the emitter)
    return SceneSamples(frames=np.arange(1, nf + 1), fps=30.0, names=[], matrices=np.zeros((0, nf, 4, 4)),
                        particles={KEY: P}, particles_alive={KEY: alive})


def test_a_frame_before_the_first_birth_has_no_particle() -> None:
    alive = np.zeros((5, 4), bool)
    alive[2:, :2] = True  # two drops born on the third frame
    s = _samples(alive)
    assert len(alive_particles(s, KEY, 0)) == 0  # before: all 4 unborn drops, 4.4 cm above the bowl floor
    assert len(alive_particles(s, KEY, 1)) == 0
    assert len(alive_particles(s, KEY, 2)) == 2


def test_a_frame_after_every_drop_died_has_no_particle() -> None:
    alive = np.zeros((4, 3), bool)
    alive[:2] = True
    assert len(alive_particles(_samples(alive), KEY, 3)) == 0


def test_a_mask_empty_on_every_frame_falls_back_to_the_finite_positions() -> None:
    """Sample files written before the sampler read ALIVE (3) right have no alive flag at all."""
    s = _samples(np.zeros((3, 4), bool))
    s.particles[KEY][1, 3] = np.nan
    assert len(alive_particles(s, KEY, 0)) == 4 and len(alive_particles(s, KEY, 1)) == 3
