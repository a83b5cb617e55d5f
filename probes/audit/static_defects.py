"""Defects that need no motion to be wrong: particles born inside solid material, or away from anything rendered.

(Static interpenetration of rendered solids and static cloth self-crossing are judged by the pair and
self-intersection detectors of `probes.audit.audit`, which look at every frame whether or not anything moves.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.scene import physics as ph

BORN_DEPTH = 0.005  # m: a particle born deeper than this inside a rendered solid is born in material
BORN_MIN, BORN_FRAC = 5, 0.05  # at least this many particles and this fraction of those born near the solid


def born_inside(a: Any) -> None:
    """`interpenetration` for particles whose first alive position lies inside a rendered closed solid."""
    s = a.s
    if not s.particles:
        return
    emitters = {k.split("/", 1)[0] for k in s.particles}
    instanced = ph.instanced_objects(s.info)
    solids = [n for n in a.solids() if n not in instanced and a.geom.meshes[n].closed]
    for key, P in s.particles.items():
        alive = s.particles_alive.get(key)
        if alive is None or alive.shape != P.shape[:2] or not alive.any():
            continue
        em = key.split("/", 1)[0]
        born = np.argmax(alive, axis=0)  # first alive sample per particle
        ever = alive.any(axis=0)
        for n in solids:
            if n == em and n not in emitters:
                continue
            inside_n, near_n, worst, wf = 0, 0, 0.0, None
            for fi in np.unique(born[ever]):
                idx = np.nonzero(ever & (born == fi))[0]
                pts = P[fi, idx].astype(np.float64)
                ok = np.isfinite(pts).all(axis=1)
                pts = pts[ok]
                if not len(pts):
                    continue
                lo, hi = a.geom.aabbs(n)[fi]
                near = np.all((pts >= lo) & (pts <= hi), axis=1)
                if not near.any():
                    continue
                near_n += int(near.sum())
                d = a.geom.inside_depth(n, int(s.frames[fi]), pts[near])
                k = int((d > BORN_DEPTH).sum())
                inside_n += k
                if k and float(d.max()) > worst:
                    worst, wf = float(d.max()), int(s.frames[fi])
            total = int(ever.sum())
            if inside_n < BORN_MIN or inside_n < BORN_FRAC * max(near_n, 1):
                continue
            a.add(
                kind="interpenetration",
                objects=[n, em],
                frames=[wf, wf] if wf is not None else [],
                value=worst,
                unit="m",
                message=(f"{inside_n} of {total} particles of {key} are born inside rendered solid {n} (up to "
                         f"{worst:.3f} m deep)"),
                evidence={"particles": key, "born_inside": inside_n, "born_near": near_n, "total": total,
                          "depth_threshold_m": BORN_DEPTH,
                          "solid_collision_owner": ph.collision_owner(s.info[n], s.scene_info)},
            )


SOURCE_REACH_M = 0.05  # m: a particle is born from a rendered source when its emitter lies this close to material
SOURCE_MIN, SOURCE_FRAC = 5, 0.05  # at least this many particles, and this fraction of the system's, born away
SOURCE_FRAMES = 8  # birth frames judged per particle system (evenly spread over the emission)
SOURCE_POINTS = 4000  # emitter sample points (vertices and triangle centroids) kept per frame
SOURCE_MIN_SIZE_M = 0.005  # m: a rendered object whose second-largest dimension is below this (a speck, a needle) is
# no source the frames show; a nozzle, a hose, a spout or a thin sheet all have two dimensions of a centimetre or more


def source_distances(a: Any, em: str, frame: int, pts: np.ndarray, sources: list[str]) -> np.ndarray:
    """Distance of each world point to the nearest rendered material among `sources` at a frame (capped at
    4 x `SOURCE_REACH_M`). A rendered geometry object that is not a mesh (a curve hose, text) is bounded by a
    sphere around its origin with its full diagonal as radius: generous, so it never raises a false alarm."""
    s = a.s
    cap = 4.0 * SOURCE_REACH_M
    best = np.full(len(pts), cap)
    fi = a.geom.fi(frame)
    for n in sources:
        if n == em:
            continue
        if n in a.geom.meshes:
            lo, hi = a.geom.aabbs(n)[fi]
            if not np.any(np.all((pts >= lo - cap) & (pts <= hi + cap), axis=1)):
                continue
            d = a.geom.nearest_distances(n, frame, pts, cap)
            if a.geom.meshes[n].closed:
                d = np.where(a.geom.inside_depth(n, frame, pts, cap) > 0, 0.0, d)
        else:
            c = s.matrices[s.index(n), fi][:3, 3]
            r = float(np.linalg.norm(s.info[n].get("dimensions") or [0.0, 0.0, 0.0]))
            d = np.maximum(np.linalg.norm(pts - c, axis=1) - r, 0.0)
        best = np.minimum(best, d)
    return best


def _nearest_index(pts: np.ndarray, ref: np.ndarray, chunk: int = 256) -> np.ndarray:
    """Index in `ref` of the point nearest each of `pts`, in chunks (100 000 drops born at once against a dense
    emitter must not ask for gigabytes)."""
    out = np.empty(len(pts), dtype=np.int64)
    for i in range(0, len(pts), chunk):
        d2 = ((pts[i:i + chunk, None, :] - ref[None, :, :]) ** 2).sum(axis=2)
        out[i:i + chunk] = d2.argmin(axis=1)
    return out


def _source_size(a: Any, n: str) -> float:
    """`_visible_size` of an object, read from its material where the geometry holds it (an empty that instances
    a collection has no dimensions of its own)."""
    mg = a.geom.meshes.get(n)
    if mg is not None and mg.local is not None and len(mg.local):
        d = sorted((mg.local.max(axis=0) - mg.local.min(axis=0)).tolist(), reverse=True)
        return float(d[1])
    return _visible_size(a.s.info[n])


def _visible_size(info: dict[str, Any]) -> float:
    """The second-largest dimension (m): how large a source looks from its least favourable side but one."""
    d = sorted((float(x) for x in info.get("dimensions", [0.0, 0.0, 0.0])), reverse=True)
    return d[1] if len(d) > 1 else 0.0


def sourceless(a: Any) -> None:
    """`energy_gain` for rendered particles born away from anything that renders: their emitter does not render
    and lies more than `SOURCE_REACH_M` from the material of every rendered object where they are born. Liquid
    that appears in mid-air (a hidden disc 2 cm above the glass instead of the carton's spout) brings mass and
    energy into the scene from nowhere the frames show. Each particle is assigned the emitter point nearest its
    first sampled position (it has flown up to a frame since its birth), so only the part of the emitter that
    emits is judged. A rendered speck or needle (second-largest dimension below `SOURCE_MIN_SIZE_M`) parked
    beside a hidden emitter is no source a frame shows and does not count."""
    s = a.s
    if not s.particles:
        return
    instanced = ph.instanced_objects(s.info)
    # every object that renders material is a source: geometry types, and an instancer (an empty carrying a
    # collection) whose instances the geometry holds as its material
    sources = [n for n in s.names if n not in instanced and (s.info[n].get("type") in ph.GEOMETRY_TYPES
                                                             or n in a.geom.meshes)
               and ph.rendered(s.info[n]) and _source_size(a, n) >= SOURCE_MIN_SIZE_M]
    for key, P in s.particles.items():
        em = key.split("/", 1)[0]
        info = s.info.get(em, {})
        if em not in a.geom.meshes or ph.rendered(info) or not ph.emits_rendered(info, key.split("/", 1)[1]):
            continue
        alive = s.particles_alive.get(key)
        if alive is None or alive.shape != P.shape[:2] or not alive.any():
            continue
        ever = alive.any(axis=0)
        born = np.argmax(alive, axis=0)
        fis = np.unique(born[ever])
        if len(fis) > SOURCE_FRAMES:
            fis = fis[np.linspace(0, len(fis) - 1, SOURCE_FRAMES).round().astype(int)]
        judged, away, worst, wf = 0, 0, 0.0, None
        for fi in fis:
            frame = int(s.frames[fi])
            idx = np.nonzero(ever & (born == fi))[0]
            pts = P[fi, idx].astype(np.float64)
            pts = pts[np.isfinite(pts).all(axis=1)]
            if not len(pts):
                continue
            ep = a.geom._points(em, frame)
            if len(ep) > SOURCE_POINTS:
                ep = ep[np.linspace(0, len(ep) - 1, SOURCE_POINTS).round().astype(int)]
            nearest = _nearest_index(pts, ep)
            used = np.unique(nearest)
            dist = source_distances(a, em, frame, ep[used], sources)
            far = dist[np.searchsorted(used, nearest)]
            judged += len(pts)
            k = int((far > SOURCE_REACH_M).sum())
            away += k
            if k and float(far.max()) > worst:
                worst, wf = float(far.max()), frame
        if away < SOURCE_MIN or away < SOURCE_FRAC * max(judged, 1):
            continue
        a.add(
            kind="energy_gain",
            objects=[em],
            frames=[wf, wf] if wf is not None else [],
            value=worst,
            unit="m",
            message=(f"{away} of {judged} particles of {key} judged (born on {len(fis)} sampled frames) are born "
                     f"more than {SOURCE_REACH_M:g} m from the material of anything rendered (up to {worst:.3f} m"
                     f"{'+' if worst >= 4 * SOURCE_REACH_M else ''}): "
                     f"their emitter {em!r} does not render ({ph.hidden_how(info)}) and nothing rendered is "
                     "there, so the liquid enters the scene from nowhere the frames show"),
            evidence={"particles": key, "born_away": away, "judged": judged, "source_gap_m": worst,
                      "reach_m": SOURCE_REACH_M, "emitter_hidden": ph.hidden_how(info)},
        )
