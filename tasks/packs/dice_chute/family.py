"""dice_chute family: seed -> PARAMS of truth.py / annotation.py (pure Python, no bpy).

Why these ranges: 40-80 dice (2-4 columns, 1 or 2 layers, as many rows as the count needs), 14-19 mm across, cubes or
slightly flat or tall blocks (height 0.8-1.15 of the width) with more or less rounded edges, packed 0.35 of their size
apart so nothing touches at frame 1; the stack stays below the chute's 5 cm walls and the pack fits in the chute's upper
part. The chute (0.5-0.65 m, 31-37 deg, its width set by the columns) slides them with a low combined friction
(steel 0.4-0.55 times plastic 0.75-0.85), its lip 8-11 cm above the board (high enough that the heap does not back up into it), so they pour out within a second and heap in
front of the lip; the posts always stand on the floor behind the board. Both counterfactuals (a die falling through the
chute, a die falling through the board) do not depend on how the heap forms. Look: dice colours, board wood, floor,
chute paint, the lamp's direction and power, the world's tone and the camera vary.
"""

from __future__ import annotations

import copy
import math
import random

SHIPPED = {'board_rgb': [0.42, 0.26, 0.13],
 'board_size': [0.8, 0.5, 0.04],
 'bounce': 0.1,
 'camera_loc': [0.42, -1.0, 0.5],
 'camera_roll': -1.0,
 'camera_target': [-0.14, 0.0, 0.16],
 'chute_angle': 34.0,
 'chute_friction': 0.5,
 'chute_len': 0.6,
 'chute_rgb': [0.62, 0.64, 0.66],
 'chute_width': 0.1,
 'cols': 3,
 'die_aspect': 1.0,
 'die_bevel': 0.22,
 'die_density': 1200.0,
 'die_friction': 0.8,
 'die_rgbs': [[0.85, 0.82, 0.74], [0.7, 0.08, 0.06]],
 'die_size': 0.016,
 'floor_rgb': [0.3, 0.3, 0.31],
 'key_azim': -35.0,
 'key_elev': 50.0,
 'key_energy': 60.0,
 'layers': 2,
 'layout_seed': 3,
 'lens': 30,
 'lip_h': 0.08,
 'lip_x': -0.16,
 'rows': 12,
 'samples': 2,
 'world_rgb': [0.05, 0.055, 0.06],
 'world_strength': 1.0}

DICE = [[0.85, 0.82, 0.74], [0.7, 0.08, 0.06], [0.08, 0.25, 0.7], [0.1, 0.1, 0.1], [0.9, 0.72, 0.1], [0.12, 0.45, 0.2], [0.95, 0.95, 0.95]]
WOOD = [[0.42, 0.26, 0.13], [0.55, 0.38, 0.2], [0.3, 0.17, 0.08], [0.62, 0.48, 0.3]]
FLOORS = [[0.3, 0.3, 0.31], [0.22, 0.23, 0.25], [0.4, 0.38, 0.35]]
CHUTES = [[0.62, 0.64, 0.66], [0.45, 0.47, 0.5], [0.2, 0.35, 0.6], [0.75, 0.4, 0.1]]
WORLDS = [[0.05, 0.055, 0.06], [0.06, 0.05, 0.04], [0.04, 0.05, 0.06]]


def _r(rnd: random.Random, lo: float, hi: float, nd: int = 3) -> float:
    return round(rnd.uniform(lo, hi), nd)


def params(seed: int) -> dict:
    """PARAMS for `seed`; seed 0 is the shipped task."""
    if seed == 0:
        return copy.deepcopy(SHIPPED)
    rnd = random.Random(seed)
    s = _r(rnd, 0.014, 0.019)
    asp = _r(rnd, 0.8, 1.15, 2)
    pitch = 1.35 * s * max(1.0, asp)
    layers = 2 if 0.003 + s * asp + pitch <= 0.047 else 1  # the top layer stays below the 5 cm walls
    cols = rnd.choice([2, 3, 3, 4]) if layers == 2 else rnd.choice([3, 4])
    target = rnd.randint(40, 80)
    rows = max(1, round(target / (cols * layers)))
    while rows * cols * layers > 80:
        rows -= 1
    while rows * cols * layers < 40:
        rows += 1
    angle = _r(rnd, 31.0, 37.0, 1)
    length = round(max(_r(rnd, 0.5, 0.65), rows * pitch / 0.55 + 0.02), 3)  # the pack fills at most 55 % of the chute
    width = round(cols * pitch + 0.012, 3)
    bx = _r(rnd, 0.7, 0.9)
    lip_x = _r(rnd, -0.2, -0.12)
    # the posts stand on the floor behind the board: their front face 1 cm or more behind its back edge
    th = math.radians(angle)
    foot_x = lip_x - (length - 0.03) * math.cos(th) - 0.006 * math.sin(th)
    if foot_x - 0.005 > -bx / 2 - 0.01:
        length = round(length + (foot_x + bx / 2 + 0.02) / math.cos(th), 3)
    n_col = rnd.choice([1, 2, 2])
    cam_x = _r(rnd, 0.3, 0.55)
    return {
        "board_rgb": rnd.choice(WOOD),
        "board_size": [bx, _r(rnd, 0.45, 0.6), _r(rnd, 0.03, 0.045)],
        "bounce": _r(rnd, 0.05, 0.15, 2),
        "camera_loc": [cam_x, round(_r(rnd, -1.1, -0.9) - 0.8 * max(0.0, length - 0.6), 3), _r(rnd, 0.45, 0.6)],  # long chutes: further back
        "camera_roll": _r(rnd, -1.5, 1.5, 1),
        "camera_target": [round(lip_x + 0.02, 3), 0.0, round(0.16 + 0.3 * max(0.0, length - 0.6), 3)],
        "chute_angle": angle,
        "chute_friction": _r(rnd, 0.4, 0.55, 2),
        "chute_len": length,
        "chute_rgb": rnd.choice(CHUTES),
        "chute_width": width,
        "cols": cols,
        "die_aspect": asp,
        "die_bevel": _r(rnd, 0.12, 0.3, 2),
        "die_density": float(rnd.choice([1100, 1200, 1400])),
        "die_friction": _r(rnd, 0.75, 0.85, 2),
        "die_rgbs": rnd.sample(DICE, n_col),
        "die_size": s,
        "floor_rgb": rnd.choice(FLOORS),
        "key_azim": _r(rnd, -60.0, 40.0, 1),
        "key_elev": _r(rnd, 40.0, 65.0, 1),
        "key_energy": _r(rnd, 45.0, 80.0, 1),
        "layers": layers,
        "layout_seed": rnd.randrange(1000),
        "lens": round(rnd.uniform(28.0, 32.0), 1),
        "lip_h": _r(rnd, 0.08, 0.11),
        "lip_x": lip_x,
        "rows": rows,
        "samples": 2,
        "world_rgb": rnd.choice(WORLDS),
        "world_strength": _r(rnd, 0.7, 1.3, 2),
    }
