"""A baked cache must be the saved scene's own physics: free the bake, simulate again, compare.

Why: Blender keeps a baked cache when the scene is edited after the bake. Measured in bpy 5.0: a ball
baked while a kinematic pusher shoves it, the pusher then deleted, is still baked and still flies 4.3 m;
a fall baked at 2 m/s² keeps falling slowly after gravity is set back to 9.81 and audits clean without
this check. The audit reads the bake; the solvers-off test (`probes.ownership`) sees a solver own the
motion, and the parameter checks read the restored settings. So whenever a cache is baked, the saved
scene is simulated again in a worker (`probes.cf_worker`, job `force_rebake`: caches freed, nothing else
changed) and the rendered simulated things are compared with the bake:

- a rigid body or a deforming mesh whose baked track departs from the re-simulation by more than
  `RESIM_TOL_M` (position, or a vertex, or its rotation measured as arc length at half its size);
- a particle system whose live-particle centroid departs by more than `RESIM_PARTICLE_TOL_M`, or whose
  live-particle count differs by more than `RESIM_COUNT_REL`.

Rigid bodies and cloth re-simulate bit for bit from a saved scene (measured on every shipped truth:
deviation 0). SPH particles do not (the solver depends on thread timing and memory layout), so particles
are compared on aggregates, with tolerances well above the measured noise of the shipped liquids.
Pure numpy here; the worker run is in `probes.audit`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.samples import SceneSamples

RESIM_TOL_M = 0.05  # m: a baked track departs from the saved scene's re-simulation by more than this
RESIM_MIN_FRAMES = 3  # ... on at least this many frames (a single-frame blip is not a different history)
RESIM_PARTICLE_TOL_M = 0.15  # m: live-particle centroid of the bake vs the re-simulation
RESIM_COUNT_REL = 0.25  # relative difference of the live-particle count (with at least RESIM_COUNT_MIN particles)
RESIM_COUNT_MIN = 20
RESIM_TAIL_FRAMES = 15  # frames re-simulated past the bake's last motion (a body the bake stops early falls on)
STEP_M = 1e-4  # m: a per-frame change below this is no motion


def _rot_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(F,) angle (rad) between the rotations of two (F, 4, 4) world-matrix tracks (scale removed)."""
    def unit(m: np.ndarray) -> np.ndarray:
        r = m[:, :3, :3].astype(np.float64)
        n = np.linalg.norm(r, axis=1, keepdims=True)
        return r / np.where(n > 1e-12, n, 1.0)

    ra, rb = unit(a), unit(b)
    tr = np.einsum("fij,fij->f", ra, rb)  # trace(ra^T rb)
    return np.arccos(np.clip((tr - 1.0) / 2.0, -1.0, 1.0))


def object_deviation(baked: SceneSamples, resim: SceneSamples, name: str, size_m: float, nf: int) -> np.ndarray | None:
    """(nf,) per-frame deviation (m) of one object between the bake and the re-simulation."""
    if name not in baked.names or name not in resim.names:
        return None
    a = baked.matrices[baked.index(name), :nf]
    b = resim.matrices[resim.index(name), :nf]
    d = np.linalg.norm(a[:, :3, 3] - b[:, :3, 3], axis=1)
    d = np.fmax(d, _rot_angle(a, b) * 0.5 * max(size_m, 0.0))
    va, vb = baked.verts.get(name), resim.verts.get(name)
    if va is not None and vb is not None and va.shape[1:] == vb.shape[1:]:
        dv = np.linalg.norm(va[:nf].astype(np.float64) - vb[:nf].astype(np.float64), axis=2)
        dv = np.where(np.isfinite(dv), dv, 0.0)
        d = np.fmax(d, dv.max(axis=1) if dv.shape[1] else 0.0)
    return np.nan_to_num(d, nan=0.0)


def _live(samples: SceneSamples, key: str, nf: int) -> tuple[np.ndarray, np.ndarray]:
    """(nf, 3) live-particle centroid (NaN where none) and (nf,) live count. Finite positions are the live ones
    (the sampler's alive flags are unreliable in bpy 5.0, see `probes.counterfactual.alive_particles`)."""
    P = samples.particles[key][:nf].astype(np.float64)
    live = np.isfinite(P).all(axis=2)
    flags = samples.particles_alive.get(key)
    if flags is not None and flags[:nf].any():
        live &= flags[:nf]
    n = live.sum(axis=1)
    s = np.where(live[..., None], np.nan_to_num(P), 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = s / n[:, None]
    c[n == 0] = np.nan
    return c, n


def last_motion_frame(samples: SceneSamples, objects: list[str], particle_keys: list[str]) -> int:
    """The last sampled frame on which a compared thing still moves in the bake (the first frame if none does).

    Why: the re-simulation is a full bake, the costliest part of the audit; past the bake's last motion plus
    `RESIM_TAIL_FRAMES` a different history would already show (a body the bake holds still falls on in the
    re-simulation within a few frames), so frames after that are not simulated again.
    """
    f = samples.frames
    if len(f) < 2:
        return int(f[-1]) if len(f) else 0
    moving = np.zeros(len(f) - 1, bool)
    for n in objects:
        if n in samples.names:
            t = samples.matrices[samples.index(n)].astype(np.float64)
            moving |= np.abs(np.diff(t.reshape(len(f), -1), axis=0)).max(axis=1) > STEP_M
        v = samples.verts.get(n)
        if v is not None and v.shape[1]:
            dv = np.abs(np.diff(np.nan_to_num(v.astype(np.float64)), axis=0)).reshape(len(f) - 1, -1).max(axis=1)
            moving |= dv > STEP_M
    for k in particle_keys:
        P = samples.particles.get(k)
        if P is not None and P.shape[1]:
            a = np.isfinite(P).all(axis=2)
            moving |= (a[1:] != a[:-1]).any(axis=1)
            dp = np.abs(np.diff(np.nan_to_num(P.astype(np.float64)), axis=0)).reshape(len(f) - 1, -1).max(axis=1)
            moving |= dp > STEP_M
    idx = np.nonzero(moving)[0]
    return int(f[idx[-1] + 1]) if len(idx) else int(f[0])


def compare(baked: SceneSamples, resim: SceneSamples, objects: dict[str, float],
            particle_keys: list[str]) -> dict[str, Any]:
    """Per thing compared, its largest deviation; `departs` lists the ones past the tolerances.

    `objects`: {name: size in m} of the rendered simulated objects; `particle_keys`: "emitter/system".
    Returns {"frames": nf, "objects": {name: {max_m, at_frame, frames_over}}, "particles": {key: {...}},
    "departs": {name or key: record}}.
    """
    nf = min(len(baked.frames), len(resim.frames))
    out: dict[str, Any] = {"frames": int(nf), "objects": {}, "particles": {}, "departs": {}}
    if nf == 0:
        return out
    frames = baked.frames[:nf]
    for name, size_m in objects.items():
        d = object_deviation(baked, resim, name, size_m, nf)
        if d is None:
            continue
        i = int(np.argmax(d))
        over = d > RESIM_TOL_M
        rec = {"max_m": round(float(d[i]), 5), "at_frame": int(frames[i]), "frames_over": int(over.sum()),
               "first_frame_over": int(frames[np.argmax(over)]) if over.any() else None, "per_frame": d}
        out["objects"][name] = {k: v for k, v in rec.items() if k != "per_frame"}
        if int(over.sum()) >= RESIM_MIN_FRAMES:
            out["departs"][name] = rec
    for key in particle_keys:
        if key not in baked.particles or key not in resim.particles:
            continue
        ca, na = _live(baked, key, nf)
        cb, nb = _live(resim, key, nf)
        dc = np.linalg.norm(ca - cb, axis=1)
        dc = np.where(np.isfinite(dc), dc, 0.0)
        big = np.maximum(na, nb)
        rel = np.where(big >= RESIM_COUNT_MIN, np.abs(na - nb) / np.maximum(big, 1), 0.0)
        over = (dc > RESIM_PARTICLE_TOL_M) | (rel > RESIM_COUNT_REL)
        i, j = int(np.argmax(dc)), int(np.argmax(rel))
        rec = {"centroid_max_m": round(float(dc[i]), 5), "centroid_at_frame": int(frames[i]),
               "count_max_rel": round(float(rel[j]), 4), "count_at_frame": int(frames[j]),
               "count_baked": int(na[j]), "count_resimulated": int(nb[j]), "frames_over": int(over.sum()),
               "first_frame_over": int(frames[np.argmax(over)]) if over.any() else None, "per_frame": dc}
        out["particles"][key] = {k: v for k, v in rec.items() if k != "per_frame"}
        if int(over.sum()) >= RESIM_MIN_FRAMES:
            out["departs"][key] = rec
    return out
