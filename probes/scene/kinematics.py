"""Velocities and mechanical energy from sampled world matrices (finite differences, numpy only).

Central differences at 30 fps; inertia follows what Bullet uses for each collision shape (sphere,
cylinder, capsule/cone as cylinders, and the AABB box for box / convex hull / mesh), so the rotational
energy matches the solver's own bookkeeping closely enough for an energy budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.samples import SceneSamples


def rotations(samples: SceneSamples, name: str) -> np.ndarray:
    """(F, 3, 3) world rotation (scale removed) of an object."""
    m = samples.matrices[samples.index(name), :, :3, :3]
    s = np.linalg.norm(m, axis=1, keepdims=True)
    s[s == 0] = 1.0
    return m / s


def linear_velocity(samples: SceneSamples, name: str) -> np.ndarray:
    """(F, 3) m/s world velocity of the object origin (central differences)."""
    x = samples.locations(name)
    if len(x) < 2:
        return np.zeros_like(x)
    return np.gradient(x, 1.0 / samples.fps, axis=0)


def linear_acceleration(samples: SceneSamples, name: str) -> np.ndarray:
    """(F, 3) m/s^2 world acceleration of the object origin."""
    v = linear_velocity(samples, name)
    if len(v) < 2:
        return np.zeros_like(v)
    return np.gradient(v, 1.0 / samples.fps, axis=0)


def angular_velocity(samples: SceneSamples, name: str) -> np.ndarray:
    """(F, 3) rad/s world angular velocity from consecutive rotations (averaged to frames)."""
    r = rotations(samples, name)
    F = len(r)
    w = np.zeros((F, 3))
    if F < 2:
        return w
    d = np.einsum("fij,fkj->fik", r[1:], r[:-1])  # R_{t+1} R_t^T
    cos = np.clip((np.trace(d, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)
    ang = np.arccos(cos)
    ax = np.stack([d[:, 2, 1] - d[:, 1, 2], d[:, 0, 2] - d[:, 2, 0], d[:, 1, 0] - d[:, 0, 1]], axis=1)
    n = np.linalg.norm(ax, axis=1)
    small = n < 1e-12
    ax[~small] /= n[~small, None]
    ax[small] = 0.0
    mid = ax * (ang * samples.fps)[:, None]  # (F-1, 3) at half frames
    w[0], w[-1] = mid[0], mid[-1]
    w[1:-1] = 0.5 * (mid[1:] + mid[:-1])
    return w


def inertia_diagonal(info: dict[str, Any]) -> np.ndarray:
    """(3,) principal inertia (kg m^2) in the body frame from the rigid-body mass, shape and dimensions."""
    rb = info.get("rigid_body") or {}
    m = float(rb.get("mass", 1.0))
    x, y, z = (float(d) for d in info.get("dimensions", [1, 1, 1]))
    shape = rb.get("collision_shape", "CONVEX_HULL")
    if shape == "SPHERE":
        r = max(x, y, z) / 2
        return np.full(3, 0.4 * m * r * r)
    if shape in ("CYLINDER", "CAPSULE", "CONE"):
        r = max(x, y) / 2
        ixy = m * (3 * r * r + z * z) / 12
        return np.array([ixy, ixy, 0.5 * m * r * r])
    return np.array([m * (y * y + z * z) / 12, m * (x * x + z * z) / 12, m * (x * x + y * y) / 12])


def mechanical_energy(samples: SceneSamples, names: list[str], gravity: np.ndarray) -> dict[str, np.ndarray]:
    """Per-frame translational + rotational kinetic and potential energy (J), summed over `names`.

    Returns {"kinetic", "rotational", "potential", "total"} as (F,) arrays and "per_body" (N, F).
    """
    F = len(samples.frames)
    ke, rot, pe = np.zeros(F), np.zeros(F), np.zeros(F)
    per_body = np.zeros((len(names), F))
    g = np.asarray(gravity, dtype=float)
    for i, n in enumerate(names):
        info = samples.info.get(n, {})
        m = float((info.get("rigid_body") or {}).get("mass", 1.0))
        v = linear_velocity(samples, n)
        w = angular_velocity(samples, n)
        r = rotations(samples, n)
        wb = np.einsum("fji,fj->fi", r, w)  # body-frame angular velocity
        inert = inertia_diagonal(info)
        k = 0.5 * m * np.einsum("fi,fi->f", v, v)
        kr = 0.5 * np.einsum("fi,i,fi->f", wb, inert, wb)
        p = -m * (samples.locations(n) @ g)
        ke += k
        rot += kr
        pe += p
        per_body[i] = k + kr + p
    return {"kinetic": ke, "rotational": rot, "potential": pe, "total": ke + rot + pe, "per_body": per_body}


def median_filter(x: np.ndarray, width: int = 5) -> np.ndarray:
    """Running median (odd width) so one-frame finite-difference dips at impacts do not look like events."""
    if len(x) < width:
        return x.copy()
    h = width // 2
    pad = np.pad(x, h, mode="edge")
    win = np.lib.stride_tricks.sliding_window_view(pad, width)
    return np.median(win, axis=1)


def runs(mask: np.ndarray, min_len: int = 1) -> list[tuple[int, int]]:
    """[(start, end_inclusive)] index runs where mask is True, at least `min_len` long."""
    out = []
    m = np.concatenate([[False], np.asarray(mask, bool), [False]])
    d = np.diff(m.astype(np.int8))
    starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]
    for s, e in zip(starts, ends, strict=True):
        if e - s >= min_len:
            out.append((int(s), int(e - 1)))
    return out
