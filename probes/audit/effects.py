"""Measured effects: what a force field or a hidden collider actually changes, by counterfactual.

A field or collider is judged by what it does, not by whether it could act: for each candidate one branch
re-bakes the saved scene without it (`probes.rebake.cf_worker`, all branches in one worker process) and the
rendered simulated things (rigid bodies, cloth / soft-body vertices, particles) are compared with the
baked run. Scenes with particles get a control branch (re-baked unchanged) and a particle effect is the
intervention branch against that control, not against the bake: the bake was made in another process, and SPH
remembers where (measured on hose_jet with an injected shelf: the control re-bake lies 0.35 m (median) from the
bake and the branch without the shelf 0.39 m, so against the bake the shelf's effect drowned; two re-bakes in
the workers, which run with `core.determinism`'s environment, are bit-identical, and against the control the
shelf moves the liquid by 0.26 m while removing an object the liquid never meets moves it by 0.0).

Used by the audit: a field that touches nothing explains nothing (no credit as a work source), a field
whose removal drops a held body is a hidden support, an attractor acting on liquid particles steers them,
and a collider that does not render but changes a simulated thing's motion is a hidden support (so are the faces of
a rendered collider whose material renders nothing: their branch deletes just those faces).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.samples import SceneSamples

EFFECT_M = 0.02  # m: a branch changes a rigid body / cloth vertex track by more than this
PARTICLE_EFFECT_M = 0.03  # m: median particle displacement of a branch against the control re-bake


def _obj_dev(base: SceneSamples, br: SceneSamples, n: str, nf: int) -> np.ndarray | None:
    """Per-frame deviation (m) of one object's position (and vertices) between two runs."""
    if n not in br.names or n not in base.names:
        return None
    a = base.matrices[base.index(n), :nf, :3, 3]
    b = br.matrices[br.index(n), :nf, :3, 3]
    d = np.linalg.norm(a - b, axis=1)
    va, vb = base.verts.get(n), br.verts.get(n)
    if va is not None and vb is not None and va.shape[1] == vb.shape[1]:
        dv = np.linalg.norm(va[:nf].astype(np.float64) - vb[:nf].astype(np.float64), axis=2)
        with np.errstate(invalid="ignore"):
            d = np.fmax(d, np.nanmax(np.where(np.isfinite(dv), dv, np.nan), axis=1))
    return np.nan_to_num(d, nan=0.0)


def _particle_dev(base: SceneSamples, br: SceneSamples, key: str, nf: int) -> float:
    """Median over particles alive in both runs of their largest displacement between the runs."""
    if key not in base.particles or key not in br.particles:
        return float("nan")
    A, B = base.particles[key][:nf], br.particles[key][:nf]
    aa, ab = base.particles_alive[key][:nf], br.particles_alive[key][:nf]
    n = min(A.shape[1], B.shape[1])
    if n == 0:
        return 0.0
    both = aa[:, :n] & ab[:, :n]
    d = np.linalg.norm(A[:, :n].astype(np.float64) - B[:, :n].astype(np.float64), axis=2)
    d = np.where(both & np.isfinite(d), d, 0.0)
    ever = both.any(axis=0)
    return float(np.median(d.max(axis=0)[ever])) if ever.any() else 0.0


class PendingEffects:
    """Each branch ({"label", "interventions": [Intervention], "mapping", optional "strip_clear" / "decollide":
    [names]}) started in one worker at once; `result()` waits and measures its effect on `things` (object
    names, or particle keys "emitter/system"): {"ok", "branches": {label: {...}}, "control": {...}}.

    Why: the branches need only the saved scene and the baked samples, so the audit starts them before its own
    checks of the handed-in frames and reads them when its detectors need them."""

    def __init__(self, blend: Path, baseline: SceneSamples, branches: list[dict[str, Any]], things: list[str],
                 with_control: bool, work_dir: Path | None = None) -> None:
        from physcodegym.probes.branches.counterfactual import start_branches

        self.baseline, self.branches, self.things, self.with_control = baseline, branches, things, with_control
        self._doc: dict[str, Any] | None = {"ok": True, "branches": {}} if not branches else None
        self._tmp = tempfile.TemporaryDirectory(prefix="pcg_effects_") if work_dir is None else None
        self.run = None
        if not branches:
            return
        wd = Path(work_dir) if work_dir is not None else Path(self._tmp.name)  # type: ignore[union-attr]
        frames = (int(baseline.frames[0]), int(baseline.frames[-1]))
        jobs, mapping = [], {}
        for i, b in enumerate(branches):
            mapping.update(b.get("mapping", {}))
            jobs.append({"out": wd / f"effect_{i}.npz", "interventions": b["interventions"], "frames": frames,
                         "strip_clear": b.get("strip_clear") or [], "decollide": b.get("decollide") or [],
                         "render_side": bool(b.get("render_side"))})
        if with_control:
            jobs.append({"out": wd / "effect_control.npz", "interventions": [], "frames": frames, "force_rebake": True})
        self.run = start_branches(Path(blend), jobs, mapping, pinned=bool(baseline.particles))

    def result(self) -> dict[str, Any]:
        if self._doc is None:
            try:
                res = self.run.result()  # type: ignore[union-attr]
            finally:
                if self._tmp is not None:
                    self._tmp.cleanup()
            self._doc = _measured(self.baseline, self.branches, self.things, self.with_control, res)
        return self._doc

    def cancel(self) -> None:
        if self._doc is None and self.run is not None:
            self.run.cancel()


def _measured(baseline: SceneSamples, branches: list[dict[str, Any]], things: list[str], with_control: bool,
              res: list[tuple[SceneSamples | None, dict[str, Any]]]) -> dict[str, Any]:
    ctrl_dev: dict[str, float] = {}
    cs = None
    out: dict[str, Any] = {"ok": True, "branches": {}}
    if with_control:
        cs, crec = res[-1]
        if cs is None:
            return {"ok": False, "reason": "control branch failed: " + "; ".join(crec.get("errors", []))}
        nf = min(len(cs.frames), len(baseline.frames))
        ctrl_dev = {k: _particle_dev(baseline, cs, k, nf) for k in things if "/" in k}
        out["control"] = {k: round(v, 5) for k, v in ctrl_dev.items()}  # the bake vs a fresh re-bake (evidence)
    for b, (sm, rec) in zip(branches, res[: len(branches)], strict=True):
        row: dict[str, Any] = {"ok": sm is not None, "errors": rec.get("errors", []),
                               "interventions": rec.get("interventions", []), "effects": {},
                               **({"stripped": rec["stripped"]} if rec.get("stripped") else {})}
        if sm is None:
            out["branches"][b["label"]] = row
            continue
        nf = min(len(sm.frames), len(baseline.frames))
        row["samples"] = sm  # kept for measures other than displacement (the energy a field supplied); never serialised
        for t in things:
            if "/" in t:
                ref = cs if with_control and cs is not None else baseline
                v = _particle_dev(ref, sm, t, min(nf, len(ref.frames)))
                c = ctrl_dev.get(t, 0.0)
                hit = bool(np.isfinite(v) and v > PARTICLE_EFFECT_M)
                row["effects"][t] = {"particles_median_m": round(v, 5), "against": "control" if ref is cs else "bake",
                                     "bake_vs_control_m": round(c, 5), "acts": hit}
            else:
                d = _obj_dev(baseline, sm, t, nf)
                if d is None:
                    continue
                hit = bool(d.max() > EFFECT_M)
                row["effects"][t] = {"max_deviation_m": round(float(d.max()), 5), "acts": hit, "per_frame": d,
                                     "frames_acting": int((d > EFFECT_M).sum())}
        out["branches"][b["label"]] = row
    return out
