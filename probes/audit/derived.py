"""What renders of a particle system is where its solver put the particles (SPEC §5, `scripted_motion`).

A particle system is simulated as points; what the frames show of it is derived from those points by other
machinery: each particle draws an instanced object or collection, a metaball family fuses the balls its
particles draw into one surface, and a geometry-nodes modifier can remesh that surface (Object Info -> Mesh to
Points -> Points to Volume -> Volume to Mesh). Any of these can carry motion or placement no solver made: a drop
mesh built off its own origin or one a geometry-nodes modifier moves with the scene time, a drop object instanced
at its own place (`use_global_instance`) and keyed, a keyed member of the metaball family, a remesh that reads a keyed
object. The solvers-off test (`probes.branches.ownership`) misses them where the moving thing does not render itself
(the drop object hidden or parked under the floor) or where the derived surface changes topology every frame.
So the rendered material is compared with the simulated state on the frames themselves:

- instances (`check_instances`): every particle instance's centre (the centre of the instanced geometry's box,
  placed by the depsgraph's instance matrix) against its own particle's location (the instance's persistent id
  is the particle index). A drop farther than `reach` from its particle is drawn where nothing was simulated;
- derived surfaces (`check_surfaces`): every vertex of a fused metaball surface (the family's base object) or
  of a mesh whose geometry-nodes modifier reads one (or reads an emitter), against the alive particles that
  feed it and the family's still members. Vectorised: the reference points are hashed into cubic cells of edge
  `reach`; a vertex none of whose 27 neighbouring cells holds a point is farther than `reach` from every point
  (exact: a point within `reach` lies in a neighbouring cell), and only those vertices (at most
  `EXACT_MAX` of them) get an exact distance, by brute force, for the evidence. A vertex with a point in its
  neighbourhood passes: it is within 2 * sqrt(3) * `reach` of it.

Cost (measured on `testing.demo_scenes.rendered_liquid`, 40 particles, a 16,000-vertex metaball surface, shared
2-core machine): see `DERIVED_COST_NOTE`. Up to `DERIVED_FRAMES` frames are stepped (evenly spaced).

Honest derived material is also what other detectors must not charge: a fused or remeshed liquid surface changes
its vertex count as particles are born and merge, and its own particles pass through it. `derived_surfaces` names
them (`AuditBase.derived_surfaces`) for `detect_switches.topology_switches` and `particles_through`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

DERIVED_FRAMES = 24  # frames stepped (evenly spaced over the sampled range, first and last included)
DERIVED_MIN_M = 0.05  # m: the least reach of rendered material from the simulated points it is derived from
DERIVED_REACH_REL = 2.0  # a surface's reach = this x the world radius of one particle's ball (+ DERIVED_MIN_M)
INSTANCE_REACH_REL = 1.0  # an instance's centre may lie this x its world radius (+ DERIVED_MIN_M) off its particle
EXACT_MAX = 2000  # vertices measured exactly per frame (the farthest ones are what the evidence reports)
DERIVED_COST_NOTE = ("about 1 ms a frame for 40 instances and 25 ms a frame for a 16,000-vertex surface against "
                     "40 particles (broad phase 27 searchsorted passes, O(V log P)); stepping the baked frame and "
                     "evaluating the surface dominates")


# ============================================================================ what is derived from what (bpy)
def _family(name: str) -> str:
    return name.split(".", 1)[0]


def _node_refs(tree: Any, seen: set[str] | None = None) -> tuple[set[str], set[str]]:
    """Object and collection names a geometry-node tree reads (Object / Collection Info inputs, object and
    collection sockets' values, nested groups)."""
    seen = set() if seen is None else seen
    objs: set[str] = set()
    cols: set[str] = set()
    if tree is None or tree.name_full in seen:
        return objs, cols
    seen.add(tree.name_full)
    for node in tree.nodes:
        if node.type == "GROUP" and getattr(node, "node_tree", None) is not None:
            o, c = _node_refs(node.node_tree, seen)
            objs |= o
            cols |= c
        for sock in node.inputs:
            v = getattr(sock, "default_value", None)
            if v is None or isinstance(v, int | float | str | bool):
                continue
            tid = getattr(v, "id_type", None) if hasattr(v, "bl_rna") else None
            if tid == "OBJECT" or type(v).__name__ == "Object":
                objs.add(v.name)
            elif tid == "COLLECTION" or type(v).__name__ == "Collection":
                cols.add(v.name)
    return objs, cols


def _modifier_refs(mod: Any) -> tuple[set[str], set[str]]:
    objs, cols = _node_refs(mod.node_group)
    for key in mod.keys():  # the modifier's own inputs (Socket_2 = an object)
        v = mod[key]
        if hasattr(v, "bl_rna") and type(v).__name__ == "Object":
            objs.add(v.name)
        elif hasattr(v, "bl_rna") and type(v).__name__ == "Collection":
            cols.add(v.name)
    return objs, cols


def particle_renders(scene: Any) -> dict[str, dict[str, Any]]:
    """Every particle system that draws objects: "emitter/system" -> emitter, index, the drawn objects' names and
    the world radius of what one particle draws (unscaled geometry radius x particle size x object scale)."""
    out: dict[str, dict[str, Any]] = {}
    for em in scene.objects:
        for i, ps in enumerate(em.particle_systems):
            st = ps.settings
            if st.render_type == "OBJECT" and st.instance_object is not None:
                drawn = [st.instance_object]
            elif st.render_type == "COLLECTION" and st.instance_collection is not None:
                drawn = list(st.instance_collection.all_objects)
            else:
                continue
            radius = 0.0
            for ob in drawn:
                if ob.type == "META":
                    r = max((e.radius for e in ob.data.elements), default=0.0)
                else:
                    bb = np.array([list(c) for c in ob.bound_box], float)
                    r = 0.5 * float(np.linalg.norm(bb.max(axis=0) - bb.min(axis=0)))
                scale = max(abs(x) for x in ob.scale) if st.use_scale_instance else 1.0
                radius = max(radius, r * scale * float(st.particle_size))
            out[f"{em.name}/{ps.name}"] = {"emitter": em.name, "index": i, "drawn": [o.name for o in drawn],
                                           "radius_m": radius}
    return out


def derived_surfaces(scene: Any, renders: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rendered surfaces made from particles: a metaball family's base object whose family some particle system
    draws, and a mesh whose geometry-nodes modifier reads such a base, an emitter of drawn particles, or another
    derived surface. name -> {"how", "systems" (the keys that feed it), "radius_m", "members" (other metaball
    objects of the family, not drawn by particles)}."""
    out: dict[str, dict[str, Any]] = {}
    metas = [o for o in scene.objects if o.type == "META"]
    for key, rec in renders.items():
        for d in rec["drawn"]:
            ob = scene.objects.get(d) or next((o for o in metas if o.name == d), None)
            if ob is None or ob.type != "META":
                continue
            fam = _family(ob.name)
            base = scene.objects.get(fam)
            if base is None or base.type != "META":
                continue
            s = out.setdefault(fam, {"how": "metaball family", "systems": [], "radius_m": 0.0, "members": []})
            s["systems"].append(key)
            s["radius_m"] = max(s["radius_m"], rec["radius_m"])
    for fam, s in out.items():  # every member's own elements render where the member is (drawn ones too)
        s["members"] = [o.name for o in metas if _family(o.name) == fam]
    emitters = {r["emitter"]: k for k, r in renders.items()}
    changed = True
    while changed:  # a remesh of a remesh: follow references until nothing new is found
        changed = False
        for ob in scene.objects:
            if ob.type != "MESH" or ob.name in out:
                continue
            for m in ob.modifiers:
                if m.type != "NODES" or m.node_group is None:
                    continue
                objs, cols = _modifier_refs(m)
                for c in cols:
                    col = scene.collection if c == scene.collection.name else None
                    col = col or next((x for x in scene.collection.children_recursive if x.name == c), None)
                    objs |= {o.name for o in col.all_objects} if col is not None else set()
                systems = sorted({k for o in objs if o in out for k in out[o]["systems"]}
                                 | {emitters[o] for o in objs if o in emitters})
                if systems:
                    srcs = [o for o in objs if o in out]
                    out[ob.name] = {"how": f"geometry nodes {m.name!r} reading {sorted(objs)}", "systems": systems,
                                    "radius_m": max([renders[k]["radius_m"] for k in systems]
                                                    + [out[o]["radius_m"] for o in srcs]),
                                    "members": sorted({x for o in srcs for x in out[o]["members"]}),
                                    "via": srcs}
                    changed = True
                    break
    return out


# ============================================================================ measurement (bpy) and check (numpy)
def _frame_indices(n: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(n, DERIVED_FRAMES)).round().astype(int)) if n else np.zeros(0, int)


def _instance_centres(dg: Any, renders: dict[str, dict[str, Any]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per particle system: (particle indices (N,), world centres (N, 3)) of what its instances draw. The one Python
    loop over the depsgraph's instances (a few microseconds each); the rest is numpy."""
    keys = {(r["emitter"], k.split("/", 1)[1]): k for k, r in renders.items()}
    ids: dict[str, list[int]] = {}
    mats: dict[str, list[Any]] = {}
    centre: dict[str, list[np.ndarray]] = {}
    boxes: dict[str, np.ndarray] = {}
    for inst in dg.object_instances:
        psys = inst.particle_system
        if psys is None or not inst.is_instance or inst.parent is None:
            continue
        key = keys.get((inst.parent.name, psys.name))
        ob = inst.object
        if key is None or ob.type == "META":  # a metaball's ball is fused into its family's surface: judged there
            continue
        c = boxes.get(ob.name)
        if c is None:
            bb = np.array([list(v) for v in ob.bound_box], float)
            c = boxes[ob.name] = np.append((bb.min(axis=0) + bb.max(axis=0)) / 2, 1.0)
        ids.setdefault(key, []).append(inst.persistent_id[0])
        # read now: an instance's matrix is only valid while the iterator stands on it (a kept reference crashes)
        mats.setdefault(key, []).append(np.array(inst.matrix_world, float))
        centre.setdefault(key, []).append(c)
    out = {}
    for key, ms in mats.items():
        m = np.array(ms)  # (N, 4, 4)
        out[key] = (np.array(ids[key], np.int64), np.einsum("nij,nj->ni", m, np.array(centre[key]))[:, :3])
    return out


def _surface_verts(dg: Any, scene: Any, name: str) -> np.ndarray:
    ob = scene.objects[name]
    oe = ob.evaluated_get(dg)
    me = oe.to_mesh()
    try:
        co = np.empty(len(me.vertices) * 3, np.float64)
        me.vertices.foreach_get("co", co)
    finally:
        oe.to_mesh_clear()
    mw = np.array(oe.matrix_world, float)
    return co.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3]


def _member_points(dg: Any, scene: Any, members: list[str]) -> dict[str, np.ndarray]:
    """World centre and radius (x, y, z, r) of every element of the family's members where the member object itself
    is (a drawn member renders its own balls there too, beside those its particles draw)."""
    out = {}
    for n in members:
        ob = scene.objects[n].evaluated_get(dg)
        mw = np.array(ob.matrix_world, float)
        sc = float(np.abs(np.linalg.det(mw[:3, :3])) ** (1 / 3))
        out[n] = np.array([[*(mw @ np.append(np.array(e.co, float), 1.0))[:3], e.radius * sc]
                           for e in ob.data.elements]).reshape(-1, 4)
    return out


_OFFSETS = np.array([(i, j, k) for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)], np.int64)


def _hash(cells: np.ndarray) -> np.ndarray:
    c = cells + (1 << 20)
    return (c[..., 0] << 42) | (c[..., 1] << 21) | c[..., 2]


def far_from(points: np.ndarray, refs: np.ndarray, reach: float) -> np.ndarray:
    """(V,) True where a point of `points` (V, 3) is farther than `reach` from every point of `refs` (R, 3).

    Broad phase only, and exact in that direction: refs are hashed into cells of edge `reach`; a point within
    `reach` of a ref has it in one of its 27 neighbouring cells. A point not flagged is within 2 sqrt(3) reach."""
    if not len(points):
        return np.zeros(0, bool)
    if not len(refs):
        return np.ones(len(points), bool)
    occ = np.unique(_hash(np.floor(refs / reach).astype(np.int64)))
    cells = np.floor(points / reach).astype(np.int64)
    near = np.zeros(len(points), bool)
    for off in _OFFSETS:
        h = _hash(cells + off)
        pos = np.searchsorted(occ, h).clip(0, len(occ) - 1)
        near |= occ[pos] == h
    return ~near


def exact_gap(points: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """Distance of each point to its nearest ref, by brute force in chunks (only for the few flagged points)."""
    if not len(refs):
        return np.full(len(points), np.inf)
    out = np.empty(len(points))
    for s in range(0, len(points), 256):
        d = np.linalg.norm(points[s:s + 256, None, :] - refs[None, :, :], axis=2)
        out[s:s + 256] = d.min(axis=1)
    return out


def measure(scene: Any, samples: Any) -> dict[str, Any]:
    """Step the sampled frames (`DERIVED_FRAMES` of them) and compare what renders of every particle system with
    its particles. Returns {"instances": {key: rec}, "surfaces": {name: rec}, "frames", "seconds"}; each rec has
    per-frame departures (m) beyond its reach and the departing frames. Leaves the scene on its first frame."""
    import bpy

    t0 = time.perf_counter()
    renders = particle_renders(scene)
    surfaces = derived_surfaces(scene, renders)
    doc: dict[str, Any] = {"renders": renders, "surfaces_found": surfaces, "instances": {}, "surfaces": {}}
    if not renders or not len(samples.frames):
        return {**doc, "frames": [], "seconds": 0.0}
    fidx = _frame_indices(len(samples.frames))
    inst: dict[str, list[float]] = {k: [] for k in renders}
    surf: dict[str, list[float]] = {n: [] for n in surfaces}
    surf_v: dict[str, int] = dict.fromkeys(surfaces, 0)
    first_members: dict[str, np.ndarray] = {}
    moved: dict[str, dict[str, float]] = {n: {} for n in surfaces}  # surface -> member -> largest shift (m)
    t_check = 0.0
    for fi in fidx:
        scene.frame_set(int(samples.frames[fi]))
        dg = bpy.context.evaluated_depsgraph_get()
        cent = _instance_centres(dg, renders)
        t = time.perf_counter()
        for key in renders:
            P = samples.particles.get(key)
            got = cent.get(key)
            if P is None or got is None or not len(got[0]):
                inst[key].append(0.0)
                continue
            idx, c = got
            ok = idx < P.shape[1]
            d = np.linalg.norm(c[ok] - P[fi, idx[ok]], axis=1)
            d = d[np.isfinite(d)]
            inst[key].append(float(d.max()) if len(d) else 0.0)
        t_check += time.perf_counter() - t
        for name, rec in surfaces.items():
            v = _surface_verts(dg, scene, name)
            t = time.perf_counter()
            reach = DERIVED_MIN_M + DERIVED_REACH_REL * rec["radius_m"]
            refs = [samples.particles[k][fi][samples.particles_alive[k][fi]] for k in rec["systems"]
                    if k in samples.particles]
            ref = np.concatenate(refs) if refs else np.zeros((0, 3))
            far = far_from(v, ref, reach)
            # a member of the family particles do not draw is static material while it stays where it was
            # first; one that moves (keyed, driven, parented) adds liquid no solver moved
            for n, pts in _member_points(dg, scene, rec["members"]).items():
                ref0 = first_members.setdefault(n, pts)
                if ref0.shape == pts.shape:
                    shift = float(np.linalg.norm(ref0[:, :3] - pts[:, :3], axis=1).max(initial=0.0))
                else:  # elements added or removed mid-run: moved, measured by the centres' mean
                    shift = DERIVED_MIN_M + float(np.linalg.norm(ref0[:, :3].mean(0) - pts[:, :3].mean(0))
                                                  if len(ref0) and len(pts) else 0.0) + 1e-6
                moved[name][n] = max(moved[name].get(n, 0.0), shift)
                if ref0.shape != pts.shape or np.abs(ref0 - pts).max(initial=0.0) > 1e-3:
                    continue
                for x, y, z, r in pts:
                    far &= np.linalg.norm(v - (x, y, z), axis=1) > DERIVED_MIN_M + DERIVED_REACH_REL * r
            fv = v[far]
            if len(fv) > EXACT_MAX:
                fv = fv[np.linspace(0, len(fv) - 1, EXACT_MAX).astype(int)]
            surf[name].append(float(exact_gap(fv, ref).max()) if len(fv) else 0.0)
            surf_v[name] = max(surf_v[name], len(v))
            t_check += time.perf_counter() - t
    scene.frame_set(int(samples.frames[0]))
    frames = [int(samples.frames[i]) for i in fidx]
    for key, rec in renders.items():
        reach = DERIVED_MIN_M + INSTANCE_REACH_REL * rec["radius_m"]
        d = np.array(inst[key])
        doc["instances"][key] = {"drawn": rec["drawn"], "reach_m": round(reach, 4), "per_frame": d,
                                 "max_m": round(float(d.max()), 4), "departs": bool((d > reach).any()),
                                 "frames_over": [f for f, x in zip(frames, d, strict=True) if x > reach]}
    for name, rec in surfaces.items():
        reach = DERIVED_MIN_M + DERIVED_REACH_REL * rec["radius_m"]
        d = np.array(surf[name])
        # a member that moves fuses liquid into the surface wherever it goes, even where particles pass too
        movers = {n: round(x, 4) for n, x in moved[name].items() if x > DERIVED_MIN_M}
        doc["surfaces"][name] = {**rec, "reach_m": round(reach, 4), "per_frame": d, "vertices_max": surf_v[name],
                                 "max_m": round(float(d.max()), 4) if np.isfinite(d).all() else None,
                                 "moving_members": movers, "departs": bool((d > 0).any() or movers),
                                 "frames_over": [f for f, x in zip(frames, d, strict=True) if x > 0]}
    return {**doc, "frames": frames, "seconds": round(time.perf_counter() - t0, 4),
            "check_seconds": round(t_check, 4)}


def detect(a: Any) -> None:
    """`scripted_motion` (cause `derived_departs`) for rendered material derived from particles that is not where
    the particles are (`measure`); records the honest derived surfaces in `a.derived_surfaces` first, so the
    topology and pass-through detectors leave a liquid's own surface to this one."""
    from physcodegym.probes.audit.audit_base import _series

    doc = measure(a.scene, a.s)
    a.derived_doc = {k: v for k, v in doc.items() if k not in ("instances", "surfaces")} | {
        "instances": {k: {kk: vv for kk, vv in r.items() if kk != "per_frame"} for k, r in doc["instances"].items()},
        "surfaces": {k: {kk: vv for kk, vv in r.items() if kk != "per_frame"} for k, r in doc["surfaces"].items()}}
    a.derived_surfaces = set(doc["surfaces_found"])
    done = set(getattr(a, "scripted_objects", {}) or {})
    frames = np.array(doc["frames"])
    for key, rec in doc["instances"].items():
        drawn = [d for d in rec["drawn"] if d not in done]
        if not rec["departs"] or not drawn:
            continue
        em = key.split("/", 1)[0]
        over = rec["per_frame"] > rec["reach_m"]
        a.add(kind="scripted_motion", objects=[*drawn, em], frames=[rec["frames_over"][0], rec["frames_over"][-1]],
              value=rec["max_m"], unit="m",
              message=(f"particle system {key!r} draws {', '.join(drawn)} up to {rec['max_m']:.3f} m from the "
                       f"particles its solver moves (reach {rec['reach_m']:.3f} m) on {int(over.sum())} of "
                       f"{len(over)} frames checked: what renders is placed or moved by something else (the drawn "
                       "object's own geometry, modifiers or animation, or its global place), not simulated"),
              evidence={"cause": "derived_departs", "system": key, "reach_m": rec["reach_m"],
                        "series": _series(frames, rec["per_frame"], f"{key} instance to particle", "m",
                                          rec["reach_m"])})
    for name, rec in doc["surfaces"].items():
        if not rec["departs"] or name in done:
            continue
        over = rec["per_frame"] > 0
        movers = rec.get("moving_members") or {}
        fr = rec["frames_over"] or doc["frames"]
        said = (f"renders material up to {rec['max_m']:.3f} m from every one of them (reach {rec['reach_m']:.3f} m) "
                f"on {int(over.sum())} of {len(over)} frames checked" if rec["frames_over"] else "")
        if movers:
            said += ("; " if said else "") + (
                f"it fuses in {', '.join(sorted(movers))}, member(s) of its metaball family that move up to "
                f"{max(movers.values()):.3f} m with no particle under them")
        a.add(kind="scripted_motion", objects=[name, *sorted(movers), *sorted({k.split("/", 1)[0]
                                                                            for k in rec["systems"]})],
              frames=[fr[0], fr[-1]], value=rec["max_m"] if rec["frames_over"] else max(movers.values()), unit="m",
              message=(f"{name}, a surface derived from the particles of {', '.join(rec['systems'])} ({rec['how']}), "
                       f"{said}: that material follows no solver"),
              evidence={"cause": "derived_departs", "systems": rec["systems"], "how": rec["how"],
                        "moving_members": movers, "reach_m": rec["reach_m"], "series": _series(frames, rec["per_frame"],
                                                                     f"{name} vertices beyond reach", "m")})

