"""ball_bounce: hand-written part of the task; intervals are measured from the truth trajectories."""

from physcodegym.tasks import events as d

PARAMS = {'ball_ang_damping': 0.73,
 'ball_bounce': 0.83,
 'ball_colour': 'pink',
 'ball_friction': 0.61,
 'ball_mass': 0.071,
 'ball_r': 0.047,
 'ball_rgb': [0.95, 0.45, 0.65],
 'ball_rough': 0.32,
 'ball_start': [-0.19, 0.0, 0.6],
 'camera_loc': [-0.05, -1.96, 0.74],
 'camera_target': [-0.02, 0.0, 0.29],
 'cavity': True,
 'lens': 36,
 'mug_colour': 'yellow',
 'mug_h': 0.127,
 'mug_r': 0.04,
 'mug_rgb': [0.92, 0.78, 0.08],
 'mug_xy': [0.26, 0.2],
 'studio_light': 'studio.sl',
 'table_bounce': 0.8,
 'table_friction': 0.61,
 'table_rgb': [0.38, 0.3, 0.24],
 'task_id': 'ball_bounce_s4',
 'world_rgb': [0.4, 0.45, 0.55]}

def _an(word: str) -> str:
    """Indefinite article for a colour word ("an orange", "a red")."""
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


TASK = {
    "id": PARAMS["task_id"],
    "title": "Rubber ball dropped on a wooden tabletop",
    "category": "rigid",
    "subcategory": "falling-bouncing",
    "summary": f"{_an(PARAMS['ball_colour']).capitalize()} rubber ball falls onto a wooden table, bounces several times with shrinking height and comes to rest.",
    "roles": [
        {"name": "ball", "description": f"{PARAMS['ball_colour']} rubber ball", "truth_object": "Ball", "name_hints": ["ball", "sphere"]},
        {"name": "table", "description": "wooden tabletop the ball lands on", "core": False, "truth_object": "Table", "name_hints": ["table", "ground", "floor"]},
        {"name": "mug", "description": f"{PARAMS['mug_colour']} mug standing on the table (static prop)", "core": False, "required": False, "truth_object": "Mug", "name_hints": ["mug", "cup"]},
    ],
    "checklist": [
        {"id": "ball", "category": "ball", "count": 1, "attributes": [PARAMS["ball_colour"], "rubber", f"small (about {round(PARAMS['ball_r'] * 200):g} cm)"], "layout": "held in the air above the left half of the table", "roles": ["ball"]},
        {"id": "table", "category": "table", "count": 1, "attributes": ["brown", "wooden", "flat top"], "layout": "fills the lower half of the image", "roles": ["table"]},
        {"id": "mug", "category": "mug", "count": 1, "attributes": [PARAMS["mug_colour"], "cylindrical"], "layout": "right of the ball, near the back of the table", "roles": ["mug"]},
    ],
    "events": [
        {"id": "first_impact", "kind": "action", "description": "the ball falls and hits the tabletop", "roles": ["ball", "table"], "weight": 2.0, "key": True},
        {"id": "bounces", "kind": "action", "description": "the ball rebounds several times, each rebound lower than the previous one", "roles": ["ball"], "weight": 2.0, "after": ["first_impact"]},
        {"id": "rest", "kind": "final_state", "description": "the ball comes to rest on the tabletop and stays there", "roles": ["ball", "table"], "weight": 1.0, "after": ["bounces"]},
    ],
    "rubric": {
        "initial_conditions": ["ball released at rest above the table (any height within the video's evidence)"],
        "actuation": [],
        "equivalent_representations": ["sphere collision shape or a convex hull of the ball mesh", "table as a passive box or a collision plane at the tabletop"],
        "criteria": [
            {"id": "ball_simulated", "description": "the ball's motion comes from the rigid-body solver", "weight": 2.0, "roles": ["ball"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no keyframes, drivers or handlers move the ball", "weight": 1.0, "roles": ["ball"], "check": "no_scripted_motion", "structural": True},
            {"id": "rests_on_table", "description": "the ball ends resting on the visible table (not a hidden support)", "weight": 2.0, "roles": ["ball"], "check": "supported_by", "params": {"support": "table"}, "structural": True},
            {"id": "hits_table", "description": "the ball touches the tabletop during the first second", "weight": 1.0, "roles": ["ball"], "check": "contacts", "params": {"other": "table", "before_s": 1.5}},
            {"id": "no_penetration", "description": "the ball never sinks into the table", "weight": 1.0, "roles": ["ball", "table"], "check": "no_interpenetration", "structural": True},
            {"id": "energy", "description": "bounce heights never grow: mechanical energy does not increase", "weight": 1.0, "roles": ["ball"], "check": "energy_non_increasing"},
            {"id": "stable", "description": "no NaN, explosion or jitter at rest", "weight": 0.5, "roles": ["ball"], "check": "numerically_stable"},
            {
                "id": "cf_remove_table",
                "description": "without the table the ball falls past the tabletop height",
                "weight": 2.0,
                "roles": ["ball", "table"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the table removed: ball minimum height by 3 s is -42.7 m (it falls past the tabletop at z=0)",
                "counterfactual": {
                    "intervention": {"kind": "remove_support", "roles": ["table"]},
                    "expected": {"measure": "min_height", "role": "ball", "at_s": 3.0, "op": "lt", "value": -0.5, "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    z = d.loc(s, "Ball")[:, 2]
    b = d.bounces(z)
    first = b[0] if b else int(z.argmin())
    settle = d.settled_from(s, "Ball", v_thr=0.02)
    settle = settle if settle is not None else len(z) - 1
    last_bounce = b[-1] if b else first
    return {
        "first_impact": d.interval(d.frame_of(s, max(first - 3, 0)), d.frame_of(s, first),
                                   f"first frame where the ball's vertical velocity turns from falling to rising (frame {d.frame_of(s, first)}, z={z[first]:.3f} m)"),
        "bounces": d.interval(d.frame_of(s, first), d.frame_of(s, last_bounce),
                              f"{len(b)} velocity sign changes of the ball's height between frames {d.frame_of(s, first)} and {d.frame_of(s, last_bounce)}"),
        "rest": {**d.interval(d.frame_of(s, settle), d.frame_of(s, len(z) - 1),
                              f"ball speed stays below 0.02 m/s from frame {d.frame_of(s, settle)} to the end (z={z[-1]:.3f} m)"),
                 "persists_until_s": 8.0},
    }
