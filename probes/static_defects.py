"""Defects that need no motion to be wrong: particles born inside solid material.

(Static interpenetration of rendered solids and static cloth self-crossing are judged by the pair and
self-intersection detectors of `probes.audit`, which look at every frame whether or not anything moves.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes import physics as ph

BORN_DEPTH = 0.005  # m: a particle born deeper than this inside a rendered solid is born in material
BORN_MIN, BORN_FRAC = 5, 0.05  # at least this many particles and this fraction of those born near the solid


def born_inside(a: Any) -> None:
    """`interpenetration` for particles whose first alive position lies inside a rendered closed solid."""
    s = a.s
    if not s.particles:
        return
    emitters = {k.split("/", 1)[0] for k in s.particles}
    instanced = set()
    for info in s.info.values():
        for rec in (info.get("physics") or {}).values():
            if rec.get("instance_object"):
                instanced.add(rec["instance_object"])
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
