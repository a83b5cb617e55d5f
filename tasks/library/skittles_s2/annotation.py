"""skittles: hand-written part of the task; intervals are measured from the truth trajectories."""

from physcodegym.tasks import events as d

# The values truth.py was built with (a family member's generator rewrites this literal; see family.py).
PARAMS = {'arm_len': 0.415,
 'ball_colour': ['Black', [0.03, 0.03, 0.035], 0.25],
 'ball_mass': 0.201,
 'ball_r': 0.035,
 'camera_loc': [0.076, -0.908, 0.396],
 'camera_target': [0.0, 0.0, 0.2],
 'exposure': -1.1,
 'floor_rgb': [0.3, 0.3, 0.32],
 'gallows_rgb': [0.62, 0.46, 0.28],
 'lens': 25.3,
 'pin_dx': 0.037,
 'pin_dy': 0.036,
 'pin_h': 0.111,
 'pin_mass': 0.026,
 'pin_r': 0.016,
 'pin_rgb': [0.9, 0.88, 0.82],
 'pin_rows': [1, 2, 3],
 'pin_x0': 0.054,
 'pivot': [0.0, 0.469],
 'release_deg': 65.1,
 'rod_rgb': [0.55, 0.56, 0.58],
 'roll_deg': -0.6,
 'samples': 2,
 'sky_strength': 0.33,
 'stripe_colour': ['Green', [0.08, 0.45, 0.15]],
 'sun_angle_deg': 2.5,
 'sun_azimuth_deg': 21.7,
 'sun_elevation_deg': 26.3,
 'sun_energy': 3.0,
 'table_rgb': [0.6, 0.48, 0.34],
 'table_size': [1.4, 0.8],
 'task_id': 'skittles_s2',
 'wall_rgb': [0.84, 0.74, 0.66]}
N = sum(PARAMS["pin_rows"])
BALL = PARAMS["ball_colour"][0].lower()
STRIPE = PARAMS["stripe_colour"][0].lower()
ROWS = "-".join(str(n) for n in PARAMS["pin_rows"])
PIN_ROLES = ["head_pin", "back_pin"]

TASK = {
    "id": PARAMS["task_id"],
    "title": "Table skittles: a swinging ball knocks down the pins",
    "category": "rigid",
    "subcategory": "collision-chain",
    "summary": f"A {BALL} wooden ball on a stiff rod hangs from the arm of a small gallows; let go from the left, it swings down into "
    f"{N} skittles standing in a {ROWS} triangle; the head pin is knocked into the others and the pins topple one another, "
    "while the ball keeps swinging through the fallen pins.",
    "roles": [
        {"name": "ball", "description": f"{BALL} swinging ball", "truth_object": "Ball", "name_hints": ["ball", "bob", "sphere"]},
        {"name": "rod", "description": "steel rod the ball hangs from", "core": False, "truth_object": "Rod", "name_hints": ["rod", "arm", "string", "cord"]},
        {"name": "head_pin", "description": "front (head) skittle, first in the ball's path", "truth_object": "Pin1", "name_hints": ["pin", "skittle"]},
        {"name": "back_pin", "description": "a skittle of the back row", "truth_object": f"Pin{N}", "name_hints": ["pin", "skittle"]},
        {"name": "pivot", "description": "hinge of the rod on the gallows arm", "core": False, "required": False, "truth_object": "Pivot", "name_hints": ["pivot", "hinge", "joint"]},
        {"name": "gallows", "description": "wooden gallows post", "core": False, "truth_object": "Gallows", "name_hints": ["gallows", "post", "mast", "stand"]},
        {"name": "table", "description": "wooden tabletop the skittles stand on", "core": False, "truth_object": "Table", "name_hints": ["table", "ground", "floor"]},
    ],
    "checklist": [
        {"id": "gallows", "category": "gallows", "count": 1, "attributes": ["wooden post", "horizontal arm", "brass bracket"], "layout": "behind the pins, its arm reaching over the lane", "roles": ["gallows", "pivot"]},
        {"id": "ball", "category": "ball on a rod", "count": 1, "attributes": [BALL, "wooden ball", "thin steel rod"], "layout": "held out to the left, hanging from the arm", "roles": ["ball", "rod"]},
        {"id": "table", "category": "table", "count": 1, "attributes": ["brown", "wooden", "flat top"], "layout": "under the gallows and the pins", "roles": ["table"]},
        {"id": "pins", "category": "skittle", "count": N, "attributes": ["pale maple", f"{STRIPE} neck band", "belly and round head"], "layout": f"triangle of rows {ROWS}, its point towards the ball", "roles": PIN_ROLES},
    ],
    "events": [
        {"id": "swing_down", "kind": "action", "description": "the ball is let go and swings down towards the pins", "roles": ["ball"], "weight": 1.0},
        {"id": "head_pin_hit", "kind": "action", "description": "the ball strikes the head pin", "roles": ["ball", "head_pin"], "weight": 2.0, "key": True, "after": ["swing_down"]},
        {"id": "chain", "kind": "order", "description": "the pins knock one another over, the back row last", "roles": ["head_pin", "back_pin"], "weight": 2.0, "key": True, "after": ["head_pin_hit"]},
        {"id": "pins_down", "kind": "final_state", "description": "the knocked-down pins stay down until the end", "roles": ["head_pin", "back_pin"], "weight": 1.0, "after": ["chain"]},
        {"id": "swings_on", "kind": "persistence", "description": "the ball keeps swinging to and fro over the lane", "roles": ["ball"], "weight": 1.0, "after": ["head_pin_hit"]},
    ],
    "rubric": {
        "initial_conditions": ["ball held at rest, raised to the left, and let go", "skittles standing at rest"],
        "actuation": [],
        "equivalent_representations": [
            "rod hung from a HINGE constraint (or a POINT constraint)",
            "ball glued to the rod by a FIXED constraint, or rod and ball one compound body",
            "skittles as convex hulls",
        ],
        "criteria": [
            {"id": "sim_ball", "description": "the ball swings by rigid-body simulation", "weight": 1.5, "roles": ["ball"], "check": "moves_by_simulation", "structural": True},
            {"id": "sim_pins", "description": "the pins fall by simulation, not keyframes", "weight": 1.5, "roles": ["head_pin", "back_pin"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no scripted motion on ball or pins", "weight": 1.0, "roles": ["ball", "head_pin", "back_pin"], "check": "no_scripted_motion", "structural": True},
            {"id": "pins_on_table", "description": "the skittles stand on the visible table (not on a hidden support)", "weight": 1.0, "roles": ["back_pin"], "check": "supported_by", "params": {"support": "table", "at_s": 0.0}, "structural": True},
            {"id": "ball_hits_head", "description": "the ball materially touches the head pin", "weight": 1.0, "roles": ["ball"], "check": "contacts", "params": {"other": "head_pin", "before_s": 2.0}},
            {"id": "no_penetration", "description": "no solid overlap among ball and pins", "weight": 1.0, "roles": ["ball", "head_pin", "back_pin"], "check": "no_interpenetration", "structural": True},
            {"id": "stable", "description": "no jitter or explosion", "weight": 0.5, "roles": ["ball", "back_pin"], "check": "numerically_stable"},
            {
                "id": "cf_no_contact",
                "description": "if the ball cannot touch the pins, no pin falls (they fall only because it strikes them)",
                "weight": 2.0,
                "roles": ["ball", "head_pin", "back_pin"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with ball-pin contacts disabled (measured responses in truth_counterfactuals.json; baseline: the back pin is knocked over)",
                "counterfactual": {
                    "intervention": {"kind": "disable_contact", "roles": ["ball", "head_pin", "back_pin"]},
                    "expected": {"measure": "max_displacement", "role": "head_pin", "at_s": 6.0, "op": "lt", "value": 0.01, "unit": "m",
                                 "preserved_roles": ["ball"], "preserved_until_s": 0.25, "preserve_tolerance_m": 0.01},
                },
            },
            {
                "id": "cf_no_pivot",
                "description": "without its hinge the ball drops to the table instead of swinging",
                "weight": 1.0,
                "roles": ["pivot", "ball"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the pivot hinge disabled (measured responses in truth_counterfactuals.json; baseline: the ball's lowest point is above the table)",
                "counterfactual": {
                    "intervention": {"kind": "disable_joint", "roles": ["pivot"]},
                    "expected": {"measure": "min_height", "role": "ball", "at_s": 2.0, "op": "lt", "value": round(PARAMS["ball_r"] + 0.008, 3), "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    import numpy as np

    b = d.loc(s, "Ball")
    last = len(b) - 1
    F = d.frame_of
    start = d.first_moving(s, "Ball", 0.003) or 0
    p1 = d.loc(s, "Pin1")
    ref = min(5, last)  # the pins settle onto the table by a fraction of a millimetre in the first frames
    hit = d.first_true((np.linalg.norm(p1 - p1[ref], axis=1) > 0.003) & (np.arange(len(p1)) > ref))
    hit = hit if hit is not None else last
    falls = {}
    for i in range(1, N + 1):
        t = d.first_true(d.tilt_deg(s, f"Pin{i}") > 45.0)
        if t is not None:
            falls[i] = t
    first = min(falls.values()) if falls else last
    final = max(falls.values()) if falls else last
    down_end = [i for i in range(1, N + 1) if d.tilt_deg(s, f"Pin{i}")[-1] > 45.0]
    vx = np.gradient(b[:, 0])
    turns = int(np.sum(np.diff(np.sign(vx[hit:])) != 0)) if hit < last else 0
    return {
        "swing_down": d.interval(F(s, start), F(s, hit), f"ball moves from frame {F(s, start)}; the head pin's displacement (from frame {F(s, ref)}) exceeds 3 mm at frame {F(s, hit)}"),
        "head_pin_hit": d.interval(F(s, max(hit - 2, 0)), F(s, hit), f"head pin displaced by 3 mm at frame {F(s, hit)}"),
        "chain": d.interval(F(s, first), F(s, final), "frames where pins' tilt first exceeds 45 deg: " + ", ".join(f"pin {i} {F(s, t)}" for i, t in sorted(falls.items()))),
        "pins_down": {**d.interval(F(s, final), F(s, last), f"{len(down_end)} of {N} pins lie tilted beyond 45 deg at the end"), "persists_until_s": 8.0},
        "swings_on": {**d.interval(F(s, hit), F(s, last), f"ball's x velocity reverses {turns} times after the strike; its x at the end {b[-1, 0]:+.3f} m"), "persists_until_s": 8.0},
    }
