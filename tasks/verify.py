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
from physcodegym.probes.sampling import SceneSamples

TOL_M = 1e-4  # metres; bakes are deterministic, this only absorbs float32 storage


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
    dp = 0.0
    for k in sorted(set(a.particles) | set(b.particles)):
        if k not in a.particles or k not in b.particles or a.particles[k].shape != b.particles[k].shape:
            out["problems"].append(f"particle system {k!r} missing or a different count")
            continue
        al = a.particles_alive[k] & b.particles_alive[k]
        if not np.array_equal(a.particles_alive[k], b.particles_alive[k]):
            out["problems"].append(f"particle system {k!r}: alive masks differ")
        if al.any():
            dp = max(dp, float(np.abs(a.particles[k][al].astype(np.float64) - b.particles[k][al]).max()))
    out["max_particle_diff"] = dp
    for key in ("max_matrix_diff", "max_vertex_diff", "max_particle_diff"):
        if out[key] > tol:
            out["problems"].append(f"{key} {out[key]:.3g} > {tol:g}")
    out["ok"] = not out["problems"]
    return out


def rerun_samples(task_folder: Path, work: Path) -> tuple[SceneSamples, str]:
    """Bake-only re-run of truth.py in `work`, sampled in a fresh process; (samples, trajectories digest)."""
    from physcodegym.tasks.build import TRUTH, run_truth, sample_blend, trajectories_digest

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
        from physcodegym.tasks.build import trajectories_digest

        fresh, digest = rerun_samples(lt.folder, work)
        stored = SceneSamples.load_npz(lt.truth_trajectories)
        doc = {"id": lt.id, **compare_samples(stored, fresh, tol)}
        doc["rerun_digest"] = digest
        doc["stored_digest"] = trajectories_digest(lt.truth_trajectories)
        return doc
    finally:
        shutil.rmtree(work, ignore_errors=True)
