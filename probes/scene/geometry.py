"""World-space geometry of a sampled scene: triangles, AABB broad-phase, distances, depth, support gaps.

Built once on top of `sampling.SceneSamples` (no frame is stepped again). Rigid meshes do not deform,
so each one keeps its triangles and a BVH tree in its own *scaled local* frame, built once; a query at a
frame moves the query points into that frame (world -> rotate/translate only) instead of rebuilding a
world tree. Deforming meshes (cloth, soft body) use the sampled world vertices and build a world tree
per queried frame (cached). Every exact query is preceded by an AABB test, and only query points inside
the target's padded box reach the BVH.

Conventions (used by verifier/checks.py and probes/branches/counterfactual.py too):
- `frame` arguments are scene frame numbers (as in `samples.frames`), not indices;
- lengths are metres (scene units), depths are >= 0, `support_gap` is signed (negative = overlap);
- "material" means the evaluated, rendered mesh surface, never the collision proxy;
- distances are sampled at vertices and triangle centroids of both meshes (exact enough for contact
  and intrusion witnesses; not an exact global surface minimum).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from physcodegym.samples import SceneSamples

INSIDE_COS_CLOSED = 0.7  # cos of the largest angle between (point - nearest) and the inward normal
INSIDE_COS_OPEN = 0.99  # open surfaces (planes): only points straight below a face are "inside"


# Object types whose evaluated geometry renders as a surface (a bevelled curve, a text, a metaball, a NURBS
# surface are material like a mesh: a cloth pinned along a curve pole hangs from something every frame shows).
MATERIAL_TYPES = {"MESH", "CURVE", "SURFACE", "FONT", "META"}


def _instance_geometry(dg: Any, names: set[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{instancer name: (triangles, vertices in the instancer's own scaled-less object frame)} of the geometry
    it instances on the current frame (not particles: those move with their solver and are judged as particles)."""
    out: dict[str, tuple[list[np.ndarray], list[np.ndarray], int]] = {}
    for inst in dg.object_instances:
        if not inst.is_instance or inst.particle_system is not None:
            continue
        par = inst.parent
        obj = inst.object
        if par is None or par.name not in names or obj is None or obj.type not in MATERIAL_TYPES:
            continue
        try:
            me = obj.to_mesh()
        except RuntimeError:
            continue
        try:
            me.calc_loop_triangles()
            nt, nv = len(me.loop_triangles), len(me.vertices)
            if not nt or not nv:
                continue
            tris = np.empty(nt * 3, dtype=np.int64)
            me.loop_triangles.foreach_get("vertices", tris)
            co = np.empty(nv * 3, dtype=np.float64)
            me.vertices.foreach_get("co", co)
        finally:
            obj.to_mesh_clear()
        try:
            to_parent = np.linalg.inv(np.array(par.matrix_world, dtype=np.float64)) @ np.array(inst.matrix_world,
                                                                                               dtype=np.float64)
        except np.linalg.LinAlgError:  # an instancer at scale 0 has no frame to hold them in
            continue
        co = co.reshape(nv, 3) @ to_parent[:3, :3].T + to_parent[:3, 3]
        ts, cs, n = out.get(par.name, ([], [], 0))
        ts.append(tris.reshape(nt, 3) + n)
        cs.append(co)
        out[par.name] = (ts, cs, n + nv)
    return {k: (np.concatenate(t), np.concatenate(c)) for k, (t, c, _n) in out.items()}


@dataclass
class MeshGeom:
    """Triangles of one mesh object; rigid ones in scaled-local space, deforming ones per frame."""

    name: str
    tris: np.ndarray  # (T, 3) int vertex indices
    closed: bool  # every edge shared by exactly two triangles (inside/outside is meaningful)
    deforming: bool
    clear_tris: int = 0  # triangles left out: their material renders nothing (rigid meshes only)
    instanced: np.ndarray | None = None  # (V,) bool: vertices of what the object instances, not of its own mesh (a
    # collision shape is built from its own mesh only; None: it instances nothing)
    local: np.ndarray | None = None  # (V, 3) scaled-local vertices (rigid only)
    scale: np.ndarray | None = None  # (3,) object scale removed from the world matrix (rigid only)
    _tree: Any = None
    _points_local: np.ndarray | None = None  # vertices + triangle centroids, scaled-local (rigid only)
    _tris_list: list[list[int]] | None = None  # `tris` as BVHTree takes them, converted once (a cloth's tree is
    # built on many frames: converting 10k triangles each time was a third of cloth_drape's self-crossing check)

    def tris_list(self) -> list[list[int]]:
        if self._tris_list is None:
            self._tris_list = self.tris.tolist()
        return self._tris_list

    @property
    def n_verts(self) -> int:
        return 0 if self.local is None else len(self.local)


@dataclass
class SceneGeometry:
    """Geometry queries over every mesh object of a `SceneSamples` (see module docstring)."""

    samples: SceneSamples
    meshes: dict[str, MeshGeom] = field(default_factory=dict)
    _world_trees: dict[tuple[str, int], Any] = field(default_factory=dict)
    _aabb: dict[str, np.ndarray] = field(default_factory=dict)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_scene(cls, samples: SceneSamples, scene: Any = None, names: list[str] | None = None) -> SceneGeometry:
        """Read each mesh's evaluated triangles once (bpy). `names` limits the objects (default: all meshes)."""
        import bpy
        from physcodegym.probes.scene.render_config import render_configuration

        scene = scene or bpy.context.scene
        with render_configuration(scene):
            return cls._read(samples, scene, names)

    @classmethod
    def _read(cls, samples: SceneSamples, scene: Any, names: list[str] | None) -> SceneGeometry:
        import bpy
        from physcodegym.probes.scene.sampling import clear_slots

        dg = bpy.context.evaluated_depsgraph_get()
        geom = cls(samples=samples)
        instanced = _instance_geometry(dg, set(samples.names) if names is None else set(names))
        for name in samples.names:
            if names is not None and name not in names:
                continue
            ob = scene.objects.get(name)
            if ob is None or (ob.type not in MATERIAL_TYPES and name not in instanced):
                continue
            tris = np.zeros((0, 3), dtype=np.int64)
            co = np.zeros((0, 3), dtype=np.float64)
            mat = np.zeros(0, dtype=np.int64)
            clear: set[int] = set()
            if ob.type in MATERIAL_TYPES:
                oe = ob.evaluated_get(dg)
                me = oe.to_mesh()
                try:
                    me.calc_loop_triangles()
                    nt = len(me.loop_triangles)
                    nv = len(me.vertices)
                    if nt and nv:
                        tris = np.empty(nt * 3, dtype=np.int64)
                        me.loop_triangles.foreach_get("vertices", tris)
                        tris = tris.reshape(nt, 3)
                        co = np.empty(nv * 3, dtype=np.float64)
                        me.vertices.foreach_get("co", co)
                        co = co.reshape(nv, 3)
                        clear = clear_slots(ob, scene)
                        mat = np.zeros(nt, dtype=np.int64)
                        if clear:
                            me.loop_triangles.foreach_get("material_index", mat)
                finally:
                    oe.to_mesh_clear()
            if name in instanced and not (name in samples.verts and ob.type == "MESH"):
                # what the object instances (a collection on an empty, vertex / face or geometry-nodes instances)
                # renders as its material too, in its own frame (held rigid with it)
                it, ic = instanced[name]
                inst_mask = np.concatenate([np.zeros(len(co), bool), np.ones(len(ic), bool)])
                tris = np.concatenate([tris, it + len(co)])
                co = np.concatenate([co, ic])
                mat = np.concatenate([mat, np.full(len(it), -1, dtype=np.int64)])
            else:
                inst_mask = None
            if len(tris) == 0 or len(co) == 0:
                continue
            deforming = name in samples.verts and samples.verts[name].shape[1] == len(co)
            # "material" is what renders: faces whose material renders nothing are left out (a mesh that renders
            # nothing at all is a hidden collider as a whole, `physics.rendered`, and keeps its faces). A deforming
            # mesh keeps them: its vertices are indexed as sampled.
            shown = ~np.isin(mat, sorted(clear)) if clear and not deforming else None
            n_clear = 0
            if shown is not None and shown.any() and not shown.all():
                n_clear = int((~shown).sum())
                used, tris = np.unique(tris[shown], return_inverse=True)
                tris, co = tris.reshape(-1, 3), co[used]
                inst_mask = None if inst_mask is None else inst_mask[used]
            mg = MeshGeom(name=name, tris=tris, closed=_is_closed(tris), deforming=deforming, clear_tris=n_clear,
                          instanced=inst_mask)
            if not deforming:
                m0 = samples.matrices[samples.index(name), 0]
                scale = np.linalg.norm(m0[:3, :3], axis=0)
                scale[scale == 0] = 1.0
                mg.scale = scale
                mg.local = co * scale
            geom.meshes[name] = mg
        return geom

    # ------------------------------------------------------------------ frames and vertices
    def fi(self, frame: int) -> int:
        """Index of a scene frame number in the samples."""
        lut = self.__dict__.get("_lut")
        if lut is None:
            lut = self.__dict__["_lut"] = {int(f): i for i, f in enumerate(self.samples.frames)}
        try:
            return lut[int(frame)]
        except KeyError:
            raise KeyError(f"frame {frame} was not sampled") from None

    def _index(self, name: str) -> int:
        idx = self.__dict__.get("_idx")
        if idx is None:
            idx = self.__dict__["_idx"] = {n: i for i, n in enumerate(self.samples.names)}
        return idx[name]

    def _rot_trans(self, name: str, fi: int) -> tuple[np.ndarray, np.ndarray]:
        m = self.samples.matrices[self._index(name), fi]
        mg = self.meshes[name]
        r = m[:3, :3] / mg.scale
        return r, m[:3, 3]

    def world_verts(self, name: str, frame: int) -> np.ndarray:
        """(V, 3) world-space vertices of a mesh at a frame."""
        mg = self.meshes[name]
        fi = self.fi(frame)
        if mg.deforming:
            return self.samples.verts[name][fi].astype(np.float64)
        r, t = self._rot_trans(name, fi)
        return mg.local @ r.T + t

    def world_triangles(self, name: str, frame: int) -> np.ndarray:
        """(T, 3, 3) world-space triangles of a mesh at a frame."""
        return self.world_verts(name, frame)[self.meshes[name].tris]

    def _points(self, name: str, frame: int) -> np.ndarray:
        """World sample points: vertices and triangle centroids."""
        mg = self.meshes[name]
        if not mg.deforming:
            if mg._points_local is None:
                mg._points_local = np.concatenate([mg.local, mg.local[mg.tris].mean(axis=1)])
            r, t = self._rot_trans(name, self.fi(frame))
            return mg._points_local @ r.T + t
        v = self.world_verts(name, frame)
        return np.concatenate([v, v[mg.tris].mean(axis=1)])

    # ------------------------------------------------------------------ broad phase
    def aabbs(self, name: str) -> np.ndarray:
        """(F, 2, 3) world AABB (min, max) of a mesh at every sampled frame (vectorised)."""
        if name in self._aabb:
            return self._aabb[name]
        mg = self.meshes[name]
        if mg.deforming:
            v = self.samples.verts[name].astype(np.float64)
            box = np.stack([np.nanmin(v, axis=1), np.nanmax(v, axis=1)], axis=1)
        else:
            lo, hi = mg.local.min(axis=0), mg.local.max(axis=0)
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
            m = self.samples.matrices[self.samples.index(name)]  # (F, 4, 4)
            r = m[:, :3, :3] / mg.scale  # (F, 3, 3)
            w = np.einsum("fij,kj->fki", r, corners) + m[:, None, :3, 3]
            box = np.stack([w.min(axis=1), w.max(axis=1)], axis=1)
        self._aabb[name] = box
        return box

    def bounding_spheres(self, name: str) -> tuple[np.ndarray, float]:
        """((F, 3) world centre, radius) of a sphere around a rigid mesh at every frame. Depth between
        two bodies never exceeds ra + rb - |ca - cb| (a point inside both spheres is that close to the
        boundary of either), which prunes resting contacts before any exact query."""
        mg = self.meshes[name]
        cache = self.__dict__.setdefault("_bs", {})
        if name in cache:
            return cache[name]
        if mg.deforming:
            v = self.samples.verts[name].astype(np.float64)
            c = 0.5 * (np.nanmin(v, axis=1) + np.nanmax(v, axis=1))
            r = float(np.nanmax(np.linalg.norm(v - c[:, None], axis=2)))
        else:
            cl = 0.5 * (mg.local.min(axis=0) + mg.local.max(axis=0))
            r = float(np.linalg.norm(mg.local - cl, axis=1).max())
            m = self.samples.matrices[self._index(name)]
            rot = m[:, :3, :3] / mg.scale
            c = np.einsum("fij,j->fi", rot, cl) + m[:, :3, 3]
        cache[name] = (c, r)
        return c, r

    def depth_bound(self, a: str, b: str) -> np.ndarray:
        """(F,) upper bound on the penetration depth of a and b from their bounding spheres."""
        ca, ra = self.bounding_spheres(a)
        cb, rb = self.bounding_spheres(b)
        return np.maximum(0.0, ra + rb - np.linalg.norm(ca - cb, axis=1))

    def _one_boundary(self, name: str) -> bool:
        """Whether a rigid closed mesh's surface is the boundary of its material: no two of its triangles that share
        no vertex cross. Shells joined into one object that overlap (a table top and legs merged) have faces inside
        the material, where the nearest face's side says "outside" for a point inside; `centre_depth_bounds`
        needs the side to be right. Checked once per mesh (one BVH self-overlap)."""
        cache = self.__dict__.setdefault("_boundary", {})
        if name not in cache:
            mg = self.meshes[name]
            ok = mg.closed and not mg.deforming
            if ok:
                pairs = np.array(self._tree(name, 0).overlap(self._tree(name, 0)), dtype=np.int64).reshape(-1, 2)
                pairs = pairs[pairs[:, 0] < pairs[:, 1]]
                ta, tb = mg.tris[pairs[:, 0]], mg.tris[pairs[:, 1]]
                ok = bool((ta[:, :, None] == tb[:, None, :]).any(axis=(1, 2)).all())
            cache[name] = ok
        return cache[name]

    def centre_depth_bounds(self, a: str, b: str, fis: np.ndarray) -> np.ndarray:
        """Upper bound on the depth of a and b in each other at the frame indices `fis` from one nearest-surface
        query per frame; inf where it cannot bound. The smaller body lies in its bounding ball (centre c, radius
        r); when c is outside the other closed body, at distance D from its surface, a point of the small body
        inside the other lies past the surface by at most r - D (the segment from c to it crosses the surface at
        least D from c), and a point of the other inside the small body is at least D from c, so at most r - D
        from the ball's rim, which the small body does not pass. Both must be closed (an open surface has no
        inside to bound) and the large one's surface must bound its material (`_one_boundary`). The spheres of
        `depth_bound` do not prune a bead resting on a tray (the tray's sphere is large): this does, with one query
        instead of a pass over both bodies' points."""
        out = np.full(len(fis), np.inf)
        ma, mb = self.meshes[a], self.meshes[b]
        if not len(fis) or not (ma.closed and mb.closed):
            return out
        (ca, ra), (cb, rb) = self.bounding_spheres(a), self.bounding_spheres(b)
        big, c, r = (b, ca[fis], ra) if ra <= rb else (a, cb[fis], rb)
        if not self._one_boundary(big):
            return out
        mg = self.meshes[big]
        if mg.deforming:
            p = c
        else:
            m = self.samples.matrices[self._index(big)][fis]  # (K, 4, 4)
            rot = m[:, :3, :3] / mg.scale
            p = np.einsum("kji,kj->ki", rot, c - m[:, :3, 3])  # inverse rotation = transpose
        tree = None if mg.deforming else self._tree(big, 0)
        for k, fi in enumerate(fis):
            loc, nrm, _i, dist = (tree or self._tree(big, int(fi))).find_nearest(p[k])
            if loc is None:
                continue
            q = p[k]
            if (q[0] - loc[0]) * nrm[0] + (q[1] - loc[1]) * nrm[1] + (q[2] - loc[2]) * nrm[2] > 0.0:
                out[k] = max(0.0, r - dist)  # else the centre is inside (or on) the other body: no bound from it
        return out

    def aabb_gap(self, a: str, b: str, frame: int) -> float:
        """Separation of the two world AABBs at a frame (0 when they overlap): a cheap lower bound
        on the material distance."""
        fi = self.fi(frame)
        ba, bb = self.aabbs(a)[fi], self.aabbs(b)[fi]
        d = np.maximum(0.0, np.maximum(ba[0] - bb[1], bb[0] - ba[1]))
        return float(np.sqrt((d * d).sum()))

    def aabb_gaps(self, a: str, others: list[str], frame: int) -> np.ndarray:
        """`aabb_gap` of a against each of `others` at a frame, as one array (a support search asks it of every
        solid for every body on every frame)."""
        if not others:
            return np.zeros(0)
        fi = self.fi(frame)
        ba = self.aabbs(a)[fi]
        bo = np.stack([self.aabbs(o)[fi] for o in others])  # (K, 2, 3)
        d = np.maximum(0.0, np.maximum(ba[0] - bo[:, 1], bo[:, 0] - ba[1]))
        return np.sqrt((d * d).sum(axis=1))

    def aabb_overlap_frames(self, a: str, b: str, pad: float = 0.0) -> np.ndarray:
        """(F,) bool: frames where the AABBs of a and b, each padded by `pad`, overlap."""
        ba, bb = self.aabbs(a), self.aabbs(b)
        return np.all((ba[:, 0] - pad <= bb[:, 1] + pad) & (bb[:, 0] - pad <= ba[:, 1] + pad), axis=1)

    def candidate_pairs(self, names: list[str], pad: float = 0.0) -> list[tuple[str, str, np.ndarray]]:
        """Broad phase over all pairs: (a, b, frames-mask) for pairs whose AABBs ever overlap."""
        names = [n for n in names if n in self.meshes]
        if len(names) < 2:
            return []
        box = np.stack([self.aabbs(n) for n in names])  # (N, F, 2, 3)
        lo, hi = box[:, :, 0] - pad, box[:, :, 1] + pad
        # (N, N, F): the boxes of i and j overlap on every axis (one array, not a loop over pairs: bead_pile
        # has 99 solids, 4851 pairs)
        meet = np.all((lo[:, None] <= hi[None]) & (lo[None] <= hi[:, None]), axis=3)
        ii, jj = np.nonzero(np.triu(meet.any(axis=2), k=1))
        return [(names[i], names[j], meet[i, j]) for i, j in zip(ii.tolist(), jj.tolist(), strict=True)]

    # ------------------------------------------------------------------ narrow phase
    def _tree(self, name: str, fi: int) -> Any:
        from mathutils.bvhtree import BVHTree

        mg = self.meshes[name]
        if not mg.deforming:
            if mg._tree is None:
                mg._tree = BVHTree.FromPolygons(mg.local.tolist(), mg.tris_list())
            return mg._tree
        key = (name, fi)
        tree = self._world_trees.get(key)
        if tree is None:
            if len(self._world_trees) > 64:
                self._world_trees.clear()
            v = self.samples.verts[name][fi].astype(np.float64)
            tree = BVHTree.FromPolygons(v.tolist(), mg.tris_list())
            self._world_trees[key] = tree
        return tree

    def _to_target_frame(self, target: str, fi: int, pts: np.ndarray) -> np.ndarray:
        mg = self.meshes[target]
        if mg.deforming:
            return pts
        r, t = self._rot_trans(target, fi)
        return (pts - t) @ r  # r is orthonormal: inverse rotation = transpose

    def _target_box(self, target: str, fi: int) -> tuple[np.ndarray, np.ndarray]:
        """`target`'s box in the frame `_to_target_frame` maps points to (world for a deforming mesh, else local)."""
        mgt = self.meshes[target]
        if mgt.deforming:
            v = self.samples.verts[target][fi]
            return np.nanmin(v, axis=0), np.nanmax(v, axis=0)
        box = self.__dict__.setdefault("_local_box", {}).get(target)
        if box is None:  # asked once per exact query: bead_pile's pairs ask 15k times
            box = self.__dict__["_local_box"][target] = (mgt.local.min(axis=0), mgt.local.max(axis=0))
        return box

    def _query(self, src: str, target: str, frame: int, max_dist: float,
               depth_only: bool = False) -> tuple[float, float]:
        """(min unsigned distance of src sample points to target surface, max depth of src points inside target).
        With `depth_only` only points inside the target's AABB are queried (others cannot be inside)."""
        fi = self.fi(frame)
        mgt = self.meshes[target]
        p = self._to_target_frame(target, fi, self._points(src, frame))
        lo, hi = self._target_box(target, fi)
        pad = 0.0 if depth_only else max_dist
        keep = np.all((p >= lo - pad) & (p <= hi + pad), axis=1)
        p = p[keep]
        if len(p) == 0:
            return float("inf"), 0.0
        tree = self._tree(target, fi)
        dmin, depth = float("inf"), 0.0
        for co in p:
            loc, nrm, _idx, dist = tree.find_nearest(co, max_dist)
            if loc is None:
                continue
            if dist < dmin:
                dmin = dist
            if dist > depth:
                dx, dy, dz = co[0] - loc[0], co[1] - loc[1], co[2] - loc[2]
                dot = dx * nrm[0] + dy * nrm[1] + dz * nrm[2]
                # inside only when the point sits (nearly) straight behind the nearest face: a point
                # level with a face's plane but beside it is outside, whatever the sign of `dot`
                if dot < -(INSIDE_COS_CLOSED if mgt.closed else INSIDE_COS_OPEN) * dist:
                    depth = dist
        return dmin, depth

    def nearest_distances(self, target: str, frame: int, pts: np.ndarray, max_dist: float) -> np.ndarray:
        """Unsigned distance of each world point to `target`'s material surface at a frame (inf beyond
        `max_dist`); an AABB test first, so far-away points cost nothing."""
        out = np.full(len(pts), np.inf)
        if not len(pts):
            return out
        fi = self.fi(frame)
        p = self._to_target_frame(target, fi, np.asarray(pts, dtype=np.float64))
        lo, hi = self._target_box(target, fi)
        keep = np.nonzero(np.all((p >= lo - max_dist) & (p <= hi + max_dist), axis=1))[0]
        if len(keep):
            tree = self._tree(target, fi)
            for i in keep:
                loc, _n, _i, dist = tree.find_nearest(p[i], max_dist)
                if loc is not None:
                    out[i] = dist
        return out

    def inside_depth(self, target: str, frame: int, pts: np.ndarray, max_dist: float = 1.0) -> np.ndarray:
        """Depth (m) of each world point inside the closed mesh `target` at a frame (0 outside or for open meshes)."""
        mgt = self.meshes[target]
        out = np.zeros(len(pts))
        if not mgt.closed or not len(pts):
            return out
        fi = self.fi(frame)
        p = self._to_target_frame(target, fi, np.asarray(pts, dtype=np.float64))
        lo, hi = self._target_box(target, fi)
        keep = np.nonzero(np.all((p >= lo) & (p <= hi), axis=1))[0]
        tree = self._tree(target, fi)
        for i in keep:
            co = p[i]
            loc, nrm, _idx, dist = tree.find_nearest(co, max_dist)
            if loc is None:
                continue
            dot = (co[0] - loc[0]) * nrm[0] + (co[1] - loc[1]) * nrm[1] + (co[2] - loc[2]) * nrm[2]
            if dot < -INSIDE_COS_CLOSED * dist:
                out[i] = dist
        return out

    def min_distance(self, a: str, b: str, frame: int, max_dist: float = 1.0) -> float:
        """Sampled minimum distance between the material surfaces of a and b (inf beyond `max_dist`)."""
        if self.aabb_gap(a, b, frame) > max_dist:
            return float("inf")
        return min(self._query(a, b, frame, max_dist)[0], self._query(b, a, frame, max_dist)[0])

    def penetration_depth(self, a: str, b: str, frame: int, max_depth: float | None = None) -> float:
        """Largest depth of a's sample points inside b's material or b's inside a's (0 if apart).
        Depth is searched up to `max_depth` (default: the larger AABB diagonal over the frames)."""
        if self.aabb_gap(a, b, frame) > 0:
            return 0.0
        if max_depth is None:  # the larger AABB diagonal over the frames (a rigid body's barely changes), once
            diag = self.__dict__.setdefault("_diag", {})
            for n in (a, b):
                if n not in diag:
                    box = self.aabbs(n)
                    diag[n] = float(np.nanmax(np.linalg.norm(box[:, 1] - box[:, 0], axis=1)))
            max_depth = max(diag[a], diag[b])
        return max(self._query(a, b, frame, max_depth, True)[1], self._query(b, a, frame, max_depth, True)[1])

    def contact(self, a: str, b: str, frame: int, max_dist: float = 1.0) -> tuple[float, float]:
        """(min distance, penetration depth) in one pass over both directions."""
        if self.aabb_gap(a, b, frame) > max_dist:
            return float("inf"), 0.0
        d1, p1 = self._query(a, b, frame, max(max_dist, 10.0))
        d2, p2 = self._query(b, a, frame, max(max_dist, 10.0))
        return min(d1, d2), max(p1, p2)

    def support_gap(self, body: str, support: str, frame: int, max_dist: float = 1.0) -> float:
        """Signed material gap between a body and its support: > 0 apart, < 0 overlapping (-depth)."""
        d, p = self.contact(body, support, frame, max_dist)
        return -p if p > 0 else d

    def self_intersections(self, name: str, frame: int, rings: int = 2) -> np.ndarray:
        """(K, 2) pairs of triangles of one mesh that cross each other, excluding pairs that share a
        vertex or lie within `rings` edge-steps of each other (the local neighbourhood every bend has)."""
        mg = self.meshes[name]
        tree = self._tree(name, self.fi(frame)) if mg.deforming else self._tree(name, 0)
        pairs = np.array(tree.overlap(tree), dtype=np.int64).reshape(-1, 2)
        if len(pairs) == 0:
            return pairs
        pairs = pairs[pairs[:, 0] < pairs[:, 1]]
        near = self._ring_matrix(name, rings)
        ta, tb = mg.tris[pairs[:, 0]], mg.tris[pairs[:, 1]]
        local = near[ta[:, :, None], tb[:, None, :]].any(axis=(1, 2))
        return pairs[~local]

    def _ring_matrix(self, name: str, rings: int) -> Any:
        """Boolean vertex neighbourhood within `rings` edges (dense for small meshes, cached)."""
        mg = self.meshes[name]
        cache = getattr(mg, "_rings", None)
        if cache is not None and cache[0] == rings:
            return cache[1]
        from scipy import sparse

        n = int(mg.tris.max()) + 1
        e = np.concatenate([mg.tris[:, [0, 1]], mg.tris[:, [1, 2]], mg.tris[:, [2, 0]]])
        a = sparse.coo_matrix((np.ones(len(e), dtype=np.int8), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
        a = ((a + a.T + sparse.identity(n, dtype=np.int8, format="csr")) > 0).astype(np.int32)
        r = a
        for _ in range(rings - 1):
            r = ((r @ a) > 0).astype(np.int32)
        dense = r.toarray() > 0
        mg._rings = (rings, dense)  # type: ignore[attr-defined]
        return dense


def _is_closed(tris: np.ndarray) -> bool:
    """True when every undirected edge is shared by exactly two triangles (a closed solid shell)."""
    e = np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), axis=1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    return bool(len(counts)) and bool(np.all(counts == 2))


# Module-level forms for callers that prefer functions (geom is a SceneGeometry).
def min_distance(geom: SceneGeometry, a: str, b: str, frame: int, max_dist: float = 1.0) -> float:
    return geom.min_distance(a, b, frame, max_dist)


def penetration_depth(geom: SceneGeometry, a: str, b: str, frame: int) -> float:
    return geom.penetration_depth(a, b, frame)


def support_gap(geom: SceneGeometry, body: str, support: str, frame: int, max_dist: float = 1.0) -> float:
    return geom.support_gap(body, support, frame, max_dist)


def world_triangles(geom: SceneGeometry, name: str, frame: int) -> np.ndarray:
    return geom.world_triangles(name, frame)
