"""toy_drop family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: every toy starts within the mat's middle (|x| <= 0.3 m, |y| <= 0.15 m of a 1.1 x 0.75 m mat) and
they start far enough apart (the ball on the left, the blocks in the middle, the drum on the right) that they never
meet, so each lands on the mat and stays on it; the ball starts highest (0.6-0.8 m) and is bouncy (restitution
0.8-0.95 on a mat of 0.6-0.75), so it bounces several times; blocks start 0.38-0.55 m up and tilted, so they tumble
onto a face; the drum starts low (0.26-0.36 m) and only a little tilted (<= 25 deg), so it lands on its end and stays
upright. The camera keeps the ball's release height in view. Look: sun height and direction, sky, lawn, mat, wall
and toy colours and the hand-held camera vary.
"""

from __future__ import annotations

import copy
import random

SHIPPED = {'ball_bounce': 0.9,
 'ball_colour': 'red',
 'ball_mass': 0.05,
 'ball_r': 0.05,
 'ball_rgb': [0.85, 0.12, 0.05],
 'ball_rough': 0.35,
 'ball_start': [-0.28, 0.02, 0.72],
 'block_colours': ['yellow', 'green'],
 'block_mass': 0.08,
 'block_rgbs': [[0.9, 0.72, 0.1], [0.15, 0.55, 0.2]],
 'block_rots': [[35.0, 25.0, 10.0], [-20.0, 40.0, 60.0]],
 'block_size': 0.07,
 'block_starts': [[-0.02, 0.06, 0.5], [0.14, 0.16, 0.42]],
 'camera_loc': [0.1, -1.15, 0.45],
 'camera_roll': 1.5,
 'camera_target': [0.0, 0.05, 0.36],
 'drum_colour': 'white',
 'drum_h': 0.08,
 'drum_mass': 0.06,
 'drum_r': 0.045,
 'drum_rgb': [0.9, 0.9, 0.85],
 'drum_rot': [22.0, 0.0, 20.0],
 'drum_start': [0.25, -0.06, 0.32],
 'lawn_rgb': [0.16, 0.3, 0.07],
 'lens': 26,
 'mat_bounce': 0.7,
 'mat_colour': 'blue',
 'mat_friction': 0.8,
 'mat_rgb': [0.1, 0.45, 0.75],
 'mat_size': [1.1, 0.75],
 'mat_thick': 0.03,
 'n_blocks': 2,
 'samples': 2,
 'sky_strength': 0.15,
 'sun_azim': 35.0,
 'sun_elev': 38.0,
 'sun_energy': 2.2,
 'wall_h': 0.7,
 'wall_rgb': [0.55, 0.52, 0.48],
 'wall_y': 3.0}

MATS = [("blue", [0.1, 0.45, 0.75]), ("red", [0.7, 0.12, 0.1]), ("purple", [0.4, 0.2, 0.6]), ("orange", [0.9, 0.45, 0.08]), ("teal", [0.05, 0.5, 0.5])]
BALLS = [("red", [0.85, 0.12, 0.05]), ("yellow", [0.9, 0.75, 0.1]), ("pink", [0.9, 0.4, 0.55]), ("white", [0.88, 0.88, 0.85]), ("orange", [0.92, 0.42, 0.05])]
BLOCKS = [("yellow", [0.9, 0.72, 0.1]), ("green", [0.15, 0.55, 0.2]), ("red", [0.75, 0.1, 0.08]), ("blue", [0.1, 0.25, 0.7]), ("natural", [0.75, 0.58, 0.36])]
DRUMS = [("white", [0.9, 0.9, 0.85]), ("yellow", [0.9, 0.75, 0.15]), ("black", [0.06, 0.06, 0.07]), ("silver", [0.7, 0.7, 0.72])]
LAWNS = [[0.16, 0.3, 0.07], [0.2, 0.33, 0.1], [0.13, 0.26, 0.06], [0.24, 0.3, 0.12]]
WALLS = [[0.55, 0.52, 0.48], [0.62, 0.5, 0.4], [0.45, 0.45, 0.47], [0.68, 0.64, 0.56]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    mat_colour, mat_rgb = rnd.choice(MATS)
    ball_colour, ball_rgb = rnd.choice([b for b in BALLS if b[0] != mat_colour])
    blocks = rnd.sample([b for b in BLOCKS if b[0] not in (mat_colour, ball_colour)], 2)
    drum_colour, drum_rgb = rnd.choice(DRUMS)
    bs = _r(rnd, 0.06, 0.08)
    dz = _r(rnd, 0.26, 0.36)
    return {
        "samples": 2,
        "sun_elev": _r(rnd, 28.0, 60.0, 1),
        "sun_azim": _r(rnd, -50.0, 50.0, 1),
        "sky_strength": _r(rnd, 0.12, 0.22, 2),
        "sun_energy": _r(rnd, 1.8, 2.8, 2),
        "lawn_rgb": rnd.choice(LAWNS),
        "mat_size": [1.1, 0.75],
        "mat_thick": _r(rnd, 0.02, 0.04),
        "mat_rgb": mat_rgb,
        "mat_colour": mat_colour,
        "mat_friction": _r(rnd, 0.7, 0.9, 2),
        "mat_bounce": _r(rnd, 0.6, 0.75, 2),
        "wall_h": _r(rnd, 0.6, 0.8, 2),
        "wall_y": _r(rnd, 2.5, 3.5, 2),
        "wall_rgb": rnd.choice(WALLS),
        "ball_r": _r(rnd, 0.04, 0.06),
        "ball_start": [_r(rnd, -0.32, -0.24), _r(rnd, -0.08, 0.1), _r(rnd, 0.6, 0.74)],
        "ball_rgb": ball_rgb,
        "ball_colour": ball_colour,
        "ball_rough": _r(rnd, 0.3, 0.5, 2),
        "ball_mass": _r(rnd, 0.04, 0.07),
        "ball_bounce": _r(rnd, 0.8, 0.95, 2),
        "n_blocks": 2,
        "block_size": bs,
        "block_starts": [[_r(rnd, -0.1, 0.0), _r(rnd, -0.05, 0.1), _r(rnd, 0.45, 0.55)], [_r(rnd, 0.1, 0.16), _r(rnd, 0.1, 0.18), _r(rnd, 0.38, 0.46)]],
        "block_rots": [[_r(rnd, -45.0, 45.0, 1), _r(rnd, -45.0, 45.0, 1), _r(rnd, 0.0, 90.0, 1)] for _ in range(2)],
        "block_rgbs": [blocks[0][1], blocks[1][1]],
        "block_colours": [blocks[0][0], blocks[1][0]],
        "block_mass": _r(rnd, 0.06, 0.1),
        "drum_r": _r(rnd, 0.04, 0.05),
        "drum_h": _r(rnd, 0.07, 0.09),
        "drum_start": [_r(rnd, 0.22, 0.28), _r(rnd, -0.1, -0.03), dz],
        "drum_rot": [_r(rnd, -25.0, 25.0, 1), 0.0, _r(rnd, 0.0, 60.0, 1)],
        "drum_rgb": drum_rgb,
        "drum_colour": drum_colour,
        "drum_mass": _r(rnd, 0.05, 0.08),
        "camera_loc": [_r(rnd, -0.05, 0.2), _r(rnd, -1.2, -1.1), _r(rnd, 0.43, 0.5)],
        "camera_target": [0.0, 0.05, 0.36],
        "lens": round(rnd.uniform(25.0, 27.0), 1),
        "camera_roll": _r(rnd, -2.0, 2.0, 1),
    }
