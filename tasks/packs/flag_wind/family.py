"""flag_wind family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the wind always comes from the front left (yaw 32-48 degrees, strength 300-500, noise 1-2), so the
free end is blown back (+y) and streams out diagonally for every seed; flag size, cloth mass and stiffness change how
far and how fast. Without the wind the flag only hangs (the counterfactual's displacement ratio stays near 0). Members
use a coarser cloth grid (20-24 x 14-16 vertices instead of 30 x 20): about half the vertices, so the trajectories
stay under about 1 MB and the bake is faster than the shipped task's.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {
    "air_damping": 1.0, "bending": 0.5, "camera_loc": [0.15, -1.5, 0.62], "camera_target": [0.0, 0.0, 0.45], "cavity": False,
    "cloth_mass": 0.004, "flag_colour": "blue", "flag_h": 0.3, "flag_rgb": [0.05, 0.2, 0.75], "flag_w": 0.45, "grid": [30, 20],
    "lens": 38, "pole_h": 0.75, "pole_rgb": [0.25, 0.14, 0.06], "pole_x": -0.3, "studio_light": "Default", "table_rgb": [0.45, 0.28, 0.14],
    "tension": 15.0, "wind_loc": [-0.8, -0.3, 0.6], "wind_noise": 1.5, "wind_seed": 3, "wind_strength": 400.0, "wind_yaw_deg": 40,
    "world_rgb": [0.55, 0.6, 0.66],
}
FLAGS = [("blue", [0.05, 0.2, 0.75]), ("red", [0.75, 0.06, 0.05]), ("green", [0.08, 0.5, 0.15]), ("yellow", [0.92, 0.75, 0.08]),
         ("orange", [0.92, 0.4, 0.05]), ("purple", [0.42, 0.12, 0.62]), ("white", [0.9, 0.9, 0.88])]
POLES = [[0.25, 0.14, 0.06], [0.2, 0.12, 0.07], [0.3, 0.17, 0.08]]
WORLDS = [[0.55, 0.6, 0.66], [0.7, 0.68, 0.62], [0.4, 0.45, 0.55], [0.62, 0.66, 0.6], [0.5, 0.5, 0.52], [0.66, 0.6, 0.58]]
TABLES = [[0.45, 0.28, 0.14], [0.6, 0.42, 0.25], [0.52, 0.36, 0.2], [0.38, 0.3, 0.24]]
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
    colour, rgb = rnd.choice(FLAGS[1:])
    ph = _r(rnd, 0.7, 0.8, 2)
    p.update({
        "flag_colour": colour, "flag_rgb": rgb, "pole_rgb": rnd.choice(POLES), "pole_x": _r(rnd, -0.34, -0.26, 2), "pole_h": ph,
        "flag_w": _r(rnd, 0.4, 0.5, 2), "flag_h": _r(rnd, 0.26, 0.32, 2), "grid": [rnd.randint(20, 24), rnd.randint(14, 16)],
        "cloth_mass": _r(rnd, 0.003, 0.005, 4), "tension": float(rnd.randint(10, 25)), "bending": _r(rnd, 0.2, 1.0, 2), "air_damping": _r(rnd, 0.8, 1.2, 2),
        "wind_loc": [-0.8, -0.3, round(ph - 0.15, 2)], "wind_yaw_deg": rnd.randint(32, 48), "wind_strength": float(rnd.randint(300, 500)),
        "wind_noise": _r(rnd, 1.0, 2.0, 2), "wind_seed": rnd.randint(1, 50),
        "camera_loc": [_r(rnd, 0.05, 0.25, 2), _r(rnd, -1.6, -1.4, 2), _r(rnd, 0.58, 0.68, 2)], "camera_target": [0.0, 0.0, round(ph - 0.3, 2)],
        "lens": rnd.choice([36, 37, 38, 39]),
    })
    return p
