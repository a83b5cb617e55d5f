"""A baked cache must be the saved scene's own physics: free the bake, simulate again, compare.

Why: Blender keeps a baked cache when the scene is edited after the bake. Measured in bpy 5.0: a ball
baked while a kinematic pusher shoves it, the pusher then deleted, is still baked and still flies 4.3 m;
a fall baked at 2 m/s² keeps falling slowly after gravity is set back to 9.81 and audits clean without
this check. The audit reads the bake; the solvers-off test (`probes.branches.ownership`) sees a solver own the
motion, and the parameter checks read the restored settings. So whenever a cache is baked, the saved
scene is simulated again in a worker (`probes.rebake.cf_worker`, job `force_rebake`: caches freed, nothing else
changed) and the rendered simulated things are compared with the bake:

- a rigid body or a deforming mesh whose baked track departs from the re-simulation by more than
  `RESIM_TOL_M` (position, or a vertex, or its rotation measured as arc length at half its size);
- a particle system whose live particles' bulk departs by more than `RESIM_PARTICLE_TOL_M` (the largest shift
  of their per-axis quartiles: where the middle half of the liquid is), or whose live-particle count differs
  by more than `RESIM_COUNT_REL`.

Rigid bodies and cloth re-simulate bit for bit from a saved scene (measured on every shipped truth:
deviation 0), within one memory layout: a self-colliding cloth re-run in another environment can drift a few
cm over 240 frames (cloth_drape_s4, 7 cm), which the 5 cm tolerance does not always absorb, one more reason for
the runs below. A scene of cloth and particles only is not re-baked in full: a cloth's fast phase is simulated
again from the first frame and the rest in short runs restarted from the bake's own state (`resim_plan`; a
particle cache through a private disk copy, `cf_worker.resimulate_runs`).
SPH particles do not re-simulate bit for bit (the solver depends on thread timing and memory layout), so particles
are compared on aggregates, with tolerances well above the measured noise of the shipped liquids. The
aggregate is robust, not a mean: in hose_jet about 300 of 1600 drops miss the tray and fall for ever (z of
-312 m at frame 240), so which handful of drops escapes, a matter of thread timing, moved the mean 0.72 m
in one CI run while the liquid on screen was the same; quartiles ignore the escapees (up to a quarter of
the particles) and still move with any edit that moves the liquid (a deleted attractor, another gravity).

Quartiles are not enough on their own: SPH is chaotic, and its result depends on the memory layout of the
process (measured: the same hose_jet truth baked in a checkout at /check/work/main and at /work/main, each
bit-identical run to run, differs by 0.25 m in its quartiles at frame 177; re-seeding its particle system
moves them 0.24-0.27 m as well). So when a particle system departs past the tolerances, the saved scene is
simulated `RESIM_NOISE_SAMPLES` more times with other particle seeds (the same physics, another microstate),
the bake is compared with the closest of those simulations, and a departure must also exceed
`RESIM_NOISE_FACTOR` x their spread among each other. An edit that changes the physics moves the bake
away from every one of them; the liquid's own chaos does not.
Pure numpy here; the worker run is in `probes.audit.audit`.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from physcodegym.samples import SceneSamples

RESIM_TOL_M = 0.05  # m: a baked track departs from the saved scene's re-simulation by more than this
RESIM_MIN_FRAMES = 3  # ... on at least this many frames (a single-frame blip is not a different history)
RESIM_PARTICLE_TOL_M = 0.15  # m: live-particle centroid of the bake vs the re-simulation
RESIM_COUNT_REL = 0.25  # relative difference of the live-particle count (with at least RESIM_COUNT_MIN particles)
RESIM_COUNT_MIN = 20
RESIM_YOUNG_AGES = 4  # frames: a particle is young for this many frames after its birth (still in free flight)
RESIM_YOUNG_MIN = 10  # young particles a frame needs to count
RESIM_YOUNG_TOL_M = 0.01  # m: median (over frames) of the per-frame median distance of young particles, bake vs
# re-simulation: measured 0.000 (liquid_duck) and 0.002 (hose_jet) between two memory layouts; 0.024 and 0.033
# for the same truths baked at half gravity
RESIM_NOISE_SAMPLES = 2  # re-simulations with other particle seeds when a liquid departs past the tolerances
RESIM_NOISE_FACTOR = 2.0  # ... a departure must exceed this many times their spread among each other
RESIM_TAIL_FRAMES = 15  # frames re-simulated past the bake's last motion (a body the bake stops early falls on)
STEP_M = 1e-4  # m: a per-frame change below this is no motion
# The re-simulation of a scene of cloth and particles only in runs restarted from the bake's own state (`resim_plan`):
RESTARTING_SOLVERS = {"CLOTH", "PARTICLES"}  # caches that restart bit for bit (measured: the shipped cloths; SPH
# milk_pour at 120 and hose_jet at 150, 8 frames each, deviation 0, on one CPU in the simulation environment)
FAST_STEP_M = 0.005  # m per frame: until the bake's steps stay below this, one run from the first frame
HEAD_TAIL_FRAMES = 8  # frames the run from the first frame goes on past the fast phase (restarted runs follow)
SEGMENT_FRAMES = 5  # frames simulated by each later run, from the bake's state at its first frame: a support
# taken away shows within them (free fall: 3.5 cm in 5 frames at 30 fps, past `SEGMENT_TOL_M`)
PARTICLE_SEGMENT_FRAMES = 8  # ... with particles: a particle system is compared on aggregates, and young
# particles (born within the run) need the frames to fall apart; a liquid's first run also keeps `RESIM_TAIL_FRAMES`
# past the first frame (its pour is fast all along: liquid_duck's starts at frame 9). With 5-frame runs and an
# 8-frame first run, liquid_duck baked at half gravity was no longer caught
SEGMENT_EVERY = 24  # one later run every this many frames, at a phase drawn at audit time from the operating
# system's random source, so a program cannot know which frames are simulated again (a deterministic plan told it
# where a short-lived helper would go unseen). Measured on cloth_drape: 8-frame runs cost 1.1 s each of a 14.6 s
# re-simulation (0.14 s a frame, both cores), 5-frame runs 0.8 s
SEGMENT_TOL_M = 0.01  # m: a restarted run departs from the bake by more than this (the run from the first frame
# keeps `RESIM_TOL_M`). Measured 0 on the shipped cloths; but a self-colliding cloth is not bit for bit across memory
# layouts: cloth_drape_s4 re-run in another environment first differs at frame 14, by 1.7 mm at frame 25 and 1 cm at
# frame 49, so a run's own noise can grow, from an exact start, to well under this in `SEGMENT_FRAMES`


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


QUARTILES = (0.25, 0.5, 0.75)


def _live(samples: SceneSamples, key: str, nf: int) -> tuple[np.ndarray, np.ndarray]:
    """(nf, 3, 3) per-axis quartiles of the live particles ([frame, quartile, axis]; NaN where none) and (nf,)
    live count. Finite positions are the live ones (the sampler's alive flags are unreliable in bpy 5.0, see
    `probes.branches.counterfactual.alive_particles`)."""
    P = samples.particles[key][:nf].astype(np.float64)
    live = np.isfinite(P).all(axis=2)
    flags = samples.particles_alive.get(key)
    if flags is not None and flags[:nf].any():
        live &= flags[:nf]
    n = live.sum(axis=1)
    P = np.where(live[..., None], P, np.nan)
    q = np.full((len(P), len(QUARTILES), 3), np.nan)
    some = n > 0
    if some.any():
        q[some] = np.moveaxis(np.nanquantile(P[some], QUARTILES, axis=1), 0, 1)
    return q, n


def young_departure(baked: SceneSamples, resim: SceneSamples, key: str, nf: int) -> np.ndarray | None:
    """(nf,) per frame, the median distance between the bake and the re-simulation of the same particles (same
    index, same seed) over those born at most `RESIM_YOUNG_AGES` frames before; NaN on frames with fewer than
    `RESIM_YOUNG_MIN` of them. None when the two hold different particles altogether (another count).

    Why: a young particle is still near its emitter and has met few neighbours, so it is where SPH's chaos has
    not yet had time to grow (measured median 0-2 mm between memory layouts), while gravity, a field or a
    collider near the emitter acts on it from its first frame (half gravity: 24-33 mm at 4 frames)."""
    A = baked.particles[key][:nf].astype(np.float64)
    B = resim.particles[key][:nf].astype(np.float64)
    if A.shape != B.shape:
        return None  # other particles altogether (count or emission changed after the bake)
    la, lb = np.isfinite(A).all(axis=2), np.isfinite(B).all(axis=2)
    fa = baked.particles_alive.get(key)
    if fa is not None and fa[:nf].any():
        la &= fa[:nf]
    fb = resim.particles_alive.get(key)
    if fb is not None and fb[:nf].any():
        lb &= fb[:nf]
    birth = np.where(la.any(axis=0), np.argmax(la, axis=0), nf + RESIM_YOUNG_AGES + 1)
    age = np.arange(nf)[:, None] - birth[None, :]
    young = (age >= 1) & (age <= RESIM_YOUNG_AGES) & la & lb
    d = np.where(young, np.linalg.norm(np.nan_to_num(A) - np.nan_to_num(B), axis=2), np.nan)
    out = np.full(nf, np.nan)
    some = young.sum(axis=1) >= RESIM_YOUNG_MIN
    if some.any():
        out[some] = np.nanmedian(d[some], axis=1)
    return out


def bulk_shift(qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
    """(nf,) largest shift (m) of any quartile point between two `_live` quartile tracks; 0 where either has
    no live particle (the count check covers that)."""
    d = np.linalg.norm(qa - qb, axis=2).max(axis=1)
    return np.where(np.isfinite(d), d, 0.0)


def last_motion_frame(samples: SceneSamples, objects: list[str], particle_keys: list[str],
                      step_m: float = STEP_M) -> int:
    """The last sampled frame on which a compared thing still moves in the bake (the first frame if none does).

    Why: the re-simulation is a full bake, the costliest part of the audit; past the bake's last motion plus
    `RESIM_TAIL_FRAMES` a different history would already show (a body the bake holds still falls on in the
    re-simulation within a few frames), so frames after that are not simulated again.
    """
    f = samples.frames
    if len(f) < 2:
        return int(f[-1]) if len(f) else 0
    STEP_M = step_m  # noqa: N806 - the threshold of this call (the fast phase of `resim_plan` passes its own)
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


def resim_things(samples: SceneSamples) -> tuple[dict[str, float], list[str]]:
    """What the re-simulation compares: rendered simulated objects ({name: size}) and solver particle systems."""
    from physcodegym.probes.scene import physics as ph

    objects = {n: ph.size(samples.info[n]) for n in samples.names
               if samples.info.get(n, {}).get("type") in ph.GEOMETRY_TYPES and ph.rendered(samples.info[n])
               and (ph.dynamic(samples.info[n], samples.scene_info) or ph.solver_modifiers(samples.info[n]))}
    return objects, sorted(samples.particles)


def resim_end(samples: SceneSamples) -> int:
    """The last frame the re-simulation bakes: the bake's last motion of a compared thing plus
    `RESIM_TAIL_FRAMES`, within the sampled range. One rule whether the audit or the worker (which samples the
    bake itself when it is started before the audit has) computes it."""
    if not len(samples.frames):
        return 0
    objects, keys = resim_things(samples)
    first, last = int(samples.frames[0]), int(samples.frames[-1])
    return max(first, min(last, last_motion_frame(samples, list(objects), keys) + RESIM_TAIL_FRAMES))


def restart_obstacle(samples: SceneSamples) -> str | None:
    """Why the re-simulation cannot restart from the bake's own frames (`resim_plan`), or None when it can: every
    simulation of the scene is cloth, whose cache holds its whole state (positions and velocities)."""
    from physcodegym.probes.scene import physics as ph

    others = sorted({t for i in samples.info.values() for t in ph.solver_modifiers(i)} - RESTARTING_SOLVERS)
    if others:
        return (f"it simulates {', '.join(others).lower()} (only cloth and particles are measured to restart bit "
                "for bit)")
    if any(ph.dynamic(i, samples.scene_info) for i in samples.info.values()):
        return "it has rigid bodies (Bullet's contact state is not in the cache)"
    objects, keys = resim_things(samples)
    if not objects and not keys:
        return "nothing it simulates is rendered"
    return None


def resim_plan(samples: SceneSamples, rng: random.Random | None = None) -> list[tuple[int, int]]:
    """The frame runs the re-simulation simulates again: [(first, last)] inclusive, in frame order.

    One run from the first frame to `resim_end` unless the scene's simulations are all cloth and particles
    (`restart_obstacle`). Then the run
    from the first frame covers the fast phase (until the bake's per-frame step falls below `FAST_STEP_M`, plus
    `HEAD_TAIL_FRAMES`), and after it one run of `SEGMENT_FRAMES` every `SEGMENT_EVERY` frames up to `resim_end`
    (with particles: `RESIM_TAIL_FRAMES` and `PARTICLE_SEGMENT_FRAMES`),
    each restarted from the bake's own state at its first frame, at a phase drawn from `rng` (the operating
    system's random source unless a test passes one).

    Why: a full re-bake of a self-colliding cloth costs as much as the run's own bake (cloth_drape: 40 s of an
    84 s run), so the audit could not stay within a quarter of the run. A cloth restarted from its cache
    reproduces the bake bit for bit (measured: frames 121-140 of cloth_drape restarted at 120, deviation 0), so
    each later run checks that the solver makes those frames from the bake's state, with a tolerance of
    `SEGMENT_TOL_M` (the run from the first frame keeps `RESIM_TOL_M`: `resim_tolerances`). What it gives up:
    a change of the physics that acted only between two runs after the fast phase (a helper touched for a few
    frames, then deleted) is seen only if a run falls on it: with the secret phase, a change lasting k frames
    with a chance of about (k + run length) / `SEGMENT_EVERY`, and always from 20 frames on (cloth). A change that
    lasts (a support deleted, a setting changed) is seen by every run after it.
    """
    f = samples.frames
    if not len(f):
        return []
    first, end = int(f[0]), resim_end(samples)
    if restart_obstacle(samples) is not None:
        return [(first, end)]
    objects, keys = resim_things(samples)
    # a pouring liquid is fast all along: the fast phase is read on the objects (cloth) only
    seg, tail = (PARTICLE_SEGMENT_FRAMES, RESIM_TAIL_FRAMES) if keys else (SEGMENT_FRAMES, HEAD_TAIL_FRAMES)
    head_end = min(end, last_motion_frame(samples, list(objects), [], step_m=FAST_STEP_M) + tail)
    if end - head_end <= SEGMENT_EVERY:
        return [(first, end)]
    runs = []
    b = end - (rng or random.SystemRandom()).randrange(SEGMENT_EVERY - seg)
    while b - seg > head_end:
        runs.append((b - seg, b))
        b -= SEGMENT_EVERY
    return [(first, head_end)] + runs[::-1]


def resim_tolerances(frames: np.ndarray, runs: list[tuple[int, int]]) -> np.ndarray:
    """(F,) per-frame tolerance (m) for the frames of a re-simulation in `runs` (`resim_plan`): `RESIM_TOL_M` on
    the run from the first frame (its noise can grow over the whole run), `SEGMENT_TOL_M` on the restarted runs."""
    a0, b0 = runs[0]
    f = np.asarray(frames)
    return np.where((f >= a0) & (f <= b0), RESIM_TOL_M, SEGMENT_TOL_M)


def compare(baked: SceneSamples, resim: SceneSamples, objects: dict[str, float],
            particle_keys: list[str], reseeded: list[SceneSamples] = (),
            tol_m: float | np.ndarray = RESIM_TOL_M) -> dict[str, Any]:
    """Per thing compared, its largest deviation; `departs` lists the ones past the tolerances.

    `objects`: {name: size in m} of the rendered simulated objects; `particle_keys`: "emitter/system";
    `reseeded`: re-simulations of the saved scene with other particle seeds (`particle_noise`), or none.
    Returns {"frames": nf, "objects": {name: {max_m, at_frame, frames_over}}, "particles": {key: {...}},
    "departs": {name or key: record}}.
    """
    nf = min([len(baked.frames), len(resim.frames)] + [len(r.frames) for r in reseeded])
    out: dict[str, Any] = {"frames": int(nf), "objects": {}, "particles": {}, "departs": {}}
    if nf == 0:
        return out
    frames = baked.frames[:nf]
    for name, size_m in objects.items():
        d = object_deviation(baked, resim, name, size_m, nf)
        if d is None:
            continue
        i = int(np.argmax(d))
        thr = np.broadcast_to(np.asarray(tol_m, dtype=np.float64), (len(d),)).copy() if np.ndim(tol_m) == 0 \
            else np.asarray(tol_m, dtype=np.float64)[:nf]
        over = d > thr
        rec = {"max_m": round(float(d[i]), 5), "at_frame": int(frames[i]), "frames_over": int(over.sum()),
               "first_frame_over": int(frames[np.argmax(over)]) if over.any() else None, "per_frame": d,
               "per_frame_threshold": thr}
        out["objects"][name] = {k: v for k, v in rec.items() if not k.startswith("per_frame")}
        if int(over.sum()) >= RESIM_MIN_FRAMES:
            out["departs"][name] = rec
    for key in particle_keys:
        sims = [r for r in (resim, *reseeded) if key in r.particles]
        if key not in baked.particles or key not in resim.particles:
            continue
        rec = _particle_record(baked, sims, key, nf, frames, noise=len(sims) > 1)
        young = young_departure(baked, resim, key, nf)
        if young is None:
            rec["young"] = {"median_m": None, "frames": 0, "departs": True,
                            "reason": "the bake and the re-simulation hold different numbers of particles"}
            rec["frames_over"] = max(rec["frames_over"], RESIM_MIN_FRAMES)
            if rec["first_frame_over"] is None:
                rec["first_frame_over"] = int(frames[0])
        else:
            ok = np.isfinite(young)
            ym = float(np.median(young[ok])) if ok.any() else 0.0
            rec["young"] = {"median_m": round(ym, 5), "frames": int(ok.sum()), "departs": bool(ym > RESIM_YOUNG_TOL_M)}
            if rec["young"]["departs"]:
                yo = ok & (young > RESIM_YOUNG_TOL_M)
                rec.update(per_frame=np.where(ok, young, 0.0), per_frame_threshold=np.full(nf, RESIM_YOUNG_TOL_M),
                           frames_over=max(int(yo.sum()), RESIM_MIN_FRAMES),
                           first_frame_over=int(frames[np.argmax(yo)]) if yo.any() else int(frames[np.argmax(ok)]))
        out["particles"][key] = {k: v for k, v in rec.items() if not k.startswith("per_frame")}
        if rec["frames_over"] >= RESIM_MIN_FRAMES:
            out["departs"][key] = rec
    return out


def _particle_record(baked: SceneSamples, sims: list[SceneSamples], key: str, nf: int, frames: np.ndarray,
                     noise: bool) -> dict[str, Any]:
    """The bake against the closest of the saved scene's simulations, per frame, with the threshold raised to
    `RESIM_NOISE_FACTOR` x the spread among those simulations when there are several (running maximum:
    chaos only grows)."""
    qa, na = _live(baked, key, nf)
    lives = [_live(r, key, nf) for r in sims]

    def count_rel(n1: np.ndarray, n2: np.ndarray) -> np.ndarray:
        big = np.maximum(n1, n2)
        return np.where(big >= RESIM_COUNT_MIN, np.abs(n1 - n2) / np.maximum(big, 1), 0.0)

    dc = np.min([bulk_shift(qa, q) for q, _ in lives], axis=0)
    rel = np.min([count_rel(na, n) for _, n in lives], axis=0)
    spread_m, spread_rel = np.zeros(nf), np.zeros(nf)
    for i in range(len(lives)):
        for j in range(i + 1, len(lives)):
            spread_m = np.maximum(spread_m, bulk_shift(lives[i][0], lives[j][0]))
            spread_rel = np.maximum(spread_rel, count_rel(lives[i][1], lives[j][1]))
    spread_m, spread_rel = np.maximum.accumulate(spread_m), np.maximum.accumulate(spread_rel)
    thr_m = np.maximum(RESIM_PARTICLE_TOL_M, RESIM_NOISE_FACTOR * spread_m)
    thr_rel = np.maximum(RESIM_COUNT_REL, RESIM_NOISE_FACTOR * spread_rel)
    over = (dc > thr_m) | (rel > thr_rel)
    nb = lives[int(np.argmin([count_rel(na, n)[int(np.argmax(rel))] for _, n in lives]))][1]
    i, j = int(np.argmax(dc)), int(np.argmax(rel))
    rec: dict[str, Any] = {
        "bulk_max_m": round(float(dc[i]), 5), "bulk_at_frame": int(frames[i]),
        "count_max_rel": round(float(rel[j]), 4), "count_at_frame": int(frames[j]),
        "count_baked": int(na[j]), "count_resimulated": int(nb[j]), "frames_over": int(over.sum()),
        "first_frame_over": int(frames[np.argmax(over)]) if over.any() else None,
        "per_frame": dc, "per_frame_threshold": thr_m}
    if noise:
        rec["noise"] = {"simulations": len(sims), "spread_max_m": round(float(spread_m[-1]), 5),
                        "count_spread_max_rel": round(float(spread_rel[-1]), 4),
                        "threshold_max_m": round(float(thr_m[-1]), 5)}
    return rec


def departing_particles(doc: dict[str, Any]) -> list[str]:
    """The particle systems of a `compare` result whose bulk departs past the fixed tolerances while their young
    particles do not: those need the noise floor of re-seeded simulations before they count."""
    return [k for k in doc.get("departs", {})
            if k in doc.get("particles", {}) and not doc["particles"][k].get("young", {}).get("departs")]


# Calls that bake a cache (a program that edits the scene after one of these and saves keeps a stale bake).
_BAKE_CALLS = ("bake_all", "bake")
# edits no bake reads (output paths, display, the current frame)
_NOT_PHYSICS = ("save_as_mainfile", "render.", "filepath", "image_settings", "display.", "frame_current")
_REMOVING_CALLS = ("remove", "unlink", "delete", "constraint_remove", "object_remove", "modifier_remove", "free_bake")


def edits_after_bake(program_text: str | None, limit: int = 12) -> list[str]:
    """What a scene program changes after it bakes a cache ("line N: <statement>"), read from its text: the
    settings a stale cache no longer matches (`stale_cache`). Assignments and removals that follow the first
    bake call in source order (a bake inside a function counts where the function is defined: the text, not a
    trace); [] when there is no program, no bake call, or the text does not parse."""
    import ast

    if not program_text:
        return []
    try:
        tree = ast.parse(program_text)
    except (SyntaxError, ValueError):
        return []
    # a bake inside a function happens where the function is called (a program that defines `bake_and_save()`
    # near its top and builds the scene below it edits nothing after the bake)
    funcs = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    bake_line, wrapper, inner = None, None, 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _BAKE_CALLS:
            path = ast.unparse(node.func)
            if "ptcache" in path or "point_cache" in path:
                owner = next((f for f in funcs if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)), None)
                line = node.lineno
                if owner is not None:
                    calls = [c.lineno for c in ast.walk(tree) if isinstance(c, ast.Call)
                             and getattr(c.func, "id", getattr(c.func, "attr", None)) == owner.name
                             and not owner.lineno <= c.lineno <= (owner.end_lineno or owner.lineno)]
                    if not calls:
                        continue
                    line = min(calls)
                if bake_line is None or line < bake_line:
                    bake_line, wrapper, inner = line, owner, node.lineno
    if bake_line is None:
        return []
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        in_func = [f for f in funcs if f.lineno <= line <= (f.end_lineno or f.lineno)]
        after = (wrapper in in_func and line > inner) if wrapper is not None and in_func else (
            line > bake_line and not in_func)
        if not after:
            continue  # a function's statements count where it is called: only the bake's own function is read
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets):
                out.append((line, ast.unparse(node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _REMOVING_CALLS:
            out.append((line, ast.unparse(node)))
    seen: set[str] = set()
    rows = []
    for line, text in sorted(out):
        if any(w in text for w in _NOT_PHYSICS) or text in seen:
            continue
        seen.add(text)
        rows.append(f"line {line}: {text[:120]}")
    return rows[:limit]
