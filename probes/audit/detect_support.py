"""Detectors of what holds a body: `hidden_support` (invisible collider, a field, nothing), `collider_mismatch` (held
off the material; primitive proxies vs the mesh)."""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.audit.audit_base import (
    HANDOFF_FRAMES,
    PROXY_TOL_MIN,
    PROXY_TOL_REL,
    SHELL_MIN,
    SHELL_REL,
    SOLVER_SHAPES_WITH_OUTER_MARGIN,
    SUPPORT_AZ,
    SUPPORT_MIN_RUN,
    SUPPORT_SAMPLES,
    SUPPORT_TOL,
    SUPPORT_VZ,
    AuditBase,
    _collision_owner,
    _is_dynamic,
    _margin_eff,
    _rendered,
    _size,
)
from physcodegym.probes.scene import kinematics as kin


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
        caps = np.array(
            [[rr * np.cos(t), rr * np.sin(t), s * hz] for t in a for rr in (0.0, 0.5 * r, r) for s in (-1, 1)])
    return sdf, np.concatenate([side, caps])



CLOTH_SHELL_MAX = 0.04  # m: cloth distance_min + collider thickness_outer kept off the material (Blender's
# defaults, 0.015 + 0.02, stay within it; the shipped cloth uses 0.004 + 0.008)
CLOTH_SHELL_SLOP_MIN, CLOTH_SHELL_SLOP_REL = 0.005, 0.25  # the cloth rests "at" the shell within this


PIN_WEIGHT = 0.1  # a vertex pinned (cloth pin weight, soft-body goal strength) at least this much is held
PIN_ALL_SHARE = 0.95  # a cloth pinned at least this much is a static sheet, not a hanging one (a soft body
# held by goals everywhere still sags and sways on them: it hangs)
PIN_REACH_MIN, PIN_REACH_REL = 0.05, 0.05  # rendered material within max(5 cm, 5 % of the cloth) holds a pin
PIN_FAR_SHARE = 0.25  # more than this share of the pins far from any material: a hidden support
STRING_MIN_M = 0.05  # m: loose edges of a cloth or soft body this long (in all, on the last frame) are strings
EDGE_RENDERERS = {"SKIN", "NODES"}  # modifiers that can give edges a rendered surface
PIN_TOUCH_POINTS = 400  # vertices of a soft body sampled to see whether it rests on material


class SupportDetectors(AuditBase):
    # ================================================================ support
    def support(self) -> None:
        gn = float(np.linalg.norm(self.g_rb))
        if gn < 1e-6:
            return
        ghat = self.g_rb / gn
        solids = [n for n in self.geom.meshes if not self.geom.meshes[n].deforming]
        # a liquid's derived surface holds nothing up (Blender's particles push no rigid body): not a visible support
        liquid = getattr(self, "derived_surfaces", ())
        rendered = [n for n in solids if _rendered(self.info[n]) and n not in liquid]
        colliders = [n for n in solids if _collision_owner(self.info[n], self.si)]
        for body in solids:
            info = self.info[body]
            sv = self.sources.get(body, {})
            kf = set(sv.get("kinematic_frames", []))
            switched = bool(kf) and (info.get("rigid_body") or {}).get("type") == "ACTIVE"
            if not (_is_dynamic(info, self.si) or switched) or body in self.constrained:
                continue
            v = kin.linear_velocity(self.s, body) @ ghat
            a = kin.linear_acceleration(self.s, body) @ ghat
            held = (np.abs(v) < SUPPORT_VZ) & (np.abs(a) < SUPPORT_AZ * gn)
            # a kinematic (or switched-off) hold is an initial-condition hand-off when short; a longer one is a
            # hold like any other, and what holds the body must be material
            kin_mask = np.array([int(f) in kf for f in self.frames])
            long_kin = _long_runs(kin_mask, HANDOFF_FRAMES)
            held &= ~kin_mask | long_kin
            runs = kin.runs(held, SUPPORT_MIN_RUN)
            # bounces: falling, then rising one or two frames later (the contact force reversed it)
            notk = np.array([int(f) not in kf for f in self.frames])
            bounce = [i for i in range(1, len(v) - 1) if notk[i] and v[i - 1] > 0.3 and min(v[i], v[i + 1]) < -0.3]
            if not runs and not bounce:
                continue
            sample_idx = sorted(
                {int(x) for s0, e0 in runs for x in np.linspace(s0 + 2, e0 - 2, num=min(5, e0 - s0 - 3))})
            if len(sample_idx) > SUPPORT_SAMPLES:
                sample_idx = [sample_idx[int(i)] for i in np.linspace(0, len(sample_idx) - 1, SUPPORT_SAMPLES)]
            slack = {i: 0.0 for i in sample_idx}
            for i in bounce[:SUPPORT_SAMPLES]:
                slack[i] = float(np.abs(v[i - 1 : i + 2]).max()) / self.s.fps  # contact happened within a frame of here
            size = max(info["dimensions"]) if info.get("dimensions") else 1.0
            reach = 0.5 * size + 0.5
            verdicts = self._support_verdicts(body, info, slack, reach, rendered, colliders)
            # judged per hold: a body that hovers for a second and then rests on the floor for five is still
            # held by nothing for that second (measured: pooled over both holds, the rest outvoted the hover)
            groups: dict[Any, list[Any]] = {}
            for v_ in verdicts:
                i = int(np.searchsorted(self.frames, v_[1]))
                g = next((k for k, (s0, e0) in enumerate(runs) if s0 <= i <= e0), "bounce")
                groups.setdefault(g, []).append(v_)
            bad = [v_ for vs in groups.values() if 2 * sum(x[0] != "ok" for x in vs) > len(vs)
                   for v_ in vs if v_[0] != "ok"]
            if not bad:
                continue
            holders = [f["field"] for f in self.fields if body in (self._acts_on(f"field:{f['field']}") or [])]
            if holders:  # without the field the held body moves: the field holds it against gravity
                self._field_held(body, holders, bad, runs, verdicts, ghat, gn)
                continue
            self._held_by_nothing_seen(body, info, bad, verdicts, runs, bounce, kf)

    def _support_verdicts(self, body: str, info: dict[str, Any], slack: dict[int, float], reach: float,
                          rendered: list[str], colliders: list[str]) -> list[tuple[str, int, float, Any]]:
        """On each sampled held frame, what holds `body`: rendered material within tolerance ("ok"), a collider
        that does not render ("hidden"), a rendered collider's shape reaching past its mesh ("mismatch"), or
        nothing ("nothing"); (verdict, frame, gap to the nearest rendered material, holder)."""
        verdicts = []
        tol_body = SUPPORT_TOL + _margin_eff(info) + 0.03 * _size(info)
        rendered_owners = [o for o in rendered if _collision_owner(self.info[o], self.si)]
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
        return verdicts

    def _field_held(self, body: str, holders: list[str], bad: list[Any], runs: list[Any], verdicts: list[Any],
                    ghat: np.ndarray, gn: float) -> None:
        """`body` held by force field(s) with no material under it: hidden_support naming each field and the
        share of the weight it carries (measured on its re-bake)."""
        shares = {h: self._field_share(body, h, runs, ghat, gn) for h in holders}
        said = "; ".join(
            f"{h!r} ({self._field_type(h)}) carries {100 * sh['share']:.0f} % of its weight (without it "
            f"{body} falls at {sh['fall_mps2']:.2f} m/s^2 of {sh['gravity_mps2']:.2f})"
            if sh.get("share") is not None else f"{h!r} ({self._field_type(h)}): its share of the weight "
            f"could not be measured ({sh.get('reason')})" for h, sh in shares.items())
        top = max((sh["share"] for sh in shares.values() if sh.get("share") is not None), default=None)
        self.add(
            kind="hidden_support",
            objects=[body, *holders],
            frames=[bad[0][1], bad[-1][1]],
            value=None if top is None else round(float(top), 4),
            unit=None if top is None else "share of the weight",
            message=(f"{body} is held against gravity by force field(s) {holders}, with no material under "
                     f"it: {said}"),
            evidence={
                "held_frames": [int(self.frames[runs[0][0]]), int(self.frames[runs[-1][1]])] if runs else [],
                "fields": holders, "weight_share": shares,
                      "sampled": [{"frame": f, "verdict": k, "nearest": o} for k, f, _g, o in verdicts]},
        )

    def _held_by_nothing_seen(self, body: str, info: dict[str, Any], bad: list[Any], verdicts: list[Any],
                              runs: list[Any], bounce: list[int], kf: set[Any]) -> None:
        """The finding for a body held where no rendered material holds it, by the verdict most of its bad frames
        share: a collider that does not render, a collision shape reaching past its mesh, Bullet's sleep, or
        nothing at all (a kinematic switch longer than a hand-off named)."""
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
            "sampled": [{"frame": f, "verdict": k, "material_gap_m": (None if not np.isfinite(g_) else g_),
                         "nearest": o} for k, f, g_, o in verdicts],
            "body_collision": info.get("rigid_body"),
        }
        holder = sel[0][3]
        kind, objects = ("collider_mismatch" if top == "mismatch" else "hidden_support"), [body, holder]
        asleep = _asleep(info.get("rigid_body"))
        if top in ("mismatch", "nothing") and asleep and runs and runs[0][0] <= 2:
            # Bullet's sleep holds the body where nothing does: not a collision shape reaching past a mesh
            top, kind, objects = "asleep", "hidden_support", [body]
        if top == "asleep":
            message = (f"{body} hangs in mid-air asleep ({asleep}): Bullet's deactivation holds it, no material"
                       + (f" (nearest rendered material {gap:.3f} m away)" if gap is not None else ""))
            ev["deactivation"] = asleep
        elif top == "hidden":
            message = f"{body} is held by {holder!r}, a collider that does not render" + (
                f" ({gap:.3f} m from any rendered material)" if gap is not None else "")
            ev |= {"holder": holder, "holder_info": self.info[holder]}
        elif top == "mismatch":
            clear = getattr(self.geom.meshes.get(holder), "clear_tris", 0)
            message = (f"{body} is held {gap:.3f} m away from the material of {holder!r}: a collision shape or "
                       "margin extends beyond the visible mesh"
                       + (f" ({clear} of its triangles have a material that renders nothing)" if clear else ""))
            ev |= {"holder": holder, "holder_clear_triangles": clear,
                   "holder_collision": self.info[holder].get("rigid_body") or self.info[holder].get("collision")}
        else:
            objects = [body]
            message = f"{body} is held against gravity with no material under it" + (
                f" (nearest rendered material {gap:.3f} m away)" if gap is not None else "")
            by_switch = [f for _k, f, _g, _o in sel if int(f) in kf]
            if by_switch:
                message += (f"; its rigid body is kinematic or switched off on frames {by_switch[0]}-"
                            f"{by_switch[-1]} (longer than a {HANDOFF_FRAMES}-frame hand-off): the switch holds it")
                ev["switch_held_frames"] = [int(by_switch[0]), int(by_switch[-1])]
        self.add(kind=kind, objects=objects, frames=fr, value=gap, unit="m", message=message, evidence=ev)

    def _field_type(self, field: str) -> str:
        return next((f["type"] for f in self.fields if f["field"] == field), "force field")

    def _field_share(self, body: str, field: str, runs: list[tuple[int, int]], ghat: np.ndarray,
                     gn: float) -> dict[str, Any]:
        """How much of `body`'s weight `field` carries while it holds it: the re-bake without the field (its effects
        branch) lets the body fall; its acceleration along gravity over the first frames of the hold, less the
        bake's (held: about 0), over the gravity the solver applies, is the share of the weight the field bore
        (1.0: it alone holds the body in mid-air)."""
        label = self._branch(f"field:{field}")
        row = (self.effects or {}).get(label) or {}
        sm = row.get("samples")
        if sm is None or body not in sm.names:
            return {"share": None, "reason": "no re-bake without the field"}
        if not runs:
            return {"share": None, "reason": "no hold long enough to measure"}
        s0, e0 = runs[0]
        nf = min(len(sm.frames), len(self.frames))
        lo, hi = s0 + 1, min(s0 + 5, e0, nf - 2)  # the first frames of the hold, before the fall meets anything
        if hi < lo:
            return {"share": None, "reason": "the hold is too short to measure"}
        fps = float(self.s.fps)
        ts = float((self.si.get("rigidbody_world") or {}).get("time_scale", 1.0))
        g_eff = gn * ts * ts
        pb = self.s.locations(body).astype(np.float64)
        pw = sm.locations(body).astype(np.float64)
        idx = np.arange(lo, hi + 1)
        # the body's own linear damping slows the fall as it gains speed (Bullet: v *= (1 - d) ** dt), so it is put
        # back, as the free-flight check does: what is left is what gravity and the field did
        lin = float((self.info[body].get("rigid_body") or {}).get("linear_damping", 0.0))
        k = np.log(max(1.0 - lin, 1e-6))

        def accel(p: np.ndarray) -> np.ndarray:
            a = (p[idx + 1] - 2 * p[idx] + p[idx - 1]) * fps * fps
            v = (p[idx + 1] - p[idx - 1]) * fps / 2
            return (a - k * v * ts) @ ghat

        fall = float(np.median(accel(pw) - accel(pb)))
        return {"share": round(max(0.0, fall / g_eff), 4) if g_eff > 1e-9 else None,
                "fall_mps2": round(fall, 4), "gravity_mps2": round(g_eff, 4),
                "frames": [int(self.frames[lo]), int(self.frames[hi])],
                **({"measured_with": label} if label != f"field:{field}" else {})}

    def _nearest(self, body: str, others: list[str], f: int, reach: float, tol: float) -> tuple[float, str | None]:
        """Nearest material among `others` (AABB broad phase, nearest boxes first, early exit on contact)."""
        others = [o for o in others if o != body and not self._related(body, o)]
        gaps = self.geom.aabb_gaps(body, others, f)
        cands = [(float(gaps[k]), others[k]) for k in np.nonzero(gaps <= reach)[0]]
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
            col = info.get("collision")
            if not rb and col and col.get("use") and col.get("thickness_outer", 0.0) > max(
                SHELL_MIN, SHELL_REL * (_size(info) or 1.0)):
                th = float(col["thickness_outer"])
                self.add(kind="collider_mismatch", objects=[n], frames=[int(self.frames[0]), int(self.frames[-1])],
                         value=round(th, 6), unit="m",
                         message=f"{n}'s collision shell (thickness_outer {th:.3f} m) extends beyond the visible mesh",
                         evidence={"shape": "COLLISION", "thickness_outer": th,
                                   "tolerance_m": max(SHELL_MIN, SHELL_REL * (_size(info) or 1.0))})
                continue
            if not rb or not rb["enabled"] or mg.deforming:
                continue
            shape = rb["collision_shape"]
            size = _size(info) or 1.0
            tol = max(PROXY_TOL_MIN, PROXY_TOL_REL * size)
            beyond = inside = 0.0
            if shape in ("BOX", "SPHERE", "CYLINDER", "CAPSULE"):
                sdf, surf = _proxy(shape, np.array(info["dimensions"]) / 2)
                # Bullet builds the shape from the object's own mesh: what it instances is judged as material
                # elsewhere (support, contacts), not as part of this collider
                own = mg.local if mg.instanced is None else mg.local[~mg.instanced]
                if not len(own):
                    continue
                inside = float(max(0.0, sdf(own).max()))  # mesh pokes out of the proxy
                if mg.closed:
                    beyond = self._outside_mesh(n, surf)
            elif shape in SOLVER_SHAPES_WITH_OUTER_MARGIN and rb["collision_margin"] > max(SHELL_MIN, SHELL_REL * size):
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
                + (f"extends {beyond:.3f} m beyond the visible mesh" if beyond >= inside else f"falls {inside:.3f} m "
                                                                                              "inside the visible "
                                                                                              "mesh"),
                evidence={"shape": shape, "margin": rb["collision_margin"], "beyond_m": beyond,
                          "mesh_outside_proxy_m": inside, "tolerance_m": tol},
            )

    def cloth_shells(self) -> None:
        """A cloth held off a collider by collision distances: its `distance_min` plus the collider's
        `thickness_outer` is a shell no frame shows. Judged where the shell acts (the cloth comes to rest
        against the collider at that distance on a sampled frame), so a wide setting that touches nothing
        costs nothing; Blender's defaults (0.015 + 0.02 m) are within CLOTH_SHELL_MAX."""
        colliders = [n for n, i in self.info.items() if n in self.geom.meshes and _rendered(i)
                     and (i.get("collision") or {}).get("use")]
        if not colliders:
            return
        picks = sorted({len(self.frames) - 1, (3 * (len(self.frames) - 1)) // 4, (len(self.frames) - 1) // 2})
        for n, info in self.info.items():
            cloth = next((r for r in (info.get("physics") or {}).values()
                          if r.get("type") == "CLOTH" and r.get("enabled") and r.get("use_collision", True)), None)
            if cloth is None or n not in self.geom.meshes or not _rendered(info):
                continue
            dmin = float(cloth.get("distance_min", 0.0))
            for c in colliders:
                if c == n:
                    continue
                th = float(self.info[c]["collision"].get("thickness_outer", 0.0))
                shell = dmin + th
                if shell <= CLOTH_SHELL_MAX:
                    continue
                near = shell + max(CLOTH_SHELL_SLOP_MIN, CLOTH_SHELL_SLOP_REL * shell)
                gaps = [(self.geom.min_distance(n, c, int(self.frames[i]), near), int(self.frames[i])) for i in picks]
                held = [(d, f) for d, f in gaps if CLOTH_SHELL_MAX < d <= near]
                if not held:
                    continue
                d, f = min(held)
                self.add(kind="collider_mismatch", objects=[n, c], frames=[f, f], value=round(d, 6), unit="m",
                         message=f"{n} rests {d:.3f} m off {c}'s material: cloth collision distance_min {dmin:.3f} m "
                                 f"plus {c}'s collision thickness_outer {th:.3f} m is a shell no frame shows",
                         evidence={"shape": "CLOTH_SHELL", "distance_min": dmin, "thickness_outer": th,
                                   "gap_m": d, "frame": f, "tolerance_m": CLOTH_SHELL_MAX})

    def pins(self) -> None:
        """Pinned vertices hold the rest of a cloth or soft body up: something rendered must be there to hold
        them (the pole of a flag, the rod of a curtain). A cloth's pin group and a soft body's goal (Blender's
        default: every vertex held at 0.7 towards its own mesh) are such pins. A body that moves while pinned
        vertices sit in mid-air, away from any rendered material, hangs from a support no frame shows:
        `hidden_support`. A cloth pinned everywhere holds nothing up (a static sheet; `not_simulated` judges it)."""
        solids = [m for m, i in self.info.items() if m in self.geom.meshes and _rendered(i)]
        F = len(self.frames)
        picks = sorted({0, (F - 1) // 2, F - 1})
        for n, info in self.info.items():
            ob = self.scene.objects.get(n)
            if ob is None or ob.type != "MESH" or not _rendered(info) or n not in self.moving:
                continue
            for rec in (info.get("physics") or {}).values():
                held = self._pinned(ob, rec)
                if held is None:
                    continue
                what, pinned = held
                nv = len(ob.data.vertices)
                if not pinned or (rec["type"] == "CLOTH" and len(pinned) >= PIN_ALL_SHARE * nv):
                    continue
                co = np.empty(nv * 3)
                ob.data.vertices.foreach_get("co", co)
                local = co.reshape(nv, 3)[pinned]
                size = float(max(info.get("dimensions") or [1.0]))
                reach = max(PIN_REACH_MIN, PIN_REACH_REL * size)
                mats = self.s.matrices[self.s.index(n)]
                others = [m for m in solids if m != n]
                worst: tuple[float, int, int] | None = None
                for fi in picks:
                    if rec["type"] == "SOFT_BODY" and self._touches(n, fi, others, reach):
                        continue  # goals on a body that rests on material shape it; they do not hold it up
                    w = local @ mats[fi][:3, :3].T + mats[fi][:3, 3]
                    d = np.full(len(w), np.inf)
                    for m in others:
                        d = np.minimum(d, self.geom.nearest_distances(m, int(self.frames[fi]), w, reach))
                    share = float(np.mean(d > reach))
                    if share > PIN_FAR_SHARE and (worst is None or share > worst[0]):
                        worst = (share, int(self.frames[fi]), int(np.sum(d > reach)))
                if worst is None:
                    continue
                share, f, far = worst
                self.add(kind="hidden_support", objects=[n], frames=[int(self.frames[0]), int(self.frames[-1])],
                         value=round(share, 4), unit="share of pinned vertices",
                         message=f"{far} of {len(pinned)} vertices of {n} held by {what} sit in mid-air, more than "
                                 f"{reach:.3f} m from any rendered material (frame {f}): it hangs from a support "
                                 "no frame shows",
                         evidence={"held_by": what, "pinned": len(pinned), "far": far, "reach_m": reach,
                                   "frame": f, "weight_min": PIN_WEIGHT})

    def strings(self) -> None:
        """A cloth or soft body's springs are its mesh edges, and an edge that bounds no face renders nothing: a
        loose edge is an invisible string the solver pulls on (a corner hung from a pinned vertex on a pole by a
        metre of loose edge, two flaps held together across the air). Loose edges of a moving rendered cloth or
        soft body that are still `STRING_MIN_M` long in all on the last frame (sewing springs close to nothing
        by then) are `hidden_support`, unless a modifier (Skin, geometry nodes) can draw edges."""
        for n, info in self.info.items():
            ob = self.scene.objects.get(n)
            if ob is None or ob.type != "MESH" or not _rendered(info) or n not in self.moving:
                continue
            kinds = [r.get("type") for r in (info.get("physics") or {}).values()]
            if not any(k in ("CLOTH", "SOFT_BODY") for k in kinds):
                continue
            if any(m.type in EDGE_RENDERERS for m in ob.modifiers if m.show_render):
                continue
            me = ob.data
            ne = len(me.edges)
            if not ne:
                continue
            loose = np.zeros(ne, bool)
            me.edges.foreach_get("is_loose", loose)
            if not loose.any():
                continue
            ev = np.zeros(ne * 2, np.int32)
            me.edges.foreach_get("vertices", ev)
            ev = ev.reshape(ne, 2)[loose]
            v = self.s.verts.get(n)
            if v is not None and v.shape[1] == len(me.vertices):
                pts = v[-1].astype(np.float64)  # where the solver left them
            else:  # other topology after the solver: the rest shape, in the world
                co = np.empty(len(me.vertices) * 3)
                me.vertices.foreach_get("co", co)
                m = self.s.matrices[self.s.index(n)][-1]
                pts = co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]
            lengths = np.linalg.norm(pts[ev[:, 0]] - pts[ev[:, 1]], axis=1)
            lengths = lengths[np.isfinite(lengths)]
            total = float(lengths.sum())
            if total < STRING_MIN_M:
                continue
            self.add(kind="hidden_support", objects=[n], frames=[int(self.frames[0]), int(self.frames[-1])],
                     value=round(total, 4), unit="m",
                     message=f"{n}'s {kinds[0].lower().replace('_', ' ')} has {len(ev)} loose edge(s), "
                             f"{total:.3f} m in all (longest {float(lengths.max()):.3f} m) on the last frame: "
                             "springs the solver pulls on that no frame shows (invisible strings)",
                     evidence={"loose_edges": int(len(ev)), "total_m": round(total, 4),
                               "longest_m": round(float(lengths.max()), 4), "min_m": STRING_MIN_M})

    def _touches(self, n: str, fi: int, others: list[str], reach: float) -> bool:
        """Whether the (deforming) body `n` comes within `reach` of any of `others`' material at sample `fi`."""
        v = self.s.verts.get(n)
        if v is None:
            return False
        pts = v[fi].astype(np.float64)
        pts = pts[np.isfinite(pts).all(axis=1)][:: max(1, len(pts) // PIN_TOUCH_POINTS)]
        return any(np.isfinite(self.geom.nearest_distances(m, int(self.frames[fi]), pts, reach)).any()
                   for m in others)

    @staticmethod
    def _pinned(ob: Any, rec: dict[str, Any]) -> tuple[str, list[int]] | None:
        """(what pins them, indices of the vertices held with at least PIN_WEIGHT) for one cloth / soft-body
        record, or None when the solver pins nothing."""
        if rec.get("type") == "CLOTH" and rec.get("enabled") and rec.get("pin_group"):
            group, lo, hi, default = rec["pin_group"], 0.0, 1.0, 0.0
            what = f"cloth pin group {group!r}"
        elif rec.get("type") == "SOFT_BODY" and rec.get("enabled") and rec.get("use_goal"):
            group, lo, hi = rec.get("goal_group") or "", float(rec["goal_min"]), float(rec["goal_max"])
            default = float(rec["goal_default"])
            what = f"soft-body goal ({'group ' + repr(group) if group else f'default {default:g} on every vertex'})"
        else:
            return None
        vg = ob.vertex_groups.get(group) if group else None
        if group and vg is None:
            return None
        out = []
        for v in ob.data.vertices:
            if vg is None:
                strength = default
            else:
                w = next((g.weight for g in v.groups if g.group == vg.index), None)
                strength = 0.0 if w is None else lo + (hi - lo) * w
            if strength >= PIN_WEIGHT:
                out.append(v.index)
        return what, out

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


def _asleep(rb: dict[str, Any] | None) -> str | None:
    """Why Bullet holds this rigid body still from its first frame without support, or None: it starts
    deactivated (asleep until something hits it). Falling asleep later needs the body still for Bullet's
    deactivation time, which a body in flight never is (measured: a bouncing ball with thresholds of 0.8 m/s and
    20 rad/s never slept at the top of a bounce), so only the start counts."""
    if not rb or rb.get("type") != "ACTIVE" or not rb.get("use_deactivation") or not rb.get("use_start_deactivated"):
        return None
    return "use_deactivation and use_start_deactivated: it starts asleep"


def _long_runs(mask: np.ndarray, longer_than: int) -> np.ndarray:
    """True on the runs of `mask` longer than `longer_than` samples."""
    out = np.zeros(len(mask), bool)
    i = 0
    while i < len(mask):
        if mask[i]:
            j = i
            while j < len(mask) and mask[j]:
                j += 1
            if j - i > longer_than:
                out[i:j] = True
            i = j
        else:
            i += 1
    return out
