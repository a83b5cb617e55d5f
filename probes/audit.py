"""Task-independent physics audit of a native scene (SPEC §5 findings), in-process in Blender.

`audit_scene` works on the live scene (the Blender panel calls it after a run); `audit_path` opens a
run folder (`scene.blend` + optional `scene.py` + `frames/`) or a `.blend` first. The scene is sampled
once (`sampling.sample_scene`), then every detector reads those arrays and the one `SceneGeometry`:

- motion sources (animation, drivers, constraints, kinematic bodies, handlers in the program text or
  live) for every object that moves -> `scripted_motion`, `not_simulated`;
- force fields and their targets -> `unexplained_force_field`;
- AABB broad-phase over solid pairs, then sampled BVH depth -> `interpenetration`, `no_contact_response`;
- frames where a dynamic body is held against gravity, and what material is under it ->
  `hidden_support`, `collider_mismatch` (plus a static proxy-vs-mesh comparison);
- passive mechanical energy from rigid-body masses -> `energy_gain`;
- nonadjacent triangle crossings of cloth / soft bodies -> `self_intersection`;
- NaN, explosion and jitter at rest -> `numerical_instability`.

Thresholds are module constants so the rubric engineer and users can see exactly what is tolerated.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.probes import kinematics as kin
from physcodegym.probes import sources as src
from physcodegym.probes.findings import AuditReport, Finding
from physcodegym.probes.geometry import SceneGeometry
from physcodegym.probes.sampling import SceneSamples, sample_scene

MOVE_TRANSLATION = 0.01  # m: an object "moves" beyond this displacement from its first-frame pose
MOVE_ROTATION = 0.05  # rad
MOVE_SCALE = 0.01  # relative change of any axis scale
HANDOFF_FRAMES = 15  # a kinematic prefix this short is an initial-condition hand-off, not scripting
PEN_MIN = 0.015  # m: penetration below max(PEN_MIN, PEN_REL * size, margins) is contact noise / modelling slop
PEN_REL = 0.08
PEN_FRAMES = 3  # penetration must persist this many frames (impacts overlap for one)
PARTICLE_CROSS_MIN = 50  # particle steps through a collider-less solid before it counts (a few tunnel anyway)
PARTICLE_CROSS_FRAC = 0.02  # ... and this fraction of the particle steps that came near it
SUPPORT_MIN_RUN = 8  # frames a body must be held against gravity to count as supported
SUPPORT_VZ = 0.05  # m/s
SUPPORT_AZ = 0.3  # fraction of |g|
SUPPORT_SAMPLES = 6  # frames per body where the material under it is measured
SUPPORT_TOL = 0.01  # m, plus effective collision margins and 3 % of the body size
PROXY_TOL_MIN, PROXY_TOL_REL = 0.01, 0.1  # collider vs mesh: max(1 cm, 10 % of the smallest dimension)
ENERGY_GAIN_REL = 0.05  # of the scene's mechanical energy scale, over the initial energy
ENERGY_REBOUND_REL = 0.2  # rise above the running minimum
ENERGY_FRAMES = 5
SELF_X_MIN_PAIRS, SELF_X_MIN_FRAMES = 2, 2
SELF_X_MAX_FRAMES = 60  # cloth frames checked exhaustively (evenly spaced, always including the last)
EXPLODE_SPEED = 100.0  # m/s
EXPLODE_DIST = 1e4  # m
EXPLODE_STRETCH = 10.0  # cloth edge length over its first-frame length
JITTER_WINDOW, JITTER_NET, JITTER_PATH = 30, 0.005, 0.05  # frames, m, m

SOLVER_SHAPES_WITH_OUTER_MARGIN = {"CONVEX_HULL", "MESH", "COMPOUND"}


# ============================================================================ helpers
def _is_dynamic(info: dict[str, Any]) -> bool:
    rb = info.get("rigid_body")
    return bool(rb and rb["type"] == "ACTIVE" and rb["enabled"])


def _collision_owner(info: dict[str, Any]) -> bool:
    rb = info.get("rigid_body")
    if rb and rb["enabled"]:
        return True
    col = info.get("collision")
    return bool(col and col["use"])


def _rendered(info: dict[str, Any]) -> bool:
    return not info.get("hide_render", False) and info.get("visible_camera", True)


def _size(info: dict[str, Any]) -> float:
    d = [x for x in info.get("dimensions", [0, 0, 0]) if x > 1e-6]
    return min(d) if d else 0.0


def _margin(info: dict[str, Any]) -> float:
    rb = info.get("rigid_body")
    return float(rb["collision_margin"]) if rb else 0.0


def _margin_eff(info: dict[str, Any]) -> float:
    rb = info.get("rigid_body")
    if not rb:
        col = info.get("collision")
        return float(col["thickness_outer"]) if col else 0.0
    return float(rb["collision_margin"]) if rb["collision_shape"] in SOLVER_SHAPES_WITH_OUTER_MARGIN else 0.0


def _frange(frames: np.ndarray, mask: np.ndarray) -> list[int]:
    idx = np.nonzero(mask)[0]
    return [] if len(idx) == 0 else [int(frames[idx[0]]), int(frames[idx[-1]])]


def _series(frames: np.ndarray, values: np.ndarray, label: str, unit: str, threshold: float | None = None) -> dict:
    v = np.asarray(values, dtype=float)
    return {
        "x": [int(f) for f in frames],
        "y": [None if not np.isfinite(y) else round(float(y), 6) for y in v],
        "label": label,
        "unit": unit,
        "threshold": threshold,
    }


class _Audit:
    """State shared by the detectors of one audit (one sampling, one geometry)."""

    def __init__(self, scene: Any, samples: SceneSamples, program_text: str | None, core: list[str] | None) -> None:
        import bpy

        self.bpy = bpy
        self.scene = scene
        self.s = samples
        self.frames = samples.frames
        self.info = samples.info
        self.program_text = program_text
        self.findings: list[Finding] = []
        self.timings: dict[str, float] = {}
        t = time.perf_counter()
        self.geom = SceneGeometry.from_scene(samples, scene)
        self.timings["geometry"] = time.perf_counter() - t
        g = np.array(samples.scene_info.get("gravity", [0, 0, -9.81]), dtype=float)
        if not samples.scene_info.get("use_gravity", True):
            g = np.zeros(3)
        rbw = scene.rigidbody_world
        self.g_rb = g * (rbw.effector_weights.gravity * rbw.effector_weights.all if rbw else 1.0)
        self.sources = {n: src.motion_sources(scene.objects[n], scene) for n in samples.names if n in scene.objects}
        self.constrained = src.rigid_body_constrained(scene)
        self.fields = src.fields_and_targets(scene)
        self._motion_stats()
        self.core = list(core) if core is not None else [n for n in self.moving if self.info[n]["type"] not in ("CAMERA", "LIGHT")]

    # ---------------------------------------------------------------- motion stats
    def _motion_stats(self) -> None:
        s = self.s
        self.moving: dict[str, dict[str, Any]] = {}
        self.step_moving: dict[str, np.ndarray] = {}
        for n in s.names:
            m = s.matrices[s.index(n)]
            if not np.all(np.isfinite(m)):
                self.moving[n] = {"translation": float("nan"), "rotation": float("nan"), "scale": 0.0, "deform": 0.0}
                self.step_moving[n] = np.ones(len(self.frames), bool)
                continue
            x = m[:, :3, 3]
            tr = float(np.max(np.linalg.norm(x - x[0], axis=1))) if len(x) else 0.0
            r = kin.rotations(s, n)
            sc = np.linalg.norm(m[:, :3, :3], axis=1)  # (F, 3) column norms = axis scales
            degenerate = sc.min(axis=1) < 1e-6  # zero scale: no rotation can be read
            if degenerate.any():
                r = r.copy()
                r[degenerate] = r[~degenerate][0] if (~degenerate).any() else np.eye(3)
            cos = np.clip((np.einsum("fij,ij->f", r, r[0]) - 1) / 2, -1, 1)
            rot = float(np.max(np.arccos(cos))) if len(r) else 0.0
            scl = float(np.max(np.abs(sc / np.where(sc[:1] == 0, 1, sc[:1]) - 1))) if len(sc) else 0.0
            dfm = 0.0
            step = np.zeros(len(self.frames), bool)
            if len(x) > 1:
                step[1:] = np.linalg.norm(np.diff(x, axis=0), axis=1) > 1e-4
                c2 = np.clip((np.einsum("fij,fij->f", r[1:], r[:-1]) - 1) / 2, -1, 1)
                step[1:] |= np.arccos(c2) > 1e-4
                step[1:] |= np.abs(np.diff(sc, axis=0)).max(axis=1) > 1e-4
            if n in s.verts:
                v = s.verts[n]
                dv = np.linalg.norm(v - v[:1], axis=2)
                dfm = float(np.nanmax(dv)) if dv.size else 0.0
                if len(v) > 1:
                    step[1:] |= np.nanmax(np.linalg.norm(np.diff(v, axis=0), axis=2), axis=1) > 1e-4
            if tr > MOVE_TRANSLATION or rot > MOVE_ROTATION or dfm > MOVE_TRANSLATION or scl > MOVE_SCALE:
                self.moving[n] = {"translation": tr, "rotation": rot, "scale": scl, "deform": dfm}
                self.step_moving[n] = step

    def _steps(self, n: str) -> np.ndarray:
        """Frames on which `n` moved; a core object given by the task that never moved has none."""
        return self.step_moving.get(n, np.zeros(len(self.frames), bool))

    def _motion_value(self, n: str) -> tuple[float, str]:
        st = self.moving.get(n, {"translation": 0.0, "rotation": 0.0, "scale": 0.0, "deform": 0.0})
        if st["translation"] > MOVE_TRANSLATION:
            return float(st["translation"]), "m"
        if st["rotation"] > MOVE_ROTATION:
            return float(st["rotation"]), "rad"
        if st.get("scale", 0) > MOVE_SCALE:
            return float(st["scale"]), "relative scale"
        return float(st["deform"]), "m"

    def _motion_text(self, n: str) -> str:
        st = self.moving.get(n, {"translation": 0.0, "rotation": 0.0, "scale": 0.0, "deform": 0.0})
        parts = []
        if st["translation"] > MOVE_TRANSLATION:
            parts.append(f"moves {st['translation']:.3f} m")
        if st["rotation"] > MOVE_ROTATION:
            parts.append(f"turns {np.degrees(st['rotation']):.0f} deg")
        if st.get("scale", 0) > MOVE_SCALE:
            parts.append(f"scales by {st['scale']:.0%}")
        if st["deform"] > MOVE_TRANSLATION:
            parts.append(f"deforms {st['deform']:.3f} m")
        return " and ".join(parts) or "moves"

    def add(self, **kw: Any) -> None:
        self.findings.append(Finding(**kw))

    def solids(self) -> list[str]:
        """Rendered, rigid-shaped mesh objects (cloth and soft bodies are checked on their own)."""
        return [n for n in self.geom.meshes if not self.geom.meshes[n].deforming and _rendered(self.info[n])]

    # ================================================================ scripted motion / not simulated
    def scripted(self) -> None:
        scripted: dict[str, list[str]] = {}
        self.sim_moved: set[str] = set()
        order = sorted(self.core, key=lambda n: self._depth(n))
        for n in order:
            sv = self.sources.get(n)
            if sv is None:
                continue
            info = self.info[n]
            dyn = _is_dynamic(info)
            reasons = []
            kin_moving: list[int] = []
            if dyn and sv["kinematic_frames"]:
                kf = set(sv["kinematic_frames"])
                kin_moving = [int(f) for f, st in zip(self.frames, self._steps(n), strict=True) if st and int(f) in kf]
                if len(kin_moving) > HANDOFF_FRAMES:
                    reasons.append(f"animated kinematic rigid body moves on {len(kin_moving)} frames")
            if sv["animated_transforms"] and (not dyn or len(sv["kinematic_frames"]) > HANDOFF_FRAMES):
                paths = sorted({a["path"] for a in sv["animated_transforms"]})
                reasons.append(f"keyframed transform channels {paths}")
            if sv["drivers"]:
                reasons.append(f"drivers on {[d['path'] for d in sv['drivers']]}")
            if sv["constraints"]:
                reasons.append(f"constraints that prescribe motion {[c['type'] for c in sv['constraints']]}")
            if sv["parent"] and sv["parent"] in scripted:
                reasons.append(f"parented to scripted object {sv['parent']!r}")
            simulated = dyn and not reasons or bool(sv["sim_modifiers"]) or (sv["parent"] in self.sim_moved)
            if simulated:
                self.sim_moved.add(n)
            no_source = (
                n in self.moving
                and not dyn
                and not sv["animated_transforms"]
                and not sv["drivers"]
                and not sv["constraints"]
                and not sv["sim_modifiers"]
                and not sv["parent"]
                and info.get("rigid_body") is None
            )
            if no_source:
                reasons.append("moves with no native motion source (a handler or script moved it)")
            if reasons:
                scripted[n] = reasons
                mask = self._steps(n)
                value, unit = self._motion_value(n)
                self.add(
                    kind="scripted_motion",
                    objects=[n],
                    frames=_frange(self.frames, mask),
                    value=value,
                    unit=unit,
                    message=f"{n} {self._motion_text(n)} by prescribed motion: " + "; ".join(reasons),
                    evidence={
                        "sources": sv,
                        "reasons": reasons,
                        "collision_owner": _collision_owner(info),
                        "kinematic_moving_frames": _frange(np.array(kin_moving), np.ones(len(kin_moving), bool)) if kin_moving else [],
                        "series": _series(self.frames, np.linalg.norm(self.s.locations(n) - self.s.locations(n)[0], axis=1), f"{n} displacement", "m"),
                    },
                )
        self._handlers(scripted)
        self.scripted_objects = scripted

    def _depth(self, n: str) -> int:
        d, p = 0, self.info.get(n, {}).get("parent")
        while p and d < 32:
            d, p = d + 1, self.info.get(p, {}).get("parent")
        return d

    def _handlers(self, scripted: dict[str, list[str]]) -> None:
        recs: list[dict[str, Any]] = []
        if self.program_text is not None:
            recs += [dict(r, origin="program") for r in src.scan_program_handlers(self.program_text)]
        recs += [dict(r, origin="live") for r in src.live_handlers()]
        self.handler_records = recs
        for r in recs:
            if r.get("error"):
                continue
            if not r["moves"]:
                continue
            objs = [n for n in r.get("names", []) if n in self.info]
            frames: list[int] = []
            for o in objs:
                if o in self.step_moving:
                    frames = _frange(self.frames, self.step_moving[o])
            where = f"line {r['line']}" if r.get("line") else r.get("file")
            self.add(
                kind="scripted_motion",
                objects=objs,
                frames=frames,
                value=None,
                unit=None,
                message=f"{r['event']} handler {r['function']!r} ({r['origin']}, {where}) writes {r['writes'] or 'scene state'}"
                + (f" and names {objs}" if objs else ""),
                evidence={"handler": r},
            )

    def not_simulated(self) -> None:
        movers = [n for n in self.core if self.info[n]["type"] not in ("CAMERA", "LIGHT")]
        particles_move = any(
            np.nanmax(np.abs(np.diff(p[:, :, :], axis=0)), initial=0.0) > 1e-4 for p in self.s.particles.values() if p.shape[1]
        )
        simulated_any = any(_is_dynamic(i) for i in self.info.values()) or any(
            m["type"] in src.SIM_MODIFIERS for i in self.info.values() for m in i.get("modifiers", [])
        )
        if not movers and not particles_move:
            if simulated_any:
                return  # bodies simulated to rest in equilibrium (stacking): nothing to flag
            self.add(
                kind="not_simulated",
                objects=[],
                frames=[int(self.frames[0]), int(self.frames[-1])] if len(self.frames) else [],
                value=0.0,
                unit="m",
                message="nothing moves: the scene is static over the whole frame range",
                evidence={"moving_objects": []},
            )
            return
        if not (set(movers) & self.sim_moved) and not particles_move:
            self.add(
                kind="not_simulated",
                objects=movers,
                frames=[int(self.frames[0]), int(self.frames[-1])],
                value=None,
                unit=None,
                message=f"no moving object is moved by a simulation ({', '.join(movers)} move only by prescribed motion)",
                evidence={"moving_objects": movers, "scripted": self.scripted_objects},
            )

    # ================================================================ force fields
    def force_fields(self) -> None:
        core = set(self.core)
        for f in self.fields:
            hit = [t for t in f["targets"] if t in core]
            if not hit or not src.attractor_like(f) or f["strength"] == 0 and f["type"] not in ("GUIDE", "BOID"):
                continue
            fl = self.s.locations(f["field"]) if f["field"] in self.s.names else None
            dist = {}
            if fl is not None:
                for t in hit:
                    dist[t] = float(np.min(np.linalg.norm(self.s.locations(t) - fl, axis=1)))
            if f["use_max_distance"]:
                hit = [t for t in hit if dist.get(t, 0.0) <= f["distance_max"]]
                if not hit:
                    continue
            ev: dict[str, Any] = {"field": f, "min_distance_m": dist}
            if fl is not None and hit:
                ev["series"] = _series(self.frames, np.linalg.norm(self.s.locations(hit[0]) - fl, axis=1), f"{hit[0]} to {f['field']}", "m")
            self.add(
                kind="unexplained_force_field",
                objects=[f["field"], *hit],
                frames=[int(self.frames[0]), int(self.frames[-1])],
                value=f["strength"],
                unit="field strength",
                message=f"{f['type']} field {f['field']!r} (strength {f['strength']:g}) steers moving objects {hit}",
                evidence=ev,
            )

    # ================================================================ pairs: interpenetration / no contact
    def pairs(self) -> None:
        solids = self.solids()
        movers = {n for n in solids if _is_dynamic(self.info[n]) or n in self.moving}
        self.pair_depth: dict[tuple[str, str], np.ndarray] = {}
        for a, b, mask in self.geom.candidate_pairs(solids, pad=0.0):
            if a not in movers and b not in movers:
                continue
            if self._related(a, b):
                continue
            depth = np.zeros(len(self.frames))
            ia_, ib_ = self.info[a], self.info[b]
            tol = max(PEN_MIN, PEN_REL * min(_size(ia_) or 1.0, _size(ib_) or 1.0), _margin(ia_), _margin(ib_))
            depth = self._pair_depth(a, b, mask, 0.2 * tol)
            self.pair_depth[(a, b)] = depth
            over = depth > tol
            if over.sum() < PEN_FRAMES and depth.max() <= max(3 * tol, 0.05):
                continue
            ev = {
                "tolerance_m": tol,
                "frames_over": int(over.sum()),
                "max_depth_frame": int(self.frames[int(np.argmax(depth))]),
                "series": _series(self.frames, depth, f"penetration depth {a} / {b}", "m", tol),
            }
            owner_a, owner_b = _collision_owner(ia_), _collision_owner(ib_)
            if not owner_a or not owner_b:
                passive = a if not owner_a else b
                other = b if passive == a else a
                self.add(
                    kind="no_contact_response",
                    objects=[passive, other],
                    frames=_frange(self.frames, over),
                    value=float(depth.max()),
                    unit="m",
                    message=f"{other} passes {depth.max():.3f} m into rendered solid {passive}, which has no collision owner ({int(over.sum())} frames)",
                    evidence=ev | {"no_collision_owner": passive},
                )
                continue
            rba, rbb = ia_.get("rigid_body"), ib_.get("rigid_body")
            if rba and rbb and not any(x and y for x, y in zip(rba["collision_collections"], rbb["collision_collections"], strict=False)):
                ev["reason"] = "the two rigid bodies share no collision collection"
            self.add(
                kind="interpenetration",
                objects=[a, b],
                frames=_frange(self.frames, over),
                value=float(depth.max()),
                unit="m",
                message=f"{a} and {b} overlap by up to {depth.max():.3f} m on {int(over.sum())} frames",
                evidence=ev,
            )

    def particles_through(self) -> None:
        """Liquid particles crossing a rendered solid that has no collision owner (`no_contact_response`).

        Per frame step, each alive particle's segment p(f) -> p(f+1) is ray-cast against the solid's world
        triangles; an AABB test on the segments comes first so only nearby particles reach the BVH. A solid that
        owns a collider deflects the flow, so crossings there are rare tunnelling events and are not reported.
        """
        if not self.s.particles:
            return
        from mathutils import Vector
        from mathutils.bvhtree import BVHTree

        emitters = {k.split("/", 1)[0] for k in self.s.particles}
        instanced = set()
        for ob in self.scene.objects:
            for ps in ob.particle_systems:
                io = getattr(ps.settings, "instance_object", None)
                if io is not None:
                    instanced.add(io.name)
        targets = [n for n in self.solids() if n not in emitters and n not in instanced and not _collision_owner(self.info[n])]
        for n in targets:
            crossings = np.zeros(len(self.frames), dtype=np.int64)
            nearby_total = 0
            tree, tree_key = None, None
            for key, P in self.s.particles.items():
                alive = self.s.particles_alive.get(key)
                for fi in range(len(self.frames) - 1):
                    a, b = P[fi], P[fi + 1]
                    ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
                    if alive is not None and alive.shape == P.shape[:2] and alive[fi].any():
                        ok &= alive[fi] & alive[fi + 1]
                    if not ok.any():
                        continue
                    tris = None
                    lo, hi = self.geom.aabbs(n)[fi]
                    smin, smax = np.minimum(a, b), np.maximum(a, b)
                    near = ok & (smax >= lo - 1e-3).all(axis=1) & (smin <= hi + 1e-3).all(axis=1)
                    idx = np.nonzero(near)[0]
                    if not len(idx):
                        continue
                    nearby_total += len(idx)
                    moving = n in self.moving
                    k = (n, fi if moving else 0)
                    if tree is None or (moving and tree_key != k):
                        if tris is None:
                            tris = self.geom.world_triangles(n, int(self.frames[fi]))
                        verts = tris.reshape(-1, 3)
                        polys = [(3 * i, 3 * i + 1, 3 * i + 2) for i in range(len(tris))]
                        tree, tree_key = BVHTree.FromPolygons([Vector(v) for v in verts], polys), k
                    for i in idx:
                        d = b[i] - a[i]
                        ln = float(np.linalg.norm(d))
                        if ln < 1e-9:
                            continue
                        hit = tree.ray_cast(Vector(a[i]), Vector(d / ln), ln)
                        if hit[0] is not None:
                            crossings[fi] += 1
            total = int(crossings.sum())
            if total < PARTICLE_CROSS_MIN or total < PARTICLE_CROSS_FRAC * max(nearby_total, 1):
                continue
            over = crossings > 0
            self.add(
                kind="no_contact_response",
                objects=[n, *sorted(emitters)],
                frames=_frange(self.frames, over),
                value=float(total),
                unit="particle crossings",
                message=f"{total} liquid particle steps pass through rendered solid {n}, which has no collision owner ({int(over.sum())} frames)",
                evidence={
                    "no_collision_owner": n,
                    "crossings": total,
                    "nearby_particle_steps": nearby_total,
                    "thresholds": {"min_crossings": PARTICLE_CROSS_MIN, "min_fraction_of_nearby": PARTICLE_CROSS_FRAC},
                    "series": _series(self.frames, crossings.astype(float), f"particles crossing {n}", "count"),
                },
            )

    def _pair_depth(self, a: str, b: str, mask: np.ndarray, slack: float) -> np.ndarray:
        """Depth per frame where the AABBs overlap; while neither body moved more than `slack` since
        the last exact query (bodies at rest), the last answer is re-used: depth changes by at most that."""
        depth = np.zeros(len(self.frames))
        ia, ib = self.s.index(a), self.s.index(b)
        mats = self.s.matrices
        ra = float(np.linalg.norm(self.info[a].get("dimensions", [1, 1, 1]))) / 2
        rb = float(np.linalg.norm(self.info[b].get("dimensions", [1, 1, 1]))) / 2
        last_fi, last_d = None, 0.0
        bound = self.geom.depth_bound(a, b)
        for fi in np.nonzero(mask & (bound > 2.5 * slack))[0]:  # below half the tolerance: cannot matter
            if last_fi is not None:
                da = np.abs(mats[ia, fi, :3, 3] - mats[ia, last_fi, :3, 3]).max() + ra * np.abs(mats[ia, fi, :3, :3] - mats[ia, last_fi, :3, :3]).max()
                db = np.abs(mats[ib, fi, :3, 3] - mats[ib, last_fi, :3, 3]).max() + rb * np.abs(mats[ib, fi, :3, :3] - mats[ib, last_fi, :3, :3]).max()
                if da + db < slack:
                    depth[fi] = last_d
                    continue
            last_d = self.geom.penetration_depth(a, b, int(self.frames[fi]))
            last_fi = fi
            depth[fi] = last_d
        return depth

    def _related(self, a: str, b: str) -> bool:
        """Parts of one assembly overlap by construction: parent/child, or joined by a rigid-body
        constraint (an axle through its bearing)."""
        pa, pb = self.info[a].get("parent"), self.info[b].get("parent")
        if pa == b or pb == a or (pa is not None and pa == pb):
            return True
        return any({r["object1"], r["object2"]} == {a, b} for r in self.constrained.get(a, []))

    # ================================================================ support
    def support(self) -> None:
        gn = float(np.linalg.norm(self.g_rb))
        if gn < 1e-6:
            return
        ghat = self.g_rb / gn
        solids = [n for n in self.geom.meshes if not self.geom.meshes[n].deforming]
        rendered = [n for n in solids if _rendered(self.info[n])]
        colliders = [n for n in solids if _collision_owner(self.info[n])]
        for body in solids:
            info = self.info[body]
            if not _is_dynamic(info) or body in self.constrained:
                continue
            sv = self.sources.get(body, {})
            kf = set(sv.get("kinematic_frames", []))
            v = kin.linear_velocity(self.s, body) @ ghat
            a = kin.linear_acceleration(self.s, body) @ ghat
            held = (np.abs(v) < SUPPORT_VZ) & (np.abs(a) < SUPPORT_AZ * gn)
            held &= np.array([int(f) not in kf for f in self.frames])
            runs = kin.runs(held, SUPPORT_MIN_RUN)
            # bounces: falling, then rising one or two frames later (the contact force reversed it)
            notk = np.array([int(f) not in kf for f in self.frames])
            bounce = [i for i in range(1, len(v) - 1) if notk[i] and v[i - 1] > 0.3 and min(v[i], v[i + 1]) < -0.3]
            if not runs and not bounce:
                continue
            sample_idx = sorted({int(x) for s0, e0 in runs for x in np.linspace(s0 + 2, e0 - 2, num=min(5, e0 - s0 - 3))})
            if len(sample_idx) > SUPPORT_SAMPLES:
                sample_idx = [sample_idx[int(i)] for i in np.linspace(0, len(sample_idx) - 1, SUPPORT_SAMPLES)]
            slack = {i: 0.0 for i in sample_idx}
            for i in bounce[:SUPPORT_SAMPLES]:
                slack[i] = float(np.abs(v[i - 1 : i + 2]).max()) / self.s.fps  # contact happened within a frame of here
            size = max(info["dimensions"]) if info.get("dimensions") else 1.0
            reach = 0.5 * size + 0.5
            verdicts = []
            tol_body = SUPPORT_TOL + _margin_eff(info) + 0.03 * _size(info)
            rendered_owners = [o for o in rendered if _collision_owner(self.info[o])]
            hidden = [o for o in colliders if not _rendered(self.info[o])]
            for fi in sorted(slack):
                f = int(self.frames[fi])
                tol_f = tol_body + slack[fi]
                best_vis, best_vis_name = self._nearest(body, rendered_owners, f, reach, tol_f)
                if best_vis_name is not None and best_vis <= tol_f + _margin_eff(self.info[best_vis_name]):
                    verdicts.append(("ok", f, best_vis, best_vis_name))
                    continue
                best_hid, best_hid_name = self._nearest(body, hidden, f, reach, tol_f)
                if best_hid_name is not None and best_hid <= tol_f + _margin_eff(self.info[best_hid_name]):
                    near_vis, near_name = self._nearest(body, rendered, f, reach, tol_f)
                    verdicts.append(("hidden", f, near_vis, best_hid_name))
                elif best_vis_name is not None:
                    verdicts.append(("mismatch", f, best_vis, best_vis_name))
                else:
                    near_vis, near_name = self._nearest(body, rendered, f, reach, tol_f)
                    verdicts.append(("nothing", f, near_vis, near_name))
            bad = [v_ for v_ in verdicts if v_[0] != "ok"]
            if len(bad) * 2 <= len(verdicts):
                continue
            kinds = [v_[0] for v_ in bad]
            top = max(set(kinds), key=kinds.count)
            sel = [v_ for v_ in bad if v_[0] == top]
            gaps = [v_[2] for v_ in sel if np.isfinite(v_[2])]
            gap = float(np.median(gaps)) if gaps else None
            fr = [sel[0][1], sel[-1][1]]
            held_range = [int(self.frames[runs[0][0]]), int(self.frames[runs[-1][1]])] if runs else []
            ev = {
                "held_frames": held_range,
                "bounce_frames": [int(self.frames[i]) for i in bounce],
                "sampled": [{"frame": f, "verdict": k, "material_gap_m": (None if not np.isfinite(g_) else g_), "nearest": o} for k, f, g_, o in verdicts],
                "body_collision": info.get("rigid_body"),
            }
            if top == "hidden":
                holder = sel[0][3]
                self.add(
                    kind="hidden_support",
                    objects=[body, holder],
                    frames=fr,
                    value=gap,
                    unit="m",
                    message=f"{body} is held by {holder!r}, a collider that does not render"
                    + (f" ({gap:.3f} m from any rendered material)" if gap is not None else ""),
                    evidence=ev | {"holder": holder, "holder_info": self.info[holder]},
                )
            elif top == "mismatch":
                holder = sel[0][3]
                self.add(
                    kind="collider_mismatch",
                    objects=[body, holder],
                    frames=fr,
                    value=gap,
                    unit="m",
                    message=f"{body} is held {gap:.3f} m away from the material of {holder!r}: a collision shape or margin extends beyond the visible mesh",
                    evidence=ev | {"holder": holder, "holder_collision": self.info[holder].get("rigid_body") or self.info[holder].get("collision")},
                )
            else:
                self.add(
                    kind="hidden_support",
                    objects=[body],
                    frames=fr,
                    value=gap,
                    unit="m",
                    message=f"{body} is held against gravity with no material under it"
                    + (f" (nearest rendered material {gap:.3f} m away)" if gap is not None else ""),
                    evidence=ev,
                )

    def _nearest(self, body: str, others: list[str], f: int, reach: float, tol: float) -> tuple[float, str | None]:
        """Nearest material among `others` (AABB broad phase, nearest boxes first, early exit on contact)."""
        cands = []
        for o in others:
            if o == body or self._related(body, o):
                continue
            gap = self.geom.aabb_gap(body, o, f)
            if gap <= reach:
                cands.append((gap, o))
        best, name = float("inf"), None
        for gap, o in sorted(cands):
            if gap > best:
                break
            d, p = self.geom.contact(body, o, f, reach)
            d = 0.0 if p > 0 else d
            if d < best:
                best, name = d, o
            if best <= tol:
                break
        return best, name

    def proxies(self) -> None:
        """Static check: primitive collision shapes (centred on the origin, sized from the dimensions)
        against the visible mesh, both ways."""
        for n, mg in self.geom.meshes.items():
            info = self.info[n]
            rb = info.get("rigid_body")
            if not rb or not rb["enabled"] or mg.deforming:
                continue
            shape = rb["collision_shape"]
            size = _size(info) or 1.0
            tol = max(PROXY_TOL_MIN, PROXY_TOL_REL * size)
            beyond = inside = 0.0
            if shape in ("BOX", "SPHERE", "CYLINDER", "CAPSULE"):
                sdf, surf = _proxy(shape, np.array(info["dimensions"]) / 2)
                inside = float(max(0.0, sdf(mg.local).max()))  # mesh pokes out of the proxy
                if mg.closed:
                    beyond = self._outside_mesh(n, surf)
            elif shape in SOLVER_SHAPES_WITH_OUTER_MARGIN and rb["collision_margin"] > max(0.05, 0.5 * size):
                beyond = float(rb["collision_margin"])
            else:
                continue
            if max(beyond, inside) <= tol:
                continue
            self.add(
                kind="collider_mismatch",
                objects=[n],
                frames=[int(self.frames[0]), int(self.frames[-1])],
                value=round(max(beyond, inside), 6),
                unit="m",
                message=f"{n}'s {shape} collision shape "
                + (f"extends {beyond:.3f} m beyond the visible mesh" if beyond >= inside else f"falls {inside:.3f} m inside the visible mesh"),
                evidence={"shape": shape, "margin": rb["collision_margin"], "beyond_m": beyond, "mesh_outside_proxy_m": inside, "tolerance_m": tol},
            )

    def _outside_mesh(self, name: str, pts: np.ndarray) -> float:
        tree = self.geom._tree(name, 0)
        worst = 0.0
        for co in pts:
            loc, nrm, _i, dist = tree.find_nearest(co)
            if loc is None:
                continue
            if (co[0] - loc[0]) * nrm[0] + (co[1] - loc[1]) * nrm[1] + (co[2] - loc[2]) * nrm[2] > 0:
                worst = max(worst, dist)
        return float(worst)

    # ================================================================ energy
    def energy(self) -> None:
        dyn = [n for n in self.s.names if n in self.info and _is_dynamic(self.info[n]) and n in self.moving]
        if not dyn:
            return
        kin_last = -1
        for n in dyn:
            kf = set(self.sources.get(n, {}).get("kinematic_frames", []))
            for fi, f in enumerate(self.frames):
                if int(f) in kf:
                    kin_last = max(kin_last, fi)
        s0 = kin_last + 2
        if len(self.frames) - s0 < 10:
            return
        e = kin.mechanical_energy(self.s, dyn, self.g_rb)
        total = kin.median_filter(e["total"][s0:])
        fr = self.frames[s0:]
        masses = [float(self.info[n]["rigid_body"]["mass"]) for n in dyn]
        gn = float(np.linalg.norm(self.g_rb))
        zr = [np.ptp(self.s.locations(n) @ (self.g_rb / gn if gn else np.array([0, 0, 1.0]))) for n in dyn]
        scale = max(float(np.max(e["kinetic"][s0:] + e["rotational"][s0:])), sum(m * gn * z for m, z in zip(masses, zr, strict=True)), 1e-9)
        e0 = float(np.max(total[:3]))
        gain = total - e0
        runmin = np.minimum.accumulate(total)
        rebound = total - runmin
        over = gain > ENERGY_GAIN_REL * scale
        over_r = rebound > ENERGY_REBOUND_REL * scale
        flag = over.sum() >= ENERGY_FRAMES or over_r.sum() >= ENERGY_FRAMES
        admitted = self._work_sources(dyn)
        self.energy_summary = {"bodies": dyn, "scale_J": scale, "initial_J": e0, "max_gain_J": float(gain.max()), "admitted_sources": admitted}
        if not flag or admitted:
            return
        mask = over if over.sum() >= ENERGY_FRAMES else over_r
        val = float(gain.max()) if over.sum() >= ENERGY_FRAMES else float(rebound.max())
        wit = int(np.argmax(gain if over.sum() >= ENERGY_FRAMES else rebound))
        pushers = [f["field"] for f in self.fields if set(f["targets"]) & set(dyn)]
        self.add(
            kind="energy_gain",
            objects=dyn,
            frames=_frange(fr, mask),
            value=val,
            unit="J",
            message=f"passive mechanical energy rises {val:.4g} J above its {'initial value' if over.sum() >= ENERGY_FRAMES else 'earlier minimum'} "
            f"(scale {scale:.4g} J) with no admitted work source; witness frame {int(fr[wit])}"
            + (f"; fields acting: {pushers}" if pushers else ""),
            evidence={
                "initial_J": e0,
                "witness_frame": int(fr[wit]),
                "witness_J": float(total[wit]),
                "scale_J": scale,
                "fields_acting": pushers,
                "series": _series(fr, total, "mechanical energy (KE + rotational + PE)", "J", e0 + ENERGY_GAIN_REL * scale),
            },
        )

    def _work_sources(self, dyn: list[str]) -> list[str]:
        """Admitted work: motors, moving animated colliders (actuators), medium-like fields (wind...)."""
        out = []
        for n, recs in self.constrained.items():
            if n in dyn and any(r["motor"] for r in recs):
                out.append(f"motor on {n}")
        for n in self.moving:
            sv = self.sources.get(n, {})
            if n not in dyn and _collision_owner(self.info.get(n, {})) and (sv.get("animated_transforms") or sv.get("drivers")):
                out.append(f"actuator {n}")
        for f in self.fields:
            if set(f["targets"]) & set(dyn) and f["type"] in src.MEDIUM_FIELDS and f["strength"] != 0:
                out.append(f"{f['type'].lower()} field {f['field']}")
        return out

    # ================================================================ cloth / soft body
    def self_intersection(self) -> None:
        for n, mg in self.geom.meshes.items():
            if not mg.deforming:
                continue
            mods = {m["type"] for m in self.info[n]["modifiers"]}
            if not mods & {"CLOTH", "SOFT_BODY"}:
                continue
            counts = np.zeros(len(self.frames), dtype=np.int64)
            witness = None
            v = self.s.verts[n]
            check = np.unique(np.linspace(0, len(self.frames) - 1, num=min(SELF_X_MAX_FRAMES, len(self.frames))).astype(int))
            for fi in check:
                f = self.frames[fi]
                if not np.all(np.isfinite(v[fi])):
                    continue
                pairs = self.geom.self_intersections(n, int(f))
                counts[fi] = len(pairs)
                if witness is None and len(pairs):
                    witness = {"frame": int(f), "triangles": [int(x) for x in pairs[0]]}
            bad = counts >= SELF_X_MIN_PAIRS
            if bad.sum() < SELF_X_MIN_FRAMES:
                continue
            self.add(
                kind="self_intersection",
                objects=[n],
                frames=_frange(self.frames, bad),
                value=float(counts.max()),
                unit="triangle pairs",
                message=f"{n} crosses itself: up to {int(counts.max())} nonadjacent triangle pairs intersect (on {int(bad.sum())} frames, "
                f"pairs within 2 edge rings excluded)",
                evidence={
                    "max_frame": int(self.frames[int(np.argmax(counts))]),
                    "witness": witness,
                    "frames_checked": len(check),
                    "series": _series(self.frames[check], counts[check], f"{n} crossing pairs", "pairs"),
                },
            )

    # ================================================================ numerical
    def numerical(self) -> None:
        s = self.s
        for n in s.names:
            m = s.matrices[s.index(n)]
            bad = ~np.all(np.isfinite(m.reshape(len(self.frames), -1)), axis=1)
            if n in s.verts:
                bad |= ~np.all(np.isfinite(s.verts[n].reshape(len(self.frames), -1)), axis=1) & np.any(np.isfinite(s.verts[n].reshape(len(self.frames), -1)), axis=1)
            if bad.any():
                self.add(kind="numerical_instability", objects=[n], frames=_frange(self.frames, bad), value=float(bad.sum()), unit="frames",
                         message=f"{n} has NaN/inf state on {int(bad.sum())} frames", evidence={"cause": "nan"})
                continue
            if n not in self.moving:
                continue
            x = m[:, :3, 3]
            v = np.linalg.norm(kin.linear_velocity(s, n), axis=1)
            far = np.linalg.norm(x, axis=1) > EXPLODE_DIST
            fast = v > EXPLODE_SPEED
            if (far | fast).any():
                self.add(kind="numerical_instability", objects=[n], frames=_frange(self.frames, far | fast), value=float(v.max()), unit="m/s",
                         message=f"{n} explodes: speed up to {v.max():.1f} m/s" + (f", {np.linalg.norm(x, axis=1).max():.0f} m from the origin" if far.any() else ""),
                         evidence={"cause": "explosion", "series": _series(self.frames, v, f"{n} speed", "m/s", EXPLODE_SPEED)})
                continue
            if n in s.verts and n in self.geom.meshes:
                mg = self.geom.meshes[n]
                e = np.unique(np.sort(np.concatenate([mg.tris[:, [0, 1]], mg.tris[:, [1, 2]], mg.tris[:, [2, 0]]]), axis=1), axis=0)
                vv = s.verts[n]
                ln = np.linalg.norm(vv[:, e[:, 0]] - vv[:, e[:, 1]], axis=2)
                r = ln.max(axis=1) / max(float(ln[0].max()), 1e-9)
                if (r > EXPLODE_STRETCH).any():
                    self.add(kind="numerical_instability", objects=[n], frames=_frange(self.frames, r > EXPLODE_STRETCH), value=float(r.max()), unit="stretch ratio",
                             message=f"{n} explodes: an edge stretches to {r.max():.1f}x its first-frame length",
                             evidence={"cause": "explosion", "series": _series(self.frames, r, f"{n} max edge stretch", "ratio", EXPLODE_STRETCH)})
                    continue
            if _is_dynamic(self.info[n]) and len(x) > JITTER_WINDOW:
                step = np.linalg.norm(np.diff(x, axis=0), axis=1)
                W = JITTER_WINDOW
                path = np.convolve(step, np.ones(W - 1), mode="valid")  # path over W frames
                win = np.lib.stride_tricks.sliding_window_view(x, W, axis=0)  # (F-W+1, 3, W)
                net = np.linalg.norm(win.max(axis=2) - win.min(axis=2), axis=1)
                jit = (net < JITTER_NET) & (path[: len(net)] > JITTER_PATH)
                if jit.any():
                    i0 = int(np.argmax(jit))
                    self.add(kind="numerical_instability", objects=[n], frames=[int(self.frames[i0]), int(self.frames[min(len(self.frames) - 1, i0 + W - 1)])],
                             value=float(path[: len(net)][jit].max()), unit="m per window",
                             message=f"{n} jitters at rest: {path[: len(net)][jit].max():.3f} m of motion within a {net[jit].min() * 1000:.1f} mm region over {W} frames",
                             evidence={"cause": "jitter", "window_frames": W})


# ============================================================================ proxies
def _proxy(shape: str, h: np.ndarray) -> tuple[Any, np.ndarray]:
    """(signed-distance function, surface sample points) of a Blender primitive collision shape
    centred on the object origin with half extents h (scaled local space)."""
    n = 24
    if shape == "SPHERE":
        r = float(h.max())

        def sdf(p: np.ndarray) -> np.ndarray:
            return np.linalg.norm(p, axis=1) - r

        k = np.arange(400) + 0.5
        phi = np.arccos(1 - 2 * k / 400)
        th = np.pi * (1 + 5**0.5) * k
        surf = r * np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], axis=1)
        return sdf, surf
    if shape == "BOX":

        def sdf(p: np.ndarray) -> np.ndarray:
            q = np.abs(p) - h
            return np.linalg.norm(np.maximum(q, 0), axis=1) + np.minimum(q.max(axis=1), 0)

        g = np.linspace(-1, 1, 7)
        pts = np.array([[x, y, z] for x in g for y in g for z in g])
        pts = pts[np.abs(pts).max(axis=1) == 1]
        return sdf, pts * h
    r = float(max(h[0], h[1]))
    hz = float(h[2])
    if shape == "CAPSULE":
        hc = max(hz - r, 0.0)

        def sdf(p: np.ndarray) -> np.ndarray:
            q = p.copy()
            q[:, 2] = np.clip(q[:, 2], -hc, hc)
            return np.linalg.norm(p - q, axis=1) - r

    else:

        def sdf(p: np.ndarray) -> np.ndarray:
            d = np.stack([np.linalg.norm(p[:, :2], axis=1) - r, np.abs(p[:, 2]) - hz], axis=1)
            return np.linalg.norm(np.maximum(d, 0), axis=1) + np.minimum(d.max(axis=1), 0)

    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    zs = np.linspace(-hz, hz, 7)
    side = np.array([[r * np.cos(t), r * np.sin(t), z] for t in a for z in zs])
    if shape == "CAPSULE":
        side[:, 2] = np.clip(side[:, 2], -max(hz - r, 0.0), max(hz - r, 0.0))
        caps = np.array([[0, 0, hz], [0, 0, -hz]])
    else:
        caps = np.array([[rr * np.cos(t), rr * np.sin(t), s * hz] for t in a for rr in (0.0, 0.5 * r, r) for s in (-1, 1)])
    return sdf, np.concatenate([side, caps])


# ============================================================================ entry points
def audit_scene(
    scene: Any = None,
    program_text: str | None = None,
    samples: SceneSamples | None = None,
    frames_dir: Path | None = None,
    core_objects: list[str] | None = None,
) -> AuditReport:
    """Audit the live (baked or stepped) scene; returns every SPEC §5 finding with its evidence."""
    import bpy

    scene = scene or bpy.context.scene
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    cache = _cache_state(scene)
    if samples is None:
        samples = sample_scene(scene)
        timings["sample"] = time.perf_counter() - t0
    a = _Audit(scene, samples, program_text, core_objects)
    timings.update(a.timings)
    for name in ("scripted", "not_simulated", "force_fields", "pairs", "particles_through", "support", "proxies", "energy", "self_intersection", "numerical"):
        t = time.perf_counter()
        getattr(a, name)()
        timings[name] = time.perf_counter() - t
    screen = None
    if frames_dir is not None and Path(frames_dir).is_dir():
        t = time.perf_counter()
        from physcodegym.probes.screen import screen_motion_check

        screen = screen_motion_check(scene, samples, Path(frames_dir), a)
        timings["screen"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0
    scene_doc = {
        "name": scene.name,
        "frames": [int(samples.frames[0]), int(samples.frames[-1])] if len(samples.frames) else [],
        "objects": len(samples.names),
        "moving": {n: {k: round(v, 6) for k, v in st.items()} for n, st in a.moving.items()},
        "core": a.core,
        "dynamic": [n for n in samples.names if _is_dynamic(samples.info[n])],
        "cache": cache,
    }
    meta = {
        "handlers": getattr(a, "handler_records", []),
        "fields": a.fields,
        "energy": getattr(a, "energy_summary", None),
        "screen_motion": screen,
        "thresholds": {k: v for k, v in globals().items() if k.isupper() and isinstance(v, int | float)},
    }
    return AuditReport(findings=a.findings, samples_path=None, scene=scene_doc, timings={k: round(v, 4) for k, v in timings.items()}, meta=meta)


def _cache_state(scene: Any) -> dict[str, Any]:
    """Whether each simulation cache is baked (read back) or will be re-simulated by stepping."""
    out: dict[str, Any] = {}
    rbw = scene.rigidbody_world
    if rbw is not None:
        out["rigidbody"] = "baked" if rbw.point_cache.is_baked else "resimulated"
    for ob in scene.objects:
        for m in ob.modifiers:
            pc = getattr(m, "point_cache", None)
            if pc is not None:
                out[f"{ob.name}/{m.name}"] = "baked" if pc.is_baked else "resimulated"
        for ps in ob.particle_systems:
            out[f"{ob.name}/{ps.name}"] = "baked" if ps.point_cache.is_baked else "resimulated"
    return out


def audit_path(path: Path, program: Path | None = None) -> AuditReport:
    """Open a run folder (scene.blend [+ scene.py, frames/]) or a .blend and audit it in this process."""
    return audit_path_full(path, program)[0]


def audit_path_full(path: Path, program: Path | None = None, save_samples: bool = True) -> tuple[AuditReport, SceneSamples, Any]:
    """`audit_path` that also returns the samples and the opened scene (for the rubric, which re-uses them).
    In a run folder the samples are kept as `audit_samples.npz` so later probes never sample again."""
    import bpy
    from physcodegym.core.errors import InputError

    path = Path(path)
    if path.is_dir():
        blend = path / "scene.blend"
        if not blend.is_file():
            raise InputError("run folder has no scene.blend", file=str(path), field="scene.blend")
        run_dir: Path | None = path
    elif path.suffix == ".blend" and path.is_file():
        blend, run_dir = path, None
    else:
        raise InputError("expected a run folder or a .blend file", file=str(path))
    if program is None and run_dir is not None and (run_dir / "scene.py").is_file():
        program = run_dir / "scene.py"
    text = None
    if program is not None:
        if not Path(program).is_file():
            raise InputError("program not found", file=str(program), field="--program")
        text = Path(program).read_text(errors="replace")
    t = time.perf_counter()
    try:
        bpy.ops.wm.open_mainfile(filepath=str(blend))
    except RuntimeError as e:
        raise InputError(f"cannot open blend: {e}", file=str(blend)) from e
    t_open = time.perf_counter() - t
    scene = bpy.context.scene
    frames_dir = run_dir / "frames" if run_dir is not None and (run_dir / "frames").is_dir() else None
    t = time.perf_counter()
    cache = _cache_state(scene)
    samples = sample_scene(scene)
    t_sample = time.perf_counter() - t
    rep = audit_scene(scene, program_text=text, samples=samples, frames_dir=frames_dir)
    rep.scene["cache"] = cache
    rep.timings["open"] = round(t_open, 4)
    rep.timings["sample"] = round(t_sample, 4)
    rep.meta["source"] = {"blend": str(blend), "program": str(program) if program else None, "frames": str(frames_dir) if frames_dir else None}
    if save_samples and run_dir is not None:
        try:
            out = run_dir / "audit_samples.npz"
            samples.save_npz(out)
            rep.samples_path = str(out)
        except OSError as e:
            rep.meta["samples_error"] = str(e)
    return rep, samples, scene
