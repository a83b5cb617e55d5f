"""liquid_duck family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the jug and its spout follow the duck (the stream lands within 1 cm of the shipped spot on the
duck's back, 0.3-0.33 m above it), the duck (0.9-1.1 times the shipped size) rests on the basin floor and the basin
moves with it, so every seed hits the duck and runs off into the basin; without the duck collision the stream falls
through it and pools inside its bounds. Members keep 10 sub-steps (re-runs agree on screen) and use fewer, larger
drops (1.0-1.1 cm, the same volume): the trajectories stay under about 0.8 MB and the bake stays cheap. The liquid
stays viscous (1.6-2.6) so the run-off settles in the basin and re-runs agree on screen.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {
    "basin_colour": "white", "basin_rgb": [0.9, 0.92, 0.95], "basin_size": [0.56, 0.42, 0.06], "beak_rgb": [0.95, 0.35, 0.02],
    "camera_loc": [0.0, -1.05, 0.45], "camera_target": [0.0, 0.0, 0.2], "cavity": False, "count": 700, "drop_size": 0.0088,
    "duck_colour": "yellow", "duck_rgb": [0.95, 0.8, 0.05], "duck_scale": 1.0, "duck_xy": [0.0, 0.0], "jug_colour": "blue",
    "jug_loc": [-0.06, 0.0, 0.45], "jug_rgb": [0.1, 0.2, 0.7], "jug_tilt_deg": 30, "lens": 36, "pour_frames": [10, 140], "speed": 0.5,
    "spout_loc": [-0.015, 0.0, 0.38], "spout_r": 0.012, "studio_light": "Default", "subframes": 10, "table_rgb": [0.45, 0.28, 0.14],
    "viscosity": 2.0, "water_colour": "light blue", "water_rgb": [0.55, 0.8, 1.0], "world_rgb": [0.55, 0.6, 0.66],
}
DUCKS = [("yellow", [0.95, 0.8, 0.05]), ("pink", [0.95, 0.5, 0.65]), ("white", [0.92, 0.92, 0.9]), ("light green", [0.45, 0.85, 0.35]), ("red", [0.8, 0.08, 0.06])]
BASINS = [("white", [0.9, 0.92, 0.95]), ("light grey", [0.7, 0.72, 0.74]), ("pale blue", [0.7, 0.8, 0.92])]
JUGS = [("blue", [0.1, 0.2, 0.7]), ("red", [0.7, 0.08, 0.06]), ("green", [0.08, 0.45, 0.15]), ("purple", [0.4, 0.12, 0.6])]
WATERS = [("light blue", [0.55, 0.8, 1.0]), ("turquoise", [0.3, 0.8, 0.8]), ("pale blue", [0.7, 0.85, 1.0])]
WORLDS = [[0.55, 0.6, 0.66], [0.7, 0.68, 0.62], [0.4, 0.45, 0.55], [0.62, 0.66, 0.6], [0.5, 0.5, 0.52], [0.66, 0.6, 0.58]]
TABLES = [[0.45, 0.28, 0.14], [0.6, 0.42, 0.25], [0.3, 0.18, 0.1], [0.52, 0.36, 0.2], [0.38, 0.3, 0.24]]
LIGHTS = ["Default", "basic.sl", "outdoor.sl", "studio.sl", "rim.sl"]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    p = copy.deepcopy(SHIPPED)
    if seed == 0:
        return p
    rnd = random.Random(seed)
    p.update({"world_rgb": rnd.choice(WORLDS[1:]), "studio_light": rnd.choice(LIGHTS[1:]), "cavity": rnd.random() < 0.5, "table_rgb": rnd.choice(TABLES[1:])})
    (dc, drgb), (bc, brgb), (jc, jrgb), (wc, wrgb) = rnd.choice(DUCKS), rnd.choice(BASINS), rnd.choice(JUGS), rnd.choice(WATERS)
    dx, dy, k = _r(rnd, -0.04, 0.04), _r(rnd, -0.02, 0.02), _r(rnd, 0.9, 1.1, 2)
    sx = round(dx - 0.015 * k + _r(rnd, -0.01, 0.01), 3)
    sz = round(0.007 + 0.105 * k + _r(rnd, 0.27, 0.3), 3)  # the spout 0.27-0.30 m above the duck's back
    size = _r(rnd, 0.010, 0.011, 4)
    start = rnd.randint(8, 14)
    p.update({
        "duck_colour": dc, "duck_rgb": drgb, "basin_colour": bc, "basin_rgb": brgb, "jug_colour": jc, "jug_rgb": jrgb, "water_colour": wc, "water_rgb": wrgb,
        "duck_xy": [dx, dy], "duck_scale": k, "basin_size": [_r(rnd, 0.52, 0.6, 2), _r(rnd, 0.4, 0.44, 2), 0.06],
        "spout_loc": [sx, dy, sz], "jug_loc": [round(sx - 0.045, 3), dy, round(sz + 0.07, 3)], "jug_tilt_deg": rnd.randint(26, 34),
        "drop_size": size, "count": int(round(700 * (0.0088 / size) ** 3)), "pour_frames": [start, start + rnd.randint(105, 125)],
        "speed": _r(rnd, 0.4, 0.6, 2), "viscosity": _r(rnd, 1.6, 2.6, 2),
        "camera_loc": [_r(rnd, -0.08, 0.08), _r(rnd, -1.1, -1.0), _r(rnd, 0.42, 0.5)], "camera_target": [round(dx, 3), 0.0, _r(rnd, 0.18, 0.22)],
        "lens": rnd.choice([34, 35, 36, 37]),
    })
    return p
