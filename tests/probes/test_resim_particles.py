"""How a re-simulated liquid is compared with its bake (`probes.branches.resimulation`), on synthetic particle tracks.

Why synthetic: the three situations below are what real SPH bakes do, but a real bake cannot be made to do one
of them on purpose in a test (which drops escape, how a memory layout perturbs the solver). Each case was
measured on the shipped hose_jet truth (numbers in the module docstring); the real-bake side is covered by
`tests/probes/test_resimulation.py` (attractor deleted after the bake) and the SPH tasks' `stale_bake` self-test.
"""

from __future__ import annotations

import numpy as np
from physcodegym.probes.branches.resimulation import (
    RESIM_PARTICLE_TOL_M,
    RESIM_YOUNG_AGES,
    RESIM_YOUNG_TOL_M,
    compare,
    departing_particles,
)
from physcodegym.samples import SceneSamples

KEY = "Spout/Water"
NF, NP = 60, 400


def _samples(P: np.ndarray) -> SceneSamples:
    return SceneSamples(frames=np.arange(1, len(P) + 1), fps=30.0, names=[], matrices=np.zeros((0, len(P), 4, 4)),
                        particles={KEY: P.astype(np.float32)}, particles_alive={KEY: np.isfinite(P).all(axis=2)})


def _pool(seed: int, births: np.ndarray | None = None) -> np.ndarray:
    """(NF, NP, 3) drops born 10 a frame at the spout, falling into a 0.4 m tray where they jiggle (seeded)."""
    rng = np.random.default_rng(seed)
    births = np.repeat(np.arange(NP // 10), 10) if births is None else births
    P = np.full((NF, NP, 3), np.nan)
    rest = np.c_[rng.uniform(-0.2, 0.2, (NP, 2)), np.zeros(NP)]
    for i in range(NP):
        for f in range(births[i], NF):
            a = f - births[i]
            if a < 6:  # flight: deterministic from the spout
                P[f, i] = (0.05 * a, 0.0, 0.5 - 0.0136 * a * a)
            else:
                P[f, i] = rest[i] + rng.normal(0, 0.01, 3) * [1, 1, 0]
    return P


def test_a_few_escaped_drops_do_not_move_the_bulk() -> None:
    """Drops that miss the tray fall for ever: which few escape is chaos, and a mean follows them (hose_jet: 0.72
    m between two honest bakes); the quartiles do not."""
    bake = _pool(1)
    resim = bake.copy()
    for i in range(5):  # five drops escape in the bake only, falling to -300 m
        f0 = 10 + i
        bake[f0 + 20:, 100 + i, 2] = -np.linspace(1, 300, NF - f0 - 20)
    mean_shift = np.nanmax(np.linalg.norm(np.nanmean(bake, axis=1) - np.nanmean(resim, axis=1), axis=1))
    assert mean_shift > 1.0  # a mean would call this an edited bake
    doc = compare(_samples(bake), _samples(resim), {}, [KEY])
    assert doc["departs"] == {}, doc["particles"]
    assert doc["particles"][KEY]["bulk_max_m"] < RESIM_PARTICLE_TOL_M


def test_a_chaotic_liquid_is_judged_against_its_own_spread() -> None:
    """Pooled drops that settle elsewhere in every simulation (same flight, other jiggle) depart past the fixed
    tolerance; re-seeded simulations of the saved scene spread as much, so the bake is one of them."""
    bake, resim = _pool(1), _pool(1)
    bake[30:, :, 0] += 0.25  # the pool lies 0.25 m away in the bake...
    others = [_pool(2), _pool(3)]
    others[0][30:, :, 0] += 0.3  # ... and the re-seeded simulations differ among each other as much
    first = compare(_samples(bake), _samples(resim), {}, [KEY])
    assert KEY in first["departs"] and departing_particles(first) == [KEY]
    assert first["particles"][KEY]["young"]["departs"] is False
    doc = compare(_samples(bake), _samples(resim), {}, [KEY], reseeded=[_samples(o) for o in others])
    assert doc["departs"] == {}, doc["particles"][KEY]
    assert doc["particles"][KEY]["noise"]["spread_max_m"] >= 0.25


def test_an_edit_that_moves_the_pool_beyond_the_spread_still_departs() -> None:
    """The noise floor is not a licence: a pool 1.5 m away from every simulation of the saved scene departs."""
    bake, resim = _pool(1), _pool(1)
    bake[30:, :, 0] += 1.5
    others = [_pool(2), _pool(3)]
    doc = compare(_samples(bake), _samples(resim), {}, [KEY], reseeded=[_samples(o) for o in others])
    assert KEY in doc["departs"], doc["particles"][KEY]


def test_young_particles_that_fly_differently_depart_without_a_noise_floor() -> None:
    """Another gravity bends every drop's flight from its first frames: the young particles depart from the same
    particles re-simulated (no re-seeding needed), though the pool ends where it would."""
    bake, resim = _pool(1), _pool(1)
    births = np.repeat(np.arange(NP // 10), 10)
    for i in range(NP):
        for a in range(1, min(6, NF - births[i])):
            bake[births[i] + a, i, 2] += 0.0068 * a * a  # half gravity in flight
    doc = compare(_samples(bake), _samples(resim), {}, [KEY])
    y = doc["particles"][KEY]["young"]
    assert y["departs"] and y["median_m"] > RESIM_YOUNG_TOL_M, y
    assert KEY in doc["departs"] and departing_particles(doc) == []
    assert np.array_equal(bake[-1], resim[-1], equal_nan=True)  # the pool ends the same: only the flight tells


def test_a_different_memory_layout_is_not_an_edit() -> None:
    """Between two memory layouts SPH drifts slowly from the first contacts on (hose_jet: 0 mm median at 4
    frames of age, 0.25 m in the quartiles by frame 177): young particles agree and the bulk's drift is
    within what re-seeded simulations spread, so the bake stands."""
    bake, resim = _pool(1), _pool(1)
    births = np.repeat(np.arange(NP // 10), 10)
    for i in range(NP):
        f0 = births[i] + RESIM_YOUNG_AGES + 1
        bake[f0:, i, 0] += np.linspace(0, 0.25, NF)[: NF - f0]  # drift only after the young frames
    first = compare(_samples(bake), _samples(resim), {}, [KEY])
    assert first["particles"][KEY]["young"]["median_m"] == 0.0
    others = [_pool(2), _pool(3)]
    others[1][20:, :, 0] += 0.3
    doc = compare(_samples(bake), _samples(resim), {}, [KEY], reseeded=[_samples(o) for o in others])
    assert doc["departs"] == {}, doc["particles"][KEY]


def test_a_bake_with_another_particle_count_departs() -> None:
    """Emission changed after the bake (another count): the particles are not the same ones, which departs."""
    bake, resim = _pool(1), _pool(1)[:, : NP // 2]
    doc = compare(_samples(bake), _samples(resim), {}, [KEY])
    assert doc["particles"][KEY]["young"]["departs"] and doc["particles"][KEY]["young"]["median_m"] is None
    assert KEY in doc["departs"]
