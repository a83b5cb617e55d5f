"""block_stack family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the offset tower's per-block shift is 0.40-0.46 of the block size, above the 1/n a
tower of n blocks needs to tip over its bottom block's edge (n = 3..5 -> at most 0.33), so every member
topples; the straight tower is exactly aligned, so it always stands. Sizes and positions keep both towers
and the scattered blocks inside the camera's view.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {
    "world_rgb": [0.55, 0.6, 0.66],
    "studio_light": "Default",
    "cavity": False,
    "table_size": [1.6, 1.0],
    "table_rgb": [0.45, 0.28, 0.14],
    "table_friction": 0.6,
    "substeps": 40,
    "iterations": 40,
    "block_size": 0.08,
    "block_mass": 0.2,
    "block_friction": 0.6,
    "block_rough": 0.5,
    "colours": [["red", [0.85, 0.1, 0.1]], ["green", [0.1, 0.55, 0.15]], ["blue", [0.1, 0.25, 0.85]], ["yellow", [0.95, 0.75, 0.05]]],
    "stable_x": -0.25,
    "leaning_x": 0.2,
    "offsets": [0.0, 0.035, 0.07, 0.105],
    "camera_loc": [0.0, -1.5, 0.55],
    "camera_target": [0.05, 0.0, 0.15],
    "lens": 38,
}

PALETTE = [
    ("red", [0.85, 0.1, 0.1]),
    ("green", [0.1, 0.55, 0.15]),
    ("blue", [0.1, 0.25, 0.85]),
    ("yellow", [0.95, 0.75, 0.05]),
    ("orange", [0.95, 0.42, 0.05]),
    ("purple", [0.45, 0.12, 0.65]),
    ("cyan", [0.05, 0.7, 0.8]),
    ("white", [0.92, 0.92, 0.9]),
    ("black", [0.04, 0.04, 0.05]),
    ("pink", [0.95, 0.45, 0.65]),
]
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
    n = 3 + seed % 3  # 3, 4 or 5 blocks, cycling with the seed so a few seeds cover all tower heights
    s = _r(rnd, 0.065, 0.09)
    step = round(s * rnd.uniform(0.40, 0.46), 4)
    height = n * s
    colours = [[name, rgb] for name, rgb in rnd.sample(PALETTE, n)]
    return {
        "world_rgb": rnd.choice(WORLDS),
        "studio_light": rnd.choice(LIGHTS),
        "cavity": rnd.random() < 0.5,
        "table_size": [1.6, 1.0],
        "table_rgb": rnd.choice(TABLES),
        "table_friction": _r(rnd, 0.5, 0.7, 2),
        "substeps": 40,
        "iterations": 40,
        "block_size": s,
        "block_mass": _r(rnd, 0.1, 0.4, 2),
        "block_friction": _r(rnd, 0.5, 0.75, 2),
        "block_rough": _r(rnd, 0.3, 0.8, 2),
        "colours": colours,
        "stable_x": _r(rnd, -0.3, -0.2),
        "leaning_x": _r(rnd, 0.1, 0.18),
        "offsets": [round(i * step, 4) for i in range(n)],
        "camera_loc": [_r(rnd, -0.12, 0.12), _r(rnd, -1.65, -1.4), _r(rnd, 0.45, 0.7)],
        "camera_target": [_r(rnd, 0.0, 0.08), 0.0, round(0.47 * height, 3)],
        "lens": _r(rnd, 34.0, 40.0, 1),
    }
