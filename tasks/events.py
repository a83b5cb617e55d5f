"""Small event detectors over truth trajectories (SceneSamples), used by the per-task annotation files.

Why: event intervals in shipped tasks are measured from the simulated truth, not guessed, so every
interval can be re-derived (and re-checked) from `truth_trajectories.npz`. Frames are 1-based like
Blender's; `sec(frame)` converts to seconds of the reference video (frame 1 = 0 s).
"""

from __future__ import annotations

import numpy as np
from physcodegym.samples import SceneSamples

FPS = 30.0


def sec(frame: int | float) -> float:
    """Seconds of frame `frame` (1-based), clipped to [0, 8] and rounded to the millisecond."""
    return round(min(max((float(frame) - 1.0) / FPS, 0.0), 8.0), 3)


def interval(a: int | float, b: int | float, evidence: str) -> dict:
    a, b = sorted((float(a), float(b)))
    return {"start_s": sec(a), "end_s": sec(b), "evidence": evidence}


def loc(s: SceneSamples, name: str) -> np.ndarray:
    return s.matrices[s.index(name), :, :3, 3]


def speed(s: SceneSamples, name: str) -> np.ndarray:
    """(F,) m/s, backward difference (first frame copies the second)."""
    p = loc(s, name)
    v = np.linalg.norm(np.diff(p, axis=0), axis=1) * s.fps
    return np.concatenate([v[:1], v])


def frame_of(s: SceneSamples, idx: int) -> int:
    return int(s.frames[int(idx)])


def bounces(z: np.ndarray, min_drop: float = 0.002) -> list[int]:
    """Indices where vertical velocity turns from falling to rising (impacts), ignoring jitter."""
    vz = np.diff(z)
    out = []
    for i in range(1, len(vz)):
        if vz[i - 1] < -min_drop / 4 and vz[i] > 0 and (z[: i + 1].max() - z[i]) > min_drop:
            out.append(i)
    return out


def first_moving(s: SceneSamples, name: str, thr: float = 0.005) -> int | None:
    """First index whose displacement from the start exceeds thr metres."""
    d = np.linalg.norm(loc(s, name) - loc(s, name)[0], axis=1)
    idx = np.nonzero(d > thr)[0]
    return int(idx[0]) if idx.size else None


def settled_from(s: SceneSamples, name: str, v_thr: float = 0.02) -> int | None:
    """First index after which the object's speed stays below v_thr m/s."""
    v = speed(s, name)
    above = np.nonzero(v >= v_thr)[0]
    if not above.size:
        return 0
    i = int(above[-1]) + 1
    return i if i < len(v) else None


def tilt_deg(s: SceneSamples, name: str) -> np.ndarray:
    """(F,) angle in degrees between the object's local Z axis and world Z."""
    m = s.matrices[s.index(name)]
    zc = m[:, :3, 2] / np.linalg.norm(m[:, :3, 2], axis=1, keepdims=True)
    return np.degrees(np.arccos(np.clip(zc[:, 2], -1, 1)))


def yaw_deg(s: SceneSamples, name: str) -> np.ndarray:
    """(F,) unwrapped heading (rotation of local X about world Z) in degrees, relative to frame 1."""
    m = s.matrices[s.index(name)]
    a = np.unwrap(np.arctan2(m[:, 1, 0], m[:, 0, 0]))
    return np.degrees(a - a[0])


def particles_in_box(s: SceneSamples, key: str, lo: tuple[float, float, float],
                     hi: tuple[float, float, float]) -> np.ndarray:
    """(F,) number of alive particles inside the axis-aligned box."""
    P = np.nan_to_num(s.particles[key], nan=1e9)
    A = s.particles_alive[key]
    inside = np.all((P >= np.array(lo)) & (P <= np.array(hi)), axis=2) & A
    return inside.sum(axis=1)


def particles_alive(s: SceneSamples, key: str) -> np.ndarray:
    return s.particles_alive[key].sum(axis=1)


def first_true(mask: np.ndarray) -> int | None:
    idx = np.nonzero(mask)[0]
    return int(idx[0]) if idx.size else None


def last_true(mask: np.ndarray) -> int | None:
    idx = np.nonzero(mask)[0]
    return int(idx[-1]) if idx.size else None


def min_gap_index(s: SceneSamples, a: str, b: str, thr: float) -> int | None:
    """First index where the centres of a and b come within thr metres (contact proxy for known sizes)."""
    d = np.linalg.norm(loc(s, a) - loc(s, b), axis=1)
    return first_true(d < thr)
