"""bead_pile family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the funnel's mouth stays at least 2.1 bead radii wide (the shipped ratio is 2.08 and
pours), so beads do not jam; the beads start in rings inside the funnel's upper opening, just above it;
the funnel stays at least 12 cm inside the tray walls so the heap lands in the tray, and the tray floor
(1 cm) keeps the no-tray counterfactual's height difference. At most the shipped 90 beads, so no variant
bakes slower or stores more trajectories than the shipped task.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {
    "world_rgb": [0.55, 0.6, 0.66],
    "studio_light": "Default",
    "cavity": False,
    "table_size": [1.4, 0.9],
    "table_rgb": [0.45, 0.28, 0.14],
    "tray_size": [0.4, 0.3],
    "tray_colour": ["White", [0.92, 0.92, 0.9], 0.4],
    "tray_friction": 0.7,
    "funnel_loc": [0.0, 0.0, 0.42],
    "funnel_radii": [0.025, 0.11],
    "funnel_depth": 0.12,
    "funnel_colour": ["Green", [0.1, 0.6, 0.25], 0.4],
    "layers": 10,
    "per_layer": 9,
    "ring_radius": 0.055,
    "layer_z0": 0.5,
    "layer_dz": 0.03,
    "bead_radius": 0.012,
    "bead_mass": 0.005,
    "bead_friction": 0.9,
    "bead_bounce": 0.05,
    "bead_colours": [["Red", [0.85, 0.08, 0.05]], ["Blue", [0.08, 0.2, 0.85]], ["Yellow", [0.95, 0.8, 0.05]]],
    "bead_rough": 0.3,
    "layout_seed": 11,
    "camera_loc": [0.0, -1.25, 0.55],
    "camera_target": [0.0, 0.0, 0.24],
    "lens": 36,
}

BEAD_COLOURS = [
    ("Red", [0.85, 0.08, 0.05]),
    ("Blue", [0.08, 0.2, 0.85]),
    ("Yellow", [0.95, 0.8, 0.05]),
    ("Green", [0.1, 0.6, 0.2]),
    ("Purple", [0.45, 0.12, 0.65]),
    ("Orange", [0.95, 0.42, 0.05]),
    ("White", [0.92, 0.92, 0.9]),
    ("Black", [0.04, 0.04, 0.05]),
    ("Pink", [0.95, 0.45, 0.65]),
]
TRAYS = [("White", [0.92, 0.92, 0.9], 0.4), ("Grey", [0.5, 0.52, 0.55], 0.5), ("Blue", [0.25, 0.4, 0.7], 0.5), ("Cream", [0.9, 0.85, 0.7], 0.6)]
FUNNELS = [("Green", [0.1, 0.6, 0.25], 0.4), ("Orange", [0.95, 0.42, 0.05], 0.4), ("Red", [0.8, 0.1, 0.1], 0.4), ("Black", [0.05, 0.05, 0.06], 0.3)]
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
    tx, ty = _r(rnd, 0.38, 0.46, 2), _r(rnd, 0.28, 0.34, 2)
    r = _r(rnd, 0.010, 0.0125, 4)
    mouth = _r(rnd, max(0.025, 2.1 * r), 0.031, 4)
    top = _r(rnd, 0.1, 0.12)
    depth = _r(rnd, 0.1, 0.13)
    fz = _r(rnd, 0.38, 0.46)
    fx = _r(rnd, -(tx / 2 - 0.14), tx / 2 - 0.14)
    fy = _r(rnd, -0.03, 0.03)
    n_colours = rnd.choice([2, 3, 3, 4])
    tray = list(rnd.choice(TRAYS))
    beads = [[n, c] for n, c in rnd.sample([bc for bc in BEAD_COLOURS if bc[0] != tray[0]], n_colours)]  # beads never tray-coloured
    return {
        "world_rgb": rnd.choice(WORLDS),
        "studio_light": rnd.choice(LIGHTS),
        "cavity": rnd.random() < 0.5,
        "table_size": [1.4, 0.9],
        "table_rgb": rnd.choice(TABLES),
        "tray_size": [tx, ty],
        "tray_colour": tray,
        "tray_friction": _r(rnd, 0.5, 0.8, 2),
        "funnel_loc": [fx, fy, fz],
        "funnel_radii": [mouth, top],
        "funnel_depth": depth,
        "funnel_colour": list(rnd.choice(FUNNELS)),
        "layers": rnd.randint(6, 10),
        "per_layer": rnd.choice([8, 9]),
        "ring_radius": _r(rnd, 0.045, min(0.06, top - 0.045)),
        "layer_z0": round(fz + depth / 2 + 0.02, 3),
        "layer_dz": round(2.5 * r, 4),
        "bead_radius": r,
        "bead_mass": _r(rnd, 0.003, 0.008, 4),
        "bead_friction": _r(rnd, 0.6, 0.9, 2),
        "bead_bounce": _r(rnd, 0.02, 0.15, 2),
        "bead_colours": beads,
        "bead_rough": _r(rnd, 0.2, 0.6, 2),
        "layout_seed": rnd.randint(1, 10_000),
        "camera_loc": [_r(rnd, -0.1, 0.1), _r(rnd, -1.35, -1.15), _r(rnd, 0.45, 0.65)],
        # a wider lens than the shipped 36 mm and a higher aim keep the beads' starting rings in frame
        "camera_target": [round(fx / 2, 3), 0.0, round(0.7 * fz, 3)],
        "lens": _r(rnd, 30.0, 33.0, 1),
    }
