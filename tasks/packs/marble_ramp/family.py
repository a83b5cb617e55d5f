"""marble_ramp family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: a 13-18 degree track of 0.8-0.95 m gives the marble enough speed to roll across the table to a
book 0.4-0.6 m right of the track foot (the shipped marble arrives at 1.4 s and rests from 1.7 s); without the track
the marble drops at most 0.3 m and stops (the counterfactual's 0.5 m bound). Marble radius stays below the rails'
half gap (0.029 m). Event thresholds (track foot, book reach) are derived from the geometry.
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {
    "world_rgb": [0.55, 0.6, 0.66], "studio_light": "Default", "cavity": False, "table_rgb": [0.45, 0.28, 0.14],
    "ramp_deg": 15, "track_len": 0.9, "track_rgb": [0.9, 0.35, 0.05], "track_colour": "orange",
    "marble_r": 0.02, "marble_rgb": [0.1, 0.3, 0.9], "marble_colour": "blue", "marble_rough": 0.05,
    "marble_mass": 0.02, "marble_friction": 0.4, "marble_bounce": 0.1,
    "book_x": 0.55, "book_rgb": [0.7, 0.06, 0.08], "book_colour": "red",
    "camera_loc": [0.0, -1.9, 0.6], "camera_target": [-0.1, 0.0, 0.12], "lens": 34,
    "foot_x": -0.02, "book_reach_x": 0.48,
}

PALETTE = [
    ("red", [0.8, 0.06, 0.06]), ("orange", [0.92, 0.4, 0.05]), ("yellow", [0.92, 0.78, 0.08]),
    ("green", [0.1, 0.55, 0.15]), ("teal", [0.05, 0.55, 0.6]), ("blue", [0.1, 0.25, 0.85]),
    ("purple", [0.45, 0.12, 0.65]), ("pink", [0.95, 0.45, 0.65]), ("white", [0.9, 0.9, 0.88]),
    ("black", [0.04, 0.04, 0.05]),
]
WORLDS = [[0.55, 0.6, 0.66], [0.7, 0.68, 0.62], [0.4, 0.45, 0.55], [0.62, 0.66, 0.6], [0.5, 0.5, 0.52], [0.66, 0.6, 0.58]]
TABLES = [[0.45, 0.28, 0.14], [0.6, 0.42, 0.25], [0.3, 0.18, 0.1], [0.52, 0.36, 0.2], [0.38, 0.3, 0.24]]
LIGHTS = ["Default", "basic.sl", "outdoor.sl", "studio.sl", "rim.sl"]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def _colours(rnd: random.Random, k: int, avoid: tuple[str, ...] = ()) -> list[tuple[str, list[float]]]:
    """k distinct palette colours (none of `avoid`, e.g. the table's brown look-alikes)."""
    return rnd.sample([c for c in PALETTE if c[0] not in avoid], k)


def _look(rnd: random.Random) -> dict:
    """Workbench look of a variant: world colour, studio light, cavity shading, table wood."""
    return {"world_rgb": rnd.choice(WORLDS[1:]), "studio_light": rnd.choice(LIGHTS[1:]), "cavity": rnd.random() < 0.5,
            "table_rgb": rnd.choice(TABLES[1:])}


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    p = copy.deepcopy(SHIPPED)
    p.update(_look(rnd))
    (mc, mrgb), (tc, trgb), (bc, brgb) = _colours(rnd, 3)
    ang = rnd.choice([13, 14, 16, 17, 18])
    length = _r(rnd, 0.8, 0.95, 2)
    p.update({
        "ramp_deg": ang, "track_len": length, "track_rgb": trgb, "track_colour": tc,
        "marble_r": _r(rnd, 0.016, 0.025), "marble_rgb": mrgb, "marble_colour": mc, "marble_rough": _r(rnd, 0.05, 0.4, 2),
        "marble_mass": _r(rnd, 0.015, 0.04), "marble_friction": _r(rnd, 0.3, 0.5, 2), "marble_bounce": _r(rnd, 0.05, 0.2, 2),
        "book_x": _r(rnd, 0.42, 0.6, 2), "book_rgb": brgb, "book_colour": bc,
        "camera_loc": [_r(rnd, -0.1, 0.1, 2), _r(rnd, -2.0, -1.85, 2), _r(rnd, 0.5, 0.7, 2)],
        "camera_target": [_r(rnd, -0.15, -0.05, 2), 0.0, _r(rnd, 0.1, 0.15, 2)], "lens": rnd.choice([32, 33, 35, 36]),
    })
    a = math.radians(ang)
    p["foot_x"] = round(-length / 2 + math.cos(a) * length / 2 - 0.005, 3)
    p["book_reach_x"] = round(p["book_x"] - 0.07, 3)
    return p
