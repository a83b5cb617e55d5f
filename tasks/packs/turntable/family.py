"""turntable family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the motor speed (1.2-2.4 rad/s, either direction) makes the block complete a full turn
well inside 8 s; the centripetal acceleration at the block (at most 2.4^2 * 0.15 = 0.9 m/s^2) stays far below
the friction limit (mu g >= 0.7 * 9.8), so the block is carried and never slides off; every object sits
inside the platter's rim. Riders (0-2 extra boxes or cylinders) are spread at least 100 degrees from the
block so nothing collides.
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {
    "world_rgb": [0.55, 0.6, 0.66],
    "studio_light": "Default",
    "cavity": False,
    "table_size": [1.4, 0.9],
    "table_rgb": [0.45, 0.28, 0.14],
    "base_radius": 0.2,
    "base_colour": ["Black", [0.04, 0.04, 0.05], 0.5],
    "platter_radius": 0.18,
    "platter_colour": ["Silver", [0.7, 0.72, 0.75], 0.3, 0.7],
    "platter_friction": 0.9,
    "stripe_len": 0.16,
    "stripe_x": 0.08,
    "block_size": 0.05,
    "block_loc": [0.11, 0.0, 0.0801],
    "block_colour": ["Yellow", [0.95, 0.75, 0.05]],
    "block_mass": 0.1,
    "block_friction": 0.9,
    "riders": [],
    "motor_velocity": 1.6,
    "motor_impulse": 1.0,
    "camera_loc": [0.0, -1.2, 0.75],
    "camera_target": [0.0, 0.0, 0.03],
    "lens": 38,
}

BLOCK_COLOURS = [
    ("Yellow", [0.95, 0.75, 0.05]),
    ("Red", [0.85, 0.1, 0.1]),
    ("Blue", [0.1, 0.25, 0.85]),
    ("Green", [0.1, 0.55, 0.15]),
    ("Orange", [0.95, 0.42, 0.05]),
    ("Purple", [0.45, 0.12, 0.65]),
    ("Cyan", [0.05, 0.7, 0.8]),
]
PLATTERS = [
    ("Silver", [0.7, 0.72, 0.75], 0.3, 0.7),
    ("Gold", [0.8, 0.62, 0.25], 0.3, 0.8),
    ("Grey", [0.45, 0.46, 0.48], 0.5, 0.2),
    ("Copper", [0.72, 0.4, 0.25], 0.35, 0.75),
]
BASES = [("Black", [0.04, 0.04, 0.05], 0.5), ("White", [0.88, 0.88, 0.86], 0.4), ("Brown", [0.3, 0.18, 0.1], 0.6)]
WORLDS = [[0.55, 0.6, 0.66], [0.7, 0.68, 0.62], [0.4, 0.45, 0.55], [0.62, 0.66, 0.6], [0.5, 0.5, 0.52]]
TABLES = [[0.45, 0.28, 0.14], [0.6, 0.42, 0.25], [0.3, 0.18, 0.1], [0.52, 0.36, 0.2]]
LIGHTS = ["Default", "basic.sl", "outdoor.sl", "studio.sl", "rim.sl"]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    R = _r(rnd, 0.15, 0.22)
    k = _r(rnd, 0.04, 0.06)
    rb = round(rnd.uniform(0.5 * R, R - 0.75 * k - 0.012), 3)
    phi = rnd.uniform(0.0, 2 * math.pi)
    colours = rnd.sample(BLOCK_COLOURS, 3)
    riders = []
    for i in range((seed - 1) % 3):  # 0, 1 or 2 extra objects, cycling with the seed
        size = _r(rnd, 0.035, 0.05)
        riders.append(
            {
                "shape": rnd.choice(["box", "cylinder"]),
                "size": size,
                "height": _r(rnd, 0.03, 0.06),
                "radius": round(rnd.uniform(0.45 * R, R - 0.75 * size - 0.012), 3),
                "angle_deg": round(math.degrees(phi) + 120.0 * (i + 1) + rnd.uniform(-10.0, 10.0), 1),
                "mass": _r(rnd, 0.05, 0.15, 2),
                "colour": [colours[1 + i][0], colours[1 + i][1]],
            }
        )
    az = math.radians(rnd.uniform(-30.0, 30.0))
    dist = rnd.uniform(1.0, 1.3)
    return {
        "world_rgb": rnd.choice(WORLDS),
        "studio_light": rnd.choice(LIGHTS),
        "cavity": rnd.random() < 0.5,
        "table_size": [1.4, 0.9],
        "table_rgb": rnd.choice(TABLES),
        "base_radius": round(R + 0.02, 3),
        "base_colour": list(rnd.choice(BASES)),
        "platter_radius": R,
        "platter_colour": list(rnd.choice(PLATTERS)),
        "platter_friction": _r(rnd, 0.7, 0.95, 2),
        "stripe_len": round(R * 8 / 9, 3),
        "stripe_x": round(R * 4 / 9, 3),
        "block_size": k,
        "block_loc": [round(rb * math.cos(phi), 4), round(rb * math.sin(phi), 4), round(0.055 + k / 2 + 0.0001, 4)],
        "block_colour": [colours[0][0], colours[0][1]],
        "block_mass": _r(rnd, 0.06, 0.2, 2),
        "block_friction": _r(rnd, 0.7, 0.95, 2),
        "riders": riders,
        "motor_velocity": round(rnd.choice([-1, 1]) * rnd.uniform(1.2, 2.4), 2),
        "motor_impulse": _r(rnd, 1.0, 1.5, 2),
        "camera_loc": [round(dist * math.sin(az), 3), round(-dist * math.cos(az), 3), _r(rnd, 0.6, 0.85)],
        "camera_target": [0.0, 0.0, 0.03],
        "lens": _r(rnd, 36.0, 40.0, 1),
    }
