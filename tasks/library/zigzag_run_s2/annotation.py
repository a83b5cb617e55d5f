"""zigzag_run: hand-written part of the task; intervals are measured from the truth trajectories."""

import math

from physcodegym.tasks import events as d

# The values truth.py was built with (a family member's generator rewrites this literal; see family.py).
PARAMS = {'bin_rgb': [0.85, 0.84, 0.8],
 'board_rgb': [0.7, 0.6, 0.45],
 'camera_loc': [0.242, -0.959, 0.802],
 'camera_target': [0.0, 0.0, 0.332],
 'exposure': -1.35,
 'floor_rgb': [0.3, 0.3, 0.32],
 'lens': 25.7,
 'marble_colour': ['Red', [0.8, 0.05, 0.05]],
 'marble_friction': 0.44,
 'marble_mass': 0.0076,
 'marble_r': 0.009,
 'marble_start': 0.048,
 'roll_deg': 1.9,
 'samples': 2,
 'sky_strength': 0.28,
 'sun_angle_deg': 4.1,
 'sun_azimuth_deg': -8.3,
 'sun_elevation_deg': 30.5,
 'sun_energy': 3.71,
 'table_rgb': [0.36, 0.36, 0.38],
 'table_size': [1.4, 0.8],
 'task_id': 'zigzag_run_s2',
 'top_z': 0.664,
 'track_deg': 7.8,
 'track_drop': 0.066,
 'track_len': 0.474,
 'tracks': [['white', [0.85, 0.85, 0.82]],
            ['orange', [0.9, 0.35, 0.04]],
            ['green', [0.12, 0.45, 0.18]],
            ['red', [0.7, 0.08, 0.05]],
            ['natural', [0.75, 0.6, 0.4]]],
 'wall_rgb': [0.6, 0.62, 0.68]}
K = len(PARAMS["tracks"])
MARBLE = PARAMS["marble_colour"][0].lower()
COLOURS = [c for c, _ in PARAMS["tracks"]]
NAMES = ["TrackA", "TrackB", "TrackC", "TrackD", "TrackE"][:K]
R = PARAMS["marble_r"]
_A = math.radians(PARAMS["track_deg"])
Z_HI = [PARAMS["top_z"] - k * (PARAMS["track_len"] * math.tan(_A) + PARAMS["track_drop"]) for k in range(K)]

TASK = {
    "id": PARAMS["task_id"],
    "title": "Marble on a zigzag run",
    "category": "rigid",
    "subcategory": "rolling-tracks",
    "summary": f"A {MARBLE} marble rolls down a wooden marble-run board: {K} sloping tracks ({', '.join(COLOURS)}) fixed one above "
    "the other, each falling the opposite way; at every track's end it drops through a slot onto the next track and turns back, "
    "until it falls into a white bin on the table and stops.",
    "roles": [
        {"name": "marble", "description": f"{MARBLE} marble", "truth_object": "Marble", "name_hints": ["marble", "ball", "sphere"]},
        {"name": "top_track", "description": f"{COLOURS[0]} top track's floor", "core": False, "truth_object": "TrackAFloor", "name_hints": ["track", "ramp", "rail", "chute"]},
        {"name": "second_track", "description": f"{COLOURS[1]} second track's floor", "core": False, "truth_object": "TrackBFloor", "name_hints": ["track", "ramp", "rail", "chute"]},
        {"name": "top_stop", "description": "end stop of the top track", "core": False, "truth_object": "TrackAStop", "name_hints": ["stop", "end", "wall"]},
        {"name": "bin", "description": "white catch bin on the table", "core": False, "truth_object": "Bin", "name_hints": ["bin", "tray", "cup", "box"]},
        {"name": "board", "description": "wooden backboard", "core": False, "truth_object": "Board", "name_hints": ["board", "panel", "back"]},
    ],
    "checklist": [
        {"id": "board", "category": "marble-run board", "count": 1, "attributes": ["light plywood", "upright", "on a foot"], "layout": "standing on the table, facing the camera", "roles": ["board"]},
        {"id": "tracks", "category": "track", "count": K, "attributes": COLOURS + ["open channels with side rails", "end stops with a drop slot"], "layout": "fixed one above the other on the board, sloping alternately right and left", "roles": ["top_track", "second_track", "top_stop"]},
        {"id": "marble", "category": "marble", "count": 1, "attributes": [MARBLE, "glossy", "small"], "layout": "at the high (left) end of the top track", "roles": ["marble"]},
        {"id": "bin", "category": "bin", "count": 1, "attributes": ["white", "open box"], "layout": "on the table under the lowest track's end", "roles": ["bin"]},
    ],
    "events": [
        {"id": "first_run", "kind": "action", "description": "the marble rolls down the top track and drops through its slot", "roles": ["marble", "top_track"], "weight": 1.0, "key": True},
        {"id": "first_turn", "kind": "action", "description": "the marble lands on the second track and rolls back the other way", "roles": ["marble", "second_track"], "weight": 2.0, "key": True, "after": ["first_run"]},
        {"id": "last_turn", "kind": "action", "description": "the marble reaches the lowest track and turns along it", "roles": ["marble"], "weight": 1.0, "after": ["first_turn"]},
        {"id": "into_bin", "kind": "action", "description": "the marble drops off the lowest track into the bin", "roles": ["marble", "bin"], "weight": 1.0, "after": ["last_turn"]},
        {"id": "rests", "kind": "persistence", "description": "the marble lies still in the bin until the end", "roles": ["marble", "bin"], "weight": 1.0, "after": ["into_bin"]},
    ],
    "rubric": {
        "initial_conditions": ["marble at rest at the high end of the top track"],
        "actuation": [],
        "equivalent_representations": ["tracks as passive boxes or one passive mesh per track", "rolling resistance as angular damping"],
        "criteria": [
            {"id": "sim_marble", "description": "the marble rolls and drops by rigid-body simulation", "weight": 2.0, "roles": ["marble"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no scripted motion on the marble", "weight": 1.0, "roles": ["marble"], "check": "no_scripted_motion", "structural": True},
            {"id": "marble_on_track", "description": "the marble starts on the top track", "weight": 1.0, "roles": ["marble"], "check": "supported_by", "params": {"support": "top_track", "at_s": 0.0}, "structural": True},
            {"id": "rests_in_bin", "description": "the marble ends lying in the bin", "weight": 1.0, "roles": ["marble"], "check": "supported_by", "params": {"support": "bin"}, "structural": True},
            {"id": "touches_second", "description": "the marble materially lands on the second track", "weight": 1.0, "roles": ["marble"], "check": "contacts", "params": {"other": "second_track", "before_s": 4.0}},
            {"id": "no_penetration", "description": "the marble never sinks into a track, the board or the bin", "weight": 1.0, "roles": ["marble", "top_track", "second_track", "bin"], "check": "no_interpenetration", "structural": True},
            {"id": "stable", "description": "no jitter or explosion", "weight": 0.5, "roles": ["marble"], "check": "numerically_stable"},
            {
                "id": "cf_no_stop",
                "description": "without the top track's end stop the marble overshoots the slot and leaves the run",
                "weight": 1.5,
                "roles": ["top_stop", "marble"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the top end stop removed (measured responses in truth_counterfactuals.json; baseline: the marble drops through the slot)",
                "counterfactual": {
                    "intervention": {"kind": "remove_object", "roles": ["top_stop"]},
                    "expected": {"measure": "path_deviation", "role": "marble", "at_s": 4.0, "op": "gt", "value": 0.1, "unit": "m"},
                },
            },
            {
                "id": "cf_no_second_track",
                "description": "if the marble cannot touch the second track it falls through instead of turning back",
                "weight": 2.0,
                "roles": ["marble", "second_track"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with marble-second track contact disabled (measured responses in truth_counterfactuals.json; the marble's path is unchanged until it reaches the second track)",
                "counterfactual": {
                    "intervention": {"kind": "disable_contact", "roles": ["marble", "second_track"]},
                    "expected": {"measure": "path_deviation", "role": "marble", "at_s": 4.0, "op": "gt", "value": 0.05, "unit": "m",
                                 "preserved_roles": ["marble"], "preserved_until_s": 0.8, "preserve_tolerance_m": 0.01},
                },
            },
        ],
    },
}


def measure_events(s):
    import numpy as np

    p = d.loc(s, "Marble")
    x, z = p[:, 0], p[:, 2]
    vx = np.gradient(x) * s.fps
    last = len(x) - 1
    F = d.frame_of
    start = d.first_moving(s, "Marble", 0.003) or 0
    land, turn = [], []
    prev = start
    for k in range(1, K):
        li = d.first_true((z < Z_HI[k] + R + 0.03) & (np.arange(len(z)) >= prev))
        li = li if li is not None else last
        sgn = 1 if k % 2 == 0 else -1
        ti = d.first_true((sgn * vx > 0.05) & (np.arange(len(z)) > li))
        ti = ti if ti is not None else last
        land.append(li)
        turn.append(ti)
        prev = ti
    binned = d.first_true((z < 0.04) & (np.arange(len(z)) >= prev))
    binned = binned if binned is not None else last
    rest = d.settled_from(s, "Marble", 0.02)
    rest = rest if rest is not None and rest >= binned else last
    return {
        "first_run": d.interval(F(s, start), F(s, land[0]), f"marble moves from frame {F(s, start)}; lands on the second track (centre below {Z_HI[1] + R + 0.03:.3f} m) at frame {F(s, land[0])}"),
        "first_turn": d.interval(F(s, land[0]), F(s, turn[0]), f"its x velocity points along the second track (> 0.05 m/s) from frame {F(s, turn[0])}"),
        "last_turn": d.interval(F(s, land[-1]), F(s, turn[-1]), f"lands on track {K} at frame {F(s, land[-1])}, moving along it from frame {F(s, turn[-1])}; landing frames per track: "
                                + ", ".join(str(F(s, i)) for i in land)),
        "into_bin": d.interval(F(s, turn[-1]), F(s, binned), f"marble centre below 4 cm (in the bin) at frame {F(s, binned)}"),
        "rests": {**d.interval(F(s, rest), F(s, last), f"marble speed below 0.02 m/s from frame {F(s, rest)} to the end, at x = {x[-1]:.3f} m, z = {z[-1]:.3f} m"), "persists_until_s": 8.0},
    }
