"""marble_ramp: hand-written part of the task; intervals are measured from the truth trajectories."""

from physcodegym.tasks import events as d

PARAMS = {'world_rgb': [0.55, 0.6, 0.66],
 'studio_light': 'Default',
 'cavity': False,
 'table_rgb': [0.45, 0.28, 0.14],
 'ramp_deg': 15,
 'track_len': 0.9,
 'track_rgb': [0.9, 0.35, 0.05],
 'track_colour': 'orange',
 'marble_r': 0.02,
 'marble_rgb': [0.1, 0.3, 0.9],
 'marble_colour': 'blue',
 'marble_rough': 0.05,
 'marble_mass': 0.02,
 'marble_friction': 0.4,
 'marble_bounce': 0.1,
 'book_x': 0.55,
 'book_rgb': [0.7, 0.06, 0.08],
 'book_colour': 'red',
 'camera_loc': [0.0, -1.9, 0.6],
 'camera_target': [-0.1, 0.0, 0.12],
 'lens': 34,
 'foot_x': -0.02,
 'book_reach_x': 0.48,
 'task_id': 'marble_ramp'}



def _an(word: str) -> str:
    """Indefinite article for a colour word ("an orange", "a red")."""
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


TASK = {
    "id": PARAMS["task_id"],
    "title": "Marble rolls down an inclined track onto the table",
    "category": "rigid",
    "subcategory": "rolling-tracks",
    "summary": f"{_an(PARAMS['marble_colour']).capitalize()} glass marble rolls down {_an(PARAMS['track_colour'])} grooved track, across the table and stops against {_an(PARAMS['book_colour'])} book.",
    "roles": [
        {"name": "marble", "description": f"{PARAMS['marble_colour']} glass marble", "truth_object": "Marble", "name_hints": ["marble", "ball", "sphere"]},
        {"name": "track", "description": f"{PARAMS['track_colour']} inclined track with two side rails", "core": False, "truth_object": "TrackBase", "name_hints": ["track", "ramp", "rail", "chute"]},
        {"name": "table", "description": "wooden tabletop", "core": False, "truth_object": "Table", "name_hints": ["table", "ground", "floor"]},
        {"name": "book", "description": f"{PARAMS['book_colour']} book standing on the table at the right", "core": False, "truth_object": "Book", "name_hints": ["book", "block", "wall", "stop"]},
    ],
    "checklist": [
        {"id": "marble", "category": "marble", "count": 1, "attributes": [PARAMS["marble_colour"], "glass", f"small ({round(PARAMS['marble_r'] * 200, 1):g} cm)"], "layout": "at the top (left end) of the track", "roles": ["marble"]},
        {"id": "track", "category": "track", "count": 1, "attributes": [PARAMS["track_colour"], "grooved, two rails", f"inclined about {PARAMS['ramp_deg']:g} degrees"], "layout": "left half, sloping down to the right", "roles": ["track"]},
        {"id": "book", "category": "book", "count": 1, "attributes": [PARAMS["book_colour"], "upright"], "layout": "right side of the table, across the marble's path", "roles": ["book"]},
        {"id": "table", "category": "table", "count": 1, "attributes": ["brown", "wooden"], "layout": "under everything", "roles": ["table"]},
    ],
    "events": [
        {"id": "rolls_down", "kind": "action", "description": "the marble rolls down the track", "roles": ["marble", "track"], "weight": 2.0, "key": True},
        {"id": "leaves_track", "kind": "action", "description": "the marble leaves the track and rolls across the table", "roles": ["marble", "table"], "weight": 1.0, "after": ["rolls_down"]},
        {"id": "hits_book", "kind": "action", "description": "the marble reaches the book and stops against it", "roles": ["marble", "book"], "weight": 1.0, "after": ["leaves_track"]},
        {"id": "rest", "kind": "final_state", "description": "the marble rests on the table next to the book", "roles": ["marble"], "weight": 1.0, "after": ["hits_book"]},
    ],
    "rubric": {
        "initial_conditions": ["marble released at rest at the top of the track"],
        "actuation": [],
        "equivalent_representations": ["track as boxes or one mesh collider", "marble with a sphere shape"],
        "criteria": [
            {"id": "sim_marble", "description": "the marble moves by rigid-body simulation", "weight": 2.0, "roles": ["marble"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no scripted motion on the marble", "weight": 1.0, "roles": ["marble"], "check": "no_scripted_motion", "structural": True},
            {"id": "on_track", "description": "the marble is in contact with the track while rolling down", "weight": 1.0, "roles": ["marble"], "check": "contacts", "params": {"other": "track", "before_s": 1.0}},
            {"id": "rests_on_table", "description": "the marble ends supported by the table", "weight": 1.0, "roles": ["marble"], "check": "supported_by", "params": {"support": "table"}, "structural": True},
            {"id": "energy", "description": "no energy gain while rolling", "weight": 1.0, "roles": ["marble"], "check": "energy_non_increasing"},
            {"id": "no_penetration", "description": "the marble never overlaps track, table or book", "weight": 1.0, "roles": ["marble", "track", "book"], "check": "no_interpenetration", "structural": True},
            {
                "id": "cf_no_track",
                "description": "without the track the marble falls straight down instead of rolling to the book",
                "weight": 2.0,
                "roles": ["marble", "track"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with the track removed: marble displacement at 4 s 0.23 m (it drops and stops; baseline about 1 m to the book)",
                "counterfactual": {
                    "intervention": {"kind": "remove_object", "roles": ["track"]},
                    "expected": {"measure": "displacement", "role": "marble", "at_s": 4.0, "op": "lt", "value": 0.5, "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    m = d.loc(s, "Marble")
    start = d.first_moving(s, "Marble", 0.003) or 0
    off = d.first_true(m[:, 0] > PARAMS["foot_x"]) or start
    book = d.first_true(m[:, 0] > PARAMS["book_reach_x"])
    book = book if book is not None else int(m[:, 0].argmax())
    rest = d.settled_from(s, "Marble", 0.02)
    rest = rest if rest is not None else len(m) - 1
    F = d.frame_of
    return {
        "rolls_down": d.interval(F(s, start), F(s, off), f"marble moves from frame {F(s, start)} and passes the track foot (x>{PARAMS['foot_x']:g} m) at frame {F(s, off)}"),
        "leaves_track": d.interval(F(s, off), F(s, book), f"marble on the table from frame {F(s, off)} until it is within 5 cm of the book at frame {F(s, book)}"),
        "hits_book": d.interval(F(s, book), F(s, min(book + 6, len(m) - 1)), f"marble centre within reach of the book face (x>{PARAMS['book_reach_x']:g} m) at frame {F(s, book)}"),
        "rest": {**d.interval(F(s, max(rest, book)), F(s, len(m) - 1), f"marble speed below 0.02 m/s from frame {F(s, rest)}"), "persists_until_s": 8.0},
    }
