"""pendulum family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: rods of 0.32-0.46 m swing with a quarter period of at most 12 frames, so the far-side detector
(leftmost point within 40 frames of the first crossing) finds it; the rod is at least 0.12 m shorter than the pivot
height, so the bob clears the base plate; releases of 35-60 degrees stay inside the view. Without the hinge the bob
falls freely (it collides with nothing), below 0.1 m within 2 s for every member.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {
    "world_rgb": [0.55, 0.6, 0.66], "studio_light": "Default", "cavity": False, "table_rgb": [0.45, 0.28, 0.14],
    "pivot_z": 0.6, "rod_len": 0.42, "release_deg": 50, "bob_r": 0.045, "bob_mass": 0.5,
    "bob_rgb": [0.85, 0.6, 0.15], "bob_metal": 0.8, "bob_colour": "brass/gold",
    "stand_rgb": [0.05, 0.05, 0.06], "stand_colour": "black",
    "camera_loc": [0.0, -1.55, 0.5], "camera_target": [0.0, 0.0, 0.32], "lens": 36,
}
# metallic bobs: (colour words, rgb, metallic)
BOBS = [("copper", [0.8, 0.4, 0.25], 0.8), ("silver", [0.8, 0.8, 0.82], 0.9), ("red", [0.75, 0.08, 0.06], 0.5),
        ("blue", [0.1, 0.25, 0.8], 0.5), ("green", [0.1, 0.5, 0.2], 0.5)]
STANDS = [("dark grey", [0.2, 0.2, 0.22]), ("white", [0.85, 0.85, 0.83]), ("dark blue", [0.05, 0.08, 0.3])]

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
    bc, brgb, metal = rnd.choice(BOBS)
    sc, srgb = rnd.choice(STANDS)
    pz = _r(rnd, 0.55, 0.65, 2)
    p.update({
        "pivot_z": pz, "rod_len": _r(rnd, 0.32, min(0.46, pz - 0.12), 2), "release_deg": rnd.choice([35, 40, 45, 55, 60]),
        "bob_r": _r(rnd, 0.035, 0.055), "bob_mass": _r(rnd, 0.3, 0.9, 2), "bob_rgb": brgb, "bob_metal": metal, "bob_colour": bc,
        "stand_rgb": srgb, "stand_colour": sc,
        "camera_loc": [_r(rnd, -0.1, 0.1, 2), _r(rnd, -1.65, -1.5, 2), _r(rnd, 0.45, 0.55, 2)],
        "camera_target": [_r(rnd, -0.03, 0.03, 2), 0.0, _r(rnd, 0.3, 0.34, 2)], "lens": rnd.choice([34, 35, 37]),
    })
    return p
