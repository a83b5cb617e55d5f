"""garden_fountain family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the jet's speed (2.45-2.75 m/s) and lean (9-14 deg) change little, so its drops come down 0.1-0.2 m
from the pipe, well inside a bowl of 0.27-0.33 m radius (the shipped jet: top 0.26 m above the mouth, drops on the
floor from 0.5 s); the lean turns to any side (the drops land towards or away from the camera, or sideways). The
water volume (count x drop size cubed) stays near the shipped 0.8 l, so the pool is a few drops deep and spreads over
0.06-0.09 m2 of the floor. Without the bowl's contact the drops fall through it, most past the column onto the
paving (some stay on the column's top just under the bowl), and without gravity the jet flies on upwards.
Measured on bake-only runs of seeds 1-6 (plain bpy re-bakes for the interventions, drops inside the bowl's box at
6 s): baseline 0.935-1.0 of the drops, bowl contact off 0.06-0.36 (threshold 0.5), gravity off 0.0-0.002 x the
baseline (threshold 0.5); every event detector measures (jet top 0.23-0.28 m above the mouth, first drop on the
floor at frames 16-27, wetted floor up to 0.062-0.084 m2, jet stops at 4.0-4.6 s, pool at rest from 4.3-5.0 s).
Look: stone colour, column height and shape, bowl size and depth, paving and hedge colours, sun height and direction,
sky strength and the hand-held camera (distance, side, height, roll, focal length) vary.
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {'blob_radius': 1.8,
 'bowl_h': 0.1,
 'bowl_damping': 0.7,
 'bowl_r': 0.3,
 'bowl_rgb': [0.3, 0.26, 0.2],
 'bowl_wall': 0.035,
 'camera_loc': [0.2, -0.88, 0.98],
 'camera_target': [0.0, 0.02, 0.74],
 'column_h': 0.55,
 'column_r': 0.08,
 'count': 600,
 'drop_size': 0.011,
 'floor_t': 0.03,
 'hedge_rgb': [0.1, 0.22, 0.06],
 'jet_frames': [6, 126],
 'lens': 26,
 'mouth_r': 0.007,
 'nozzle_h': 0.04,
 'paving_rgb': [0.3, 0.28, 0.25],
 'roll_deg': 1.5,
 'samples': 2,
 'sky_strength': 0.22,
 'speed': 2.6,
 'stone_name': 'grey stone',
 'stiffness': 0.2,
 'fluid_radius': 1.0,
 'sun_azim_deg': 120.0,
 'sun_elev_deg': 40.0,
 'sun_energy': 1.6,
 'tilt_azim_deg': 0.0,
 'tilt_deg': 12.0,
 'viscosity': 0.5,
 'water_rgb': [0.7, 0.85, 0.9]}

STONES = [("grey stone", [0.3, 0.26, 0.2]), ("sandstone", [0.45, 0.33, 0.2]), ("dark granite", [0.12, 0.12, 0.12]),
          ("pale limestone", [0.5, 0.47, 0.4]), ("red sandstone", [0.4, 0.18, 0.12])]
PAVINGS = [[0.3, 0.28, 0.25], [0.38, 0.34, 0.28], [0.22, 0.22, 0.23], [0.42, 0.36, 0.3]]
HEDGES = [[0.1, 0.22, 0.06], [0.06, 0.16, 0.05], [0.16, 0.26, 0.08], [0.08, 0.2, 0.1]]
WATERS = [[0.7, 0.85, 0.9], [0.75, 0.88, 0.85], [0.8, 0.9, 0.95]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    p = copy.deepcopy(SHIPPED)
    if seed == 0:
        return p
    rnd = random.Random(seed)
    stone, rgb = rnd.choice(STONES)
    size = _r(rnd, 0.010, 0.012)
    count = int(round(600 * (0.011 / size) ** 3, -1))
    start = rnd.randint(4, 10)
    ch = _r(rnd, 0.45, 0.65)
    bowl_r = _r(rnd, 0.27, 0.33)
    bowl_h = _r(rnd, 0.09, 0.12)
    top = 0.06 + ch + 0.001 + bowl_h
    dist = _r(rnd, 0.82, 0.95)
    az = math.radians(rnd.uniform(-25.0, 25.0))
    p.update({
        "stone_name": stone, "bowl_rgb": rgb, "paving_rgb": rnd.choice(PAVINGS), "hedge_rgb": rnd.choice(HEDGES), "water_rgb": rnd.choice(WATERS),
        "column_h": ch, "column_r": _r(rnd, 0.07, 0.09), "bowl_r": bowl_r, "bowl_h": bowl_h, "bowl_wall": _r(rnd, 0.03, 0.04),
        "floor_t": 0.03, "nozzle_h": _r(rnd, 0.03, 0.05),
        "count": count, "drop_size": size, "jet_frames": [start, start + rnd.randint(105, 125)],
        "speed": _r(rnd, 2.45, 2.75, 2), "tilt_deg": _r(rnd, 9.0, 14.0, 1), "tilt_azim_deg": _r(rnd, -180.0, 180.0, 1),
        "viscosity": _r(rnd, 0.4, 0.6, 2),
        "sun_elev_deg": _r(rnd, 30.0, 55.0, 1), "sun_azim_deg": _r(rnd, 90.0, 200.0, 1), "sky_strength": _r(rnd, 0.18, 0.28, 2),
        "sun_energy": _r(rnd, 1.4, 1.9, 2),
        "camera_loc": [round(dist * math.sin(az), 3), round(-dist * math.cos(az), 3), round(top + _r(rnd, 0.22, 0.32), 3)],
        "camera_target": [0.0, 0.02, round(top + 0.03, 3)],
        "roll_deg": _r(rnd, -2.0, 2.0, 1), "lens": rnd.choice([24, 25, 26, 27, 28]),
    })
    return p
