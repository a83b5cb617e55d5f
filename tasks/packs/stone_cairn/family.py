"""stone_cairn family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the boulder (r 0.37-0.42 m, 0.31-0.36 m high) keeps the cairn at about the same height in the frame;
4 or 5 stones, each 0.78-0.86 of the one below and 6-14 mm thinner, with flat tops and bottoms so the stack stands at
frame 1; the two base stones are big and heavy (6-12 kg at 2500-2700 kg/m^3) and sit centred, the first upper stone is
shifted 0.50-0.56 of the stone below's radius to the right and the ones above a further 1-2 cm each, so the upper part
leans out over the edge of the second stone in a still stable pose; the dropped stone (r 0.10-0.12 m, 2.5-4 kg) falls
0.40-0.50 m onto the top stone just right of its centre and tips the leaning part over that edge, while the base stays.
Both counterfactuals (the dropped stone passing through the cairn, the bottom stone falling through the boulder) do not
depend on how the upper stones fall. Look: stone, boulder and grass colours, the distant rocks, the low sun's height and
direction, sky strength and the hand-held camera vary.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {'backdrop': [[-2.6, 5.5, 0.7], [3.4, 7.0, 1.1], [1.6, 4.2, 0.35]],
 'boulder_aspect': 0.8,
 'boulder_h': 0.34,
 'boulder_r': 0.4,
 'boulder_rgb': [0.24, 0.23, 0.21],
 'boulder_seed': 7,
 'camera_loc': [0.55, -2.35, 1.0],
 'camera_roll': 1.0,
 'camera_target': [0.22, 0.0, 0.52],
 'density': 2600.0,
 'drop_aspect': 0.8,
 'drop_dx': 0.02,
 'drop_gap': 0.45,
 'drop_h': 0.05,
 'drop_r': 0.11,
 'drop_rgb': [0.34, 0.3, 0.26],
 'drop_seed': 21,
 'drop_tilt': -12.0,
 'drop_yaw': 20.0,
 'friction': 0.7,
 'gap': 0.0025,
 'ground_rgb': [0.13, 0.17, 0.06],
 'lens': 28,
 'n_base': 2,
 'n_stones': 5,
 'samples': 2,
 'shifts': [[0.0, 0.0], [0.0, 0.0], [0.08, 0.0], [0.095, 0.0], [0.11, 0.0]],
 'sky_strength': 0.16,
 'stone_aspect': [0.78, 0.8, 0.75, 0.82, 0.8],
 'stone_h': [0.07, 0.06, 0.05, 0.045, 0.04],
 'stone_r': [0.18, 0.15, 0.12, 0.1, 0.08],
 'stone_rgbs': [[0.3, 0.29, 0.27], [0.38, 0.33, 0.27], [0.22, 0.22, 0.24], [0.4, 0.38, 0.34], [0.3, 0.25, 0.2]],
 'stone_seeds': [1, 2, 3, 4, 5],
 'stone_yaws': [10.0, -25.0, 40.0, 5.0, -15.0],
 'sun_azim': 65.0,
 'sun_elev': 22.0,
 'sun_energy': 2.2}

STONES = [[0.3, 0.29, 0.27], [0.38, 0.33, 0.27], [0.22, 0.22, 0.24], [0.4, 0.38, 0.34], [0.3, 0.25, 0.2], [0.34, 0.31, 0.3], [0.26, 0.24, 0.2],
          [0.45, 0.42, 0.38]]
BOULDERS = [[0.24, 0.23, 0.21], [0.3, 0.27, 0.24], [0.2, 0.2, 0.21]]
GRASS = [[0.13, 0.17, 0.06], [0.17, 0.18, 0.08], [0.1, 0.15, 0.07], [0.22, 0.2, 0.1]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    n = rnd.choice([4, 5, 5])
    r = [_r(rnd, 0.17, 0.19)]
    h = [_r(rnd, 0.065, 0.075)]
    for _ in range(n - 1):
        r.append(round(r[-1] * rnd.uniform(0.78, 0.86), 3))
        h.append(round(h[-1] - rnd.uniform(0.006, 0.014) * (5 / n), 3))
    shifts = [[0.0, 0.0], [_r(rnd, -0.01, 0.01), _r(rnd, -0.01, 0.01)]]
    x = shifts[1][0] + round(r[1] * rnd.uniform(0.5, 0.56), 3)
    for _ in range(n - 2):
        shifts.append([round(x, 3), _r(rnd, -0.005, 0.005)])
        x += rnd.uniform(0.01, 0.02)
    colours = rnd.sample(STONES, n + 1)
    cam_x = _r(rnd, 0.35, 0.75)
    return {
        "backdrop": [[_r(rnd, -3.2, -1.8, 2), _r(rnd, 4.5, 6.5, 2), _r(rnd, 0.5, 0.9, 2)], [_r(rnd, 2.6, 3.8, 2), _r(rnd, 6.0, 8.0, 2), _r(rnd, 0.8, 1.2, 2)],
                     [_r(rnd, 1.2, 2.0, 2), _r(rnd, 3.8, 4.6, 2), _r(rnd, 0.25, 0.4, 2)]],
        "boulder_aspect": _r(rnd, 0.75, 0.85),
        "boulder_h": _r(rnd, 0.31, 0.36),
        "boulder_r": _r(rnd, 0.38, 0.42),
        "boulder_rgb": rnd.choice(BOULDERS),
        "boulder_seed": rnd.randrange(1000),
        "camera_loc": [cam_x, _r(rnd, -2.5, -2.2), _r(rnd, 0.9, 1.1)],
        "camera_roll": _r(rnd, -1.5, 1.5, 1),
        "camera_target": [0.22, 0.0, 0.52],
        "density": float(rnd.choice([2500, 2600, 2700])),
        "drop_aspect": _r(rnd, 0.75, 0.85),
        "drop_dx": _r(rnd, 0.0, 0.03),
        "drop_gap": _r(rnd, 0.4, 0.5),
        "drop_h": _r(rnd, 0.045, 0.055),
        "drop_r": _r(rnd, 0.1, 0.12),
        "drop_rgb": colours[-1],
        "drop_seed": rnd.randrange(1000),
        "drop_tilt": _r(rnd, -15.0, -8.0, 1),
        "drop_yaw": _r(rnd, -30.0, 30.0, 1),
        "friction": _r(rnd, 0.65, 0.75, 2),
        "gap": 0.0025,
        "ground_rgb": rnd.choice(GRASS),
        "lens": round(rnd.uniform(27.0, 30.0), 1),
        "n_base": 2,
        "n_stones": n,
        "samples": 2,
        "shifts": shifts,
        "sky_strength": _r(rnd, 0.12, 0.2, 2),
        "stone_aspect": [_r(rnd, 0.72, 0.85) for _ in range(n)],
        "stone_h": h,
        "stone_r": r,
        "stone_rgbs": colours[:n],
        "stone_seeds": [rnd.randrange(1000) for _ in range(n)],
        "stone_yaws": [_r(rnd, -45.0, 45.0, 1) for _ in range(n)],
        "sun_azim": _r(rnd, 40.0, 90.0, 1) * rnd.choice([-1, 1]),
        "sun_elev": _r(rnd, 15.0, 35.0, 1),
        "sun_energy": _r(rnd, 1.8, 2.6, 2),
    }
