"""paddle_wheel family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the drop slot stays over the right half of the wheel (0.55-0.8 of the paddle reach), so every
ball lands on a descending paddle and turns the wheel the same way; 5-8 paddles leave no gap a ball could fall
through without touching one; the chute's slope (6-10 deg) and the balls' spacing (>= 2.5 diameters) send them
one at a time; a paddle weighs 0.5-0.8 of a ball (steel, brass, glass or ceramic), so the wheel turns
more than once, and the bearing damping (0.45-0.8) makes it run down visibly within 8 s. Look: sun height and
direction, sky strength, wood/paint colours, ball material and the hand-held camera all vary.
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {
    "samples": 2,
    "exposure": -0.9,
    "sky_strength": 0.35,
    "sun_energy": 3.5,
    "sun_angle_deg": 3.0,
    "sun_elevation_deg": 38.0,
    "sun_azimuth_deg": 35.0,
    "table_size": [1.4, 0.8],
    "table_rgb": [0.3, 0.17, 0.08],
    "wall_rgb": [0.78, 0.75, 0.7],
    "floor_rgb": [0.3, 0.3, 0.32],
    "axle_h": 0.2,
    "hub_r": 0.016,
    "paddles": 6,
    "paddle_len": 0.1,
    "paddle_width": 0.07,
    "paddle_thick": 0.006,
    "paddle_mass": 0.07,
    "paddle_rgb": [0.72, 0.55, 0.33],
    "flag_colour": ["Red", [0.75, 0.08, 0.06]],
    "frame_rgb": [0.08, 0.09, 0.1],
    "bearing_damping": 0.6,
    "chute_deg": 8.0,
    "chute_len": 0.5,
    "chute_rgb": [0.12, 0.32, 0.6],
    "chute_colour": "blue",
    "drop_x": 0.075,
    "ball_r": 0.015,
    "ball_kind": ["steel", [0.75, 0.76, 0.78], 0.15, 1.0],
    "ball_mass": 0.11,
    "ball_s": [0.04, 0.16, 0.3, 0.44],
    "tray_rgb": [0.85, 0.83, 0.78],
    "camera_loc": [0.2, -0.76, 0.42],
    "camera_target": [-0.06, 0.0, 0.21],
    "lens": 26.0,
    "roll_deg": 1.5,
}

FLAGS = [("Red", [0.75, 0.08, 0.06]), ("Yellow", [0.9, 0.7, 0.05]), ("Green", [0.1, 0.5, 0.15]), ("Blue", [0.08, 0.2, 0.7]), ("Orange", [0.9, 0.35, 0.04])]
CHUTES = [("blue", [0.12, 0.32, 0.6]), ("green", [0.15, 0.45, 0.2]), ("red", [0.6, 0.1, 0.08]), ("yellow", [0.85, 0.65, 0.1]), ("grey", [0.4, 0.42, 0.45])]
WOODS = [[0.72, 0.55, 0.33], [0.62, 0.42, 0.22], [0.8, 0.68, 0.48], [0.5, 0.32, 0.17]]
TABLES = [[0.3, 0.17, 0.08], [0.45, 0.3, 0.16], [0.2, 0.12, 0.07], [0.55, 0.42, 0.28], [0.35, 0.35, 0.36]]
WALLS = [[0.78, 0.75, 0.7], [0.7, 0.74, 0.78], [0.82, 0.8, 0.74], [0.62, 0.66, 0.6], [0.8, 0.7, 0.62]]
FRAMES_RGB = [[0.08, 0.09, 0.1], [0.5, 0.05, 0.04], [0.05, 0.15, 0.35], [0.55, 0.56, 0.58]]
# name, colour, roughness, metallic, density kg/m^3
BALLS = [("steel", [0.75, 0.76, 0.78], 0.15, 1.0, 7800.0), ("brass", [0.8, 0.6, 0.3], 0.25, 1.0, 8500.0),
         ("glass", [0.1, 0.35, 0.75], 0.05, 0.0, 2500.0), ("ceramic", [0.9, 0.9, 0.86], 0.3, 0.0, 3200.0)]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    L = _r(rnd, 0.085, 0.115)
    reach = 0.018 + L
    r = _r(rnd, 0.012, 0.017)
    name, rgb, rough, metal, rho = rnd.choice(BALLS)
    mass = round(rho * 4.0 / 3.0 * math.pi * r**3, 4)
    n = 3 + seed % 3
    spacing = _r(rnd, 2.5 * 2 * r + 0.05, 0.16)
    s0 = _r(rnd, 0.03, 0.06)
    ball_s = [round(s0 + i * spacing, 3) for i in range(n)]
    chute_len = round(ball_s[-1] + 0.08, 3)
    chute_colour, chute_rgb = rnd.choice(CHUTES)
    H = _r(rnd, 0.17, 0.23)
    az = math.radians(rnd.uniform(-35.0, 25.0))
    dist = rnd.uniform(0.65, 0.85)
    cx = -0.5 * chute_len * 0.5
    return {
        "samples": 2,
        "exposure": _r(rnd, -1.1, -0.6, 2),
        "sky_strength": _r(rnd, 0.25, 0.5, 2),
        "sun_energy": _r(rnd, 2.5, 4.5, 2),
        "sun_angle_deg": _r(rnd, 1.5, 6.0, 1),
        "sun_elevation_deg": _r(rnd, 25.0, 60.0, 1),
        "sun_azimuth_deg": _r(rnd, -60.0, 60.0, 1),
        "table_size": [1.4, 0.8],
        "table_rgb": rnd.choice(TABLES),
        "wall_rgb": rnd.choice(WALLS),
        "floor_rgb": [0.3, 0.3, 0.32],
        "axle_h": H,
        "hub_r": _r(rnd, 0.013, 0.02),
        "paddles": rnd.choice([5, 6, 6, 7, 8]),
        "paddle_len": L,
        "paddle_width": _r(rnd, 0.06, 0.085),
        "paddle_thick": _r(rnd, 0.005, 0.008),
        "paddle_mass": round(max(mass, 0.02) * rnd.uniform(0.5, 0.8), 4),
        "paddle_rgb": rnd.choice(WOODS),
        "flag_colour": list(rnd.choice(FLAGS)),
        "frame_rgb": rnd.choice(FRAMES_RGB),
        "bearing_damping": _r(rnd, 0.45, 0.8, 2),
        "chute_deg": _r(rnd, 6.0, 10.0, 1),
        "chute_len": chute_len,
        "chute_rgb": chute_rgb,
        "chute_colour": chute_colour,
        "drop_x": round(rnd.uniform(0.55, 0.8) * reach, 3),
        "ball_r": r,
        "ball_kind": [name, rgb, rough, metal],
        "ball_mass": max(mass, 0.02),
        "ball_s": ball_s,
        "tray_rgb": [0.85, 0.83, 0.78],
        "camera_loc": [round(cx + dist * math.sin(az) + 0.15, 3), round(-dist * math.cos(az), 3), _r(rnd, 0.3, 0.42)],
        "camera_target": [round(cx + 0.1, 3), 0.0, round(H * 0.95, 3)],
        "lens": _r(rnd, 24.0, 28.0, 1),
        "roll_deg": _r(rnd, -2.5, 2.5, 1),
    }
