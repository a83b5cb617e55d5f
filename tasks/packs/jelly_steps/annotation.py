"""jelly_steps: hand-written part of the task; intervals are measured from the truth trajectories."""

import numpy as np
from physcodegym.tasks import events as d

# The values truth.py was built with (a family member's generator rewrites this literal; see family.py).
PARAMS = {'ball_r': 0.075,
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
 'task_id': 'jelly_steps',
 'tread': 0.28,
 'wall_h': 1.1,
 'wall_rgb': [0.62, 0.5, 0.36]}

N_STEPS = PARAMS["n_steps"]
RISE, TREAD, LANDING, WIDTH = PARAMS["rise"], PARAMS["tread"], PARAMS["landing"], PARAMS["step_width"]
R = PARAMS["ball_r"]
FOOT_X = (N_STEPS - 1) * TREAD  # the lowest step's front edge: the paving starts here
TOUCH = 0.016  # m: the colliders' 1 cm outer thickness plus slop; a ball vertex this close to a surface touches it
WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
NAMES = {(0.9, 0.25, 0.05): "orange", (0.85, 0.1, 0.15): "red", (0.15, 0.6, 0.15): "green", (0.95, 0.75, 0.05): "yellow",
         (0.5, 0.15, 0.7): "purple", (0.1, 0.4, 0.85): "blue"}
COLOUR = NAMES.get(tuple(PARAMS["ball_rgb"]), "coloured")
SHIPPED = PARAMS["task_id"] == "jelly_steps"  # the hand-measured evidence numbers below hold for the shipped scene only
SHIFT = round(-LANDING / 2 - PARAMS["drop_dx"] * R, 4)  # counterfactual: the ball let go over the landing's middle instead of the nosing
ON_TOP = round(N_STEPS * RISE, 4)  # a ball still on the landing has its centre above the top tread's height
EVIDENCE_STEPS = (
    "truth.py re-simulated with the ball's contact with the steps off (the steps' collision response disabled): the ball falls "
    "straight down through the flight onto the paving behind the nosing; its largest distance from the truth path by 1 s is "
    "0.637 m (bake-only re-simulation; in the truth it was then in the air above the fourth step, at x = 0.61 m); truth_counterfactuals.json"
    if SHIPPED
    else "truth.py re-simulated with the ball's contact with the steps off (measured responses in truth_counterfactuals.json)"
)
EVIDENCE_LANDING = (
    "truth.py re-simulated with the ball let go 0.315 m further back, over the flat landing: it bounces in place and stays "
    "on the top step, its centre at 0.595 m at 4 s, above the top tread's 0.52 m (baseline 0.076 m on the paving); truth_counterfactuals.json"
    if SHIPPED
    else "truth.py re-simulated with the ball let go over the flat landing instead of the nosing (measured responses in truth_counterfactuals.json)"
)

TASK = {
    "id": PARAMS["task_id"],
    "title": "A jelly ball bounces down garden steps",
    "category": "deformable",
    "summary": (
        f"A soft {COLOUR} jelly ball is let go just beyond the front edge of a flight of {WORDS.get(N_STEPS, str(N_STEPS))} stone garden steps. "
        "It lands on the edge, is thrown forward and bounces down from step to step, squashing flat at every landing and springing back, "
        "then bounces on the paving at the foot of the steps, rolls away and comes to rest, sagging a little under its own weight."
    ),
    "roles": [
        {"name": "ball", "description": f"soft {COLOUR} jelly ball", "truth_object": "Ball", "name_hints": ["ball", "jelly", "blob", "sphere", "gel"]},
        {"name": "steps", "description": "flight of stone garden steps", "core": False, "truth_object": "Steps",
         "name_hints": ["steps", "stairs", "stair", "flight", "staircase"]},
        {"name": "ground", "description": "paving at the foot of the steps", "core": False, "truth_object": "Ground",
         "name_hints": ["ground", "paving", "floor", "plane", "patio"]},
    ],
    "checklist": [
        {"id": "ball", "category": "ball", "count": 1, "attributes": [COLOUR, "translucent jelly", "soft", "glossy"],
         "layout": "held in the air just beyond the top step's front edge", "roles": ["ball"]},
        {"id": "steps", "category": "steps", "count": 1, "attributes": ["stone", f"{N_STEPS} steps", "a landing at the top"],
         "layout": "going down towards the right of the picture", "roles": ["steps"]},
        {"id": "ground", "category": "paving", "count": 1, "attributes": ["grey stone paving"], "layout": "at the foot of the steps", "roles": ["ground"]},
        {"id": "wall", "category": "wall", "count": 1, "attributes": ["plastered", "garden wall"], "layout": "behind the steps", "roles": []},
        {"id": "pots", "category": "flower pot", "count": len(PARAMS["pots"]), "attributes": ["terracotta", "green shrub"],
         "layout": "one on the landing, one on the paving, away from the ball's path", "roles": []},
    ],
    "events": [
        {"id": "drop", "kind": "action", "description": "the ball falls from rest and lands on the front edge of the top step", "roles": ["ball", "steps"],
         "weight": 1.0},
        {"id": "bounce_down", "kind": "action",
         "description": "thrown forward by the edge, the ball bounces down the flight from step to step, squashing flat at each landing and springing back",
         "roles": ["ball", "steps"], "weight": 2.0, "key": True, "after": ["drop"]},
        {"id": "paving", "kind": "action", "description": "the ball lands on the paving at the foot of the steps, squashes, bounces a few times lower and lower and rolls on",
         "roles": ["ball", "ground"], "weight": 2.0, "key": True, "after": ["bounce_down"]},
        {"id": "rests", "kind": "final_state", "description": "the ball lies still on the paving, slightly flattened under its own weight", "roles": ["ball", "ground"],
         "weight": 1.0, "after": ["paving"]},
    ],
    "rubric": {
        "initial_conditions": ["the ball at rest in the air just beyond the top step's front edge, touching nothing", "the steps and paving static"],
        "actuation": [],
        "equivalent_representations": ["ball as a SOFT_BODY (edge springs, no goal) or as a pressurised CLOTH sphere",
                                       "steps and paving as meshes or boxes with COLLISION modifiers"],
        "criteria": [
            {"id": "sim_ball", "description": "the ball moves and deforms by soft-body (or cloth) simulation", "weight": 2.0, "roles": ["ball"],
             "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no keyframes, shape keys, drivers or handlers move or deform the ball", "weight": 1.0, "roles": ["ball"],
             "check": "no_scripted_motion", "structural": True},
            {"id": "hits_steps", "description": "the ball touches the steps in the first 1.5 s", "weight": 1.0, "roles": ["ball"], "check": "contacts",
             "params": {"other": "steps", "before_s": 1.5}},
            {"id": "on_paving", "description": "the ball ends resting on the visible paving (not a hidden support)", "weight": 1.5, "roles": ["ball"],
             "check": "supported_by", "params": {"support": "ground"}, "structural": True},
            {"id": "no_penetration", "description": "the ball never passes into the steps or the paving", "weight": 1.0, "roles": ["ball", "steps", "ground"],
             "check": "no_interpenetration", "structural": True},
            {"id": "stable", "description": "no NaN, explosion or jitter; the ball comes to rest", "weight": 0.5, "roles": ["ball"], "check": "numerically_stable"},
            {
                "id": "cf_no_steps_contact",
                "description": "the steps carry the ball down: without its contact with them it falls straight through the flight, far from its path",
                "weight": 2.0,
                "roles": ["ball", "steps"],
                "check": "counterfactual",
                "evidence": EVIDENCE_STEPS,
                "counterfactual": {
                    "intervention": {"kind": "disable_contact", "roles": ["ball", "steps"]},
                    "expected": {"measure": "path_deviation", "role": "ball", "at_s": 1.0, "op": "gt", "value": 0.2, "unit": "m"},
                },
            },
            {
                "id": "cf_dropped_on_landing",
                "description": "the front edge throws the ball forward: let go over the flat landing instead, it bounces in place and stays on the top step",
                "weight": 1.5,
                "roles": ["ball", "steps"],
                "check": "counterfactual",
                "evidence": EVIDENCE_LANDING,
                "counterfactual": {
                    "intervention": {"kind": "shift_release", "roles": ["ball"], "params": {"offset": [SHIFT, 0.0, 0.0]}},
                    "expected": {"measure": "final_height", "role": "ball", "at_s": 4.0, "op": "gt", "value": ON_TOP, "unit": "m"},
                },
            },
        ],
    },
}


def _steps_distance(p):
    """Distance (m) of points p (N, 3) from the solid flight, and the step nearest each: step k is the box x in [back_k, k * TREAD], z in [0, (N_STEPS - k) * RISE]."""
    best, which = np.full(len(p), np.inf), np.zeros(len(p), int)
    for k in range(N_STEPS):
        lo = np.array([-LANDING if k == 0 else (k - 1) * TREAD, -WIDTH / 2, 0.0])
        hi = np.array([k * TREAD, WIDTH / 2, (N_STEPS - k) * RISE])
        q = np.linalg.norm(np.maximum(np.maximum(lo - p, p - hi), 0.0), axis=1)
        which = np.where(q < best, k, which)
        best = np.minimum(best, q)
    return best, which


def _episodes(mask):
    """(first, last) index of each run of True in mask."""
    out, start = [], None
    for i, m in enumerate(mask):
        if m and start is None:
            start = i
        if not m and start is not None:
            out.append((start, i - 1))
            start = None
    if start is not None:
        out.append((start, len(mask) - 1))
    return out


def measure_events(s):
    F = d.frame_of
    V = s.verts["Ball"].astype(np.float64)  # (frames, vertices, 3): the soft body's evaluated surface
    c = V.mean(axis=1)
    last = len(c) - 1
    X = V - c[:, None, :]
    eig = np.linalg.eigvalsh(np.einsum("fvi,fvj->fij", X, X) / X.shape[1])  # ascending principal variances per frame
    squash = 1.0 - np.sqrt(np.maximum(eig[:, 0], 0.0) / eig[:, 2])  # 0 for a sphere; 0.3: its thinnest axis 70 % of its widest
    near = [_steps_distance(v) for v in V]
    d_steps = np.array([n[0].min() for n in near])
    block = np.array([int(n[1][int(np.argmin(n[0]))]) for n in near])  # the step whose block is nearest the ball
    zmin = V[:, :, 2].min(axis=1)
    on_steps = d_steps < TOUCH
    on_ground = (zmin < TOUCH) & (c[:, 0] > FOOT_X)
    start = d.first_true(np.linalg.norm(c - c[0], axis=1) > 0.003) or 0
    hit = d.first_true(on_steps)
    hit = hit if hit is not None else start + 1
    ground = d.first_true(on_ground)
    ground = ground if ground is not None else last
    eps = [e for e in _episodes(on_steps[: ground + 1]) if e[0] >= hit]
    levels = []
    for a, _end in eps:  # which step each contact was on
        k = int(block[a])
        if not levels or levels[-1] != k:
            levels.append(k)
    sq_steps = float(squash[hit: ground + 1].max()) if ground > hit else 0.0
    speed = np.linalg.norm(np.diff(c, axis=0), axis=1) * s.fps
    speed = np.concatenate([speed[:1], speed])
    rz = float(np.median(c[-30:, 2]))  # resting centre height
    hop = np.nonzero((c[:, 2] > rz + 0.01) & (np.arange(len(c)) > ground))[0]
    low = int(hop[-1]) + 1 if hop.size else ground + 1  # the last bounce on the paving is over
    moving = np.nonzero(speed > 0.02)[0]
    rest = int(moving[-1]) + 1 if moving.size else low
    rest = min(max(rest, low, ground + 1), last)
    sq_ground = float(squash[ground: low + 1].max())
    sag = float((V[-1, :, 2].max() - V[-1, :, 2].min()) / (V[0, :, 2].max() - V[0, :, 2].min()))
    treads = ", ".join("top step" if k == 0 else f"step {k + 1} from the top" for k in levels)
    return {
        "drop": d.interval(F(s, start), F(s, max(hit, start + 1)),
                           f"the ball leaves its rest pose at frame {F(s, start)} and first touches the steps (within {TOUCH * 1000:.0f} mm) at frame {F(s, hit)}"),
        "bounce_down": d.interval(F(s, hit), F(s, ground),
                                  f"{len(eps)} contacts with the steps from frame {F(s, hit)} ({treads}), flattened at most to {(1 - sq_steps) * 100:.0f} % of its width; "
                                  f"first touch of the paving beyond the foot (x>{FOOT_X:.2f} m) at frame {F(s, ground)}"),
        "paving": d.interval(F(s, ground), F(s, low),
                             f"on the paving from frame {F(s, ground)}, flattened at most to {(1 - sq_ground) * 100:.0f} % of its width; its centre stays within 1 cm of its resting height "
                             f"({rz:.3f} m) from frame {F(s, low)}"),
        "rests": {**d.interval(F(s, rest), F(s, last), f"the ball's centre slower than 0.02 m/s from frame {F(s, rest)}, at x={c[-1, 0]:.2f} m on the paving; "
                               f"its height {sag * 100:.0f} % of its diameter (sagging)"),
                  "persists_until_s": 8.0},
    }
