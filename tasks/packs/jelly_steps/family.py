"""jelly_steps family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: 3-5 stone steps (rise 11-15 cm, tread 26-32 cm, a 0.5-0.7 m landing at the top) and a soft jelly ball
(radius 6-9 cm, an icosphere soft body with edge springs 0.45-0.6, bending 0.8-1.05, no goal, air friction about Blender's
default 0.5) let go at rest 15-25 cm above the top tread, its centre 0.15-0.25 radii beyond the front edge: it always
lands on the nosing, is thrown forward and bounces down the flight, then rolls out on the paving and stops there
(softer balls lose more to their own deformation). The pots stand off the ball's path (on the landing behind the
release point and on the paving beside the flight). Both counterfactuals (the ball falling through the flight without
the steps' contact; the ball let go over the middle of the landing bouncing in place and staying on top) hold whatever
the flight's size. Look: ball, stone, paving and wall colours, the wall's height, the sun's direction and strength, the
sky's brightness and the camera vary; the camera frames the flight from the landing's back to 1.9 m beyond its foot
(bake-only checks of seeds 1-6: the ball stops 0.4-1.6 m beyond the foot, at most 0.87 of the picture's width).
"""

from __future__ import annotations

import copy
import random

SHIPPED = {'ball_r': 0.075,
 'ball_rgb': [0.9, 0.25, 0.05],
 'ball_subdiv': 3,
 'camera_loc': [0.62, -1.8, 0.62],
 'camera_roll': -1.0,
 'camera_target': [0.6, 0.0, 0.28],
 'drop_dx': 0.2,
 'drop_h': 0.2,
 'ground_rgb': [0.3, 0.27, 0.23],
 'landing': 0.6,
 'lens': 26,
 'n_steps': 4,
 'pots': [[-0.35, 0.3, 0.1], [1.1, 0.42, 0.13]],
 'rise': 0.13,
 'samples': 2,
 'sb_bend': 1.0,
 'sb_damping': 0.5,
 'sb_friction': 0.5,
 'sb_mass': 0.3,
 'sb_pull': 0.5,
 'sb_push': 0.5,
 'sky_strength': 0.12,
 'step_rgb': [0.5, 0.43, 0.34],
 'step_width': 1.0,
 'sun_azim': -40.0,
 'sun_elev': 32.0,
 'sun_energy': 2.4,
 'tread': 0.28,
 'wall_h': 1.1,
 'wall_rgb': [0.62, 0.5, 0.36]}

BALLS = [[0.9, 0.25, 0.05], [0.85, 0.1, 0.15], [0.15, 0.6, 0.15], [0.95, 0.75, 0.05], [0.5, 0.15, 0.7], [0.1, 0.4, 0.85]]
STONES = [[0.5, 0.43, 0.34], [0.42, 0.4, 0.36], [0.55, 0.5, 0.42], [0.38, 0.33, 0.28]]
PAVINGS = [[0.3, 0.27, 0.23], [0.25, 0.25, 0.26], [0.36, 0.3, 0.24]]
WALLS = [[0.62, 0.5, 0.36], [0.7, 0.66, 0.58], [0.55, 0.3, 0.22], [0.75, 0.72, 0.62]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    n = rnd.choice([3, 4, 4, 5])
    rise = _r(rnd, 0.11, 0.15)
    tread = _r(rnd, 0.26, 0.32)
    landing = _r(rnd, 0.5, 0.7)
    width = _r(rnd, 0.9, 1.2)
    r = _r(rnd, 0.06, 0.09)
    foot = (n - 1) * tread
    span = landing + foot + 1.9  # from the landing's back to 1.9 m beyond the foot (the ball stops 0.4-1.6 m out)
    mid = (foot + 1.9 - landing) / 2
    lens = round(rnd.uniform(25.0, 28.0), 1)
    dist = round(0.52 * span * lens / 18.0, 3)  # the picture's half width is 0.52 of the span
    return {
        "ball_r": r,
        "ball_rgb": rnd.choice(BALLS),
        "ball_subdiv": 3,
        "camera_loc": [round(mid + _r(rnd, -0.1, 0.1), 3), round(-dist - _r(rnd, 0.0, 0.1), 3), _r(rnd, 0.6, 0.8)],
        "camera_roll": _r(rnd, -1.5, 1.5, 1),
        "camera_target": [round(mid, 3), 0.0, round(0.3 + 0.5 * (n * rise - 0.52), 3)],
        "drop_dx": _r(rnd, 0.15, 0.25, 2),
        "drop_h": _r(rnd, 0.15, 0.25),
        "ground_rgb": rnd.choice(PAVINGS),
        "landing": landing,
        "lens": lens,
        "n_steps": n,
        "pots": [[round(-0.6 * landing, 3), round(min(width / 2 - 0.12, _r(rnd, 0.25, 0.35)), 3), _r(rnd, 0.08, 0.11)],
                 [round(foot + _r(rnd, 0.2, 0.35), 3), round(width / 2 - 0.05 + _r(rnd, -0.05, 0.05), 3), _r(rnd, 0.1, 0.14)]],
        "rise": rise,
        "samples": 2,
        "sb_bend": _r(rnd, 0.8, 1.05, 2),
        "sb_damping": _r(rnd, 0.4, 0.7, 2),
        "sb_friction": _r(rnd, 0.45, 0.6, 2),
        "sb_mass": _r(rnd, 0.2, 0.4, 2),
        "sb_pull": _r(rnd, 0.45, 0.6, 2),
        "sb_push": _r(rnd, 0.45, 0.6, 2),
        "sky_strength": _r(rnd, 0.1, 0.15),
        "step_rgb": rnd.choice(STONES),
        "step_width": width,
        "sun_azim": _r(rnd, -60.0, -20.0, 1),
        "sun_elev": _r(rnd, 25.0, 45.0, 1),
        "sun_energy": _r(rnd, 2.0, 3.0, 2),
        "tread": tread,
        "wall_h": _r(rnd, 0.9, 1.3, 2),
        "wall_rgb": rnd.choice(WALLS),
    }
