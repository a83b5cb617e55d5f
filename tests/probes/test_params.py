"""non_physical_parameter rules on recorded scene settings (pure numpy), and on real bakes where a setting needs one."""

from __future__ import annotations

import numpy as np
from physcodegym.samples import SceneSamples


def _samples(weight: float = 1.0, clock: float = 1.0, restitution: float = 0.5, world_on: bool = True) -> SceneSamples:
    rb = {"type": "ACTIVE", "enabled": True, "in_world": True, "mass": 1.0, "restitution": restitution, "linear_damping": 0.04, "angular_damping": 0.1,
          "collision_shape": "SPHERE", "collision_margin": 0.0, "collision_collections": [True] + [False] * 19}
    return SceneSamples(
        frames=np.arange(1, 4, dtype=np.int32), fps=30.0, names=["Ball"], matrices=np.tile(np.eye(4), (1, 3, 1, 1)), verts={}, particles={}, particles_alive={},
        info={"Ball": {"type": "MESH", "rigid_body": rb, "modifiers": [], "physics": {}}},
        scene_info={"gravity": [0, 0, -9.81], "use_gravity": True,
                    "rigidbody_world": {"enabled": world_on, "time_scale": clock, "substeps_per_frame": 10, "effector_weights": {"gravity": weight, "all": 1.0}}},
    )


def test_gravity_tolerance_and_clock_and_restitution() -> None:
    from physcodegym.probes.audit.params import parameter_problems

    assert parameter_problems(_samples()) == []
    assert parameter_problems(_samples(weight=0.95)) == []  # within the default 10 %
    strict = parameter_problems(_samples(weight=0.95), gravity_tol=0.02)  # a rubric asking for Earth gravity within 2 %
    assert [p["param"] for p in strict] == ["gravity"] and "effector_weights.gravity" in strict[0]["path"]
    probs = {p["param"]: p for p in parameter_problems(_samples(weight=0.25, clock=2.0, restitution=1.2))}
    assert set(probs) == {"gravity", "time_scale", "restitution"}
    assert probs["time_scale"]["path"] == "scene.rigidbody_world.time_scale" and probs["time_scale"]["value"] == 2.0
    assert probs["restitution"]["path"] == "objects['Ball'].rigid_body.restitution"
    # a body in a disabled world is not simulated: its solver parameters are not judged
    assert parameter_problems(_samples(weight=0.25, world_on=False)) == []


def test_scene_frame_rate_is_part_of_the_rigid_body_clock() -> None:
    """Bullet steps time_scale / fps per frame and the video shows 30 frames a second: a 60 fps scene plays its
    physics at half speed, and time_scale 2 at 60 fps is real time again."""
    from dataclasses import replace

    from physcodegym.probes.audit.params import parameter_problems

    slow = {p["param"]: p for p in parameter_problems(replace(_samples(), fps=60.0))}
    assert set(slow) == {"time_scale"} and slow["time_scale"]["value"] == 0.5, slow
    assert "scene frame rate 60" in slow["time_scale"]["path"]
    assert parameter_problems(replace(_samples(clock=2.0), fps=60.0)) == []


def test_scene_frame_rate_clock_on_a_real_bake() -> None:
    """The same on a baked scene: a ball dropped in a 60 fps scene falls a quarter as far in 15 frames, and the
    audit names the frame rate."""
    from physcodegym.probes.audit.audit import audit_scene
    from physcodegym.testing import demo_scenes as D

    sc = D.rigid_stage(30)
    sc.render.fps = 60
    D.sphere("Ball", (0, 0, 3.0), 0.25)
    D.bake()
    hits = [f for f in audit_scene(sc, solvers_off=False).by_kind("non_physical_parameter")
            if f.evidence.get("param") == "time_scale"]
    assert hits and hits[0].value == 0.5 and "Ball" in hits[0].objects, hits


def test_a_time_remapped_render_is_a_clock_on_a_real_bake() -> None:
    """`render.frame_map_old / frame_map_new` plays every solver in slow (or fast) motion: measured, 100 -> 300
    drops a ball a third as fast on screen with nothing else in the scene saying so. The audit charges it as the
    clock of the solver; the same scene without remapping is clean."""
    from physcodegym.probes.audit.audit import audit_scene
    from physcodegym.testing import demo_scenes as D

    def clocks(new: int) -> list:
        sc = D.rigid_stage(30)
        sc.render.frame_map_old, sc.render.frame_map_new = 100, new
        D.sphere("Ball", (0, 0, 3.0), 0.25)
        D.bake()
        return [f for f in audit_scene(sc, solvers_off=False).by_kind("non_physical_parameter")
                if f.evidence.get("param") == "time_scale"]

    hits = clocks(300)
    assert hits and abs(hits[0].value - 1 / 3) < 1e-6 and "frame_map" in hits[0].evidence["path"], hits
    assert clocks(100) == []


def test_a_tilted_gravity_is_a_slope_nobody_sees() -> None:
    """Measured: gravity of Earth's size tilted 15 deg rolls a resting ball 7.5 m across a level floor in 3 s, and
    the energy balance (which uses the same tilted gravity) sees nothing. The direction is judged on its own."""
    import math

    from physcodegym.probes.audit.params import parameter_problems

    s = _samples()
    a = math.radians(15)
    s.scene_info["gravity"] = [9.81 * math.sin(a), 0.0, -9.81 * math.cos(a)]
    probs = {p["param"]: p for p in parameter_problems(s)}
    assert set(probs) == {"gravity_direction"} and abs(probs["gravity_direction"]["value"] - 15.0) < 0.01, probs
    s.scene_info["gravity"] = [9.81 * math.sin(math.radians(1)), 0.0, -9.81 * math.cos(math.radians(1))]
    assert parameter_problems(s) == []  # within the 3 deg tolerance


def test_a_brownian_push_on_particles_is_charged_on_a_real_bake() -> None:
    """Brownian motion pushes every particle at random each step: a source of energy no drop or grain has. The
    audit names the property; the same drops without it are clean."""
    from physcodegym.probes.audit.audit import audit_scene
    from physcodegym.testing import demo_scenes as D

    def pushes(brownian: float) -> list:
        sc = D.reset(20)
        D.camera(sc)
        em = D._emitter("Spout", (0, 0, 2.0), 60, 20)
        em.particle_systems[0].settings.brownian_factor = brownian
        D.bake()
        return [f for f in audit_scene(sc, solvers_off=False).by_kind("non_physical_parameter")
                if f.evidence.get("param") == "brownian_factor"]

    hits = pushes(3.0)
    assert hits and hits[0].value == 3.0 and "Spout" in hits[0].objects, hits
    assert hits[0].evidence["path"] == "objects['Spout'].particle_systems['Drops'].settings.brownian_factor"
    assert pushes(0.0) == []
