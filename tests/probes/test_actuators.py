"""Joints and force fields the task does not admit (real bakes, each with a twin that must stay clean).

The audit re-bakes the saved scene once per joint type and per force field without it (`meta["actuators"]`:
what each one measurably changes); the rubric then charges the types the task does not admit
(`verifier.rubric_eval.actuator_findings`). Judged by effect, not by presence:

- a leaning two-block tower that should topple, held up by a FIXED joint (glue): `hidden_support`, unless the
  task admits FIXED; twin: the same glue on a straight tower that stands anyway (it changes nothing);
- a hinged pendulum pumped by a hidden MOTOR joint: charged when the task admits only the hinge; twin: the
  same pendulum without the motor (the admitted hinge changes the motion, and is not charged);
- a WIND field pushing a ball along the ground: `unexplained_force_field` when the task shows no wind; twin:
  a wind field whose reach ends before the ball (present, but it touches nothing);
- a FORCE field keyed off after four frames gave the ball its initial velocity (not charged, like a kinematic
  hand-off); left on, it is charged.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from physcodegym.tasks.schema import Rubric
from physcodegym.testing import demo_scenes as D

FRAMES = 60


def _rubric(admits: list[str] | None = None, text: list[str] | None = None) -> Rubric:
    return Rubric.model_validate({
        "equivalent_representations": text or [], "admits": admits,
        "criteria": [{"id": "sim", "description": "x", "weight": 1.0, "check": "numerically_stable"}]})


def _joint(kind: str, name: str, loc: tuple, ob1: Any, ob2: Any) -> Any:
    import bpy

    emp = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(emp)
    emp.location = loc
    bpy.context.view_layer.objects.active = emp
    bpy.ops.rigidbody.constraint_add(type=kind)
    c = emp.rigid_body_constraint
    c.object1, c.object2 = ob1, ob2
    return c


def glued_tower(defect: bool) -> Any:
    """Two blocks on the ground. Defect: the top block overhangs by 70 % (it must topple) and a FIXED joint
    glues it to the bottom one. Twin: a straight tower with the same glue (it stands anyway)."""
    sc = D.rigid_stage(FRAMES)
    bottom = D.box("BlockLow", (0, 0, 0.2), (0.4, 0.4, 0.4), rb="ACTIVE", mass=1.0)
    top = D.box("BlockTop", (0.28 if defect else 0.0, 0, 0.6), (0.4, 0.4, 0.4), rb="ACTIVE", mass=1.0)
    _joint("FIXED", "Glue", (0.1, 0, 0.4), bottom, top)
    D.bake()
    return sc


def pumped_pendulum(defect: bool) -> Any:
    """The hinge pendulum of `demo_scenes.pendulum`. Defect: a second joint, an angular MOTOR about the hinge
    axis, drives the bob round at 4 rad/s. Twin: the hinge alone."""
    import bpy

    sc = D.reset(FRAMES)
    D.rigid_world(sc, FRAMES)
    D.camera(sc)
    D.ground()
    pivot = D.box("Pivot", (0, 0, 3.0), (0.1, 0.4, 0.1), rb="PASSIVE")
    a = math.radians(60)
    bob = D.box("Bob", (1.5 * math.sin(a), 0, 3.0 - 1.5 * math.cos(a)), (0.3, 0.3, 0.3), rb="ACTIVE", shape="MESH",
                mass=1.0)
    D.rod_to(bob, (0, 0, 3.0))  # the rod that carries the hinge (a hinge 1.5 m from any material is a hidden link)
    bob.rigid_body.collision_collections[0] = False
    bob.rigid_body.collision_collections[1] = True
    _joint("HINGE", "Hinge", (0, 0, 3.0), pivot, bob)
    bpy.data.objects["Hinge"].rotation_euler = (math.radians(90), 0, 0)
    if defect:
        c = _joint("MOTOR", "Pump", (0, 0, 3.0), pivot, bob)
        bpy.data.objects["Pump"].rotation_euler = (0, 0, math.radians(90))  # motor axis (its X) along world Y
        c.use_motor_ang = True
        c.motor_ang_target_velocity = 4.0
        c.motor_ang_max_impulse = 2.0
    D.bake()
    return sc


def windy_ball(defect: bool) -> Any:
    """A ball at rest on the ground and a WIND field blowing along +x. Defect: the wind reaches the ball and
    rolls it. Twin: the wind's reach (max distance 0.5 m) ends 2.5 m before the ball."""
    import bpy

    sc = D.rigid_stage(FRAMES, friction=0.5)
    D.sphere("Ball", (0, 0, 0.25), 0.25, mass=1.0)
    bpy.ops.object.effector_add(type="WIND", location=(-3.0, 0, 0.25), rotation=(0, math.radians(90), 0))
    w = bpy.context.active_object
    w.name = "Breeze"
    w.field.strength = 30.0
    if not defect:
        w.field.use_max_distance = True
        w.field.distance_max = 0.5
    D.bake()
    return sc


def pushed_ball(defect: bool) -> Any:
    """A ball on the ground beside a FORCE field that pushes it along +x. Twin: the field's strength is keyed off
    after frame 4 (an initial push, like a kinematic hand-off of the initial velocity). Defect: it stays on."""
    import bpy

    sc = D.rigid_stage(FRAMES, friction=0.5)
    D.sphere("Ball", (0, 0, 0.25), 0.25, mass=1.0)
    bpy.ops.object.effector_add(type="FORCE", location=(-0.6, 0, 0.25))
    f = bpy.context.active_object
    f.name = "Push"
    f.field.strength = 40.0
    f.field.keyframe_insert("strength", frame=1)
    if not defect:
        f.field.keyframe_insert("strength", frame=4)
        f.field.strength = 0.0
        f.field.keyframe_insert("strength", frame=5)
    D.bake()
    return sc


BUILDERS = {"glued_tower": glued_tower, "pumped_pendulum": pumped_pendulum, "windy_ball": windy_ball,
            "pushed_ball": pushed_ball}


@pytest.fixture(scope="session")
def audited_actuators() -> Any:
    """audited_actuators(case, defect) -> (AuditReport, SceneSamples), each scene built, baked and audited once."""
    from physcodegym.probes.audit.audit import audit_scene
    from physcodegym.probes.scene.sampling import sample_scene

    cache: dict[tuple[str, bool], Any] = {}

    def get(case: str, defect: bool) -> Any:
        if (case, defect) not in cache:
            sc = BUILDERS[case](defect)
            samples = sample_scene(sc)
            cache[(case, defect)] = (audit_scene(sc, samples=samples), samples)
        return cache[(case, defect)]

    return get


def _charged(audited: tuple[Any, Any], rubric: Rubric) -> list[dict[str, Any]]:
    from physcodegym.verifier.rubric_eval import validity_findings

    report, samples = audited
    return validity_findings(report, samples, rubric)


def _row(report: Any, what: str, kind: str) -> dict[str, Any]:
    rows = [r for r in report.meta["actuators"] if r["what"] == what and r["type"] == kind]
    assert len(rows) == 1, report.meta["actuators"]
    return rows[0]


def test_glue_that_holds_a_leaning_tower_is_a_hidden_support(audited_actuators):
    bad = audited_actuators("glued_tower", True)
    row = _row(bad[0], "joint", "FIXED")
    assert "BlockTop" in row["acts_on"] and row["max_effect_m"] > 0.1, row
    hits = [f for f in _charged(bad, _rubric()) if f["kind"] == "hidden_support"]
    assert hits and {"BlockTop", "Glue"} <= set(hits[0]["objects"]), hits
    assert "FIXED" in hits[0]["message"] and "not admitted" in hits[0]["message"]
    # a task whose rubric admits glue (explicitly, or by naming the type in its representations) charges nothing
    for admitted in (_rubric(admits=["FIXED"]), _rubric(text=["blocks joined by a FIXED constraint"])):
        assert not [f for f in _charged(bad, admitted) if f["kind"] == "hidden_support"]


def test_glue_that_changes_nothing_is_not_charged(audited_actuators):
    twin = audited_actuators("glued_tower", False)
    row = _row(twin[0], "joint", "FIXED")
    assert row["acts_on"] == [], row  # measured: the straight tower stands with or without it
    assert _charged(twin, _rubric()) == [], _charged(twin, _rubric())
    assert twin[0].findings == [], [(f.kind, f.message) for f in twin[0].findings]


def test_hidden_motor_on_a_hinged_pendulum_is_charged(audited_actuators):
    bad = audited_actuators("pumped_pendulum", True)
    assert "Bob" in _row(bad[0], "joint", "MOTOR")["acts_on"]
    pendulum_rubric = _rubric(text=["HINGE or POINT rigid-body constraint"])
    hits = [f for f in _charged(bad, pendulum_rubric) if "Pump" in f["objects"]]
    assert hits and hits[0]["kind"] in ("energy_gain", "hidden_support"), hits
    assert "MOTOR" in hits[0]["message"]
    # the same motor is an admitted actuator where the task shows one
    assert not [f for f in _charged(bad, _rubric(admits=["HINGE", "MOTOR"])) if "Pump" in f["objects"]]


def test_admitted_hinge_acts_and_is_not_charged(audited_actuators):
    twin = audited_actuators("pumped_pendulum", False)
    assert "Bob" in _row(twin[0], "joint", "HINGE")["acts_on"]  # without the hinge the bob falls
    assert _charged(twin, _rubric(text=["HINGE or POINT rigid-body constraint"])) == []
    # a task that admits no hinge charges it: it holds the bob up
    assert [f["kind"] for f in _charged(twin, _rubric())] == ["hidden_support"]


def test_wind_the_video_does_not_show_is_an_unexplained_field(audited_actuators):
    bad = audited_actuators("windy_ball", True)
    assert "Ball" in _row(bad[0], "field", "WIND")["acts_on"]
    hits = [f for f in _charged(bad, _rubric()) if f["kind"] == "unexplained_force_field"]
    assert hits and {"Breeze", "Ball"} <= set(hits[0]["objects"]), hits
    assert not _charged(bad, _rubric(text=["a WIND force field (the video shows wind)"]))


def test_wind_that_touches_nothing_is_not_charged(audited_actuators):
    twin = audited_actuators("windy_ball", False)
    assert _row(twin[0], "field", "WIND")["acts_on"] == []
    assert _charged(twin, _rubric()) == []


def test_rubric_admits_types_from_text_or_list() -> None:
    r = _rubric(text=["a MOTOR rigid-body constraint", "platter held by a HINGE constraint", "GENERIC_SPRING legs"])
    assert r.admitted_types() == {"MOTOR", "HINGE", "GENERIC_SPRING"}
    assert _rubric(text=["a hinge, lower case, is prose"]).admitted_types() == set()
    assert _rubric(admits=[], text=["a WIND field"]).admitted_types() == set()  # the explicit list wins
    with pytest.raises(ValueError, match="unknown joint/field types"):
        _rubric(admits=["GLUE"])


def test_a_field_keyed_off_after_the_first_frames_is_an_initial_push(audited_actuators):
    push = audited_actuators("pushed_ball", False)
    row = _row(push[0], "field", "FORCE")
    assert "Ball" in row["acts_on"] and row["last_active_frame"] == 4, row  # it did push the ball
    assert _charged(push, _rubric()) == []
    on = audited_actuators("pushed_ball", True)
    assert _row(on[0], "field", "FORCE")["last_active_frame"] == FRAMES  # keyed on to the end
    assert "unexplained_force_field" in [f["kind"] for f in _charged(on, _rubric())]
