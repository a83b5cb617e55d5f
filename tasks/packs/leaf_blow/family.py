"""leaf_blow family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the wind (strength 2.8-3.2 with air-drag flow 0.14-0.16, reach 0.3 m around a horizontal axis 0.8 m
up, blowing along +x: a yawed axis would leave a leaf at the table's side out of reach) pushes light bodies of a few grams (leaves 2.5-3.5 g, paper ball 5-7 g, cups 7-9 g) over the
table top and off its right edge for every seed, while the cardboard box (40-50 g, on a high-friction contact) stays put.
Below the table top the wind has no reach, so what falls comes to rest on the grass. Cups start upright on the left half
(they tip and roll), the ball in the middle, leaves spread over the table, the box at the back right out of their way.
Look: sun height and direction, sky, lawn, hedge, table, cup, leaf and box colours and the hand-held camera vary.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {'ball_mass': 0.006,
 'ball_r': 0.035,
 'ball_start': [-0.05, -0.12],
 'box_mass': 0.045,
 'box_rgb': [0.55, 0.38, 0.22],
 'box_size': [0.12, 0.08, 0.06],
 'box_start': [0.22, 0.2, 20.0],
 'camera_loc': [0.55, -2.1, 1.05],
 'camera_roll': -1.2,
 'camera_target': [0.55, 0.1, 0.48],
 'cup_colours': ['white', 'red'],
 'cup_h': 0.09,
 'cup_mass': 0.008,
 'cup_r': [0.026, 0.038],
 'cup_rgbs': [[0.9, 0.9, 0.87], [0.75, 0.1, 0.08]],
 'cup_starts': [[-0.38, 0.12], [-0.2, -0.05]],
 'friction': 0.8,
 'ground_friction': 0.9,
 'hedge_rgb': [0.1, 0.22, 0.06],
 'lawn_rgb': [0.17, 0.3, 0.08],
 'leaf_mass': 0.003,
 'leaf_rgbs': [[0.75, 0.35, 0.05], [0.6, 0.45, 0.1], [0.5, 0.2, 0.05]],
 'leaf_size': [0.09, 0.055],
 'leaf_starts': [[0.05, 0.12, 30.0], [0.3, -0.1, -40.0], [-0.45, -0.2, 75.0]],
 'lens': 26,
 'n_cups': 2,
 'n_leaves': 3,
 'samples': 2,
 'sky_strength': 0.15,
 'sun_azim': -30.0,
 'sun_elev': 42.0,
 'sun_energy': 2.4,
 'table_h': 0.74,
 'table_rgb': [0.42, 0.27, 0.14],
 'table_size': [1.4, 0.8],
 'wind_flow': 0.15,
 'wind_height': 0.8,
 'wind_radius': 0.3,
 'wind_strength': 3.0,
 'wind_yaw_deg': 0.0}

CUPS = [("white", [0.9, 0.9, 0.87]), ("red", [0.75, 0.1, 0.08]), ("blue", [0.12, 0.3, 0.7]), ("yellow", [0.9, 0.75, 0.15]), ("green", [0.2, 0.55, 0.25])]
LEAVES = [[0.75, 0.35, 0.05], [0.6, 0.45, 0.1], [0.5, 0.2, 0.05], [0.7, 0.55, 0.12], [0.45, 0.3, 0.08]]
LAWNS = [[0.17, 0.3, 0.08], [0.2, 0.33, 0.1], [0.13, 0.26, 0.06], [0.24, 0.3, 0.12]]
HEDGES = [[0.1, 0.22, 0.06], [0.08, 0.18, 0.05], [0.14, 0.25, 0.08]]
TABLES = [[0.42, 0.27, 0.14], [0.55, 0.4, 0.24], [0.35, 0.22, 0.12], [0.5, 0.45, 0.38]]
BOXES = [[0.55, 0.38, 0.22], [0.6, 0.45, 0.3], [0.5, 0.33, 0.2]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    p = copy.deepcopy(SHIPPED)
    if seed == 0:
        return p
    rnd = random.Random(seed)
    cups = rnd.sample(CUPS, 2)
    n_leaves = rnd.choice([2, 3])
    leaf_slots = [[_r(rnd, 0.0, 0.1, 2), _r(rnd, 0.08, 0.16, 2)], [_r(rnd, 0.25, 0.35, 2), _r(rnd, -0.14, -0.06, 2)],
                  [_r(rnd, -0.5, -0.42, 2), _r(rnd, -0.24, -0.16, 2)]]
    p.update({
        "sun_elev": _r(rnd, 30.0, 60.0, 1), "sun_azim": _r(rnd, -50.0, 20.0, 1), "sky_strength": _r(rnd, 0.12, 0.2, 2),
        "sun_energy": _r(rnd, 2.0, 2.8, 2), "lawn_rgb": rnd.choice(LAWNS), "hedge_rgb": rnd.choice(HEDGES), "table_rgb": rnd.choice(TABLES),
        "table_h": _r(rnd, 0.72, 0.76, 2),
        "cup_colours": [cups[0][0], cups[1][0]], "cup_rgbs": [cups[0][1], cups[1][1]], "cup_mass": _r(rnd, 0.007, 0.009, 4),
        "cup_h": _r(rnd, 0.085, 0.095, 3), "cup_starts": [[_r(rnd, -0.42, -0.34, 2), _r(rnd, 0.08, 0.16, 2)], [_r(rnd, -0.24, -0.16, 2), _r(rnd, -0.09, -0.01, 2)]],
        "ball_mass": _r(rnd, 0.005, 0.007, 4), "ball_r": _r(rnd, 0.032, 0.038, 3), "ball_start": [_r(rnd, -0.08, -0.02, 2), _r(rnd, -0.15, -0.09, 2)],
        "box_mass": _r(rnd, 0.04, 0.05, 3), "box_rgb": rnd.choice(BOXES), "box_start": [_r(rnd, 0.2, 0.26, 2), _r(rnd, 0.18, 0.22, 2), _r(rnd, 0.0, 30.0, 1)],
        "n_leaves": n_leaves, "leaf_mass": _r(rnd, 0.0025, 0.0035, 4), "leaf_rgbs": rnd.sample(LEAVES, 3),
        "leaf_starts": [[x, y, _r(rnd, -80.0, 80.0, 1)] for x, y in leaf_slots],
        "wind_strength": _r(rnd, 2.8, 3.2, 2), "wind_flow": _r(rnd, 0.14, 0.16, 3), "wind_yaw_deg": 0.0,
        "camera_loc": [_r(rnd, 0.45, 0.65, 2), _r(rnd, -2.2, -2.0, 2), _r(rnd, 1.0, 1.1, 2)], "camera_target": [0.55, 0.1, 0.48],
        "lens": round(rnd.uniform(25.0, 27.0), 1), "camera_roll": _r(rnd, -2.0, 2.0, 1),
    })
    return p
