"""ball_dominoes family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: 5-7 dominoes spaced 0.6-0.68 of their height topple in a chain (a domino falls onto the next one
well before lying flat); the ball (4-7 times a domino's mass) starts lower on a ramp no steeper than the shipped
18 degrees and the first domino stands at or right of the shipped x, so the impact comes after the 0.7 s up to which
the no-contact counterfactual expects the ball's path unchanged (shipped impact 0.8 s). The row ends left of
x = 0.5 m, inside the view. Ramp placement and the ball's start are computed from the angle as in the shipped scene.
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {
    "world_rgb": [0.55, 0.6, 0.66], "studio_light": "Default", "cavity": False, "table_rgb": [0.45, 0.28, 0.14],
    "ramp_deg": 18, "ramp_center": [-0.62, 0.0953], "ramp_rgb": [0.1, 0.45, 0.15], "ramp_colour": "green",
    "ball_r": 0.035, "ball_start": [-0.86, 0.2358], "ball_rgb": [0.7, 0.7, 0.75], "ball_metal": 0.8, "ball_colour": "grey",
    "ball_kind": "steel", "ball_mass": 0.25,
    "dominoes": [["yellow", [0.9, 0.8, 0.1]], ["orange", [0.9, 0.4, 0.05]], ["red", [0.8, 0.1, 0.1]], ["purple", [0.6, 0.1, 0.5]],
                 ["blue", [0.15, 0.25, 0.8]], ["teal", [0.05, 0.55, 0.6]]],
    "domino_size": [0.02, 0.08, 0.16], "domino_x0": -0.15, "domino_spacing": 0.11, "domino_mass": 0.05,
    "ramp_foot_x": -0.33,
    "camera_loc": [-0.25, -1.85, 0.62], "camera_target": [-0.25, 0.0, 0.1], "lens": 36,
}
BALLS = [("grey", "steel", [0.7, 0.7, 0.75], 0.8), ("gold", "brass", [0.85, 0.62, 0.2], 0.8),
         ("black", "black steel", [0.08, 0.08, 0.09], 0.6), ("copper", "copper", [0.8, 0.42, 0.25], 0.8)]

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
    deg = rnd.choice([15, 16, 17])
    a = math.radians(deg)
    cx, cz = -0.62, round(0.3 * math.sin(a) + 0.01 * math.cos(a) - 0.007, 4)
    r = _r(rnd, 0.03, 0.04)
    u, lift = -0.25, 0.01 + r + 0.012  # along the plank from its centre; above its top face
    ball = [round(cx + u * math.cos(a) + lift * math.sin(a), 4), round(cz - u * math.sin(a) + lift * math.cos(a), 4)]
    h = _r(rnd, 0.14, 0.18)
    spacing = round(h * rnd.uniform(0.6, 0.68), 3)
    x0 = _r(rnd, -0.15, -0.1, 2)
    n = rnd.choice([5, 6, 7])
    while x0 + (n - 1) * spacing > 0.5:
        n -= 1
    ramp = _colours(rnd, 1, avoid=("black", "white"))[0]
    dominoes = [[c, rgb] for c, rgb in _colours(rnd, n, avoid=(ramp[0],))]
    bc, kind, brgb, metal = rnd.choice(BALLS)
    mid_x = (-0.95 + x0 + (n - 1) * spacing) / 2
    p.update({
        "ramp_deg": deg, "ramp_center": [cx, cz], "ramp_rgb": ramp[1], "ramp_colour": ramp[0],
        "ball_r": r, "ball_start": ball, "ball_rgb": brgb, "ball_metal": metal, "ball_colour": bc, "ball_kind": kind,
        "ball_mass": _r(rnd, 0.2, 0.35, 2), "dominoes": dominoes,
        "domino_size": [_r(rnd, 0.018, 0.024), _r(rnd, 0.07, 0.09), h], "domino_x0": x0, "domino_spacing": spacing,
        "domino_mass": _r(rnd, 0.04, 0.06),
        "ramp_foot_x": round(cx + 0.3 * math.cos(a) + 0.01 * math.sin(a) + 0.005, 3),
        "camera_loc": [round(mid_x + rnd.uniform(-0.05, 0.05), 2), _r(rnd, -1.95, -1.8, 2), _r(rnd, 0.55, 0.68, 2)],
        "camera_target": [round(mid_x, 2), 0.0, _r(rnd, 0.08, 0.12, 2)], "lens": rnd.choice([34, 35, 36]),
    })
    return p
