"""paddle_wheel: hand-written part of the task; intervals are measured from the truth trajectories."""

from physcodegym.tasks import events as d

# The values truth.py was built with (a family member's generator rewrites this literal; see family.py).
PARAMS = {'axle_h': 0.198,
 'ball_kind': ['steel', [0.75, 0.76, 0.78], 0.15, 1.0],
 'ball_mass': 0.1338,
 'ball_r': 0.016,
 'ball_s': [0.045, 0.183, 0.321, 0.459],
 'bearing_damping': 0.79,
 'camera_loc': [-0.131, -0.676, 0.392],
 'camera_target': [-0.035, 0.0, 0.188],
 'chute_colour': 'yellow',
 'chute_deg': 8.9,
 'chute_len': 0.539,
 'chute_rgb': [0.85, 0.65, 0.1],
 'drop_x': 0.073,
 'exposure': -0.86,
 'flag_colour': ['Blue', [0.08, 0.2, 0.7]],
 'floor_rgb': [0.3, 0.3, 0.32],
 'frame_rgb': [0.5, 0.05, 0.04],
 'hub_r': 0.017,
 'lens': 27.8,
 'paddle_len': 0.089,
 'paddle_mass': 0.0679,
 'paddle_rgb': [0.72, 0.55, 0.33],
 'paddle_thick': 0.005,
 'paddle_width': 0.083,
 'paddles': 5,
 'roll_deg': 0.3,
 'samples': 2,
 'sky_strength': 0.47,
 'sun_angle_deg': 4.2,
 'sun_azimuth_deg': 23.5,
 'sun_elevation_deg': 51.9,
 'sun_energy': 3.28,
 'table_rgb': [0.2, 0.12, 0.07],
 'table_size': [1.4, 0.8],
 'task_id': 'paddle_wheel_s1',
 'tray_rgb': [0.85, 0.83, 0.78],
 'wall_rgb': [0.7, 0.74, 0.78]}
N = len(PARAMS["ball_s"])
BALL = PARAMS["ball_kind"][0]
FLAG = PARAMS["flag_colour"][0].lower()
CHUTE = PARAMS["chute_colour"]
H = PARAMS["axle_h"]
BALL_ROLES = [f"ball{i + 1}" for i in range(N)]

TASK = {
    "id": PARAMS["task_id"],
    "title": "Falling balls turn a paddle wheel",
    "category": "rigid",
    "subcategory": "rotation",
    "summary": f"{N} {BALL} balls roll down a {CHUTE} chute one after another and drop through a slot onto the paddles of a "
    f"free wooden wheel on a horizontal axle; their weight turns the wheel, which spins on and slowly runs down while the balls land in a tray.",
    "roles": [
        {"name": "wheel", "description": "hub of the paddle wheel (turns on the axle)", "truth_object": "Hub", "name_hints": ["hub", "wheel", "axle", "rotor"]},
        {"name": "paddle", "description": f"the {FLAG} painted paddle of the wheel", "truth_object": "Paddle1", "name_hints": ["paddle", "blade", "vane"]},
    ]
    + [
        {"name": r, "description": f"{BALL} ball {i + 1} (counted from the chute's lower end)", "core": i == 0, "truth_object": f"Ball{i + 1}", "name_hints": ["ball", "marble", "sphere"]}
        for i, r in enumerate(BALL_ROLES)
    ]
    + [
        {"name": "chute", "description": f"{CHUTE} chute floor", "core": False, "truth_object": "ChuteFloor", "name_hints": ["chute", "ramp", "track", "floor"]},
        {"name": "post", "description": "post of the stand that carries the axle", "core": False, "truth_object": "PostBack", "name_hints": ["post", "stand", "frame"]},
        {"name": "axle", "description": "hinge joint of the wheel on its stand", "core": False, "required": False, "truth_object": "Axle", "name_hints": ["axle", "hinge", "bearing"]},
    ],
    "checklist": [
        {"id": "wheel", "category": "paddle wheel", "count": 1, "attributes": [f"{PARAMS['paddles']} flat wooden paddles", f"one paddle painted {FLAG}", "steel hub"], "layout": "on a horizontal axle between two dark posts, above a white tray", "roles": ["wheel", "paddle", "post"]},
        {"id": "chute", "category": "chute", "count": 1, "attributes": [CHUTE, "open channel with side rails", "end stop with a drop slot"], "layout": "slopes down from the left, on a wooden leg, and ends above the right half of the wheel", "roles": ["chute"]},
        {"id": "balls", "category": "ball", "count": N, "attributes": [BALL, "shiny", "small"], "layout": "in a row on the chute, spaced apart", "roles": BALL_ROLES},
        {"id": "tray", "category": "tray", "count": 1, "attributes": ["white", "shallow"], "layout": "on the wooden table under the wheel", "roles": []},
    ],
    "events": [
        {"id": "balls_roll", "kind": "action", "description": "the balls roll down the chute and the first drops through the slot", "roles": ["ball1", "chute"], "weight": 1.0},
        {"id": "first_strike", "kind": "action", "description": "the first ball lands on a paddle and the wheel starts to turn", "roles": ["ball1", "paddle", "wheel"], "weight": 2.0, "key": True, "after": ["balls_roll"]},
        {"id": "full_turn", "kind": "action", "description": "the wheel completes a full turn", "roles": ["wheel", "paddle"], "weight": 1.0, "after": ["first_strike"]},
        {"id": "balls_in_tray", "kind": "final_state", "description": "every ball ends up in the tray", "roles": BALL_ROLES, "weight": 1.0, "after": ["first_strike"]},
        {"id": "runs_down", "kind": "persistence", "description": "the wheel keeps turning the same way, slowing down, until the end", "roles": ["wheel"], "weight": 1.0, "after": ["full_turn"]},
    ],
    "rubric": {
        "initial_conditions": ["balls at rest on the chute", "wheel at rest, free on its axle"],
        "actuation": [],
        "equivalent_representations": [
            "wheel held by a HINGE constraint (or a POINT-free axle modelled as a passive rod through a hole)",
            "paddles glued to the hub by FIXED constraints, or one compound/mesh body",
            "bearing friction as angular damping",
        ],
        "criteria": [
            {"id": "sim_wheel", "description": "the wheel turns by rigid-body simulation, not keyframes or a motor", "weight": 2.0, "roles": ["wheel", "paddle"], "check": "moves_by_simulation", "structural": True},
            {"id": "sim_balls", "description": "the balls roll and fall by simulation", "weight": 1.5, "roles": ["ball1", "ball2"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no scripted motion on wheel or balls", "weight": 1.0, "roles": ["wheel", "paddle", "ball1"], "check": "no_scripted_motion", "structural": True},
            {"id": "ball_on_chute", "description": "the first ball starts on the chute", "weight": 0.5, "roles": ["ball1"], "check": "supported_by", "params": {"support": "chute", "at_s": 0.0}, "structural": True},
            {"id": "ball_hits_paddles", "description": "a ball materially touches the paddles", "weight": 1.0, "roles": ["ball1"], "check": "contacts", "params": {"other": "paddle", "before_s": 4.0}},
            {"id": "no_penetration", "description": "no solid overlap among balls and wheel", "weight": 1.0, "roles": ["ball1", "ball2", "paddle"], "check": "no_interpenetration", "structural": True},
            {"id": "stable", "description": "no jitter or explosion", "weight": 0.5, "roles": ["wheel", "ball1"], "check": "numerically_stable"},
            {
                "id": "cf_no_balls",
                "description": "without the balls the balanced wheel does not turn (the balls' weight is what turns it: no hidden motor)",
                "weight": 2.0,
                "roles": BALL_ROLES + ["paddle"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with every ball removed (measured responses in truth_counterfactuals.json; baseline: the paddle sweeps round the axle)",
                "counterfactual": {
                    "intervention": {"kind": "remove_object", "roles": BALL_ROLES},
                    "expected": {"measure": "max_displacement", "role": "paddle", "at_s": 6.0, "op": "lt", "value": 0.01, "unit": "m"},
                },
            },
            {
                "id": "cf_no_axle",
                "description": "without its axle joint the wheel drops out of the stand",
                "weight": 1.0,
                "roles": ["axle", "wheel"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the axle hinge disabled (measured responses in truth_counterfactuals.json; baseline: the hub stays at the axle height)",
                "counterfactual": {
                    "intervention": {"kind": "disable_joint", "roles": ["axle"]},
                    "expected": {"measure": "min_height", "role": "wheel", "at_s": 3.0, "op": "lt", "value": round(H - 0.05, 3), "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    import numpy as np

    p = d.loc(s, "Paddle1")
    ang = np.degrees(np.unwrap(np.arctan2(p[:, 2] - H, p[:, 0])))
    ang = ang - ang[0]
    last = len(ang) - 1
    F = d.frame_of
    start = d.first_moving(s, "Ball1", 0.003) or 0
    b1 = d.loc(s, "Ball1")
    dropped = d.first_true(b1[:, 2] < b1[0, 2] - 0.03)
    dropped = dropped if dropped is not None else last
    strike = d.first_true(np.abs(ang) > 3.0)
    strike = strike if strike is not None else last
    turn = d.first_true(np.abs(ang) >= 360.0)
    turn = turn if turn is not None else last
    low = np.all([d.loc(s, f"Ball{i + 1}")[:, 2] < 0.05 for i in range(N)], axis=0)
    in_tray = d.first_true(low & (np.cumsum(~low[::-1])[::-1] == 0)) if low[-1] else None
    in_tray = in_tray if in_tray is not None else last
    rate = np.abs(np.diff(ang)) * s.fps  # deg/s
    peak = int(np.argmax(rate))
    sign = np.sign(ang[turn]) if turn < last else 1.0
    return {
        "balls_roll": d.interval(F(s, start), F(s, dropped), f"ball 1 starts rolling at frame {F(s, start)} and has dropped 3 cm below its start at frame {F(s, dropped)}"),
        "first_strike": d.interval(F(s, dropped), F(s, strike), f"the red paddle's angle about the axle exceeds 3 deg at frame {F(s, strike)}"),
        "full_turn": d.interval(F(s, strike), F(s, turn), f"the paddle's angle reaches 360 deg at frame {F(s, turn)}"),
        "balls_in_tray": {**d.interval(F(s, in_tray), F(s, last), f"all {N} balls below 5 cm (in the tray) from frame {F(s, in_tray)} to the end"), "persists_until_s": 8.0},
        "runs_down": {
            **d.interval(F(s, turn), F(s, last), f"wheel turned {abs(ang[-1]):.0f} deg in all; speed {rate[peak]:.0f} deg/s at its peak (frame {F(s, peak)}), "
                         f"{rate[-15:].mean():.0f} deg/s over the last half second; turning {'the same way' if np.all(np.sign(np.diff(ang[turn:])) * sign >= -0.0) else 'with reversals'} after the full turn"),
            "persists_until_s": 8.0,
        },
    }
