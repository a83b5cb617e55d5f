"""leaf_blow: hand-written part of the task; intervals are measured from the truth trajectories."""

from physcodegym.tasks import events as d

# The values truth.py was built with (a family member's generator rewrites this literal; see family.py).
PARAMS = {'ball_mass': 0.0064,
 'ball_r': 0.038,
 'ball_start': [-0.04, -0.12],
 'box_mass': 0.048,
 'box_rgb': [0.6, 0.45, 0.3],
 'box_size': [0.12, 0.08, 0.06],
 'box_start': [0.23, 0.19, 20.3],
 'camera_loc': [0.62, -2.18, 1.03],
 'camera_roll': 0.8,
 'camera_target': [0.55, 0.1, 0.48],
 'cup_colours': ['red', 'white'],
 'cup_h': 0.088,
 'cup_mass': 0.0072,
 'cup_r': [0.026, 0.038],
 'cup_rgbs': [[0.75, 0.1, 0.08], [0.9, 0.9, 0.87]],
 'cup_starts': [[-0.42, 0.13], [-0.24, -0.02]],
 'friction': 0.8,
 'ground_friction': 0.9,
 'hedge_rgb': [0.08, 0.18, 0.05],
 'lawn_rgb': [0.24, 0.3, 0.12],
 'leaf_mass': 0.0033,
 'leaf_rgbs': [[0.5, 0.2, 0.05], [0.75, 0.35, 0.05], [0.6, 0.45, 0.1]],
 'leaf_size': [0.09, 0.055],
 'leaf_starts': [[0.01, 0.14, 54.0], [0.3, -0.11, 9.0], [-0.48, -0.2, 22.8]],
 'lens': 26.4,
 'n_cups': 2,
 'n_leaves': 3,
 'samples': 2,
 'sky_strength': 0.17,
 'sun_azim': -22.7,
 'sun_elev': 56.8,
 'sun_energy': 2.61,
 'table_h': 0.74,
 'table_rgb': [0.55, 0.4, 0.24],
 'table_size': [1.4, 0.8],
 'task_id': 'leaf_blow_s1',
 'wind_flow': 0.16,
 'wind_height': 0.8,
 'wind_radius': 0.3,
 'wind_strength': 2.87,
 'wind_yaw_deg': 0.0}
C1, C2 = (PARAMS["cup_colours"] + ["white", "white"])[:2]
NC, NL = PARAMS["n_cups"], PARAMS["n_leaves"]
CUPS = [f"Cup{i + 1}" for i in range(NC)]
LEAVES = [f"Leaf{i + 1}" for i in range(NL)]
LIGHT = [*CUPS, "PaperBall", *LEAVES]  # what the wind carries off the table
TOP = PARAMS["table_h"]
CUP_ROLES = [f"cup{i + 1}" for i in range(NC)]
LEAF_ROLES = [f"leaf{i + 1}" for i in range(NL)]
LIGHT_ROLES = [*CUP_ROLES, "paper_ball", *LEAF_ROLES]

TASK = {
    "id": PARAMS["task_id"],
    "title": "Paper cups, a paper ball and leaves blown off a garden table",
    "category": "wind",
    "summary": f"On a wooden garden table on a lawn stand a {C1} and a {C2} paper cup, a crumpled paper ball, a small cardboard box "
    f"and {NL} dry leaves. A steady wind from the left pushes the light things across the table: the leaves and the paper ball "
    f"slide and roll away at once, the cups tip onto their sides and roll after them; all of them go over the right edge, drop "
    f"onto the grass and come to rest there, while the heavier cardboard box stays where it is.",
    "roles": [
        *({"name": r, "description": f"{c} paper cup (a tapered cylinder)", "truth_object": n, "name_hints": ["cup", "beaker", "tumbler"]}
          for r, c, n in zip(CUP_ROLES, [C1, C2], CUPS, strict=False)),
        {"name": "paper_ball", "description": "crumpled white paper ball", "truth_object": "PaperBall", "name_hints": ["ball", "paper", "crumpled", "wad"]},
        *({"name": r, "description": "dry leaf (thin flat plate)", "truth_object": n, "name_hints": ["leaf", "leaves", "plate"]}
          for r, n in zip(LEAF_ROLES, LEAVES, strict=True)),
        {"name": "box", "description": "small cardboard box that stays on the table", "core": False, "truth_object": "Box", "name_hints": ["box", "carton", "cardboard"]},
        {"name": "table", "description": "wooden garden table top", "core": False, "truth_object": "Table", "name_hints": ["table", "top", "desk"]},
        {"name": "ground", "description": "lawn the blown things land on", "core": False, "truth_object": "Lawn", "name_hints": ["lawn", "grass", "ground", "floor"]},
        {"name": "wind", "description": "wind force field blowing from the left", "core": False, "truth_object": "Wind", "name_hints": ["wind", "field", "force", "gust"]},
    ],
    "checklist": [
        {"id": "cups", "category": "paper cup", "count": NC, "attributes": [C1, C2, "upright", "tapered"], "layout": "left half of the table top", "roles": CUP_ROLES},
        {"id": "paper_ball", "category": "paper ball", "count": 1, "attributes": ["white", "crumpled"], "layout": "middle of the table top", "roles": ["paper_ball"]},
        {"id": "leaves", "category": "leaf", "count": NL, "attributes": ["orange-brown", "flat", "dry"], "layout": "lying flat, spread over the table top", "roles": LEAF_ROLES},
        {"id": "box", "category": "cardboard box", "count": 1, "attributes": ["brown", "small"], "layout": "back right of the table top", "roles": ["box"]},
        {"id": "table", "category": "garden table", "count": 1, "attributes": ["wooden", "four legs"], "layout": "on a lawn in front of a hedge", "roles": ["table", "ground"]},
    ],
    "events": [
        {"id": "blown_along", "kind": "action", "description": "the wind sets the leaves, the paper ball and the cups moving to the right across the table top", "roles": [*LIGHT_ROLES, "wind", "table"], "weight": 2.0, "key": True},
        {"id": "cups_tip", "kind": "action", "description": "the paper cups tip over onto their sides and roll", "roles": [*CUP_ROLES, "wind"], "weight": 1.0},
        {"id": "blown_off", "kind": "action", "description": "the light things go over the table's right edge one after another and fall", "roles": [*LIGHT_ROLES, "table"], "weight": 1.5, "after": ["blown_along"]},
        {"id": "land_on_lawn", "kind": "action", "description": "they land on the grass to the right of the table", "roles": [*LIGHT_ROLES, "ground"], "weight": 1.0, "after": ["blown_off"]},
        {"id": "box_stays", "kind": "persistence", "description": "the heavier cardboard box stays in place on the table throughout", "roles": ["box", "table"], "weight": 1.0},
        {"id": "all_rest", "kind": "final_state", "description": "everything lies still: the cups, the paper ball and the leaves on the lawn, the box on the table", "roles": [*LIGHT_ROLES, "box", "ground"], "weight": 1.0, "after": ["land_on_lawn"]},
    ],
    "rubric": {
        "initial_conditions": ["every object at rest on the table top at the start (cups upright, leaves flat)"],
        "actuation": ["a steady WIND force field from the left, acting from the first frame (the video shows only its effect)"],
        "equivalent_representations": [
            "convex hulls or cone/cylinder shapes for the cups; convex hull or sphere for the paper ball; thin boxes or hulls for the leaves",
            "the wind as a WIND field (with air-drag flow, a limited reach or noise) or as forces from a TURBULENCE/FORCE field",
            "the table as a passive box top on legs; the lawn as a passive plane or box",
        ],
        "criteria": [
            {"id": "sim_light", "description": "the cups, the paper ball and the leaves move by rigid-body simulation", "weight": 2.0, "roles": LIGHT_ROLES, "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no keyframes, drivers or handlers move the objects", "weight": 1.0, "roles": [*LIGHT_ROLES, "box"], "check": "no_scripted_motion", "structural": True},
            {"id": "responds_wind", "description": "the paper ball's and the leaves' motion depends on the wind field", "weight": 1.5, "roles": ["paper_ball", *LEAF_ROLES], "check": "responds_to", "params": {"field": "wind"}},
            {"id": "ball_rests_on_lawn", "description": "the paper ball ends lying on the visible lawn (not a hidden support)", "weight": 1.0, "roles": ["paper_ball"], "check": "supported_by", "params": {"support": "ground"}, "structural": True},
            {"id": "box_on_table", "description": "the cardboard box rests on the table top", "weight": 1.0, "roles": ["box"], "check": "supported_by", "params": {"support": "table"}, "structural": True},
            {"id": "no_penetration", "description": "no object sinks into the table, the lawn or another object", "weight": 1.0, "roles": [*LIGHT_ROLES, "box", "table", "ground"], "check": "no_interpenetration", "structural": True},
            {"id": "stable", "description": "no NaN, explosion or jitter at rest", "weight": 0.5, "roles": [*CUP_ROLES, "paper_ball", "leaf1"], "check": "numerically_stable"},
            {
                "id": "cf_no_wind",
                "description": "without the wind the paper ball stays where it was put on the table",
                "weight": 2.0,
                "roles": ["paper_ball", "wind"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the wind field disabled: the paper ball is 0.017 m from its start at 4 s (it only settles onto a flat of its crumpled hull; baseline: 1.79 m, on the lawn); the cups and leaves move less than 0.1 mm (truth_counterfactuals.json)",
                "counterfactual": {
                    "intervention": {"kind": "disable_field", "roles": ["wind"]},
                    "expected": {"measure": "displacement", "role": "paper_ball", "at_s": 4.0, "op": "lt", "value": 0.1, "unit": "m"},
                },
            },
            {
                "id": "cf_no_table",
                "description": "without the table top the cardboard box would fall to the lawn",
                "weight": 1.0,
                "roles": ["box", "table"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the table top removed: the box's lowest centre height by 2 s is 0.030 m, lying on the lawn (baseline: 0.770 m, on the table top all along; truth_counterfactuals.json)",
                "counterfactual": {
                    "intervention": {"kind": "remove_support", "roles": ["table"]},
                    "expected": {"measure": "min_height", "role": "box", "at_s": 2.0, "op": "lt", "value": round(TOP / 2, 3), "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    import numpy as np

    F = d.frame_of
    last = len(s.frames) - 1
    z = {n: d.loc(s, n)[:, 2] for n in LIGHT}
    moved = {n: d.first_moving(s, n, thr=0.01) for n in LIGHT}
    start = {n: (i if i is not None else last) for n, i in moved.items()}
    tip = {}
    for n in CUPS:
        k = d.first_true(d.tilt_deg(s, n) > 45.0)
        tip[n] = k if k is not None else last
    off = {}
    for n in LIGHT:  # centre below the table top: gone over the edge
        k = d.first_true(z[n] < TOP - 0.03)
        off[n] = k if k is not None else last
    land = {}
    for n in LIGHT:  # centre within 12 cm of the lawn
        k = d.first_true(z[n] < 0.12)
        land[n] = k if k is not None else last
    settle = {}
    for n in [*LIGHT, "Box"]:
        st = d.settled_from(s, n, v_thr=0.03)
        settle[n] = st if st is not None else last
    rest = max(settle.values())
    box = d.loc(s, "Box")
    box_move = float(np.linalg.norm(box - box[0], axis=1).max())
    first_off = min(off, key=off.get)
    return {
        "blown_along": d.interval(F(s, min(start.values())), F(s, max(start.values())),
                                  "first frame each body is 1 cm from its start: " + ", ".join(f"{n} {F(s, i)}" for n, i in start.items())),
        "cups_tip": d.interval(F(s, min(tip.values())), F(s, max(tip.values())),
                               "cup axis more than 45 deg from vertical from " + ", ".join(f"{n} frame {F(s, i)}" for n, i in tip.items())),
        "blown_off": d.interval(F(s, min(off.values())), F(s, max(off.values())),
                                f"centre 3 cm below the table top (z<{TOP - 0.03:.2f} m) from " + ", ".join(f"{n} frame {F(s, i)}" for n, i in off.items())
                                + f"; {first_off} goes first"),
        "land_on_lawn": d.interval(F(s, min(land.values())), F(s, max(land.values())),
                                   "centre within 12 cm of the lawn from " + ", ".join(f"{n} frame {F(s, i)}" for n, i in land.items())),
        "box_stays": {**d.interval(F(s, 0), F(s, last), f"the box's centre moves at most {box_move * 1000:.1f} mm over the whole video"), "persists_until_s": 8.0},
        "all_rest": {**d.interval(F(s, rest), F(s, last), f"every body below 0.03 m/s from frame {F(s, rest)} to the end; final x of the blown things "
                                  + ", ".join(f"{n} {d.loc(s, n)[-1, 0]:.2f} m" for n in LIGHT) + f" (table edge at x={PARAMS['table_size'][0] / 2:.2f} m)"),
                    "persists_until_s": 8.0},
    }
