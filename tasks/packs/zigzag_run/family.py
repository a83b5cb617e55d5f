"""zigzag_run family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: 3-5 tracks of 0.34-0.48 m at 5-8 deg keep the marble rolling slowly enough that the end stop
turns it into the drop slot, and the run (about 1.1 s a track) ends inside 8 s with the marble at rest in the bin;
the drop between tracks (0.065-0.09 m) stays larger than the marble plus a floor, and the top of the run is set
so the lowest track's end clears the bin (0.07 m). Marble size, mass and friction, track colours, board wood,
light and the hand-held camera vary.
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {
    "samples": 2,
    "exposure": -1.3,
    "sky_strength": 0.25,
    "sun_energy": 3.2,
    "sun_angle_deg": 3.0,
    "sun_elevation_deg": 42.0,
    "sun_azimuth_deg": -30.0,
    "table_size": [1.4, 0.8],
    "table_rgb": [0.36, 0.22, 0.11],
    "wall_rgb": [0.74, 0.76, 0.78],
    "floor_rgb": [0.3, 0.3, 0.32],
    "board_rgb": [0.6, 0.45, 0.28],
    "track_len": 0.42,
    "track_deg": 6.0,
    "track_drop": 0.075,
    "top_z": 0.48,
    "tracks": [["red", [0.7, 0.08, 0.05]], ["yellow", [0.9, 0.68, 0.08]], ["green", [0.12, 0.45, 0.18]], ["blue", [0.1, 0.25, 0.65]]],
    "marble_r": 0.012,
    "marble_colour": ["Blue", [0.05, 0.2, 0.8]],
    "marble_mass": 0.02,
    "marble_friction": 0.5,
    "marble_start": 0.03,
    "bin_rgb": [0.85, 0.84, 0.8],
    "camera_loc": [0.2, -0.8, 0.58],
    "camera_target": [0.0, 0.0, 0.24],
    "lens": 26.0,
    "roll_deg": -1.0,
}

PAINTS = [("red", [0.7, 0.08, 0.05]), ("yellow", [0.9, 0.68, 0.08]), ("green", [0.12, 0.45, 0.18]), ("blue", [0.1, 0.25, 0.65]),
          ("orange", [0.9, 0.35, 0.04]), ("purple", [0.4, 0.12, 0.5]), ("natural", [0.75, 0.6, 0.4]), ("white", [0.85, 0.85, 0.82])]
MARBLES = [("Blue", [0.05, 0.2, 0.8]), ("Red", [0.8, 0.05, 0.05]), ("Green", [0.05, 0.55, 0.2]), ("Amber", [0.85, 0.45, 0.05]),
           ("Black", [0.03, 0.03, 0.035]), ("Silver", [0.75, 0.76, 0.78])]
BOARDS = [[0.6, 0.45, 0.28], [0.5, 0.36, 0.2], [0.7, 0.6, 0.45], [0.3, 0.19, 0.1]]
TABLES = [[0.36, 0.22, 0.11], [0.3, 0.17, 0.08], [0.62, 0.5, 0.36], [0.36, 0.36, 0.38], [0.22, 0.14, 0.08]]
WALLS = [[0.74, 0.76, 0.78], [0.8, 0.77, 0.7], [0.66, 0.7, 0.64], [0.82, 0.72, 0.64], [0.6, 0.62, 0.68]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    k = 3 + seed % 3
    L = _r(rnd, 0.34, 0.48)
    deg = _r(rnd, 5.0, 8.0, 1)
    drop = _r(rnd, 0.065, 0.09)
    top = round(0.075 + k * L * math.tan(math.radians(deg)) + (k - 1) * drop, 3)
    r = _r(rnd, 0.009, 0.014)
    mname, mrgb = rnd.choice(MARBLES)
    density = 7800.0 if mname == "Silver" else 2500.0
    az = math.radians(rnd.uniform(-30.0, 30.0))
    dist = rnd.uniform(0.75, 0.95) + 0.4 * (top - 0.4)
    return {
        "samples": 2,
        "exposure": _r(rnd, -1.5, -1.0, 2),
        "sky_strength": _r(rnd, 0.18, 0.35, 2),
        "sun_energy": _r(rnd, 2.5, 4.5, 2),
        "sun_angle_deg": _r(rnd, 1.5, 6.0, 1),
        "sun_elevation_deg": _r(rnd, 25.0, 60.0, 1),
        "sun_azimuth_deg": _r(rnd, -60.0, 60.0, 1),
        "table_size": [1.4, 0.8],
        "table_rgb": rnd.choice(TABLES),
        "wall_rgb": rnd.choice(WALLS),
        "floor_rgb": [0.3, 0.3, 0.32],
        "board_rgb": rnd.choice(BOARDS),
        "track_len": L,
        "track_deg": deg,
        "track_drop": drop,
        "top_z": top,
        "tracks": [[c, rgb] for c, rgb in rnd.sample(PAINTS, k)],
        "marble_r": r,
        "marble_colour": [mname, mrgb],
        "marble_mass": round(density * 4.0 / 3.0 * math.pi * r**3, 4),
        "marble_friction": _r(rnd, 0.35, 0.6, 2),
        "marble_start": _r(rnd, 0.02, 0.05),
        "bin_rgb": [0.85, 0.84, 0.8],
        "camera_loc": [round(dist * math.sin(az), 3), round(-dist * math.cos(az), 3), round(top + _r(rnd, 0.02, 0.15), 3)],
        "camera_target": [0.0, 0.0, round(top * 0.5, 3)],
        "lens": _r(rnd, 24.0, 28.0, 1),
        "roll_deg": _r(rnd, -2.5, 2.5, 1),
    }
