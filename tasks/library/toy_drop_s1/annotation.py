"""toy_drop: hand-written part of the task; intervals are measured from the truth trajectories."""

from physcodegym.tasks import events as d

# The values truth.py was built with (a family member's generator rewrites this literal; see family.py).
PARAMS = {'ball_bounce': 0.93,
 'ball_colour': 'yellow',
 'ball_mass': 0.04,
 'ball_r': 0.052,
 'ball_rgb': [0.9, 0.75, 0.1],
 'ball_rough': 0.43,
 'ball_start': [-0.312, -0.023, 0.603],
 'block_colours': ['blue', 'green'],
 'block_mass': 0.077,
 'block_rgbs': [[0.1, 0.25, 0.7], [0.15, 0.55, 0.2]],
 'block_rots': [[4.8, -13.9, 60.9], [23.5, 40.7, 83.4]],
 'block_size': 0.075,
 'block_starts': [[-0.031, 0.095, 0.523], [0.132, 0.161, 0.455]],
 'camera_loc': [0.174, -1.103, 0.465],
 'camera_roll': 0.0,
 'camera_target': [0.0, 0.05, 0.36],
 'drum_colour': 'silver',
 'drum_h': 0.088,
 'drum_mass': 0.072,
 'drum_r': 0.049,
 'drum_rgb': [0.7, 0.7, 0.72],
 'drum_rot': [11.2, 0.0, 17.8],
 'drum_start': [0.226, -0.056, 0.307],
 'lawn_rgb': [0.24, 0.3, 0.12],
 'lens': 26.9,
 'mat_bounce': 0.6,
 'mat_colour': 'red',
 'mat_friction': 0.85,
 'mat_rgb': [0.7, 0.12, 0.1],
 'mat_size': [1.1, 0.75],
 'mat_thick': 0.029,
 'n_blocks': 2,
 'samples': 2,
 'sky_strength': 0.17,
 'sun_azim': -29.0,
 'sun_elev': 40.1,
 'sun_energy': 2.69,
 'task_id': 'toy_drop_s1',
 'wall_h': 0.69,
 'wall_rgb': [0.62, 0.5, 0.4],
 'wall_y': 3.22}
BALL = PARAMS["ball_colour"]
MAT = PARAMS["mat_colour"]
DRUM = PARAMS["drum_colour"]
B1, B2 = PARAMS["block_colours"]
REST_Z = PARAMS["mat_thick"] + PARAMS["ball_r"]  # ball centre resting on the mat
TOYS = ["Ball", "Block1", "Block2", "Drum"]

TASK = {
    "id": PARAMS["task_id"],
    "title": "Toys dropped onto a foam play mat",
    "category": "rigid",
    "subcategory": "falling-bouncing",
    "summary": f"A {BALL} rubber ball, a {B1} and a {B2} wooden block and a {DRUM} toy drum are let go in the air above a {MAT} "
    f"foam play mat on a lawn; the ball bounces several times with shrinking height, the blocks tumble and settle on a face, "
    f"the drum lands and ends standing on its flat end, and everything comes to rest on the mat.",
    "roles": [
        {"name": "ball", "description": f"{BALL} rubber ball", "truth_object": "Ball", "name_hints": ["ball", "sphere"]},
        {"name": "block1", "description": f"{B1} wooden block", "truth_object": "Block1", "name_hints": ["block", "cube", "brick"]},
        {"name": "block2", "description": f"{B2} wooden block", "truth_object": "Block2", "name_hints": ["block", "cube", "brick"]},
        {"name": "drum", "description": f"{DRUM} toy drum (short cylinder)", "truth_object": "Drum", "name_hints": ["drum", "cylinder", "can", "tin"]},
        {"name": "mat", "description": f"{MAT} foam play mat the toys land on", "core": False, "truth_object": "PlayMat", "name_hints": ["mat", "pad", "foam"]},
        {"name": "ground", "description": "lawn under the mat", "core": False, "required": False, "truth_object": "Lawn", "name_hints": ["lawn", "grass", "ground", "floor"]},
    ],
    "checklist": [
        {"id": "ball", "category": "ball", "count": 1, "attributes": [BALL, "rubber", f"about {round(PARAMS['ball_r'] * 200):g} cm"], "layout": "highest of the toys, in the air above the left part of the mat", "roles": ["ball"]},
        {"id": "blocks", "category": "toy block", "count": 2, "attributes": [f"one {B1}, one {B2}", "wooden", "cubes", "tilted"], "layout": "in the air above the middle and right of the mat", "roles": ["block1", "block2"]},
        {"id": "drum", "category": "toy drum", "count": 1, "attributes": [DRUM, "short cylinder", "tilted"], "layout": "lowest of the toys, above the front right of the mat", "roles": ["drum"]},
        {"id": "mat", "category": "play mat", "count": 1, "attributes": [MAT, "foam", "rectangular"], "layout": "flat on a lawn in front of a low stone wall", "roles": ["mat", "ground"]},
    ],
    "events": [
        {"id": "ball_first_impact", "kind": "action", "description": "the ball falls and hits the mat for the first time", "roles": ["ball", "mat"], "weight": 2.0, "key": True},
        {"id": "toys_land", "kind": "action", "description": "the blocks and the drum hit the mat", "roles": ["block1", "block2", "drum", "mat"], "weight": 1.0},
        {"id": "ball_bounces", "kind": "action", "description": "the ball rebounds several times, each rebound lower than the one before", "roles": ["ball"], "weight": 2.0, "after": ["ball_first_impact"]},
        {"id": "toys_settle", "kind": "action", "description": "the blocks tumble and settle on a face, the drum ends standing on its flat end", "roles": ["block1", "block2", "drum"], "weight": 1.0, "after": ["toys_land"]},
        {"id": "all_rest", "kind": "final_state", "description": "all four toys lie still on the mat until the end", "roles": ["ball", "block1", "block2", "drum", "mat"], "weight": 1.0, "after": ["ball_bounces", "toys_settle"]},
    ],
    "rubric": {
        "initial_conditions": ["every toy released at rest in the air above the mat (heights within the video's evidence)"],
        "actuation": [],
        "equivalent_representations": [
            "sphere collision shape or a convex hull for the ball; box or convex hull for the blocks; cylinder or convex hull for the drum",
            "mat as a passive box (or a collision plane at its top face) on a passive ground",
            "bounciness as restitution on ball and mat",
        ],
        "criteria": [
            {"id": "sim_ball", "description": "the ball falls and bounces by rigid-body simulation", "weight": 2.0, "roles": ["ball"], "check": "moves_by_simulation", "structural": True},
            {"id": "sim_toys", "description": "the blocks and the drum fall and tumble by simulation", "weight": 1.0, "roles": ["block1", "block2", "drum"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no keyframes, drivers or handlers move the toys", "weight": 1.0, "roles": ["ball", "block1", "drum"], "check": "no_scripted_motion", "structural": True},
            {"id": "ball_rests_on_mat", "description": "the ball ends resting on the visible mat (not a hidden support)", "weight": 1.5, "roles": ["ball"], "check": "supported_by", "params": {"support": "mat"}, "structural": True},
            {"id": "ball_hits_mat", "description": "the ball touches the mat during the first second and a half", "weight": 1.0, "roles": ["ball"], "check": "contacts", "params": {"other": "mat", "before_s": 1.5}},
            {"id": "no_penetration", "description": "no toy sinks into the mat or into another toy", "weight": 1.0, "roles": ["ball", "block1", "block2", "drum", "mat"], "check": "no_interpenetration", "structural": True},
            {"id": "energy", "description": "the ball's bounce heights never grow", "weight": 1.0, "roles": ["ball"], "check": "energy_non_increasing"},
            {"id": "stable", "description": "no NaN, explosion or jitter at rest", "weight": 0.5, "roles": ["ball", "block1", "drum"], "check": "numerically_stable"},
            {
                "id": "cf_no_ground",
                "description": "without the mat and the lawn the ball falls on, far below the mat",
                "weight": 2.0,
                "roles": ["ball", "mat", "ground"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the mat and the lawn removed: the ball's lowest height by 2 s is -18.7 m (baseline: it never goes below the mat top; truth_counterfactuals.json)",
                "counterfactual": {
                    "intervention": {"kind": "remove_support", "roles": ["mat", "ground"]},
                    "expected": {"measure": "min_height", "role": "ball", "at_s": 2.0, "op": "lt", "value": -1.0, "unit": "m"},
                },
            },
            {
                "id": "cf_ball_through_mat",
                "description": "if the ball did not collide with the mat it would drop through the foam and end on the lawn, lower than on the mat",
                "weight": 1.0,
                "roles": ["ball", "mat"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with ball-mat contact disabled: the ball ends at z = 0.050 m, on the lawn (baseline: 0.080 m, on the mat top; truth_counterfactuals.json)",
                "counterfactual": {
                    "intervention": {"kind": "disable_contact", "roles": ["ball", "mat"]},
                    "expected": {"measure": "final_height", "role": "ball", "at_s": 5.0, "op": "lt", "value": round(REST_Z - 0.015, 3), "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    import numpy as np

    F = d.frame_of
    last = len(s.frames) - 1
    z = d.loc(s, "Ball")[:, 2]
    b = d.bounces(z)
    first = b[0] if b else int(z.argmin())
    apex = [float(z[i:j].max()) for i, j in zip(b, b[1:] + [last + 1], strict=True)]
    big = [i for i, h in zip(b, apex, strict=True) if h - z[i] > 0.01] or [first]  # rebounds higher than 1 cm
    lands = {}
    for n in ("Block1", "Block2", "Drum"):  # first frame after the fall is braked (upward acceleration > 1.8 m/s^2)
        zn = d.loc(s, n)[:, 2]
        k = d.first_true(np.diff(zn, 2) > 0.002)
        lands[n] = min(k + 2, last) if k is not None else int(zn.argmin())
    settle = {}
    for n in TOYS:
        st = d.settled_from(s, n, v_thr=0.02)
        settle[n] = st if st is not None else last
    tilt = {n: float(d.tilt_deg(s, n)[-1]) for n in ("Block1", "Block2", "Drum")}
    face = {n: min(t % 90.0, 90.0 - t % 90.0) for n, t in tilt.items()}
    rest = max(settle.values())
    return {
        "ball_first_impact": d.interval(F(s, max(first - 3, 0)), F(s, first), f"the ball's vertical velocity first turns from falling to rising at frame {F(s, first)} (z={z[first]:.3f} m, on the mat top)"),
        "toys_land": d.interval(F(s, min(lands.values())), F(s, max(lands.values())),
                                "first frames on the mat (fall braked): " + ", ".join(f"{n} frame {F(s, i)}" for n, i in lands.items())),
        "ball_bounces": d.interval(F(s, first), F(s, big[-1]), f"{len(big)} impacts followed by a rebound of more than 1 cm between frames {F(s, first)} and {F(s, big[-1])}; "
                                   f"rebound apexes {', '.join(f'{h:.2f}' for h in apex[:len(big)])} m"),
        "toys_settle": d.interval(F(s, min(lands.values())), F(s, max(settle[n] for n in ("Block1", "Block2", "Drum"))),
                                  "speeds stay below 0.02 m/s from " + ", ".join(f"{n} frame {F(s, settle[n])}" for n in ("Block1", "Block2", "Drum"))
                                  + "; final tilt " + ", ".join(f"{n} {tilt[n]:.0f} deg ({face[n]:.1f} deg off a face)" for n in tilt)),
        "all_rest": {**d.interval(F(s, rest), F(s, last), f"all four toys below 0.02 m/s from frame {F(s, rest)} to the end; ball at z={z[-1]:.3f} m "
                                  f"(resting height on the mat {REST_Z:.3f} m)"), "persists_until_s": 8.0},
    }
