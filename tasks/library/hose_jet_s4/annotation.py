"""hose_jet: hand-written part of the task; intervals are measured from the truth trajectories."""

from physcodegym.tasks import events as d

PARAMS = {'camera_loc': [0.071, -1.247, 0.564],
 'camera_target': [-0.11, 0.0, 0.111],
 'cavity': True,
 'count': 350,
 'drop_size': 0.0115,
 'jet_frames': [4, 120],
 'lens': 35,
 'mouth_loc': [-0.405, 0.0, 0.231],
 'mouth_r': 0.012,
 'nozzle_colour': 'orange',
 'nozzle_deg': 79,
 'nozzle_loc': [-0.45, 0.0, 0.224],
 'nozzle_rgb': [0.92, 0.4, 0.05],
 'plate_colour': 'grey',
 'plate_loc': [0.112, 0.0, 0.126],
 'plate_rgb': [0.5, 0.5, 0.52],
 'plate_size': [0.02, 0.37, 0.292],
 'plate_tilt_deg': 22,
 'speed': 3.21,
 'studio_light': 'studio.sl',
 'table_rgb': [0.38, 0.3, 0.24],
 'task_id': 'hose_jet_s4',
 'tray_colour': 'black',
 'tray_loc': [0.082, 0.0, 0.002],
 'tray_rgb': [0.06, 0.06, 0.07],
 'tray_size': [0.35, 0.46, 0.04],
 'viscosity': 0.54,
 'water_colour': 'light blue',
 'water_rgb': [0.3, 0.55, 0.95],
 'world_rgb': [0.4, 0.45, 0.55]}

# the drip tray's inside (up to just above its rim) and the plate's x extent (its centre +- 0.15 m)
_TX, _TS = PARAMS["tray_loc"][0], PARAMS["tray_size"]
TRAY_LO, TRAY_HI = (_TX - _TS[0] / 2, -_TS[1] / 2, 0.0), (_TX + _TS[0] / 2, _TS[1] / 2, _TS[2] + 0.005)
PLATE_X0, PLATE_X1 = PARAMS["plate_loc"][0] - 0.15, PARAMS["plate_loc"][0] + 0.15
NOZ, PLT, TRY, WAT = PARAMS["nozzle_colour"], PARAMS["plate_colour"], PARAMS["tray_colour"], PARAMS["water_colour"]
TASK = {
    "id": PARAMS["task_id"],
    "title": "Water jet from a hose nozzle hits a tilted plate",
    "category": "liquid",
    "subcategory": "jets-surface-flow",
    "summary": f"A {NOZ} hose nozzle shoots a water jet across the table onto a tilted {PLT} plate; the water splashes, runs down the plate and collects in a {TRY} drip tray.",
    "roles": [
        {"name": "water", "description": "the water jet (liquid particles) from the nozzle", "truth_object": "NozzleMouth", "name_hints": ["water", "jet", "liquid", "fluid", "emitter", "nozzle"]},
        {"name": "plate", "description": f"tilted {PLT} plate the jet hits", "core": False, "truth_object": "Plate", "name_hints": ["plate", "board", "panel", "wall"]},
        {"name": "tray", "description": f"{TRY} drip tray under the plate", "core": False, "truth_object": "DripTray", "name_hints": ["tray", "basin", "pan"]},
        {"name": "nozzle", "description": f"{NOZ} hose nozzle", "core": False, "required": False, "truth_object": "Nozzle", "name_hints": ["nozzle", "hose", "pipe"]},
    ],
    "checklist": [
        {"id": "nozzle", "category": "hose nozzle", "count": 1, "attributes": [NOZ, "short cylinder"], "layout": "left, above the table, pointing right", "roles": ["nozzle"]},
        {"id": "plate", "category": "plate", "count": 1, "attributes": [PLT, "flat", "leaning back"], "layout": "right of centre, standing in the tray", "roles": ["plate"]},
        {"id": "tray", "category": "tray", "count": 1, "attributes": [TRY, "shallow"], "layout": "around the foot of the plate", "roles": ["tray"]},
        {"id": "water", "category": "liquid", "count": 1, "attributes": [WAT, "droplets"], "layout": "a jet from the nozzle to the plate", "roles": ["water"]},
    ],
    "events": [
        {"id": "jet", "kind": "action", "description": "a water jet leaves the nozzle and crosses the table", "roles": ["water", "nozzle"], "weight": 1.0},
        {"id": "hits_plate", "kind": "action", "description": "the jet hits the plate and splashes", "roles": ["water", "plate"], "weight": 2.0, "key": True, "after": ["jet"]},
        {"id": "collects", "kind": "action", "description": "water runs down the plate and collects in the tray", "roles": ["water", "tray"], "weight": 2.0, "after": ["hits_plate"]},
        {"id": "jet_stops", "kind": "final_state", "description": "the jet stops and the water stays in the tray", "roles": ["water", "tray"], "weight": 1.0, "after": ["collects"]},
    ],
    "rubric": {
        "initial_conditions": [f"liquid emitted from the nozzle with an initial speed of about {PARAMS['speed']:.0f} m/s"],
        "actuation": ["a liquid emitter at the nozzle mouth"],
        "equivalent_representations": ["SPH particle fluid", "Mantaflow liquid with an inflow object (when available)"],
        "criteria": [
            {"id": "sim_water", "description": "the water moves by a fluid simulation", "weight": 2.0, "roles": ["water"], "check": "moves_by_simulation", "structural": True},
            {"id": "no_scripted", "description": "no keyframed or handler-driven liquid", "weight": 1.0, "roles": ["water"], "check": "no_scripted_motion", "structural": True},
            {"id": "hits_plate", "description": "the water reaches the plate", "weight": 1.0, "roles": ["water"], "check": "contacts", "params": {"other": "plate", "before_s": 2.0}},
            {"id": "stable", "description": "no exploding particles", "weight": 0.5, "roles": ["water"], "check": "numerically_stable"},
            {
                "id": "cf_no_gravity",
                "description": "the water collects in the tray because gravity pulls it down the plate: without gravity it does not",
                "weight": 2.0,
                "roles": ["water", "tray"],
                "check": "counterfactual",
                "evidence": "truth.py re-simulated with gravity scaled to 0: fraction of particles inside the drip tray at 6 s is 0.0 (the jet flies on without falling) vs 0.588 in the baseline",
                "counterfactual": {
                    "intervention": {"kind": "scale_gravity", "params": {"factor": 0.0}},
                    "expected": {"measure": "particles_inside", "role": "tray", "at_s": 6.0, "op": "lt", "value": 0.5, "unit": "ratio", "relative_to_baseline": True},
                },
            },
        ],
    },
}


def liquid_key(s, emitter):
    return next(k for k in s.particles if k.startswith(emitter + "/"))


def measure_events(s):
    import numpy as np

    key = liquid_key(s, "NozzleMouth")
    P, A = np.nan_to_num(s.particles[key], nan=1e9), s.particles_alive[key]
    alive = A.sum(axis=1)
    start = d.first_true(alive > 0) or 0
    near_plate = ((P[:, :, 0] > PLATE_X0) & (P[:, :, 0] < PLATE_X1) & (P[:, :, 2] > 0.05) & A).sum(axis=1)
    hit = d.first_true(near_plate > 0)
    hit = hit if hit is not None else start
    tray = d.particles_in_box(s, key, TRAY_LO, TRAY_HI)
    first_tray = d.first_true(tray > 0)
    first_tray = first_tray if first_tray is not None else hit
    in_air = ((P[:, :, 2] > 0.06) & (P[:, :, 0] < PLATE_X0) & A).sum(axis=1)
    stop = d.last_true(in_air > 0)
    stop = stop if stop is not None else len(alive) - 1
    F = d.frame_of
    return {
        "jet": d.interval(F(s, start), F(s, hit), f"first particle born at frame {F(s, start)}"),
        "hits_plate": d.interval(F(s, hit), F(s, min(hit + 6, len(alive) - 1)), f"first particle in the plate region ({PLATE_X0:g}<x<{PLATE_X1:g} m, z>0.05 m) at frame {F(s, hit)}"),
        "collects": d.interval(F(s, first_tray), F(s, stop), f"particles in the tray from frame {F(s, first_tray)}; {int(tray.max())} at most"),
        "jet_stops": {**d.interval(F(s, stop), F(s, len(alive) - 1), f"last frame with jet particles in the air left of the plate: {F(s, stop)}; {int(tray[-1])} of {int(alive[-1])} particles in the tray at the end"), "persists_until_s": 8.0},
    }
