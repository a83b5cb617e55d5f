"""cloth_drape: hand-written part of the task; intervals are measured from the truth trajectories."""

import numpy as np
from physcodegym.authoring import detect as d

TASK = {
    "id": "cloth_drape",
    "title": "Cloth falls and drapes over a teapot",
    "category": "deformable",
    "summary": "A red square cloth is dropped from above onto a white porcelain teapot and drapes over it, its corners settling on the table.",
    "roles": [
        {"name": "cloth", "description": "red square cloth", "truth_object": "Cloth", "name_hints": ["cloth", "fabric", "napkin", "sheet", "towel"]},
        {"name": "teapot", "description": "white teapot on the table", "core": False, "truth_object": "Teapot", "name_hints": ["teapot", "pot", "kettle"]},
        {"name": "table", "description": "wooden tabletop", "core": False, "truth_object": "Table", "name_hints": ["table", "ground", "floor"]},
    ],
    "checklist": [
        {"id": "cloth", "category": "cloth", "count": 1, "attributes": ["red", "square", "soft fabric"], "layout": "held flat above the teapot, slightly rotated", "roles": ["cloth"]},
        {"id": "teapot", "category": "teapot", "count": 1, "attributes": ["white", "porcelain", "round body with spout, handle and lid knob"], "layout": "centre of the table", "roles": ["teapot"]},
        {"id": "table", "category": "table", "count": 1, "attributes": ["brown", "wooden"], "layout": "under the teapot", "roles": ["table"]},
    ],
    "events": [
        {"id": "falls", "kind": "action", "description": "the cloth falls and lands on top of the teapot", "roles": ["cloth", "teapot"], "weight": 2.0, "key": True},
        {"id": "drapes", "kind": "action", "description": "the cloth folds down around the teapot and its edges reach the table", "roles": ["cloth", "teapot", "table"], "weight": 2.0, "after": ["falls"]},
        {"id": "rests", "kind": "final_state", "description": "the cloth rests draped over the teapot", "roles": ["cloth", "teapot"], "weight": 1.0, "after": ["drapes"]},
    ],
    "rubric": {
        "initial_conditions": ["cloth released flat and at rest above the teapot"],
        "actuation": [],
        "equivalent_representations": ["cloth modifier on a subdivided plane", "teapot and table with COLLISION modifiers"],
        "criteria": [
            {"id": "sim_cloth", "description": "the cloth deforms by cloth simulation", "weight": 2.0, "roles": ["cloth"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no shape keys, keyframes or handlers move the cloth", "weight": 1.0, "roles": ["cloth"], "check": "no_scripted_motion", "structural": True},
            {"id": "touches_teapot", "description": "the cloth comes into contact with the teapot", "weight": 1.0, "roles": ["cloth"], "check": "contacts", "params": {"other": "teapot", "before_s": 2.0}},
            {"id": "no_penetration", "description": "the cloth does not pass through the teapot", "weight": 1.0, "roles": ["cloth", "teapot"], "check": "no_interpenetration", "structural": True},
            {"id": "no_self_x", "description": "the cloth does not cross itself", "weight": 0.5, "roles": ["cloth"], "check": "no_self_intersection"},
            {"id": "stable", "description": "no NaN or exploding vertices", "weight": 0.5, "roles": ["cloth"], "check": "numerically_stable"},
            {
                "id": "cf_no_teapot",
                "description": "without the teapot the cloth falls flat onto the table (it moves further down)",
                "weight": 2.0,
                "roles": ["cloth", "teapot"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the teapot removed: mean cloth vertex displacement at 6 s 0.412 m vs 0.318 m draped with self-collision (ratio 1.30)",
                "counterfactual": {
                    "intervention": {"kind": "remove_object", "roles": ["teapot"]},
                    "expected": {"measure": "vertex_displacement", "role": "cloth", "at_s": 6.0, "op": "gt", "value": 1.1, "unit": "ratio", "relative_to_baseline": True},
                },
            },
        ],
    },
}


def measure_events(s):
    V = s.verts["Cloth"].astype(np.float64)  # (F, V, 3)
    zmin = V[:, :, 2].min(axis=1)
    start = d.first_true(zmin < zmin[0] - 0.003) or 0
    top = 0.096 + 0.096 + 0.03  # teapot top (body half-height + knob) above the table
    lands = d.first_true(zmin < top + 0.01)
    lands = lands if lands is not None else start
    edge = d.first_true(zmin < 0.02)
    edge = edge if edge is not None else len(zmin) - 1
    vel = np.linalg.norm(np.diff(V, axis=0), axis=2).max(axis=1) * s.fps
    moving = np.nonzero(vel > 0.05)[0]
    rest = int(moving[-1]) + 1 if moving.size else edge
    rest = min(max(rest, edge), len(zmin) - 1)
    F = d.frame_of
    return {
        "falls": d.interval(F(s, start), F(s, lands), f"lowest cloth vertex starts falling at frame {F(s, start)} and reaches the teapot top height at frame {F(s, lands)}"),
        "drapes": d.interval(F(s, lands), F(s, edge), f"lowest cloth vertex reaches the table (z<0.02 m) at frame {F(s, edge)}"),
        "rests": {**d.interval(F(s, rest), F(s, len(zmin) - 1), f"fastest cloth vertex slower than 0.05 m/s from frame {F(s, rest)}"), "persists_until_s": 8.0},
    }
