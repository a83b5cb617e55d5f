"""bottle_glass family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the bottle, its mouth and the tumbler move together (the mouth stays 5-9 cm left of the tumbler's
axis and 0.15-0.19 m above its rim, tilted 55-65 deg, leaving at 0.5-0.6 m/s), so the stream always lands inside
the rim (checked by the throw: 0.16 s of fall carries it 7-8 cm to the right). The juice volume (count x drop size
cubed) is 0.43 of the tumbler volume, the shipped ratio that fills it to about 0.6 of its height (550 drops of 8 mm
in a 13 cm tumbler: level 0.081 m); fewer, larger drops than milk_pour keep the bake and the metaball surface cheap.
Without the tumbler's collision the drops fall through it, and without gravity they fly along the neck past it.
Look: sun height and direction, sky strength, table, wall, bottle and juice colours and the hand-held camera vary.
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {'blob_radius': 1.6,
 'bottle_len': 0.2,
 'bottle_r': 0.035,
 'bottle_rgb': [0.2, 0.45, 0.25],
 'bottle_tilt_deg': -60,
 'camera_loc': [0.06, -0.68, 0.33],
 'camera_target': [-0.02, 0.0, 0.17],
 'count': 550,
 'drop_size': 0.008,
 'glass_h': 0.13,
 'glass_r_bottom': 0.05,
 'glass_r_top': 0.058,
 'glass_xy': [0.02, 0.0],
 'lens': 26,
 'liquid_name': 'orange juice',
 'liquid_rgb': [0.95, 0.45, 0.05],
 'liquid_transmission': 0.6,
 'mouth_loc': [-0.05, 0.0, 0.3],
 'mouth_r': 0.011,
 'pour_frames': [12, 90],
 'roll_deg': -2.0,
 'samples': 2,
 'sky_strength': 0.35,
 'speed': 0.55,
 'sun_azim_deg': 140.0,
 'sun_elev_deg': 35.0,
 'sun_energy': 3.0,
 'table_rgb': [0.42, 0.26, 0.14],
 'viscosity': 0.6,
 'wall_rgb': [0.78, 0.75, 0.7]}

JUICES = [("orange juice", [0.95, 0.45, 0.05], 0.6), ("apple juice", [0.9, 0.62, 0.12], 0.75), ("cherry juice", [0.55, 0.03, 0.06], 0.5),
          ("grape juice", [0.3, 0.04, 0.2], 0.45), ("lemonade", [0.95, 0.9, 0.55], 0.8)]
BOTTLES = [[0.2, 0.45, 0.25], [0.45, 0.28, 0.1], [0.3, 0.5, 0.65], [0.85, 0.88, 0.9]]
TABLES = [[0.42, 0.26, 0.14], [0.55, 0.38, 0.22], [0.3, 0.18, 0.1], [0.5, 0.45, 0.4]]
WALLS = [[0.78, 0.75, 0.7], [0.7, 0.74, 0.78], [0.82, 0.8, 0.74], [0.62, 0.66, 0.6]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    rb = _r(rnd, 0.045, 0.055)
    rt = round(rb + rnd.uniform(0.005, 0.01), 3)
    h = _r(rnd, 0.11, 0.15)
    size = _r(rnd, 0.008, 0.01)
    volume = math.pi * ((rb + rt) / 2) ** 2 * h
    count = int(round(0.43 * volume / size**3, -1))
    gx = _r(rnd, -0.03, 0.05)
    name, rgb, trans = rnd.choice(JUICES)
    return {
        "samples": 2,
        "sun_elev_deg": _r(rnd, 25.0, 55.0, 1),
        "sun_azim_deg": _r(rnd, 100.0, 180.0, 1),
        "sky_strength": _r(rnd, 0.25, 0.45, 2),
        "sun_energy": _r(rnd, 2.5, 3.5, 2),
        "table_rgb": rnd.choice(TABLES),
        "wall_rgb": rnd.choice(WALLS),
        "glass_r_bottom": rb,
        "glass_r_top": rt,
        "glass_h": h,
        "glass_xy": [gx, 0.0],
        "bottle_rgb": rnd.choice(BOTTLES),
        "bottle_r": _r(rnd, 0.03, 0.04),
        "bottle_len": _r(rnd, 0.18, 0.24),
        "bottle_tilt_deg": round(-rnd.uniform(55.0, 65.0), 1),
        "mouth_loc": [round(gx - rnd.uniform(0.05, 0.09), 3), 0.0, round(h + rnd.uniform(0.15, 0.19), 3)],
        "mouth_r": _r(rnd, 0.01, 0.013),
        "count": count,
        "pour_frames": [12, 12 + rnd.randint(70, 90)],
        "speed": _r(rnd, 0.5, 0.6, 2),
        "drop_size": size,
        "viscosity": _r(rnd, 0.5, 0.7, 2),
        "liquid_rgb": rgb,
        "liquid_name": name,
        "liquid_transmission": trans,
        "blob_radius": 1.6,
        "camera_loc": [_r(rnd, 0.0, 0.12), _r(rnd, -0.72, -0.64), _r(rnd, 0.3, 0.36)],
        "camera_target": [round(gx - 0.04, 3), 0.0, round(h + 0.04, 3)],
        "roll_deg": _r(rnd, -2.5, 2.5, 1),
        "lens": _r(rnd, 25.0, 28.0, 1),
    }
