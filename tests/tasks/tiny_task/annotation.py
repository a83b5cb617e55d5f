"""tiny_task: the hand-written part of the build tests' tiny task; the impact is measured from the trajectories."""

from physcodegym.tasks import events as d

TASK = {
    "id": "tiny_task",
    "title": "Ball dropped on a slab (build test)",
    "category": "rigid",
    "subcategory": "falling-bouncing",
    "roles": [
        {"name": "ball", "description": "red ball", "truth_object": "Ball", "name_hints": ["ball"]},
        {"name": "slab", "description": "brown slab", "core": False, "truth_object": "Slab", "name_hints": ["slab"]},
    ],
    "checklist": [
        {"id": "ball", "category": "ball", "count": 1, "attributes": ["red"], "roles": ["ball"]},
        {"id": "slab", "category": "slab", "count": 1, "attributes": ["brown"], "roles": ["slab"]},
    ],
    "events": [
        {"id": "impact", "description": "the ball falls onto the slab", "roles": ["ball", "slab"], "weight": 1.0},
    ],
    "rubric": {
        "criteria": [
            {"id": "ball_simulated", "description": "the ball falls by simulation", "weight": 1.0, "roles": ["ball"],
             "check": "moves_by_simulation"},
        ],
    },
}


def measure_events(s):
    z = d.loc(s, "Ball")[:, 2]
    first = int(z.argmin())
    return {"impact": d.interval(d.frame_of(s, 0), d.frame_of(s, first),
                                 f"the ball's lowest point is at frame {d.frame_of(s, first)} (z={z[first]:.3f} m)")}
