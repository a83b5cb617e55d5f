"""Rubric checks (tasks.schema.CHECKS) on a baked native scene, its samples and the audit findings.

Each check returns {"passed": bool|None, "score": float, "evidence": {...}, "reason": str}. Geometry
is exact where it matters (world-space BVH nearest-surface queries on the sampled poses) and only
after a numpy AABB broad-phase, so a 240-frame contact test touches a handful of frames.
A small task-independent scan (`scan_findings`) backs the checks when the audit report lacks a kind.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
from physcodegym.probes.scene import physics as ph
from physcodegym.samples import SceneSamples
from physcodegym.tasks.schema import Criterion


class CheckResult(TypedDict):
    """What one check returns (the rubric engine, the self-test and the JSON output read these keys)."""

    passed: bool | None
    score: float
    evidence: dict[str, Any]
    reason: str


G = 9.81
CONTACT_M = 0.06  # Bullet keeps touching bodies ~margin (0.04) apart: contact is within margin + 2 cm
DEPTH_M = 0.01
INSIDE_COS = 0.7  # cos of the largest angle between (point - nearest) and the inward face normal
MAX_QUERY_VERTS = 1500
SIM_MODS = {"CLOTH", "SOFT_BODY", "FLUID", "DYNAMIC_PAINT", "PARTICLE_SYSTEM"}
GAP_SHAPES = {"CONVEX_HULL", "MESH", "CYLINDER", "CONE"}
PATH_CONSTRAINTS = {"FOLLOW_PATH", "CHILD_OF", "COPY_LOCATION", "COPY_TRANSFORMS", "TRANSFORM", "PIVOT", "ACTION",
                    "CLAMP_TO"}


@dataclass
class CheckContext:
    scene: Any  # bpy scene (None: geometry checks report uncomputable)
    samples: SceneSamples
    mapping: dict[str, str]
    report: Any = None  # AuditReport-like (has .findings) or None
    blend: Path | None = None
    task: Any = None
    run_dir: Path | None = None
    counterfactual: Callable[..., dict[str, Any]] | None = None
    _mesh: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    _trees: dict[tuple[str, int], Any] = field(default_factory=dict)
    _scan: list[dict[str, Any]] | None = None

    # -------------------------------------------------------------- geometry
    def local_mesh(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(V, 3) local vertices and (T, 3) triangles of an object's evaluated mesh at the start frame."""
        if name in self._mesh:
            return self._mesh[name]
        if self.scene is None:
            return None
        ob = self.scene.objects.get(name)
        if ob is None or ob.type != "MESH":
            return None
        import bpy

        dg = bpy.context.evaluated_depsgraph_get()
        oe = ob.evaluated_get(dg)
        me = oe.to_mesh()
        try:
            me.calc_loop_triangles()
            v = np.empty(len(me.vertices) * 3, np.float64)
            me.vertices.foreach_get("co", v)
            t = np.empty(len(me.loop_triangles) * 3, np.int32)
            me.loop_triangles.foreach_get("vertices", t)
        finally:
            oe.to_mesh_clear()
        out = (v.reshape(-1, 3), t.reshape(-1, 3))
        self._mesh[name] = out
        return out

    def world_verts(self, name: str, fi: int) -> np.ndarray | None:
        s = self.samples
        if name in s.verts:
            return s.verts[name][fi].astype(np.float64)
        lm = self.local_mesh(name)
        if lm is None or name not in s.names:
            return None
        m = s.matrices[s.index(name), fi]
        return lm[0] @ m[:3, :3].T + m[:3, 3]

    def pair_distance(self, a: str, b: str, fi: int, need: str = "both") -> tuple[float, float] | None:
        """(min surface distance, penetration depth) between a and b at sample index fi.

        `need` says which of the two the caller reads: "depth" queries only the points inside the other's box (no
        other point can be behind its surface) and skips a two-sided sheet (it has no inside); "distance" queries
        points in the order of their distance to the other's box and stops once that bound reaches the closest
        distance found. Both give the same numbers as querying every point; the cloth_drape rubric tested
        interpenetration on 118 frame pairs in 0.67 s before this."""
        va, vb = self.world_verts(a, fi), self.world_verts(b, fi)
        la, lb = self.local_mesh(a), self.local_mesh(b)
        if va is None or vb is None or la is None or lb is None:
            return None
        best, depth = np.inf, 0.0
        for (vq, _), (vt, tt), target in (((va, la[1]), (vb, lb[1]), b), ((vb, lb[1]), (va, la[1]), a)):
            if len(tt) == 0:
                continue
            sheet = self.is_sheet(target)  # a two-sided sheet has no inside: a point behind it is not in it
            if need == "depth" and sheet:
                continue
            q = vq if len(vq) <= MAX_QUERY_VERTS else vq[np.linspace(0, len(vq) - 1, MAX_QUERY_VERTS).astype(int)]
            lo, hi = np.nanmin(vt, axis=0), np.nanmax(vt, axis=0)
            box_d = np.linalg.norm(np.maximum(0.0, np.maximum(lo - q, q - hi)), axis=1)  # <= distance to the surface
            if need == "depth":
                order = np.nonzero(box_d == 0.0)[0]
            else:
                order = np.argsort(box_d, kind="stable")
            tree = self._tree(target, fi, vt, tt)
            for i in order:
                if need == "distance" and box_d[i] >= best:
                    break  # every later point is at least this far from the target's box
                p = q[i]
                loc, nrm, _, dist = tree.find_nearest(p)
                if loc is None:
                    continue
                # inside only (nearly) straight behind the nearest face: beside an edge or a cap rim the
                # nearest face's normal says nothing about the side (same rule as probes.scene.geometry)
                inside = not sheet and (p - np.asarray(loc)).dot(np.asarray(nrm)) < -INSIDE_COS * dist
                if inside:
                    depth = max(depth, dist)
                    best = 0.0
                else:
                    best = min(best, dist)
        return float(best), float(depth)

    def _tree(self, name: str, fi: int, verts: np.ndarray, tris: np.ndarray) -> Any:
        """BVH of an object's world triangles at a sample index, kept for the next query of the same frame (the two
        directions of a pair, and contact, support and interpenetration checks asking about the same frames)."""
        from mathutils.bvhtree import BVHTree

        key = (name, fi)
        tree = self._trees.get(key)
        if tree is None:
            if len(self._trees) >= 16:
                self._trees.pop(next(iter(self._trees)))
            tree = self._trees[key] = BVHTree.FromPolygons(verts.tolist(), tris.tolist())
        return tree

    def is_sheet(self, name: str) -> bool:
        """A cloth (or any open deforming surface): two-sided, so "inside" it means nothing."""
        info = self.samples.info.get(name, {})
        if any(m.get("type") == "CLOTH" for m in info.get("modifiers", [])):
            return True
        lm = self.local_mesh(name)
        return name in self.samples.verts and lm is not None and not _is_closed(lm[1])

    def contact_distance(self, a: str, b: str) -> float:
        """How far apart cloth collision keeps a cloth and a collider: the cloth's `distance_min` plus
        the collider's `thickness_outer` (0 when neither is a cloth). Depth within it is contact slop."""
        if self.scene is None:
            return 0.0
        d = 0.0
        for n, other in ((a, b), (b, a)):
            ob = self.scene.objects.get(n)
            cm = next((m for m in ob.modifiers if m.type == "CLOTH"), None) if ob is not None else None
            if cm is None:
                continue
            d = max(d,
                    float(cm.collision_settings.distance_min) + float(
                        self.samples.info.get(other, {}).get("collision", {}).get("thickness_outer", 0.0)))
        return d

    def aabb_gap(self, a: str, b: str) -> np.ndarray | None:
        """Per-frame AABB separation (F,) as a broad phase (0 where boxes overlap)."""
        ba, bb = self._boxes(a), self._boxes(b)
        if ba is None or bb is None:
            return None
        gap = np.maximum(0.0, np.maximum(ba[0] - bb[1], bb[0] - ba[1]))
        return np.linalg.norm(gap, axis=1)

    def _boxes(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        s = self.samples
        if name in s.verts:
            v = s.verts[name].astype(np.float64)
            return np.nanmin(v, axis=1), np.nanmax(v, axis=1)
        lm = self.local_mesh(name)
        if lm is None or name not in s.names:
            return None
        lo, hi = lm[0].min(0), lm[0].max(0)
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        M = s.matrices[s.index(name)]
        w = np.einsum("fij,cj->fci", M[:, :3, :3], corners) + M[:, None, :3, 3]
        return w.min(1), w.max(1)

    # -------------------------------------------------------------- findings
    def findings(self) -> list[dict[str, Any]]:
        """The audit's findings (one physics layer): the report's, or, with no report, the audit run here on
        this context's scene and samples (kept in `_scan`)."""
        out = []
        rep = self.report
        if rep is not None:
            for f in getattr(rep, "findings", None) or (rep.get("findings", []) if isinstance(rep, dict) else []):
                d = f if isinstance(f, dict) else (f.model_dump(mode="json") if hasattr(f, "model_dump") else vars(f))
                out.append({**d, "source": "audit"})
            return out
        if self._scan is None:
            self._scan = scan_findings(self)
        return list(self._scan)


def _is_closed(tris: np.ndarray) -> bool:
    """Every undirected edge shared by exactly two triangles (a closed shell with an inside)."""
    if len(tris) == 0:
        return False
    e = np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), axis=1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    return bool(np.all(counts == 2))


def _obj_names(ctx: CheckContext, roles: list[str]) -> tuple[list[str], list[str]]:
    names, missing = [], []
    for r in roles:
        n = ctx.mapping.get(r)
        if n is None or (n not in ctx.samples.names):
            missing.append(r)
        else:
            names.append(n)
    return names, missing


Check = Callable[[CheckContext, Criterion], CheckResult]


def _on_roles(plus: Callable[[Criterion], list[str]] = lambda crit: []) -> Callable[
        [Callable[[CheckContext, Criterion, list[str]], CheckResult]], Check]:
    """Decorator of a check of the objects that play the criterion's roles and the roles `plus(crit)` names in its
    params: it fails naming the roles not mapped to a scene object, else runs `fn(ctx, crit, names)` with their
    object names in that order."""

    def wrap(fn: Callable[[CheckContext, Criterion, list[str]], CheckResult]) -> Check:
        @functools.wraps(fn)
        def check(ctx: CheckContext, crit: Criterion) -> CheckResult:
            names, missing = _obj_names(ctx, [*crit.roles, *plus(crit)])
            if missing:
                return _fail_unmapped(missing)
            return fn(ctx, crit, names)

        return check

    return wrap


def _ok(passed: bool | None, evidence: dict[str, Any], reason: str = "", score: float | None = None) -> CheckResult:
    sc = (1.0 if passed else 0.0) if score is None else float(score)
    return {"passed": passed, "score": sc if passed is not None else 0.0, "evidence": evidence, "reason": reason}


def _undetermined(reason: str, evidence: dict[str, Any] | None = None) -> CheckResult:
    return {"passed": None, "score": 0.0, "evidence": evidence or {}, "reason": reason}


def _fail_unmapped(missing: list[str]) -> CheckResult:
    return {"passed": False, "score": 0.0, "evidence": {"unmapped_roles": missing},
            "reason": f"required role(s) {missing} not mapped to scene objects"}


# ------------------------------------------------------------------ motion sources


def _fcurve_paths(ob: Any) -> list[tuple[str, float, float]]:
    """(data_path, first key frame, last key frame) of an object's action."""
    ad = ob.animation_data
    if not ad or not ad.action:
        return []
    try:
        from bpy_extras import anim_utils

        cb = anim_utils.action_get_channelbag_for_slot(ad.action, ad.action_slot)
        fcs = list(cb.fcurves) if cb else []
    except Exception:  # noqa: BLE001
        fcs = []
    out = []
    for fc in fcs:
        ks = [kp.co[0] for kp in fc.keyframe_points]
        if ks:
            out.append((fc.data_path, min(ks), max(ks)))
    return out


def scripted_reasons(ctx: CheckContext, name: str) -> list[str]:
    """Why this object's motion is prescribed rather than simulated (empty list: no such source)."""
    info = ctx.samples.info.get(name, {})
    why: list[str] = []
    rb = info.get("rigid_body")
    ob = ctx.scene.objects.get(name) if ctx.scene is not None else None
    release = None
    if ob is not None:
        paths = _fcurve_paths(ob)
        kin = [p for p in paths if p[0] == "rigid_body.kinematic"]
        if kin:
            release = max(p[2] for p in kin)
        for dp, _, last in paths:
            if dp == "rigid_body.kinematic":
                continue
            if dp.startswith(("location", "rotation", "scale", "delta_", "matrix")):
                # a kinematic hand-off (keys end at the release frame) sets an initial velocity; anything later scripts
                # the path
                if release is not None and last <= release and rb and rb["type"] == "ACTIVE":
                    continue
                why.append(f"keyframed {dp} (keys to frame {int(last)})")
        if ob.animation_data and len(ob.animation_data.drivers):
            why.append(f"{len(ob.animation_data.drivers)} driver(s)")
    elif info.get("has_animation"):
        why.append("animation data")
    for c in info.get("constraints", []):
        if c["enabled"] and c["type"] in PATH_CONSTRAINTS:
            why.append(f"{c['type']} constraint prescribes its path")
    if rb is not None:
        if rb["type"] == "PASSIVE" and (rb["kinematic"] or why):
            why.append("animated passive (kinematic) rigid body")
        elif rb["kinematic"] and release is None:
            why.append("kinematic rigid body")
    if info.get("parent"):
        pinfo = ctx.samples.info.get(info["parent"], {})
        if pinfo.get("has_animation"):
            why.append(f"parented to animated {info['parent']!r}")
    return list(dict.fromkeys(why))


def is_simulated(ctx: CheckContext, name: str) -> bool:
    """A solver owns the object (`probes.scene.physics`): a dynamic rigid body in an enabled world, a solver
    modifier, or solver particles."""
    info = ctx.samples.info.get(name, {})
    if ph.dynamic(info, ctx.samples.scene_info) or ph.solver_modifiers(info):
        return True
    if info.get("physics") is None:  # samples from before the physics record: any particle system
        return any(k.startswith(name + "/") for k in ctx.samples.particles)
    return False


def motion_extent(ctx: CheckContext, name: str) -> float:
    s = ctx.samples
    if name in s.verts:
        v = s.verts[name].astype(np.float64)
        return float(np.nanmax(np.linalg.norm(v - v[:1], axis=2)))
    parts = [k for k in s.particles if k.startswith(name + "/")]
    if parts:
        return float(max(np.nanmax(np.abs(np.nan_to_num(s.particles[k]) - np.nan_to_num(s.particles[k][:1])))
                         for k in parts)) if any(s.particles[k].size for k in parts) else 0.0
    M = s.matrices[s.index(name)]
    dp = np.linalg.norm(M[:, :3, 3] - M[:1, :3, 3], axis=1).max()
    dr = np.abs(M[:, :3, :3] - M[:1, :3, :3]).max()
    return float(max(dp, dr * 0.1))


def _collider(info: dict[str, Any], scene_info: dict[str, Any] | None = None) -> bool:
    return ph.collision_owner(info, scene_info)


def _renders(info: dict[str, Any]) -> bool:
    return ph.rendered(info)


# ------------------------------------------------------------------ task-independent scan


def scan_findings(ctx: CheckContext) -> list[dict[str, Any]]:
    """Task-independent findings when no audit report was given: the audit's own detectors run on this
    context (same definitions of rendered, simulated, moving and collider; `probes.scene.physics`), with the task's
    core roles as core objects. Each finding is a dict with `source` = "rubric_scan"."""
    if ctx.scene is None:
        return []
    from physcodegym.probes.audit.audit import audit_scene

    core = None
    if ctx.task is not None:
        core = [ctx.mapping[r.name] for r in ctx.task.roles if r.core and r.name in ctx.mapping
                and ctx.mapping[r.name] in ctx.samples.names]
    rep = audit_scene(ctx.scene, samples=ctx.samples, core_objects=core, blend=ctx.blend)
    return [{**f.model_dump(mode="json"), "source": "rubric_scan"} for f in rep.findings]


# ------------------------------------------------------------------ the checks


def _scripted_findings(ctx: CheckContext, names: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The audit's scripted_motion / not_simulated findings per role object (the one definition of scripted)."""
    out: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for f in ctx.findings():
        if f["kind"] in ("scripted_motion", "not_simulated"):
            for n in set(f.get("objects", [])) & set(names):
                out[n].append(f)
    return out


@_on_roles()
def check_moves_by_simulation(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    thr = float(crit.thresholds.get("min_motion_m", 0.01))
    found = _scripted_findings(ctx, names)
    ev, bad = {}, []
    for n in names:
        moved = motion_extent(ctx, n)
        why = [f["message"] for f in found[n]]
        sim = is_simulated(ctx, n)
        ev[n] = {"motion_m": round(moved, 5), "simulated": sim, "scripted": why,
                 "listed_sources": scripted_reasons(ctx, n) if ctx.scene is not None else []}
        if moved < thr:
            bad.append(f"{n} does not move ({moved:.4f} m < {thr} m)")
        elif why:
            bad.append(f"{n}: {why[0]}")
        elif not sim:
            bad.append(f"{n} moves with no solver owning it")
    return _ok(not bad, ev, "; ".join(bad))


@_on_roles()
def check_no_scripted_motion(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    found = _scripted_findings(ctx, names)
    flat = [f for fs in found.values() for f in fs]
    bad = list(dict.fromkeys(f["message"] for f in flat))
    ev = {"scripted": {n: [f["message"] for f in fs] for n, fs in found.items()}, "findings": flat,
          "listed_sources": {n: scripted_reasons(ctx, n) for n in names} if ctx.scene is not None else {}}
    return _ok(not bad, ev, "; ".join(bad))


def _min_distance_track(ctx: CheckContext, a: str, b: str, upto: int, thr: float) -> tuple[float, int | None]:
    gap = ctx.aabb_gap(a, b)
    if gap is None:
        return np.inf, None
    idx = np.nonzero(gap[: upto + 1] <= thr)[0]
    best, first = np.inf, None
    for fi in idx:
        pd = ctx.pair_distance(a, b, int(fi), need="distance")
        if pd is None:
            continue
        d = pd[0]
        best = min(best, d)
        if d <= thr and first is None:
            first = int(fi)
            break
    if not len(idx):
        best = float(gap[: upto + 1].min())
    return float(best), first


def _particle_min_distance(ctx: CheckContext, emitter: str, other: str, upto: int,
                           thr: float = CONTACT_M) -> tuple[float, int | None]:
    """Closest approach of an emitter's particles to `other`'s surface (particle roles touch through their
    particles); the first frame within `thr` (the criterion's `contact_m`) ends the search."""
    from mathutils.bvhtree import BVHTree
    from physcodegym.probes.branches.counterfactual import alive_particles

    keys = [k for k in ctx.samples.particles if k.startswith(emitter + "/")]
    lm = ctx.local_mesh(other)
    if not keys or lm is None:
        return np.inf, None
    best = np.inf
    for fi in range(0, upto + 1, 3):
        vt = ctx.world_verts(other, fi)
        p = np.concatenate([alive_particles(ctx.samples, k, fi) for k in keys])
        if not len(p):
            continue
        p = p[np.linspace(0, len(p) - 1, min(len(p), 300)).astype(int)]
        tree = BVHTree.FromPolygons(vt.tolist(), lm[1].tolist())
        for q in p.astype(np.float64):
            r = tree.find_nearest(q)
            if r[0] is not None and r[3] < best:
                best = r[3]
        if best <= thr:
            return float(best), fi
    return float(best), None


@_on_roles(lambda crit: [crit.params["other"]])
def check_contacts(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    if ctx.scene is None:
        return _undetermined("contact needs the native scene's geometry")
    thr = float(crit.thresholds.get("contact_m", CONTACT_M))
    before = crit.params.get("before_s")
    from physcodegym.probes.branches.counterfactual import frame_index

    upto = frame_index(ctx.samples, before)
    b = names[-1]
    ev, bad = {}, []
    for a in names[:-1]:
        if any(k.startswith(a + "/") for k in ctx.samples.particles):
            d, first = _particle_min_distance(ctx, a, b, upto, thr)
        else:
            d, first = _min_distance_track(ctx, a, b, upto, thr)
        ev[f"{a}|{b}"] = {"min_distance_m": round(d, 5) if np.isfinite(d) else None,
                          "first_contact_frame": int(ctx.samples.frames[first]) if first is not None else None}
        if first is None:
            bad.append(f"{a} never comes within {thr} m of {b}" + (f" before {before} s" if before is not None else ""))
    return _ok(not bad, ev, "; ".join(bad))


@_on_roles(lambda crit: [crit.params["support"]])
def check_supported_by(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    if ctx.scene is None:
        return _undetermined("support needs the native scene's geometry")
    s = ctx.samples
    thr = float(crit.thresholds.get("gap_m", CONTACT_M))
    from physcodegym.probes.branches.counterfactual import frame_index

    fi = frame_index(s, crit.params.get("at_s"))
    b = names[-1]
    sinfo = s.info.get(b, {})
    ev: dict[str, Any] = {"support": b, "support_renders": _renders(sinfo),
                          "support_has_collider": _collider(sinfo, s.scene_info), "frame": int(s.frames[fi])}
    bad = []
    if not ev["support_renders"]:
        bad.append(f"support {b} does not render")
    if not ev["support_has_collider"]:
        bad.append(f"support {b} has no collider")
    hidden = [f for f in ctx.findings() if f["kind"] == "hidden_support" and set(f["objects"]) & set(names[:-1])]
    for a in names[:-1]:
        pd = ctx.pair_distance(a, b, fi, need="distance")
        gap = None if pd is None else pd[0]
        ev[a] = {"gap_m": None if gap is None else round(gap, 5)}
        if gap is None or gap > thr:
            bad.append(f"{a} is {gap if gap is None else round(gap, 4)} m from {b}'s material at frame "
                       f"{int(s.frames[fi])} (limit {thr} m)")
    if hidden:
        ev["hidden_supports"] = hidden
        bad.append("held by a collider that does not render: " + ", ".join(f["objects"][0] for f in hidden))
    return _ok(not bad, ev, "; ".join(bad))


@_on_roles(lambda crit: crit.params.get("others", []))
def check_no_interpenetration(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    if ctx.scene is None:
        return _undetermined("interpenetration needs the native scene's geometry")
    thr = float(crit.thresholds.get("depth_m", DEPTH_M))
    step = int(crit.params.get("frame_step", 2))
    ev, bad = {}, []
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    for a, b in pairs:
        gap = ctx.aabb_gap(a, b)
        if gap is None:
            continue
        idx = np.nonzero(gap == 0)[0][::step]
        worst, wf = 0.0, None
        for fi in idx:
            pd = ctx.pair_distance(a, b, int(fi), need="depth")
            if pd and pd[1] > worst:
                worst, wf = pd[1], int(ctx.samples.frames[fi])
        slack = ctx.contact_distance(a, b)
        ev[f"{a}|{b}"] = {"max_depth_m": round(worst, 5), "frame": wf, "frames_tested": len(idx),
                          "threshold_m": round(thr + slack, 5)}
        if worst > thr + slack:
            bad.append(f"{a} and {b} overlap by {worst:.3f} m at frame {wf}")
    return _ok(not bad, ev, "; ".join(bad))


def _release_index(ctx: CheckContext, names: list[str]) -> int:
    """First sample index after every kinematic hand-off (before it the motion is an admitted initial condition)."""
    if ctx.scene is None:
        return 0
    last = 0.0
    for n in names:
        ob = ctx.scene.objects.get(n)
        if ob is not None:
            for dp, _, hi in _fcurve_paths(ob):
                if dp == "rigid_body.kinematic":
                    last = max(last, hi)
    return int(np.clip(int(last) + 1 - int(ctx.samples.frames[0]), 0, len(ctx.samples.frames) - 1))


@_on_roles()
def check_energy_non_increasing(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    from physcodegym.probes.scene.kinematics import mechanical_energy, median_filter

    s = ctx.samples
    tol = float(crit.thresholds.get("tolerance", 0.1))
    g = np.asarray(s.scene_info.get("gravity", [0, 0, -G]), dtype=float)
    if not s.scene_info.get("use_gravity", True):
        g = np.zeros(3)
    i0 = _release_index(ctx, names)
    me = mechanical_energy(s, names, g)
    E = median_filter(me["total"], 5)[i0:]
    ke0 = float(me["kinetic"][i0] + me["rotational"][i0])
    scale = 0.0
    for n in names:
        rb = s.info[n].get("rigid_body")
        m = float(rb["mass"]) if rb else 1.0
        z = s.locations(n)[i0:, 2]
        scale += m * max(float(np.linalg.norm(g)), 1.0) * max(float(np.ptp(z)), 0.1)
    scale += ke0
    rise = E - np.minimum.accumulate(E)
    k = int(np.argmax(rise))
    worst = float(rise[k])
    fr = int(s.frames[i0 + k])
    ev = {"max_rise_J": round(worst, 5), "frame": fr, "scale_J": round(scale, 5), "tolerance": tol,
          "from_frame": int(s.frames[i0])}
    ok = worst <= tol * scale
    return _ok(ok, ev,
               "" if ok else f"mechanical energy rises {worst:.3f} J (> {tol:.0%} of {scale:.3f} J) by frame {fr}")


@_on_roles()
def check_pinned(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    if ctx.scene is None:
        return _undetermined("pinning needs the native scene's vertex groups")
    grp = crit.params["group"]
    thr = float(crit.thresholds.get("max_motion_m", 0.005))
    ev, bad = {}, []
    for n in names:
        ob = ctx.scene.objects[n]
        vg = ob.vertex_groups.get(grp) if ob.type == "MESH" else None
        if vg is None:
            bad.append(f"{n} has no vertex group {grp!r}")
            continue
        idx = [v.index for v in ob.data.vertices if any(g.group == vg.index and g.weight >= 0.5 for g in v.groups)]
        if n not in ctx.samples.verts or not idx:
            bad.append(f"{n} has no deforming pinned vertices")
            continue
        V = ctx.samples.verts[n].astype(np.float64)[:, idx]
        mv = float(np.nanmax(np.linalg.norm(V - V[:1], axis=2)))
        ev[n] = {"pinned_vertices": len(idx), "max_motion_m": round(mv, 6)}
        if mv > thr:
            bad.append(f"{n}'s group {grp!r} moves {mv:.4f} m")
    return _ok(not bad, ev, "; ".join(bad))


@_on_roles(lambda crit: [crit.params["container"]])
def check_stays_within(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    s = ctx.samples
    from physcodegym.probes.branches.counterfactual import frame_index

    fi = frame_index(s, crit.params.get("at_s"))
    box = ctx._boxes(names[-1])
    if box is None:
        return _undetermined(f"container {names[-1]} has no mesh bounds")
    pad = float(crit.thresholds.get("pad_m", 0.05))
    lo, hi = box[0][fi] - pad, box[1][fi] + pad
    need = float(crit.thresholds.get("min_fraction", 0.9))
    ev, bad = {}, []
    for n in names[:-1]:
        keys = [k for k in s.particles if k.startswith(n + "/")]
        if keys:
            tot = ins = 0
            from physcodegym.probes.branches.counterfactual import alive_particles

            for k in keys:
                p = alive_particles(s, k, fi)
                tot += len(p)
                ins += int(np.all((p >= lo) & (p <= hi), axis=1).sum())
            frac = ins / tot if tot else 0.0
        else:
            tr = s.locations(n)[fi]
            frac = float(np.all((tr >= lo) & (tr <= hi)))
        ev[n] = {"fraction_inside": round(frac, 4), "frame": int(s.frames[fi])}
        if frac < need:
            bad.append(f"{frac:.0%} of {n} inside {names[-1]} (need {need:.0%})")
    return _ok(not bad, ev, "; ".join(bad))


@_on_roles()
def check_no_self_intersection(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    """The audit's `self_intersection` findings on the roles (one definition of a crossing: nonadjacent triangle pairs
    beyond two edge rings, on enough frames; `probes.audit.detect_dynamics`). `max_pairs` (default 0) is how many
    crossing
    pairs a finding may report and still pass."""
    allowed = int(crit.thresholds.get("max_pairs", 0))
    ev, bad = {}, []
    found = [f for f in ctx.findings() if f["kind"] == "self_intersection"]
    for n in names:
        mine = [f for f in found if n in f.get("objects", [])]
        worst = max((int(f.get("value") or 0) for f in mine), default=0)
        ev[n] = {"max_crossing_pairs": worst, "findings": [f["message"] for f in mine]}
        if mine and worst > allowed:
            bad.append("; ".join(f["message"] for f in mine))
    return _ok(not bad, ev, "; ".join(bad))


@_on_roles()
def check_numerically_stable(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    s = ctx.samples
    vmax = float(crit.thresholds.get("max_speed", 50.0))
    ev, bad = {}, []
    for n in names:
        p = s.locations(n) if n not in s.verts else s.verts[n].astype(np.float64).reshape(len(s.frames), -1)
        if not np.all(np.isfinite(p)):
            bad.append(f"{n} has NaN/inf positions")
            continue
        sp = float(np.abs(np.diff(p, axis=0)).max() * s.fps) if len(p) > 1 else 0.0
        ev[n] = {"max_speed_mps": round(sp, 3)}
        if sp > vmax:
            bad.append(f"{n} moves at {sp:.1f} m/s (> {vmax})")
    for k, P in s.particles.items():
        al = s.particles_alive[k]
        if P.size and not np.all(np.isfinite(P[al])):
            bad.append(f"particles {k} have NaN positions")
    return _ok(not bad, ev, "; ".join(bad))


@_on_roles()
def check_collider_matches_mesh(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    found = [f for f in ctx.findings() if f["kind"] == "collider_mismatch" and set(f["objects"]) & set(names)]
    ev = {n: {k: ctx.samples.info[n]["rigid_body"][k] for k in ("collision_shape", "collision_margin", "use_margin")}
          for n in names if ctx.samples.info[n].get("rigid_body")}
    return _ok(not found, {"colliders": ev, "findings": found}, "; ".join(f["message"] for f in found))


@_on_roles()
def check_audit_clean(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    kinds = set(crit.params.get("kinds", [])) or None
    found = [
        f for f in ctx.findings() if (kinds is None or f["kind"] in kinds) and (
            not names or set(f.get("objects", [])) & set(names) or not f.get("objects"))]
    return _ok(not found, {"findings": found, "kinds": sorted(kinds) if kinds else "all"},
               "; ".join(f["message"] for f in found[:5]))


@_on_roles(lambda crit: [crit.params["field"]])
def check_responds_to(ctx: CheckContext, crit: Criterion, names: list[str]) -> CheckResult:
    from physcodegym.tasks.schema import Intervention, InterventionKind

    fld = crit.params["field"]
    if ctx.counterfactual is None:
        return _undetermined("responds_to needs a counterfactual re-bake (no saved .blend)")
    thr = float(crit.thresholds.get("min_deviation_m", 0.05))
    doc = ctx.counterfactual(Intervention(kind=InterventionKind.disable_field, roles=[fld]), None, None)
    if not doc.get("ok"):
        return _cf_failure(doc)
    if not doc.get("took_effect"):
        return _undetermined("disabling the field did not take effect", {"counterfactual": doc})
    ev, bad = {}, []
    for r in crit.roles:
        row = doc["trajectories"].get(r, {})
        dev = row.get("max_deviation_m")
        ev[r] = row
        if dev is None or dev < thr:
            bad.append(f"{r} moves the same without {fld} (deviation {dev} m < {thr} m)")
    return _ok(not bad, ev, "; ".join(bad))


def _cf_failure(doc: dict[str, Any]) -> CheckResult:
    """A counterfactual that could not run. When it could not apply because the visible object has no
    collider, that is evidence (the object has no collision owner), never an unknown; so is a re-simulation that
    outran the worker's limits or crashed every worker it was given (`counterfactual.scene_stopped_the_worker`)."""
    from physcodegym.probes.branches.counterfactual import scene_stopped_the_worker
    from physcodegym.probes.branches.interventions import NO_COLLISION_OWNER

    reason = str(doc.get("reason", "counterfactual failed"))
    if NO_COLLISION_OWNER in reason:
        return _ok(False, {"counterfactual": doc, "no_collision_owner": True},
                   f"the intervention cannot apply: {reason} (no collision owner)")
    if scene_stopped_the_worker(reason):
        return _ok(False, {"counterfactual": doc, "unverifiable": True},
                   f"the scene could not be re-simulated within the audit's limits ({reason}): what the "
                   "criterion asks cannot be verified, so it is not credited")
    return _undetermined(reason, {"counterfactual": doc})


def check_counterfactual(ctx: CheckContext, crit: Criterion) -> CheckResult:
    cf = crit.counterfactual
    names, missing = _obj_names(ctx, [*cf.intervention.roles, cf.expected.role, *cf.expected.preserved_roles])
    if missing:
        return _fail_unmapped(missing)
    if ctx.counterfactual is None:
        return _undetermined("counterfactual needs the saved native scene (.blend)")
    doc = ctx.counterfactual(cf.intervention, cf.control, cf.expected)
    if not doc.get("ok"):
        return _cf_failure(doc)
    v = doc.get("verdict", {})
    ev = {"took_effect": doc.get("took_effect"), "took_effect_evidence": doc.get("took_effect_evidence"), "verdict": v,
          "trajectories": doc.get("trajectories")}
    if v.get("passed") is None:
        return _undetermined(v.get("reason", "undetermined"), ev)
    return _ok(bool(v["passed"]), ev, v.get("reason", ""))


CHECK_FUNCS: dict[str, Callable[[CheckContext, Criterion], CheckResult]] = {
    "moves_by_simulation": check_moves_by_simulation,
    "no_scripted_motion": check_no_scripted_motion,
    "supported_by": check_supported_by,
    "contacts": check_contacts,
    "no_interpenetration": check_no_interpenetration,
    "energy_non_increasing": check_energy_non_increasing,
    "pinned": check_pinned,
    "responds_to": check_responds_to,
    "stays_within": check_stays_within,
    "no_self_intersection": check_no_self_intersection,
    "numerically_stable": check_numerically_stable,
    "collider_matches_mesh": check_collider_matches_mesh,
    "audit_clean": check_audit_clean,
    "counterfactual": check_counterfactual,
}


def run_check(ctx: CheckContext, crit: Criterion) -> CheckResult:
    """Run one criterion's check; an exception becomes an undetermined verdict with the error."""
    fn = CHECK_FUNCS.get(crit.check)
    if fn is None:
        return _undetermined(f"no implementation for check {crit.check!r}")
    try:
        return fn(ctx, crit)
    except Exception as ex:  # noqa: BLE001 - one broken check must not lose the others
        return _undetermined(f"check raised {type(ex).__name__}: {ex}")
