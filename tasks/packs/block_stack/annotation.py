"""block_stack: hand-written part of the task; intervals are measured from the truth trajectories."""

import numpy as np
from physcodegym.tasks import events as d

# The values truth.py was built with (a family member's generator rewrites this literal; see family.py).
PARAMS = {
    "task_id": "block_stack",
    "world_rgb": [0.55, 0.6, 0.66],
    "studio_light": "Default",
    "cavity": False,
    "table_size": [1.6, 1.0],
    "table_rgb": [0.45, 0.28, 0.14],
    "table_friction": 0.6,
    "substeps": 40,
    "iterations": 40,
    "block_size": 0.08,
    "block_mass": 0.2,
    "block_friction": 0.6,
    "block_rough": 0.5,
    "colours": [["red", [0.85, 0.1, 0.1]], ["green", [0.1, 0.55, 0.15]], ["blue", [0.1, 0.25, 0.85]], ["yellow", [0.95, 0.75, 0.05]]],
    "stable_x": -0.25,
    "leaning_x": 0.2,
    "offsets": [0.0, 0.035, 0.07, 0.105],
    "camera_loc": [0.0, -1.5, 0.55],
    "camera_target": [0.05, 0.0, 0.15],
    "lens": 38,
}
N = len(PARAMS["colours"])
S = PARAMS["block_size"]
NAMES = [name for name, _rgb in PARAMS["colours"]]
WORDS = {3: "three", 4: "four", 5: "five", 6: "six"}
TOP_Z = S / 2 + (N - 1) * S  # initial height of each tower's top block
# Removing the straight tower's bottom block lowers its top block by one block size.
PULL_THRESHOLD = round(TOP_Z - 0.375 * S, 4)
SHIPPED = PARAMS["task_id"] == "block_stack"  # the hand-measured evidence numbers below hold for the shipped scene only
EVIDENCE_GRAVITY = (
    "truth.py re-simulated with gravity scaled to 0: the top block of the offset tower moves 0.0 m by 5 s"
    if SHIPPED
    else "truth.py re-simulated with gravity scaled to 0 (measured responses in truth_counterfactuals.json)"
)
EVIDENCE_PULL = (
    "truth.py re-simulated with the straight tower's bottom block removed: top block height at 3 s 0.200 m (baseline 0.280 m)"
    if SHIPPED
    else f"truth.py re-simulated with the straight tower's bottom block removed: the top block drops by about one block ({S:.3f} m) from {TOP_Z:.3f} m (measured responses in truth_counterfactuals.json)"
)

TASK = {
    "id": PARAMS["task_id"],
    "title": "A straight stack stands, an offset stack topples",
    "category": "rigid",
    "subcategory": "stacking-equilibrium",
    "summary": f"Two towers of {WORDS.get(N, str(N))} painted wooden cubes: the aligned one stays in equilibrium, the staircase-offset one tips over and scatters.",
    "roles": [
        {"name": "stable_bottom", "description": "bottom block of the straight (left) tower", "truth_object": "StableBlock1", "name_hints": ["stable", "left", "block1"]},
        {"name": "stable_top", "description": "top block of the straight (left) tower", "truth_object": f"StableBlock{N}", "name_hints": ["stable", "left", f"block{N}"]},
        {"name": "leaning_bottom", "description": "bottom block of the offset (right) tower", "truth_object": "LeaningBlock1", "name_hints": ["leaning", "right", "offset"]},
        {"name": "leaning_top", "description": "top block of the offset (right) tower", "truth_object": f"LeaningBlock{N}", "name_hints": ["leaning", "right", "offset", "top"]},
        {"name": "table", "description": "wooden tabletop", "core": False, "truth_object": "Table", "name_hints": ["table", "ground", "floor"]},
    ],
    "checklist": [
        {"id": "stable_tower", "category": "block", "count": N, "attributes": ["cubes", ", ".join(NAMES) + " from bottom to top"], "layout": "straight tower on the left", "roles": ["stable_bottom", "stable_top"]},
        {"id": "leaning_tower", "category": "block", "count": N, "attributes": ["cubes", ", ".join(reversed(NAMES)) + " from bottom to top"], "layout": "tower on the right, each block shifted right of the one below", "roles": ["leaning_bottom", "leaning_top"]},
        {"id": "table", "category": "table", "count": 1, "attributes": ["brown", "wooden"], "layout": "under both towers", "roles": ["table"]},
    ],
    "events": [
        {"id": "topple", "kind": "action", "description": "the offset tower tips over to the right", "roles": ["leaning_top"], "weight": 2.0, "key": True},
        {"id": "scatter", "kind": "action", "description": "its blocks land on the table and slide to a stop", "roles": ["leaning_top", "leaning_bottom", "table"], "weight": 1.0, "after": ["topple"]},
        {"id": "stable_stands", "kind": "persistence", "description": "the straight tower stands still the whole time", "roles": ["stable_top", "stable_bottom"], "weight": 2.0, "key": True},
    ],
    "rubric": {
        "initial_conditions": ["all blocks at rest; the right tower's blocks offset to the right by a growing amount"],
        "actuation": [],
        "equivalent_representations": ["blocks as boxes", "table as a passive box or plane"],
        "criteria": [
            {"id": "sim_leaning", "description": "the toppling blocks move by simulation", "weight": 2.0, "roles": ["leaning_top"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no scripted motion on any block", "weight": 1.0, "roles": ["leaning_top", "stable_top"], "check": "no_scripted_motion", "structural": True},
            {"id": "stack_supported", "description": "the straight tower's top block is supported by the blocks below, and the bottom block by the table", "weight": 2.0, "roles": ["stable_bottom"], "check": "supported_by", "params": {"support": "table"}, "structural": True},
            {"id": "no_penetration", "description": "blocks never overlap", "weight": 1.0, "roles": ["stable_bottom", "stable_top", "leaning_bottom", "leaning_top"], "check": "no_interpenetration", "structural": True},
            {"id": "stable", "description": "no jitter in the resting tower", "weight": 1.0, "roles": ["stable_top"], "check": "numerically_stable"},
            {
                "id": "cf_gravity_off",
                "description": "without gravity the offset tower does not topple",
                "weight": 2.0,
                "roles": ["leaning_top"],
                "check": "counterfactual",
                "evidence": EVIDENCE_GRAVITY,
                "counterfactual": {
                    "intervention": {"kind": "scale_gravity", "params": {"factor": 0.0}},
                    "expected": {"measure": "max_displacement", "role": "leaning_top", "at_s": 5.0, "op": "lt", "value": 0.02, "unit": "m"},
                },
            },
            {
                "id": "cf_pull_bottom",
                "description": "the straight tower rests on its bottom block: removing it drops the rest of the tower",
                "weight": 1.0,
                "roles": ["stable_bottom", "stable_top"],
                "check": "counterfactual",
                "evidence": EVIDENCE_PULL,
                "counterfactual": {
                    "intervention": {"kind": "remove_object", "roles": ["stable_bottom"]},
                    "expected": {"measure": "final_height", "role": "stable_top", "at_s": 3.0, "op": "lt", "value": PULL_THRESHOLD, "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    top = d.loc(s, f"LeaningBlock{N}")
    start = d.first_moving(s, f"LeaningBlock{N}", 0.003) or 0
    down = d.first_true(top[:, 2] < 1.25 * S)  # fallen: below 1.25 block sizes (0.1 m for the shipped 8 cm cubes)
    down = down if down is not None else len(top) - 1
    names = [f"LeaningBlock{i}" for i in range(1, N + 1)]
    v = np.max([d.speed(s, n) for n in names], axis=0)
    moving = np.nonzero(v > 0.02)[0]
    rest = int(moving[-1]) + 1 if moving.size else down
    rest = min(max(rest, down), len(top) - 1)
    st = d.loc(s, f"StableBlock{N}")
    drift = float(np.max(np.linalg.norm(st - st[0], axis=1)))
    F = d.frame_of
    return {
        "topple": d.interval(F(s, start), F(s, down), f"top block of the offset tower starts moving at frame {F(s, start)} and drops below {1.25 * S:.2g} m at frame {F(s, down)}"),
        "scatter": d.interval(F(s, down), F(s, rest), f"offset-tower blocks all slower than 0.02 m/s from frame {F(s, rest)}"),
        "stable_stands": {**d.interval(F(s, 0), F(s, len(top) - 1), f"straight tower top block moves at most {drift * 1000:.1f} mm over 8 s"), "persists_until_s": 8.0},
    }
