"""pendulum: hand-written part of the task; intervals are measured from the truth trajectories."""

import numpy as np
from physcodegym.tasks import events as d

PARAMS = {'bob_colour': 'green',
 'bob_mass': 0.44,
 'bob_metal': 0.5,
 'bob_r': 0.04,
 'bob_rgb': [0.1, 0.5, 0.2],
 'camera_loc': [0.1, -1.58, 0.53],
 'camera_target': [-0.0, 0.0, 0.33],
 'cavity': True,
 'lens': 34,
 'pivot_z': 0.61,
 'release_deg': 55,
 'rod_len': 0.45,
 'stand_colour': 'dark grey',
 'stand_rgb': [0.2, 0.2, 0.22],
 'studio_light': 'outdoor.sl',
 'table_rgb': [0.38, 0.3, 0.24],
 'task_id': 'pendulum_s3',
 'world_rgb': [0.4, 0.45, 0.55]}

def _an(word: str) -> str:
    """Indefinite article for a colour word ("an orange", "a red")."""
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


PIVOT = np.array([0.0, 0.0, PARAMS["pivot_z"]])
TASK = {
    "id": PARAMS["task_id"],
    "title": "Brass pendulum swinging from a stand",
    "category": "rigid",
    "subcategory": "swinging-suspension",
    "summary": f"A {PARAMS['bob_colour']} bob on a thin steel rod, hinged at the top of {_an(PARAMS['stand_colour'])} stand, is released at {PARAMS['release_deg']:g} degrees and swings back and forth.",
    "roles": [
        {"name": "bob", "description": f"{PARAMS['bob_colour']} bob with its rod (one rigid body)", "truth_object": "Bob", "name_hints": ["bob", "pendulum", "ball", "weight"]},
        {"name": "pivot", "description": "pivot block at the top of the stand", "core": False, "truth_object": "Pivot", "name_hints": ["pivot", "hinge", "anchor", "mount"]},
        {"name": "stand", "description": f"{PARAMS['stand_colour']} vertical post", "core": False, "required": False, "truth_object": "StandPost", "name_hints": ["stand", "post", "pole"]},
        {"name": "hinge", "description": "hinge constraint between pivot and bob", "core": False, "required": False, "truth_object": "PivotHinge", "name_hints": ["hinge", "constraint", "joint"]},
    ],
    "checklist": [
        {"id": "bob", "category": "pendulum bob", "count": 1, "attributes": [PARAMS["bob_colour"], "spherical", "metallic"], "layout": "raised to the right of the stand at release", "roles": ["bob"]},
        {"id": "rod", "category": "rod", "count": 1, "attributes": ["thin", "grey steel"], "layout": "from the pivot to the bob", "roles": ["bob"]},
        {"id": "stand", "category": "stand", "count": 1, "attributes": [PARAMS["stand_colour"], "metal", "base plate and vertical post"], "layout": "centre of the table", "roles": ["stand", "pivot"]},
    ],
    "events": [
        {"id": "release", "kind": "action", "description": "the bob is released from the right and swings down", "roles": ["bob"], "weight": 1.0},
        {"id": "first_bottom", "kind": "action", "description": "the bob passes the lowest point under the pivot", "roles": ["bob", "pivot"], "weight": 1.0, "key": True, "after": ["release"]},
        {"id": "far_side", "kind": "action", "description": "the bob rises to nearly the same height on the left side", "roles": ["bob"], "weight": 2.0, "after": ["first_bottom"]},
        {"id": "keeps_swinging", "kind": "persistence", "description": "the bob keeps swinging back and forth at a constant distance from the pivot", "roles": ["bob", "pivot"], "weight": 2.0, "after": ["far_side"]},
    ],
    "rubric": {
        "initial_conditions": [f"bob released at rest from an angle of about {PARAMS['release_deg']:g} degrees"],
        "actuation": [],
        "equivalent_representations": ["HINGE or POINT rigid-body constraint", "bob and rod as one body or two bodies joined by a FIXED constraint"],
        "criteria": [
            {"id": "sim_bob", "description": "the bob swings by simulation", "weight": 2.0, "roles": ["bob"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no keyframed rotation or handler drives the bob", "weight": 1.0, "roles": ["bob"], "check": "no_scripted_motion", "structural": True},
            {"id": "energy", "description": "the swing amplitude never grows", "weight": 1.5, "roles": ["bob"], "check": "energy_non_increasing"},
            {"id": "stable", "description": "no explosion or jitter", "weight": 0.5, "roles": ["bob"], "check": "numerically_stable"},
            {
                "id": "cf_no_hinge",
                "description": "without the hinge the bob falls instead of swinging",
                "weight": 2.0,
                "roles": ["bob", "hinge"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the hinge constraint disabled: the bob drops freely (min height by 2 s -19.3 m; the bob collides with nothing in this scene)",
                "counterfactual": {
                    "intervention": {"kind": "disable_actuator", "roles": ["hinge"]},
                    "expected": {"measure": "min_height", "role": "bob", "at_s": 2.0, "op": "lt", "value": 0.1, "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    p = d.loc(s, "Bob")
    x = p[:, 0]
    r = np.linalg.norm(p - PIVOT, axis=1)
    start = d.first_moving(s, "Bob", 0.003) or 0
    cross = [i for i in range(1, len(x)) if np.sign(x[i]) != np.sign(x[i - 1])]
    first = cross[0] if cross else int(p[:, 2].argmin())
    far = first + int(np.argmin(x[first:first + 40]))
    F = d.frame_of
    return {
        "release": d.interval(F(s, start), F(s, first), f"bob leaves its release pose at frame {F(s, start)}"),
        "first_bottom": d.interval(F(s, max(first - 1, 0)), F(s, first), f"bob's x crosses the pivot line (x=0) first at frame {F(s, first)}"),
        "far_side": d.interval(F(s, first), F(s, far), f"bob reaches its leftmost point x={x[far]:.3f} m (release x={x[0]:.3f} m) at frame {F(s, far)}"),
        "keeps_swinging": {**d.interval(F(s, far), F(s, len(x) - 1), f"{len(cross)} crossings of the pivot line over 8 s; rod length {r.min():.3f}-{r.max():.3f} m"), "persists_until_s": 8.0},
    }
