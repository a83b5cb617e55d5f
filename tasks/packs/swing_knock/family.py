"""swing_knock family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: the chain (3 or 4 hinged links) keeps the pivot-to-ball distance near 0.7-0.8 m, so the frame, the
camera and the swing period stay alike; the ball hangs 4-6 cm above the ground at its lowest and the tower stands just
right of that point (a 6 mm gap), so the ball hits it at full speed; the tower is kept at least 2.5 cm below the
ball's top (block edge shrunk for 4 blocks), so the chain itself passes over the tower and, with the ball's contact
off, the tower stays standing (the counterfactual); release 32-48 degrees gives 1.3-1.9 m/s at the tower. The ball
is 8-16 times heavier than a block, so it scatters the tower and swings on. Look: sun, sky, ground, hedge, frame
wood, ball and block colours and the hand-held camera vary.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {'ball_colour': 'red',
 'ball_mass': 1.5,
 'ball_r': 0.09,
 'ball_rgb': [0.72, 0.1, 0.06],
 'beam_rgb': [0.5, 0.33, 0.18],
 'block_colours': ['yellow', 'blue', 'green'],
 'block_gap': 0.006,
 'block_mass': 0.12,
 'block_rgbs': [[0.9, 0.7, 0.12], [0.12, 0.3, 0.7], [0.2, 0.55, 0.22]],
 'block_size': 0.07,
 'block_yaws': [4.0, -6.0, 9.0],
 'camera_loc': [0.12, -1.85, 0.62],
 'camera_roll': -1.2,
 'camera_target': [0.02, 0.0, 0.46],
 'clearance': 0.05,
 'ground_rgb': [0.42, 0.4, 0.37],
 'hedge_rgb': [0.12, 0.24, 0.08],
 'lens': 26,
 'link_gap': 0.012,
 'link_len': 0.22,
 'link_mass': 0.08,
 'n_blocks': 3,
 'n_links': 3,
 'release_deg': 40.0,
 'samples': 2,
 'sky_strength': 0.18,
 'sun_azim': -30.0,
 'sun_elev': 42.0,
 'sun_energy': 2.4}

BALLS = [("red", [0.72, 0.1, 0.06]), ("orange", [0.9, 0.4, 0.05]), ("black", [0.05, 0.05, 0.06]), ("blue", [0.08, 0.2, 0.6]), ("white", [0.85, 0.85, 0.82])]
BLOCKS = [("yellow", [0.9, 0.7, 0.12]), ("blue", [0.12, 0.3, 0.7]), ("green", [0.2, 0.55, 0.22]), ("red", [0.75, 0.1, 0.08]),
          ("natural", [0.75, 0.58, 0.36]), ("purple", [0.4, 0.2, 0.6])]
GROUNDS = [[0.42, 0.4, 0.37], [0.35, 0.22, 0.18], [0.3, 0.4, 0.3], [0.5, 0.45, 0.38]]
HEDGES = [[0.12, 0.24, 0.08], [0.1, 0.2, 0.07], [0.16, 0.28, 0.1]]
WOODS = [[0.5, 0.33, 0.18], [0.62, 0.45, 0.28], [0.38, 0.24, 0.13]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    ball_colour, ball_rgb = rnd.choice(BALLS)
    n_blocks = rnd.choice([3, 3, 4])
    blocks = rnd.sample([b for b in BLOCKS if b[0] != ball_colour], n_blocks)
    n_links = rnd.choice([3, 4])
    gap = 0.012
    link_len = round(_r(rnd, 0.64, 0.72) / n_links - gap, 3)
    ball_r = _r(rnd, 0.08, 0.1)
    clearance = _r(rnd, 0.04, 0.06)
    block_size = min(_r(rnd, 0.06, 0.075), round((clearance + 2 * ball_r - 0.025) / n_blocks, 3))
    return {
        "ball_colour": ball_colour,
        "ball_mass": _r(rnd, 1.2, 2.0, 2),
        "ball_r": ball_r,
        "ball_rgb": ball_rgb,
        "beam_rgb": rnd.choice(WOODS),
        "block_colours": [b[0] for b in blocks],
        "block_gap": 0.006,
        "block_mass": _r(rnd, 0.1, 0.15),
        "block_rgbs": [b[1] for b in blocks],
        "block_size": block_size,
        "block_yaws": [_r(rnd, -10.0, 10.0, 1) for _ in range(n_blocks)],
        "camera_loc": [_r(rnd, -0.05, 0.2), _r(rnd, -1.95, -1.75), _r(rnd, 0.55, 0.7)],
        "camera_roll": _r(rnd, -2.0, 2.0, 1),
        "camera_target": [0.02, 0.0, 0.46],
        "clearance": clearance,
        "ground_rgb": rnd.choice(GROUNDS),
        "hedge_rgb": rnd.choice(HEDGES),
        "lens": round(rnd.uniform(25.0, 27.0), 1),
        "link_gap": gap,
        "link_len": link_len,
        "link_mass": _r(rnd, 0.06, 0.1),
        "n_blocks": n_blocks,
        "n_links": n_links,
        "release_deg": _r(rnd, 32.0, 48.0, 1),
        "samples": 2,
        "sky_strength": _r(rnd, 0.12, 0.22, 2),
        "sun_azim": _r(rnd, -50.0, 50.0, 1),
        "sun_elev": _r(rnd, 28.0, 60.0, 1),
        "sun_energy": _r(rnd, 1.8, 2.8, 2),
    }
