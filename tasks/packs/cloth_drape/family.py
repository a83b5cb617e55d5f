"""cloth_drape family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: generated members simulate an 18-22 vertex-interval grid without subdivision
(at most 23 x 23 = 529 sampled vertices instead of the shipped 73 x 73), so the vertex trajectories stay
under ~1.5 MB and the bake is several times faster. The cloth is always large enough that its corners,
hanging past the obstacle, reach the table (the "drapes" event); the obstacle's top (0.18-0.26 m) is far
enough below the release height (0.36-0.46 m) that removing it moves the cloth clearly further down (the
counterfactual's ratio > 1.1).
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
    "obstacle": "teapot",
    "obstacle_name": "Teapot",
    "obstacle_dims": [0.12, 0.096],
    "obstacle_top": 0.222,
    "obstacle_rot_deg": 0.0,
    "obstacle_material": ["WhitePorcelainTeapot", [0.9, 0.9, 0.88], 0.2],
    "grid": 36,
    "subsurf": 1,
    "smooth": False,
    "cloth_size": 0.55,
    "cloth_loc": [0.02, 0.01, 0.42],
    "cloth_rot_deg": 20,
    "cloth_colour": ["Red", [0.75, 0.08, 0.1], 0.8],
    "quality": 6,
    "mass": 0.15,
    "stiffness": 15.0,
    "bending": 0.05,
    "camera_loc": [0.0, -1.3, 0.7],
    "camera_target": [0.0, 0.0, 0.17],
    "lens": 38,
}

CLOTHS = [
    ("Red", [0.75, 0.08, 0.1], 0.8),
    ("Blue", [0.1, 0.2, 0.7], 0.8),
    ("Green", [0.1, 0.5, 0.2], 0.85),
    ("Yellow", [0.9, 0.75, 0.1], 0.8),
    ("Purple", [0.45, 0.12, 0.6], 0.8),
    ("Orange", [0.9, 0.4, 0.05], 0.8),
]
OBSTACLE_COLOURS = [("White", [0.9, 0.9, 0.88], 0.2), ("Grey", [0.5, 0.52, 0.55], 0.4), ("Black", [0.05, 0.05, 0.06], 0.3), ("Cream", [0.9, 0.85, 0.7], 0.3)]
NAMES = {"teapot": "Teapot", "ball": "Ball", "box": "Box", "drum": "Drum"}
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
    kind = ["ball", "box", "drum", "teapot"][(seed - 1) % 4]  # every obstacle shape among seeds 1..4
    rot = _r(rnd, 0.0, 90.0, 1)
    if kind == "teapot":
        dims, top, reach = [0.12, 0.096], 0.222, 0.13
    elif kind == "ball":
        r = _r(rnd, 0.09, 0.125)
        dims, top, reach = [r], round(2 * r, 3), r
    elif kind == "box":
        w, dp, h = _r(rnd, 0.15, 0.22), _r(rnd, 0.15, 0.22), _r(rnd, 0.18, 0.24)
        dims, top, reach = [w, dp, h], h, 0.5 * math.hypot(w, dp)
    else:
        r, h = _r(rnd, 0.08, 0.11), _r(rnd, 0.18, 0.25)
        dims, top, reach = [r, h], h, r
    # a corner lies size/sqrt(2) from the centre; past the obstacle's edge (reach) and down its height (top)
    # it must still reach the table, with 5 cm to spare
    size = round(min(0.72, max(rnd.uniform(0.5, 0.62), (top + reach + 0.05) * math.sqrt(2))), 3)
    cname, crgb, crough = rnd.choice(CLOTHS)
    oname, orgb, orough = rnd.choice(OBSTACLE_COLOURS)
    noun = NAMES[kind]
    az = math.radians(rnd.uniform(-25.0, 25.0))
    dist = rnd.uniform(1.25, 1.45)
    return {
        "world_rgb": rnd.choice(WORLDS),
        "studio_light": rnd.choice(LIGHTS),
        "cavity": rnd.random() < 0.5,
        "table_size": [1.4, 0.9],
        "table_rgb": rnd.choice(TABLES),
        "obstacle": kind,
        "obstacle_name": noun,
        "obstacle_dims": dims,
        "obstacle_top": top,
        "obstacle_rot_deg": rot,
        "obstacle_material": [f"{oname}{'Porcelain' if kind == 'teapot' else ''}{noun}", orgb, orough],
        "grid": rnd.choice([18, 20, 22]),
        "subsurf": 0,
        "smooth": True,
        "cloth_size": size,
        "cloth_loc": [_r(rnd, -0.03, 0.03), _r(rnd, -0.03, 0.03), _r(rnd, max(0.36, top + 0.14), 0.46)],
        "cloth_rot_deg": _r(rnd, 0.0, 45.0, 1),
        "cloth_colour": [cname, crgb, crough],
        "quality": 5,
        "mass": _r(rnd, 0.1, 0.3, 2),
        "stiffness": _r(rnd, 8.0, 25.0, 1),
        "bending": _r(rnd, 0.02, 0.3, 3),
        "camera_loc": [round(dist * math.sin(az), 3), round(-dist * math.cos(az), 3), _r(rnd, 0.6, 0.8)],
        "camera_target": [0.0, 0.0, round(0.75 * top, 3)],
        "lens": _r(rnd, 34.0, 38.0, 1),
    }
