"""ball_dominoes: hand-written part of the task; intervals are measured from the truth trajectories."""

import numpy as np
from physcodegym.tasks import events as d

PARAMS = {'ball_colour': 'black',
 'ball_kind': 'black steel',
 'ball_mass': 0.23,
 'ball_metal': 0.6,
 'ball_r': 0.032,
 'ball_rgb': [0.08, 0.08, 0.09],
 'ball_start': [-0.8454, 0.2061],
 'camera_loc': [-0.31, -1.92, 0.59],
 'camera_target': [-0.35, 0.0, 0.11],
 'cavity': True,
 'domino_mass': 0.056,
 'domino_size': [0.024, 0.087, 0.143],
 'domino_spacing': 0.09,
 'domino_x0': -0.1,
 'dominoes': [['black', [0.04, 0.04, 0.05]],
              ['purple', [0.45, 0.12, 0.65]],
              ['yellow', [0.92, 0.78, 0.08]],
              ['orange', [0.92, 0.4, 0.05]],
              ['red', [0.8, 0.06, 0.06]]],
 'lens': 36,
 'ramp_center': [-0.62, 0.0853],
 'ramp_colour': 'green',
 'ramp_deg': 16,
 'ramp_foot_x': -0.324,
 'ramp_rgb': [0.1, 0.55, 0.15],
 'studio_light': 'studio.sl',
 'table_rgb': [0.38, 0.3, 0.24],
 'task_id': 'ball_dominoes_s4',
 'world_rgb': [0.4, 0.45, 0.55]}

def _an(word: str) -> str:
    """Indefinite article for a colour word ("an orange", "a red")."""
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


NUMBERS = {4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
N = len(PARAMS["dominoes"])
MID = N // 2 + 1  # the middle domino role (the fourth of six)
NAMES = [c for c, _ in PARAMS["dominoes"]]
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]
TASK = {
    "id": PARAMS["task_id"],
    "title": "Ball rolls down a ramp into a row of dominoes",
    "category": "rigid",
    "subcategory": "collision-chain",
    "summary": f"{_an(PARAMS['ball_kind']).capitalize()} ball rolls down {_an(PARAMS['ramp_colour'])} ramp, hits the first of {NUMBERS[N]} coloured dominoes and they topple one after another.",
    "roles": [
        {"name": "ball", "description": f"small {PARAMS['ball_kind']} ball", "truth_object": "Ball", "name_hints": ["ball", "sphere", "marble"]},
        {"name": "ramp", "description": f"{PARAMS['ramp_colour']} inclined plank on the left", "core": False, "truth_object": "Ramp", "name_hints": ["ramp", "plank", "slope", "incline"]},
        {"name": "table", "description": "wooden tabletop", "core": False, "truth_object": "Table", "name_hints": ["table", "ground", "floor"]},
        {"name": "first_domino", "description": f"{NAMES[0]} domino nearest the ramp", "truth_object": "Domino1", "name_hints": ["domino1", "domino_1", "domino.000", "domino"]},
        {"name": "middle_domino", "description": f"{NAMES[MID - 1]} {ORDINALS[MID - 1]} domino", "truth_object": f"Domino{MID}", "name_hints": [f"domino{MID}", f"domino_{MID}"]},
        {"name": "last_domino", "description": f"{NAMES[-1]} domino at the far right", "truth_object": f"Domino{N}", "name_hints": [f"domino{N}", f"domino_{N}"]},
    ],
    "checklist": [
        {"id": "ball", "category": "ball", "count": 1, "attributes": [PARAMS["ball_colour"], "metallic", "small"], "layout": "at the top of the ramp on the left", "roles": ["ball"]},
        {"id": "ramp", "category": "ramp", "count": 1, "attributes": [PARAMS["ramp_colour"], "flat plank", f"inclined about {PARAMS['ramp_deg']:g} degrees"], "layout": "left side, sloping down to the right onto the table", "roles": ["ramp"]},
        {"id": "dominoes", "category": "domino", "count": N, "attributes": ["thin upright slabs", ", ".join(NAMES) + " from left to right"], "layout": "a straight row along the ball's path, evenly spaced", "roles": ["first_domino", "middle_domino", "last_domino"]},
        {"id": "table", "category": "table", "count": 1, "attributes": ["brown", "wooden"], "layout": "under everything", "roles": ["table"]},
    ],
    "events": [
        {"id": "ball_rolls", "kind": "action", "description": "the ball rolls down the ramp onto the table", "roles": ["ball", "ramp"], "weight": 1.0},
        {"id": "ball_hits_first", "kind": "action", "description": "the ball hits the first domino", "roles": ["ball", "first_domino"], "weight": 2.0, "key": True, "after": ["ball_rolls"]},
        {"id": "chain", "kind": "order", "description": "the dominoes topple one after another from left to right", "roles": ["first_domino", "middle_domino", "last_domino"], "weight": 2.0, "key": True, "after": ["ball_hits_first"]},
        {"id": "all_down", "kind": "final_state", "description": "all dominoes lie toppled and stay down", "roles": ["last_domino"], "weight": 1.0, "after": ["chain"]},
    ],
    "rubric": {
        "initial_conditions": ["ball released at rest on the ramp (or with a small initial speed via a kinematic hand-off)"],
        "actuation": [],
        "equivalent_representations": ["dominoes as boxes or convex hulls", "ramp as a passive box"],
        "criteria": [
            {"id": "sim_ball", "description": "the ball moves by rigid-body simulation", "weight": 1.5, "roles": ["ball"], "check": "moves_by_simulation", "structural": True},
            {"id": "sim_dominoes", "description": "the dominoes fall by simulation, not keyframes", "weight": 1.5, "roles": ["first_domino", "middle_domino", "last_domino"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no scripted motion on ball or dominoes", "weight": 1.0, "roles": ["ball", "first_domino", "last_domino"], "check": "no_scripted_motion", "structural": True},
            {"id": "contact_ball_domino", "description": "the ball materially touches the first domino", "weight": 1.0, "roles": ["ball"], "check": "contacts", "params": {"other": "first_domino", "before_s": 3.0}},
            {"id": "no_penetration", "description": "no solid overlap among ball and dominoes", "weight": 1.0, "roles": ["ball", "first_domino", "middle_domino", "last_domino"], "check": "no_interpenetration", "structural": True},
            {"id": "stable", "description": "no explosion or NaN", "weight": 0.5, "roles": ["ball", "last_domino"], "check": "numerically_stable"},
            {
                "id": "cf_no_contact",
                "description": "if the ball cannot touch the first domino, the first domino stays standing (it falls only because the ball hits it)",
                "weight": 2.0,
                "roles": ["ball", "first_domino"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with ball-first-domino contact disabled: first domino max displacement by 6 s 6e-5 m (baseline: toppled); ball path identical (0.0 m deviation) until the impact",
                "counterfactual": {
                    "intervention": {"kind": "disable_contact", "roles": ["ball", "first_domino"]},
                    "expected": {"measure": "max_displacement", "role": "first_domino", "at_s": 6.0, "op": "lt", "value": 0.02, "unit": "m",
                                 "preserved_roles": ["ball"], "preserved_until_s": 0.7, "preserve_tolerance_m": 0.02},
                },
            },
            {
                "id": "cf_no_ball",
                "description": "without the ball no domino falls",
                "weight": 1.0,
                "roles": ["ball", "last_domino"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the ball removed: last domino displacement at 6 s 6e-5 m",
                "counterfactual": {
                    "intervention": {"kind": "remove_object", "roles": ["ball"]},
                    "expected": {"measure": "displacement", "role": "last_domino", "at_s": 6.0, "op": "lt", "value": 0.01, "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    ball = d.loc(s, "Ball")
    start = d.first_moving(s, "Ball", 0.003) or 0
    on_table = d.first_true((ball[:, 0] > PARAMS["ramp_foot_x"]) & (ball[:, 2] < 0.05)) or start
    hit = d.first_moving(s, "Domino1", 0.002)
    hit = hit if hit is not None else len(ball) - 1
    falls = []
    for i in range(1, N + 1):
        t = d.first_true(d.tilt_deg(s, f"Domino{i}") > 45.0)
        falls.append(t if t is not None else len(ball) - 1)
    last = max(falls)
    down_all = d.first_true(np.all([d.tilt_deg(s, f"Domino{i}") > 45.0 for i in range(1, N + 1)], axis=0))
    down_all = down_all if down_all is not None else last
    F = d.frame_of
    return {
        "ball_rolls": d.interval(F(s, start), F(s, on_table), f"ball starts moving at frame {F(s, start)} and reaches the table (z<0.05 m, right of the ramp foot) at frame {F(s, on_table)}"),
        "ball_hits_first": d.interval(F(s, max(hit - 2, 0)), F(s, hit), f"first domino's displacement exceeds 2 mm at frame {F(s, hit)}"),
        "chain": d.interval(F(s, falls[0]), F(s, last), "frames where each domino's tilt first exceeds 45 deg: " + ", ".join(str(F(s, f)) for f in falls)),
        "all_down": {**d.interval(F(s, down_all), F(s, len(ball) - 1), f"all {N} dominoes tilted beyond 45 deg from frame {F(s, down_all)} to the end"), "persists_until_s": 8.0},
    }
