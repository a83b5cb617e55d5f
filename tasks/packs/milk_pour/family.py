"""milk_pour family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the carton, its spout and the glass move together (a shift of at most 5 cm along x), so the stream
always falls into the glass; the spout stays 0.18-0.22 m above the rim. The liquid volume (count x drop size cubed)
is 1.2 times the shipped ratio to the glass volume (larger drops pack denser: measured 0.56 of the glass height at the
shipped ratio for seed 1), so the glass fills to about two thirds whatever its size. Members use
fewer, larger drops (1.0-1.15 cm instead of 0.7 cm): the same volume with a third of the particles bakes faster and
keeps the trajectories under about 0.8 MB. Without the glass collision the particles fall through it and pool on the
table (the counterfactual's fraction inside the glass stays far below 0.3).
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {
    "world_rgb": [0.55, 0.6, 0.66], "studio_light": "Default", "cavity": False, "table_rgb": [0.45, 0.28, 0.14],
    "glass_r_bottom": 0.06, "glass_r_top": 0.07, "glass_h": 0.16, "glass_rgb": [0.55, 0.75, 0.9], "glass_xy": [0.0, 0.0],
    "carton_loc": [-0.09, 0.0, 0.42], "carton_tilt_deg": 35, "carton_rgb": [0.92, 0.92, 0.95], "cap_rgb": [0.1, 0.25, 0.8],
    "spout_loc": [-0.01, 0.0, 0.36], "spout_r": 0.014,
    "count": 1400, "pour_frames": [10, 130], "speed": 0.6, "drop_size": 0.007, "viscosity": 0.5,
    "liquid_rgb": [0.95, 0.95, 0.92], "liquid_colour": "white",
    "camera_loc": [0.0, -1.0, 0.42], "camera_target": [-0.03, 0.0, 0.2], "lens": 36,
}
MILKS = [("white", [0.95, 0.95, 0.92]), ("cream", [0.95, 0.87, 0.68]), ("chocolate", [0.42, 0.24, 0.12]), ("strawberry pink", [0.95, 0.62, 0.7])]
WORLDS = [[0.55, 0.6, 0.66], [0.7, 0.68, 0.62], [0.4, 0.45, 0.55], [0.62, 0.66, 0.6], [0.5, 0.5, 0.52], [0.66, 0.6, 0.58]]
TABLES = [[0.45, 0.28, 0.14], [0.6, 0.42, 0.25], [0.3, 0.18, 0.1], [0.52, 0.36, 0.2], [0.38, 0.3, 0.24]]
LIGHTS = ["Default", "basic.sl", "outdoor.sl", "studio.sl", "rim.sl"]
# liquid volume / glass volume of the shipped task (1400 drops of 0.7 cm in a 0.06-0.07 m x 0.16 m glass)
FILL = SHIPPED["count"] * SHIPPED["drop_size"] ** 3 / (math.pi * ((0.06 + 0.07) / 2) ** 2 * 0.16)


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def look(rnd: random.Random) -> dict:
    """Workbench look of a variant: world colour, studio light, cavity shading, table wood."""
    return {"world_rgb": rnd.choice(WORLDS[1:]), "studio_light": rnd.choice(LIGHTS[1:]), "cavity": rnd.random() < 0.5, "table_rgb": rnd.choice(TABLES[1:])}


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    p = copy.deepcopy(SHIPPED)
    if seed == 0:
        return p
    rnd = random.Random(seed)
    p.update(look(rnd))
    dx = _r(rnd, -0.05, 0.05)
    r_top = _r(rnd, 0.062, 0.075)
    h = _r(rnd, 0.14, 0.17)
    above = _r(rnd, 0.18, 0.22)
    size = _r(rnd, 0.010, 0.0115, 4)
    colour, rgb = rnd.choice(MILKS)
    vol = math.pi * (r_top - 0.005) ** 2 * h
    start = rnd.randint(8, 14)
    p.update({
        "glass_r_bottom": round(r_top - 0.01, 3), "glass_r_top": r_top, "glass_h": h, "glass_xy": [dx, 0.0],
        "carton_loc": [round(dx - 0.09, 3), 0.0, round(h + above + 0.06, 3)], "carton_tilt_deg": rnd.randint(30, 40),
        "spout_loc": [round(dx - 0.01, 3), 0.0, round(h + above, 3)],
        "count": int(round(1.2 * FILL * vol / size**3)), "pour_frames": [start, start + rnd.randint(100, 120)], "speed": _r(rnd, 0.5, 0.7, 2),
        "drop_size": size, "viscosity": _r(rnd, 0.4, 1.0, 2), "liquid_rgb": rgb, "liquid_colour": colour,
        "camera_loc": [_r(rnd, -0.06, 0.06), _r(rnd, -1.05, -0.95), _r(rnd, 0.38, 0.46)],
        "camera_target": [round(dx - 0.03, 3), 0.0, _r(rnd, 0.18, 0.22)], "lens": rnd.choice([34, 35, 36, 37]),
    })
    return p
