"""Detectors of material overlap: `interpenetration` (moving or static pairs), `no_contact_response` (bodies and liquid
particles through collider-less solids)."""

from __future__ import annotations

import numpy as np
from physcodegym.probes.audit.audit_base import (
    PARTICLE_CROSS_FRAC,
    PARTICLE_CROSS_MIN,
    PEN_FRAMES,
    PEN_MIN,
    PEN_REL,
    AuditBase,
    _collision_owner,
    _frange,
    _is_dynamic,
    _margin,
    _series,
    _size,
)


class ContactDetectors(AuditBase):
    # ================================================================ pairs: interpenetration / no contact
    def pairs(self) -> None:
        solids = self.solids()
        movers = {n for n in solids if _is_dynamic(self.info[n], self.si) or n in self.moving}
        self.pair_depth: dict[tuple[str, str], np.ndarray] = {}
        for a, b, mask in self.geom.candidate_pairs(solids, pad=0.0):
            static_pair = a not in movers and b not in movers  # overlapping material is wrong even when nothing moves
            if self._related(a, b):
                continue
            if static_pair and not (self.geom.meshes[a].closed and self.geom.meshes[b].closed):
                # an open shell (a basin, a tray wall, a sheet) has no inside: what rests in it is not in its material
                continue
            depth = np.zeros(len(self.frames))
            ia_, ib_ = self.info[a], self.info[b]
            tol = max(PEN_MIN, PEN_REL * min(_size(ia_) or 1.0, _size(ib_) or 1.0), _margin(ia_), _margin(ib_))
            if not static_pair and not (_collision_owner(ia_, self.si) and _collision_owner(ib_, self.si)):
                # no solver contact between the two, so no contact slop either; and a point can lie at most half a
                # thin solid's thickness inside it: a body sunk through a collider-less slab is measured against that
                thin = min(_size(i) or 1.0 for i in (ia_, ib_) if not _collision_owner(i, self.si))
                tol = min(tol, max(0.002, 0.3 * thin))
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
            owner_a, owner_b = _collision_owner(ia_, self.si), _collision_owner(ib_, self.si)
            ev["static"] = static_pair
            if (not owner_a or not owner_b) and not static_pair:
                passive = a if not owner_a else b
                other = b if passive == a else a
                self.add(
                    kind="no_contact_response",
                    objects=[passive, other],
                    frames=_frange(self.frames, over),
                    value=float(depth.max()),
                    unit="m",
                    message=(f"{other} passes {depth.max():.3f} m into rendered solid {passive}, which has no "
                             f"collision owner ({int(over.sum())} frames)"),
                    evidence=ev | {"no_collision_owner": passive},
                )
                continue
            rba, rbb = ia_.get("rigid_body"), ib_.get("rigid_body")
            if rba and rbb and not any(
                x and y for x, y in zip(rba["collision_collections"], rbb["collision_collections"], strict=False)):
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
        targets = [
            n for n in self.solids() if n not in emitters and n not in instanced
            and n not in getattr(self, "derived_surfaces", ()) and not _collision_owner(
                self.info[n], self.si)]
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
                message=(f"{total} liquid particle steps pass through rendered solid {n}, which has no collision owner "
                         f"({int(over.sum())} frames)"),
                evidence={
                    "no_collision_owner": n,
                    "crossings": total,
                    "nearby_particle_steps": nearby_total,
                    "thresholds": {"min_crossings": PARTICLE_CROSS_MIN, "min_fraction_of_nearby": PARTICLE_CROSS_FRAC},
                    "series": _series(self.frames, crossings.astype(float), f"particles crossing {n}", "count"),
                },
            )

    def bodies_through(self) -> None:
        """A dynamic rigid body whose centre passes through a rendered solid it cannot collide with: the solid
        is no rigid body (Bullet ignores collision modifiers), or the two share no collision collection. The
        frames show a contact the solver never made (`no_contact_response`). The centre's step between two
        frames is ray-cast against the solid's surface (AABB test first), so a fast body that is inside the
        solid on no sampled frame is caught too. Only crossings in the camera's view count (what no frame shows
        is no visible contact). A body that tunnels through a solid it can collide with is a numerical matter
        and is not reported here; pairs `pairs` already named are skipped."""
        from mathutils import Vector

        solids = self.solids()
        bodies = [n for n in solids if _is_dynamic(self.info[n], self.si) and n in self.moving]
        named = {frozenset(f.objects[:2]) for f in self.findings
                 if f.kind in ("no_contact_response", "interpenetration")}
        for b in bodies:
            x = self.s.matrices[self.s.index(b)][:, :3, 3]
            for n in solids:
                if n == b or self._related(b, n) or frozenset((b, n)) in named or self._can_collide(b, n):
                    continue
                box = self.geom.aabbs(n)[:-1]
                crossed = np.zeros(len(self.frames), bool)
                seg_lo, seg_hi = np.minimum(x[:-1], x[1:]), np.maximum(x[:-1], x[1:])
                near = np.all((seg_hi >= box[:, 0]) & (seg_lo <= box[:, 1]), axis=1)  # the step meets the box
                for fi in np.nonzero(near)[0]:
                    a0, a1 = x[fi], x[fi + 1]
                    p0, p1 = self.geom._to_target_frame(n, fi, np.stack([a0, a1]))
                    ln = float(np.linalg.norm(p1 - p0))
                    if ln < 1e-9:
                        continue
                    hit = self.geom._tree(n, fi).ray_cast(Vector(p0), Vector((p1 - p0) / ln), ln)[0]
                    if hit is not None and self._seen(n, fi, np.array(hit)):
                        crossed[fi] = True
                if not crossed.any():
                    continue
                why = ("has no rigid body (Bullet collides only rigid bodies)" if not self.info[n].get("rigid_body")
                       else "shares no collision collection with it")
                self.add(kind="no_contact_response", objects=[n, b], frames=_frange(self.frames, crossed),
                         value=float(crossed.sum()), unit="frame steps",
                         message=f"{b} passes through rendered solid {n}, which {why} ({int(crossed.sum())} frame "
                                 "steps)",
                         evidence={"no_contact_with": b, "reason": why, "steps": int(crossed.sum()),
                                   "first_frame": int(self.frames[int(np.argmax(crossed))])})

    def _seen(self, solid: str, fi: int, local_hit: np.ndarray) -> bool:
        """Whether a point on `solid` (in the frame `geom` ray-casts it in) is in the camera's view at sample `fi`:
        a pass-through no frame shows (beads dropping through a floor below the picture) is no visible contact."""
        from physcodegym.probes.scene.screen import SCREEN_H, SCREEN_W, _project

        w = local_hit
        if not self.geom.meshes[solid].deforming:
            r, t = self.geom._rot_trans(solid, fi)
            w = local_hit @ r.T + t
        px = _project(self.scene, self.s, w[None, None, :], np.array([fi]))
        if px is None:
            return True  # no camera: nothing to judge by
        x, y = px[0, 0]
        return bool(np.isfinite(x) and np.isfinite(y) and 0 <= x < SCREEN_W and 0 <= y < SCREEN_H)

    def _can_collide(self, body: str, other: str) -> bool:
        """Whether the rigid-body solver can make `body` touch `other`: both rigid bodies of the enabled world
        that share a collision collection."""
        ra, rb = self.info[body].get("rigid_body"), self.info[other].get("rigid_body")
        if not ra or not rb or not rb.get("in_world", True):
            return False
        return any(x and y for x, y in zip(ra["collision_collections"], rb["collision_collections"], strict=False))

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
        fis = np.nonzero(mask & (bound > 2.5 * slack))[0]  # below half the tolerance: cannot matter
        fis = fis[self.geom.centre_depth_bounds(a, b, fis) > 2.5 * slack]  # a small body beside a large one
        for fi in fis:
            if last_fi is not None:
                da = (np.abs(mats[ia, fi, :3, 3] - mats[ia, last_fi, :3, 3]).max()
                      + ra * np.abs(mats[ia, fi, :3, :3] - mats[ia, last_fi, :3, :3]).max())
                db = (np.abs(mats[ib, fi, :3, 3] - mats[ib, last_fi, :3, 3]).max()
                      + rb * np.abs(mats[ib, fi, :3, :3] - mats[ib, last_fi, :3, :3]).max())
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
        return b in self._related_to(a)

    def _related_to(self, a: str) -> frozenset[str]:
        """Every object `_related` to a, found once per object (the support search asks of every solid for every
        body on every sampled frame: 49k questions on bead_pile)."""
        cache = self.__dict__.setdefault("_related_cache", {})
        out = cache.get(a)
        if out is None:
            pa = self.info[a].get("parent")
            out = {n for n, i in self.info.items() if n != a and (
                n == pa or i.get("parent") == a or (pa is not None and i.get("parent") == pa))}
            out |= {r["object1"] for r in self.constrained.get(a, []) if r["object2"] == a}
            out |= {r["object2"] for r in self.constrained.get(a, []) if r["object1"] == a}
            out = cache[a] = frozenset(out)
        return out

