"""skittles family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the pivot sits one rod length plus the ball's radius plus 19 mm above the table, so the ball
skims the table at the bottom of its swing and strikes the pins below their heads (pins 0.1-0.14 m tall); the
head pin stands where the ball meets it at the bottom of the arc (ball and pin radii plus 5 mm past the pivot);
releases of 45-70 deg give the ball 1.4-2.2 m/s there, enough to drive the head pin into the rows behind it;
pin spacing stays 2.1-2.5 pin radii so each row touches the next when it falls. The ball's lowest point stays at
least 1.9 cm above the table, so the no-hinge counterfactual (ball on the table, centre at its radius) separates.
Rows (1-2-3, 1-2-3-4 or 1-2-3-4 with fewer pins), ball, pins, light and camera vary.
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
    "sun_angle_deg": 4.0,
    "sun_elevation_deg": 35.0,
    "sun_azimuth_deg": 20.0,
    "table_size": [1.4, 0.8],
    "table_rgb": [0.36, 0.2, 0.1],
    "wall_rgb": [0.8, 0.77, 0.7],
    "floor_rgb": [0.3, 0.3, 0.32],
    "pivot": [0.0, 0.43],
    "arm_len": 0.38,
    "release_deg": 60.0,
    "ball_r": 0.032,
    "ball_colour": ["Black", [0.03, 0.03, 0.035], 0.25],
    "ball_mass": 0.2,
    "rod_rgb": [0.55, 0.56, 0.58],
    "gallows_rgb": [0.45, 0.3, 0.16],
    "pin_rows": [1, 2, 3, 4],
    "pin_x0": 0.052,
    "pin_dx": 0.045,
    "pin_dy": 0.043,
    "pin_h": 0.12,
    "pin_r": 0.019,
    "pin_mass": 0.035,
    "pin_rgb": [0.9, 0.88, 0.82],
    "stripe_colour": ["Red", [0.7, 0.06, 0.05]],
    "camera_loc": [0.35, -0.92, 0.4],
    "camera_target": [0.0, 0.0, 0.2],
    "lens": 26.0,
    "roll_deg": 1.0,
}

BALLS = [("Black", [0.03, 0.03, 0.035], 0.25), ("Brown", [0.28, 0.14, 0.06], 0.35), ("Red", [0.6, 0.06, 0.04], 0.3), ("Green", [0.06, 0.3, 0.1], 0.3)]
STRIPES = [("Red", [0.7, 0.06, 0.05]), ("Blue", [0.08, 0.2, 0.65]), ("Green", [0.08, 0.45, 0.15]), ("Black", [0.03, 0.03, 0.03]), ("Gold", [0.8, 0.6, 0.15])]
PINS = [[0.9, 0.88, 0.82], [0.85, 0.74, 0.55], [0.95, 0.95, 0.93]]
WOODS = [[0.45, 0.3, 0.16], [0.3, 0.18, 0.09], [0.62, 0.46, 0.28]]
TABLES = [[0.36, 0.2, 0.1], [0.5, 0.34, 0.18], [0.25, 0.25, 0.27], [0.6, 0.48, 0.34], [0.2, 0.12, 0.07]]
WALLS = [[0.8, 0.77, 0.7], [0.72, 0.75, 0.78], [0.66, 0.72, 0.66], [0.84, 0.74, 0.66]]
ROWS = [[1, 2, 3], [1, 2, 3, 4], [1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 2]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    L = _r(rnd, 0.3, 0.42)
    br = _r(rnd, 0.026, 0.036)
    pr = _r(rnd, 0.016, 0.021)
    bname, brgb, brough = rnd.choice(BALLS)
    az = math.radians(rnd.uniform(-20.0, 40.0))
    dist = rnd.uniform(0.88, 1.05)
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
        "pivot": [0.0, round(L + br + 0.019, 3)],
        "arm_len": L,
        "release_deg": _r(rnd, 45.0, 70.0, 1),
        "ball_r": br,
        "ball_colour": [bname, brgb, brough],
        "ball_mass": round(900.0 * 4.0 / 3.0 * math.pi * br**3 * rnd.uniform(0.9, 1.3), 3),
        "rod_rgb": [0.55, 0.56, 0.58],
        "gallows_rgb": rnd.choice(WOODS),
        "pin_rows": rnd.choice(ROWS),
        "pin_x0": round(br + pr * 0.9 + 0.005, 3),
        "pin_dx": round(pr * rnd.uniform(2.1, 2.5), 3),
        "pin_dy": round(pr * rnd.uniform(2.15, 2.4), 3),
        "pin_h": _r(rnd, 0.1, 0.14),
        "pin_r": pr,
        "pin_mass": _r(rnd, 0.025, 0.045),
        "pin_rgb": rnd.choice(PINS),
        "stripe_colour": list(rnd.choice(STRIPES)),
        "camera_loc": [round(0.05 + dist * math.sin(az), 3), round(-dist * math.cos(az), 3), _r(rnd, 0.34, 0.46)],
        "camera_target": [0.0, 0.0, 0.2],
        "lens": _r(rnd, 24.0, 28.0, 1),
        "roll_deg": _r(rnd, -2.5, 2.5, 1),
    }
