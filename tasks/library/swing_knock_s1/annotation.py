"""swing_knock: hand-written part of the task; intervals are measured from the truth trajectories."""

import numpy as np
from physcodegym.tasks import events as d

# The values truth.py was built with (a family member's generator rewrites this literal; see family.py).
PARAMS = {'ball_colour': 'orange',
 'ball_mass': 1.91,
 'ball_r': 0.088,
 'ball_rgb': [0.9, 0.4, 0.05],
 'beam_rgb': [0.62, 0.45, 0.28],
 'block_colours': ['yellow', 'green', 'purple', 'blue'],
 'block_gap': 0.006,
 'block_mass': 0.122,
 'block_rgbs': [[0.9, 0.7, 0.12], [0.2, 0.55, 0.22], [0.4, 0.2, 0.6], [0.12, 0.3, 0.7]],
 'block_size': 0.049,
 'block_yaws': [5.2, -10.0, -1.1, 4.4],
 'camera_loc': [0.007, -1.761, 0.685],
 'camera_roll': -1.9,
 'camera_target': [0.02, 0.0, 0.46],
 'clearance': 0.044,
 'ground_rgb': [0.42, 0.4, 0.37],
 'hedge_rgb': [0.16, 0.28, 0.1],
 'lens': 26.1,
 'link_gap': 0.012,
 'link_len': 0.158,
 'link_mass': 0.098,
 'n_blocks': 4,
 'n_links': 4,
 'release_deg': 38.1,
 'samples': 2,
 'sky_strength': 0.14,
 'sun_azim': -7.8,
 'sun_elev': 28.9,
 'sun_energy': 2.02,
 'task_id': 'swing_knock_s1'}


def _an(word: str) -> str:
    """Indefinite article for a colour word ("an orange", "a red")."""
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


N = PARAMS["n_blocks"]
BALL = PARAMS["ball_colour"]
COLOURS = PARAMS["block_colours"]
BLOCKS = [f"Block{i + 1}" for i in range(N)]
BLOCK_ROLES = [f"block{i + 1}" for i in range(N)]
R = PARAMS["ball_r"]
LOW_Z = PARAMS["clearance"] + R  # ball centre hanging straight down
REACH = PARAMS["n_links"] * (PARAMS["link_len"] + PARAMS["link_gap"]) + PARAMS["link_gap"] / 2 + R
PIVOT = np.array([0.0, 0.0, LOW_Z + REACH])
KG = PARAMS["ball_mass"]
_ORD = ["bottom", "middle", "top"] if N == 3 else ["bottom", "second", "third", "top"]

TASK = {
    "id": PARAMS["task_id"],
    "title": "Hanging ball swings into a tower of blocks",
    "category": "rigid",
    "subcategory": "swinging-suspension",
    "summary": f"Under the beam of a wooden playground frame, {_an(BALL)} heavy ball hangs from a steel bracket by a chain of "
    f"{PARAMS['n_links']} hinged steel links. It is let go {PARAMS['release_deg']:g} degrees out to the left, swings down, "
    f"knocks over a tower of {N} wooden blocks standing on the ground just right of its lowest point, scattering them, "
    f"and keeps swinging back and forth with slowly shrinking amplitude.",
    "roles": [
        {"name": "ball", "description": f"heavy {BALL} ball at the end of the chain", "truth_object": "Ball", "name_hints": ["ball", "sphere", "bob", "weight"]},
        *[{"name": BLOCK_ROLES[i], "description": f"{COLOURS[i]} wooden block, {_ORD[i]} of the tower", "truth_object": BLOCKS[i],
           "name_hints": ["block", "cube", "brick"]} for i in range(N)],
        {"name": "bracket", "description": "steel bracket under the beam the chain hangs from", "core": False, "truth_object": "Bracket",
         "name_hints": ["bracket", "pivot", "anchor", "mount", "hook"]},
        {"name": "chain", "description": "top link of the steel chain", "core": False, "required": False, "truth_object": "Link1",
         "name_hints": ["link", "chain", "rod", "rope"]},
        {"name": "hinge", "description": "hinge joint between the bracket and the top link", "core": False, "required": False, "truth_object": "Joint1",
         "name_hints": ["joint", "hinge", "constraint", "pivot"]},
        {"name": "ground", "description": "grey rubber playground surface", "core": False, "truth_object": "Ground", "name_hints": ["ground", "floor", "plane"]},
        {"name": "beam", "description": "wooden cross beam of the frame", "core": False, "required": False, "truth_object": "Beam", "name_hints": ["beam", "frame", "bar"]},
    ],
    "checklist": [
        {"id": "ball", "category": "ball", "count": 1, "attributes": [BALL, "heavy", f"about {round(R * 200):g} cm"],
         "layout": "hanging on a chain, raised to the left at release", "roles": ["ball"]},
        {"id": "chain", "category": "chain", "count": 1, "attributes": [f"{PARAMS['n_links']} straight steel links", "hinged joints"],
         "layout": "from the bracket under the beam down to the ball", "roles": ["chain", "hinge", "bracket"]},
        {"id": "blocks", "category": "wooden block", "count": N, "attributes": [", ".join(COLOURS), "cubes", "stacked in a tower"],
         "layout": "on the ground just right of the point under the bracket", "roles": BLOCK_ROLES},
        {"id": "frame", "category": "swing frame", "count": 1, "attributes": ["wooden", "two posts and a cross beam"],
         "layout": "spanning the scene, hedge behind", "roles": ["beam", "ground"]},
    ],
    "events": [
        {"id": "release", "kind": "action", "description": "the ball is let go on the left and swings down on its chain", "roles": ["ball", "chain"], "weight": 1.0},
        {"id": "knock", "kind": "action", "description": "at the bottom of its swing the ball hits the tower of blocks", "roles": ["ball", *BLOCK_ROLES], "weight": 2.0,
         "key": True, "after": ["release"]},
        {"id": "blocks_scatter", "kind": "action", "description": "the blocks are knocked off each other, fly and tumble to the right and come to rest on the ground",
         "roles": BLOCK_ROLES, "weight": 1.5, "after": ["knock"]},
        {"id": "far_side", "kind": "action", "description": "the ball rises on the right side, not as high as it was let go", "roles": ["ball"], "weight": 1.0,
         "after": ["knock"]},
        {"id": "keeps_swinging", "kind": "persistence", "description": "the ball keeps swinging back and forth on its chain, each swing a little lower than the one before",
         "roles": ["ball", "chain", "bracket"], "weight": 2.0, "after": ["far_side"]},
    ],
    "rubric": {
        "initial_conditions": [f"ball released at rest with the chain straight, about {PARAMS['release_deg']:g} degrees from vertical",
                               "blocks stacked at rest on the ground"],
        "actuation": [],
        "equivalent_representations": [
            "HINGE or POINT rigid-body constraints between the links (or one rod on a hinge with the ball fixed to it)",
            "sphere or convex-hull ball; box or convex-hull blocks",
            "the bracket (or the beam) as the passive body the chain hangs from",
        ],
        "criteria": [
            {"id": "sim_ball", "description": "the ball swings by rigid-body simulation on its jointed chain", "weight": 2.0, "roles": ["ball"], "check": "moves_by_simulation", "structural": True},
            {"id": "sim_blocks", "description": "the blocks are knocked over by simulation", "weight": 1.0, "roles": BLOCK_ROLES, "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no keyframes, drivers or handlers move the ball or the blocks", "weight": 1.0, "roles": ["ball", *BLOCK_ROLES], "check": "no_scripted_motion",
             "structural": True},
            {"id": "ball_hits_blocks", "description": "the ball touches the bottom block during the first second", "weight": 1.0, "roles": ["ball"], "check": "contacts",
             "params": {"other": "block1", "before_s": 1.0}},
            {"id": "blocks_on_ground", "description": "the bottom block ends resting on the visible ground (not a hidden support)", "weight": 1.0, "roles": ["block1"],
             "check": "supported_by", "params": {"support": "ground"}, "structural": True},
            {"id": "no_penetration", "description": "the ball, the blocks and the ground never overlap", "weight": 1.0, "roles": ["ball", *BLOCK_ROLES, "ground"],
             "check": "no_interpenetration", "structural": True},
            {"id": "energy", "description": "the swing never gains height", "weight": 1.0, "roles": ["ball"], "check": "energy_non_increasing"},
            {"id": "stable", "description": "no NaN, explosion or jitter", "weight": 0.5, "roles": ["ball", *BLOCK_ROLES], "check": "numerically_stable"},
            {
                "id": "cf_no_ball_contact",
                "description": "if the ball could not touch the blocks it would swing through and the tower would stay standing",
                "weight": 2.0,
                "roles": ["ball", *BLOCK_ROLES],
                "check": "counterfactual",
                "evidence": ("truth.py re-simulated with ball-block contact disabled: the top block's largest displacement by 6 s is 0.001 m, the tower stays standing "
                             "(baseline: 0.736 m, knocked over); the ball's path is unchanged (0.0 m deviation) until 0.4 s; truth_counterfactuals.json"),
                "counterfactual": {
                    "intervention": {"kind": "disable_contact", "roles": ["ball", *BLOCK_ROLES]},
                    "expected": {"measure": "max_displacement", "role": BLOCK_ROLES[-1], "at_s": 6.0, "op": "lt", "value": 0.02, "unit": "m",
                                 "preserved_roles": ["ball"], "preserved_until_s": 0.4, "preserve_tolerance_m": 0.02},
                },
            },
            {
                "id": "cf_no_hinge",
                "description": "without the top hinge the chain lets go of the bracket and the ball falls to the ground instead of swinging",
                "weight": 1.5,
                "roles": ["ball", "hinge"],
                "check": "counterfactual",
                "evidence": ("truth.py re-simulated with the top hinge (bracket to first link) disabled: the ball's lowest centre height by 2 s is 0.090 m, lying on the ground "
                             "(baseline: 0.140 m, it never comes lower than its hanging height); truth_counterfactuals.json"),
                "counterfactual": {
                    "intervention": {"kind": "disable_joint", "roles": ["hinge"]},
                    "expected": {"measure": "min_height", "role": "ball", "at_s": 2.0, "op": "lt", "value": round(R + PARAMS["clearance"] / 2, 3), "unit": "m"},
                },
            },
        ],
    },
}


def measure_events(s):
    F = d.frame_of
    last = len(s.frames) - 1
    p = d.loc(s, "Ball")
    x, z = p[:, 0], p[:, 2]
    start = d.first_moving(s, "Ball", 0.003) or 0
    moved = [d.first_moving(s, n, 0.003) for n in BLOCKS]
    hit = min(m for m in moved if m is not None) if any(m is not None for m in moved) else int(z.argmin())
    settle = {}
    for n in BLOCKS:
        st = d.settled_from(s, n, v_thr=0.02)
        settle[n] = st if st is not None else last
    rest = max(settle.values())
    # turning points of the swing: x velocity changes sign
    vx = np.diff(x)
    turns = [i for i in range(1, len(vx)) if np.sign(vx[i]) != np.sign(vx[i - 1]) and vx[i - 1] != 0]
    far = next((i for i in turns if i > hit), last)
    amps = [abs(float(x[i])) for i in turns]
    r = np.linalg.norm(p - PIVOT, axis=1)
    bz = {n: float(d.loc(s, n)[-1, 2]) for n in BLOCKS}
    return {
        "release": d.interval(F(s, start), F(s, hit), f"the ball leaves its release pose (x={x[0]:.3f} m, z={z[0]:.3f} m) at frame {F(s, start)}"),
        "knock": d.interval(F(s, max(hit - 2, 0)), F(s, hit), f"the first block moves more than 3 mm at frame {F(s, hit)}, ball at x={x[hit]:.3f} m, z={z[hit]:.3f} m "
                            f"(lowest possible {LOW_Z:.3f} m)"),
        "blocks_scatter": d.interval(F(s, hit), F(s, rest), "blocks below 0.02 m/s from " + ", ".join(f"{n} frame {F(s, settle[n])}" for n in BLOCKS)
                                     + "; final block heights " + ", ".join(f"{bz[n]:.3f}" for n in BLOCKS) + " m"),
        "far_side": d.interval(F(s, hit), F(s, far), f"the ball turns back at x={x[far]:.3f} m, z={z[far]:.3f} m at frame {F(s, far)} (released at z={z[0]:.3f} m)"),
        "keeps_swinging": {**d.interval(F(s, far), F(s, last), f"{len(turns)} turning points after release with |x| "
                                        + ", ".join(f"{a:.3f}" for a in amps) + f" m; pivot-to-ball distance {r.min():.3f}-{r.max():.3f} m"),
                           "persists_until_s": 8.0},
    }
