"""hose_jet family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the plate and the drip tray move together (at most 4 cm along x) and the jet's speed (3.0-3.4 m/s),
height and aim change little, so the jet always reaches the plate above the tray and the water runs down into it;
with gravity off the jet flies on over the plate, so the counterfactual's tray fraction stays near 0. Members use
fewer, larger drops (about 1.1 cm instead of 0.7 cm, about 400 instead of 1600) and a shorter jet: the trajectories
stay under about 0.8 MB and the bake is faster than the shipped task's.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {
    "camera_loc": [0.0, -1.2, 0.55], "camera_target": [-0.1, 0.0, 0.12], "cavity": False, "count": 1600, "drop_size": 0.007,
    "jet_frames": [5, 150], "lens": 36, "mouth_loc": [-0.405, 0.0, 0.227], "mouth_r": 0.012, "nozzle_colour": "green",
    "nozzle_deg": 80, "nozzle_loc": [-0.45, 0.0, 0.22], "nozzle_rgb": [0.1, 0.55, 0.15], "plate_colour": "grey",
    "plate_loc": [0.15, 0.0, 0.13], "plate_rgb": [0.5, 0.5, 0.52], "plate_size": [0.02, 0.4, 0.3], "plate_tilt_deg": 25,
    "speed": 3.2, "studio_light": "Default", "table_rgb": [0.45, 0.28, 0.14], "tray_colour": "black", "tray_loc": [0.12, 0.0, 0.002],
    "tray_rgb": [0.06, 0.06, 0.07], "tray_size": [0.36, 0.46, 0.04], "viscosity": 0.5, "water_colour": "light blue",
    "water_rgb": [0.3, 0.55, 0.95], "world_rgb": [0.55, 0.6, 0.66],
}
NOZZLES = [("green", [0.1, 0.55, 0.15]), ("red", [0.75, 0.08, 0.06]), ("yellow", [0.92, 0.75, 0.08]), ("orange", [0.92, 0.4, 0.05])]
PLATES = [("grey", [0.5, 0.5, 0.52]), ("white", [0.85, 0.85, 0.86]), ("dark grey", [0.25, 0.25, 0.27])]
TRAYS = [("black", [0.06, 0.06, 0.07]), ("dark blue", [0.05, 0.08, 0.3]), ("dark green", [0.05, 0.22, 0.08])]
WATERS = [("light blue", [0.3, 0.55, 0.95]), ("turquoise", [0.2, 0.75, 0.8]), ("pale blue", [0.6, 0.78, 0.98])]
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
    (nc, nrgb), (pc, prgb), (tc, trgb), (wc, wrgb) = rnd.choice(NOZZLES), rnd.choice(PLATES), rnd.choice(TRAYS), rnd.choice(WATERS)
    dx = _r(rnd, -0.04, 0.04)
    nz = _r(rnd, 0.21, 0.235)
    ph = _r(rnd, 0.28, 0.32)
    size = _r(rnd, 0.0105, 0.0115, 4)
    start = rnd.randint(4, 8)
    p.update({
        "nozzle_colour": nc, "nozzle_rgb": nrgb, "plate_colour": pc, "plate_rgb": prgb, "tray_colour": tc, "tray_rgb": trgb, "water_colour": wc, "water_rgb": wrgb,
        "nozzle_loc": [-0.45, 0.0, nz], "mouth_loc": [-0.405, 0.0, round(nz + 0.007, 3)], "nozzle_deg": rnd.choice([79, 80, 81]),
        "speed": _r(rnd, 3.0, 3.4, 2), "drop_size": size, "count": int(round(400 * (0.011 / size) ** 3)), "jet_frames": [start, start + rnd.randint(105, 125)],
        "viscosity": _r(rnd, 0.4, 0.9, 2),
        "plate_size": [0.02, _r(rnd, 0.36, 0.44, 2), ph], "plate_loc": [round(0.15 + dx, 3), 0.0, round(ph / 2 - 0.02, 3)], "plate_tilt_deg": rnd.randint(21, 29),
        "tray_size": [_r(rnd, 0.34, 0.38, 2), 0.46, 0.04], "tray_loc": [round(0.12 + dx, 3), 0.0, 0.002],
        "camera_loc": [_r(rnd, -0.08, 0.08), _r(rnd, -1.25, -1.15), _r(rnd, 0.5, 0.6)], "camera_target": [_r(rnd, -0.12, -0.08), 0.0, _r(rnd, 0.1, 0.14)],
        "lens": rnd.choice([34, 35, 36, 37]),
    })
    return p
