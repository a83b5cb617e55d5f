"""ball_bounce family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: drop heights 0.45-0.6 m and restitutions (ball x table) 0.6-0.75 give several shrinking bounces
and rest well before 8 s (the shipped ball rests from 1.9 s); the top of the ball stays inside the view for the
camera heights and lenses drawn; the ball drops straight down at y = 0, clear of the mug (at y >= 0.1 m, x >= 0.25 m),
so the mug stays a static prop. Without the table the ball falls past z = -0.5 m within 3 s for every height.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {
    "world_rgb": [0.55, 0.6, 0.66], "studio_light": "Default", "cavity": False, "table_rgb": [0.45, 0.28, 0.14],
    "table_bounce": 0.85, "table_friction": 0.6,
    "ball_r": 0.06, "ball_start": [-0.15, 0.0, 0.62], "ball_rgb": [0.8, 0.05, 0.04], "ball_colour": "red", "ball_rough": 0.4,
    "ball_mass": 0.06, "ball_friction": 0.7, "ball_bounce": 0.85, "ball_ang_damping": 0.6,
    "mug_r": 0.045, "mug_h": 0.11, "mug_xy": [0.35, 0.15], "mug_rgb": [0.05, 0.2, 0.7], "mug_colour": "blue",
    "camera_loc": [0.0, -1.9, 0.75], "camera_target": [0.0, 0.0, 0.28], "lens": 38,
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
    (bc, brgb), (mc, mrgb) = _colours(rnd, 2)
    r = _r(rnd, 0.045, 0.07)
    p.update({
        "table_bounce": _r(rnd, 0.8, 0.88, 2), "table_friction": _r(rnd, 0.5, 0.7, 2),
        "ball_r": r, "ball_start": [_r(rnd, -0.25, -0.05, 2), 0.0, _r(rnd, 0.45, 0.6, 2)], "ball_rgb": brgb, "ball_colour": bc,
        "ball_rough": _r(rnd, 0.3, 0.6, 2), "ball_mass": _r(rnd, 0.04, 0.1), "ball_friction": _r(rnd, 0.5, 0.8, 2),
        "ball_bounce": _r(rnd, 0.75, 0.85, 2), "ball_ang_damping": _r(rnd, 0.4, 0.8, 2),
        "mug_r": _r(rnd, 0.035, 0.055), "mug_h": _r(rnd, 0.08, 0.13), "mug_xy": [_r(rnd, 0.25, 0.45, 2), _r(rnd, 0.1, 0.25, 2)],
        "mug_rgb": mrgb, "mug_colour": mc,
        "camera_loc": [_r(rnd, -0.1, 0.1, 2), _r(rnd, -2.0, -1.85, 2), _r(rnd, 0.72, 0.82, 2)],
        "camera_target": [_r(rnd, -0.05, 0.05, 2), 0.0, _r(rnd, 0.26, 0.3, 2)], "lens": rnd.choice([34, 35, 36, 37]),
    })
    return p
