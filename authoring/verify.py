"""Check that a shipped task's truth trajectories match a fresh re-run of its truth.py.

Why: the truth trajectories are what counterfactual expectations, event intervals and probes are
measured against; if truth.py no longer reproduces them (changed program, non-deterministic
scene, different Blender) the task is stale. The re-run is bake-only (render calls dropped by the
sandbox runner), then sampled in a fresh process like the build does.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.samples import SceneSamples

TOL_M = 1e-4  # metres; rigid/cloth bakes are deterministic, this only absorbs float32 storage
# SPH particle liquids: Blender's SPH solver depends on thread scheduling and on the process's memory layout (measured
# 2026-12-03: liquid_duck baked one of a few liquids per run; on one CPU with address randomisation off it still
# changed with the length of the run folder's name). Since the sandbox runner starts every program on one CPU with
# randomisation off behind a fixed in-wall layout (sandbox.runner, sandbox.isolation.layout), a re-run bakes the same
# liquid as the build did, in bake-only and full mode. Particles are still compared as a flow, per frame, on particles
# inside the scene (|x|,|y| < 1 m, z > -0.05 m: on or above the table; the rest fell off it): alive masks equal,
# in-scene fraction and centroid close, so that a pack built on another machine (another CPU, another bpy build) is
# judged by what a viewer would see; `identical_frames` says how long the re-run was bit-identical.
SCENE_HALF_XY, SCENE_MIN_Z = 1.0, -0.05
PARTICLE_FRACTION_TOL = 0.08
PARTICLE_CENTROID_TOL_M = 0.2


def _in_scene(P: np.ndarray, A: np.ndarray) -> np.ndarray:
    Q = np.nan_to_num(P.astype(np.float64), nan=1e9)
    return A & (np.abs(Q[..., 0]) < SCENE_HALF_XY) & (np.abs(Q[..., 1]) < SCENE_HALF_XY) & (Q[..., 2] > SCENE_MIN_Z)


def compare_particles(Pa: np.ndarray, Aa: np.ndarray, Pb: np.ndarray, Ab: np.ndarray) -> dict[str, Any]:
    """Flow-level comparison of two particle tracks (F, P, 3) + alive (F, P)."""
    both = Aa & Ab
    d = np.where(both,
                 np.linalg.norm(np.nan_to_num(Pa.astype(np.float64)) - np.nan_to_num(Pb.astype(np.float64)), axis=2),
                 0.0)
    diverged = np.nonzero(d.max(axis=1) > TOL_M)[0]
    ia, ib = _in_scene(Pa, Aa), _in_scene(Pb, Ab)
    na, nb = Aa.sum(axis=1), Ab.sum(axis=1)
    frac = np.abs(ia.sum(axis=1) - ib.sum(axis=1)) / np.maximum(np.maximum(na, nb), 1)
    cen = 0.0
    for f in range(Pa.shape[0]):
        if ia[f].any() and ib[f].any():
            cen = max(cen,
                      float(np.linalg.norm(
                          Pa[f][ia[f]].astype(np.float64).mean(0) - Pb[f][ib[f]].astype(np.float64).mean(0))))
    return {
        "alive_equal": bool(np.array_equal(Aa, Ab)),
        "identical_frames": int(diverged[0]) if diverged.size else int(Pa.shape[0]),
        "max_in_scene_fraction_diff": round(float(frac.max()) if frac.size else 0.0, 4),
        "max_centroid_diff_m": round(cen, 4),
    }


def compare_samples(a: SceneSamples, b: SceneSamples, tol: float = TOL_M) -> dict[str, Any]:
    """Largest differences between two samplings (matrices, vertices, alive particles)."""
    out: dict[str, Any] = {"ok": True, "problems": []}
    if a.names != b.names:
        out["problems"].append(f"object names differ: {sorted(set(a.names) ^ set(b.names))}")
    common = [n for n in a.names if n in b.names]
    if a.matrices.shape[1] != b.matrices.shape[1]:
        out["problems"].append(f"frame counts differ: {a.matrices.shape[1]} vs {b.matrices.shape[1]}")
        out["ok"] = False
        return out
    ia = [a.index(n) for n in common]
    ib = [b.index(n) for n in common]
    dm = np.abs(a.matrices[ia] - b.matrices[ib])
    out["max_matrix_diff"] = float(dm.max()) if dm.size else 0.0
    worst = int(dm.reshape(len(common), -1).max(axis=1).argmax()) if dm.size else None
    out["worst_object"] = common[worst] if worst is not None else None
    dv = 0.0
    for k in sorted(set(a.verts) | set(b.verts)):
        if k not in a.verts or k not in b.verts or a.verts[k].shape != b.verts[k].shape:
            out["problems"].append(f"deforming mesh {k!r} missing or reshaped")
            continue
        dv = max(dv, float(np.nanmax(np.abs(a.verts[k].astype(np.float64) - b.verts[k]))))
    out["max_vertex_diff"] = dv
    out["particles"] = {}
    for k in sorted(set(a.particles) | set(b.particles)):
        if k not in a.particles or k not in b.particles or a.particles[k].shape != b.particles[k].shape:
            out["problems"].append(f"particle system {k!r} missing or a different count")
            continue
        pc = compare_particles(a.particles[k], a.particles_alive[k], b.particles[k], b.particles_alive[k])
        out["particles"][k] = pc
        if not pc["alive_equal"]:
            out["problems"].append(f"particle system {k!r}: alive masks differ (emission is not deterministic)")
        if pc["max_in_scene_fraction_diff"] > PARTICLE_FRACTION_TOL:
            out["problems"].append(f"particle system {k!r}: in-scene fraction differs by "
                                   f"{pc['max_in_scene_fraction_diff']}")
        if pc["max_centroid_diff_m"] > PARTICLE_CENTROID_TOL_M:
            out["problems"].append(f"particle system {k!r}: flow centroid differs by {pc['max_centroid_diff_m']} m")
    for key in ("max_matrix_diff", "max_vertex_diff"):
        if out[key] > tol:
            out["problems"].append(f"{key} {out[key]:.3g} > {tol:g}")
    out["ok"] = not out["problems"]
    return out


def rerun_samples(task_folder: Path, work: Path) -> tuple[SceneSamples, str]:
    """Bake-only re-run of truth.py in `work`, sampled in a fresh process; (samples, trajectories digest)."""
    from physcodegym.authoring.build import TRUTH, run_truth, sample_blend, trajectories_digest

    run_truth(task_folder / TRUTH, work / "run", mode="bake_only")
    npz = work / "rerun.npz"
    sample_blend(work / "run" / "scene.blend", npz, [])
    return SceneSamples.load_npz(npz), trajectories_digest(npz)


def verify_task(id_or_path: str, tol: float = TOL_M) -> dict[str, Any]:
    """Re-run truth.py (bake only) and compare with truth_trajectories.npz."""
    from physcodegym.tasks.loader import load_task

    lt = load_task(id_or_path)
    if lt.truth_trajectories is None or not lt.truth_trajectories.is_file():
        return {"id": lt.id, "ok": False, "problems": ["task has no truth trajectories"]}
    work = Path(tempfile.mkdtemp(prefix=f"pcg_verify_{lt.id}_"))
    try:
        from physcodegym.authoring.build import trajectories_digest

        fresh, digest = rerun_samples(lt.folder, work)
        stored = SceneSamples.load_npz(lt.truth_trajectories)
        doc = {"id": lt.id, **compare_samples(stored, fresh, tol)}
        doc["rerun_digest"] = digest
        doc["stored_digest"] = trajectories_digest(lt.truth_trajectories)
        return doc
    finally:
        shutil.rmtree(work, ignore_errors=True)
