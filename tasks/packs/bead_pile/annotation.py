"""bead_pile: hand-written part of the task; intervals are measured from the truth trajectories."""

import numpy as np
from physcodegym.authoring import detect as d

N = 90
TASK = {
    "id": "bead_pile",
    "title": "Beads poured through a funnel pile up in a tray",
    "category": "rigid",
    "subcategory": "granular-piling",
    "summary": "Ninety red, blue and yellow beads fall through a green funnel into a white tray and settle in a heap.",
    "roles": [
        {"name": "bead", "description": "one of the beads (representative of the granular material)", "truth_object": "Bead000", "name_hints": ["bead", "grain", "ball", "pellet"]},
        {"name": "tray", "description": "white tray with low walls", "core": False, "truth_object": "Tray", "name_hints": ["tray", "box", "container", "bin"]},
        {"name": "funnel", "description": "green funnel above the tray", "core": False, "truth_object": "Funnel", "name_hints": ["funnel", "cone", "hopper"]},
    ],
    "checklist": [
        {"id": "beads", "category": "bead", "count": N, "attributes": ["small spheres", "red, blue and yellow"], "layout": "falling from the funnel at the top", "roles": ["bead"]},
        {"id": "funnel", "category": "funnel", "count": 1, "attributes": ["green", "cone, opening downwards"], "layout": "above the centre of the tray", "roles": ["funnel"]},
        {"id": "tray", "category": "tray", "count": 1, "attributes": ["white", "rectangular", "low walls"], "layout": "on the table under the funnel", "roles": ["tray"]},
    ],
    "events": [
        {"id": "pour", "kind": "action", "description": "beads stream out of the funnel and fall into the tray", "roles": ["bead", "funnel"], "weight": 2.0, "key": True},
        {"id": "pile", "kind": "action", "description": "the beads pile up and spread over the tray floor", "roles": ["bead", "tray"], "weight": 2.0, "after": ["pour"]},
        {"id": "settled", "kind": "final_state", "description": "all beads lie still inside the tray", "roles": ["bead", "tray"], "weight": 1.0, "after": ["pile"]},
    ],
    "rubric": {
        "initial_conditions": ["beads released at rest above or inside the funnel"],
        "actuation": [],
        "equivalent_representations": ["beads as many rigid spheres or as a particle system with collisions"],
        "criteria": [
            {"id": "sim_beads", "description": "beads fall by simulation", "weight": 2.0, "roles": ["bead"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no scripted motion on beads", "weight": 1.0, "roles": ["bead"], "check": "no_scripted_motion", "structural": True},
            {"id": "in_tray", "description": "beads stay inside the tray after landing", "weight": 1.5, "roles": ["bead"], "check": "stays_within", "params": {"container": "tray"}},
            {"id": "stable", "description": "no explosion; beads come to rest", "weight": 0.5, "roles": ["bead"], "check": "numerically_stable"},
            {
                "id": "cf_no_tray",
                "description": "without the tray the beads land on the table (lower) and spread further",
                "weight": 2.0,
                "roles": ["bead", "tray"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the tray removed: the representative bead ends at 0.012 m (on the table; baseline 0.022 m on the tray floor)",
                "counterfactual": {
                    "intervention": {"kind": "remove_object", "roles": ["tray"]},
                    "expected": {"measure": "final_height", "role": "bead", "at_s": 7.5, "op": "lt", "value": 0.017, "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    names = [n for n in s.names if n.startswith("Bead")]
    P = np.stack([d.loc(s, n) for n in names])  # (B, F, 3)
    below = (P[:, :, 2] < 0.34).sum(axis=0)  # beads that left the funnel mouth
    start = d.first_true(below > 0) or 0
    half = d.first_true(below >= len(names) // 2) or start
    all_out = d.first_true(below >= len(names))
    all_out = all_out if all_out is not None else len(below) - 1
    v = np.linalg.norm(np.diff(P, axis=1), axis=2) * s.fps  # (B, F-1) per-bead speed
    slow = (v < 0.05).mean(axis=0)  # fraction of beads at rest
    moving = np.nonzero(slow < 0.9)[0]
    rest = int(moving[-1]) + 1 if moving.size else 0
    rest = min(max(rest, all_out), len(below) - 1)
    inside = ((np.abs(P[:, -1, 0]) < 0.2) & (np.abs(P[:, -1, 1]) < 0.15)).sum()
    F = d.frame_of
    return {
        "pour": d.interval(F(s, start), F(s, all_out), f"first bead below the funnel mouth at frame {F(s, start)}, half at {F(s, half)}, all {len(names)} at {F(s, all_out)}"),
        "pile": d.interval(F(s, half), F(s, rest), f"beads land and spread until 90 % of them are slower than 0.05 m/s (frame {F(s, rest)})"),
        "settled": {**d.interval(F(s, rest), F(s, len(below) - 1), f"{inside} of {len(names)} beads end inside the tray walls; 90 % slower than 0.05 m/s from frame {F(s, rest)}"), "persists_until_s": 8.0},
    }
