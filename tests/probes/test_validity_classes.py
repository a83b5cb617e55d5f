"""Physical validity classes, each with its honest twin, on real (small) bakes:

- material is everything that renders: a cloth pinned along a decorative pole with no physics settings (a
  bevelled curve, a text, an instanced collection) hangs from something every frame shows; with no pole it hangs
  from nothing (`hidden_support`);
- an actuator is judged by its effect and a setting that changes during the run is scripted: a MOTOR joint whose
  target velocity is keyed to replay the free swing changes the motion by centimetres only, and is charged
  (`scripted_motion`) where the task does not admit MOTOR; admitted, or present with its motor off, it costs nothing;
- a stale cache is named as such (`stale_cache`, not `scripted_motion`), with the setting that changed after the
  bake, and it caps S_val; the same program baked honestly is clean;
- a body held up by a force field: the finding names the field and the share of the weight it carries;
- a still, pinned cloth whose mesh passes through itself right beside a fold is `self_intersection`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from physcodegym.probes.audit.findings import AuditReport
from physcodegym.tasks.schema import Rubric
from physcodegym.testing import demo_scenes as D


@pytest.fixture(scope="module")
def audit_of() -> Callable[..., AuditReport]:
    """audit_of(name, builder, program_text=None): the audit of a demo scene, built and audited once per module."""
    from physcodegym.probes.audit.audit import audit_scene

    cache: dict[str, AuditReport] = {}

    def get(name: str, build: Callable[[], Any], program_text: str | None = None) -> AuditReport:
        if name not in cache:
            try:
                cache[name] = audit_scene(build(), program_text=program_text)
            finally:
                D.clear_user_handlers()
        return cache[name]

    return get


def _said(rep: AuditReport) -> list[tuple[str, list[str], str]]:
    return [(f.kind, f.objects, f.message) for f in rep.findings]


def _rubric(admits: list[str]) -> Rubric:
    return Rubric.model_validate({"admits": admits, "criteria": [
        {"id": "sim", "description": "x", "weight": 1.0, "check": "numerically_stable"}]})


@pytest.mark.parametrize("pole", ["curve", "text", "instance"])
def test_a_cloth_pinned_to_a_rendered_pole_without_physics_is_clean(audit_of, pole: str) -> None:
    rep = audit_of(f"flag_{pole}", lambda: D.pinned_flag(pole))
    assert not rep.findings, _said(rep)


def test_a_cloth_pinned_to_nothing_hangs_from_a_hidden_support(audit_of) -> None:
    rep = audit_of("flag_none", lambda: D.pinned_flag("none"))
    hits = [f for f in rep.by_kind("hidden_support") if f.objects == ["Flag"]]
    assert hits and hits[0].value == 1.0, _said(rep)


def _motor_row(rep: AuditReport) -> dict[str, Any]:
    rows = [r for r in rep.meta["actuators"] if r["what"] == "joint" and r["type"] == "MOTOR"]
    assert len(rows) == 1, rep.meta["actuators"]
    return rows[0]


def test_a_keyed_motor_that_replays_the_free_swing_is_scripted_unless_admitted(audit_of) -> None:
    from physcodegym.verifier.rubric_eval import actuator_findings

    rep = audit_of("motor_keyed", lambda: D.replayed_motor(True))
    row = _motor_row(rep)
    assert [v["path"] for v in row["varies"]] == ["rigid_body_constraint.motor_ang_target_velocity"], row
    assert row["varies"][0]["how"] == "keyframed" and row["varies"][0]["min"] < 0 < row["varies"][0]["max"], row
    charged = actuator_findings(rep.meta, _rubric(["HINGE"]), [f.model_dump() for f in rep.findings])
    scripted = [f for f in charged if f["kind"] == "scripted_motion"]
    assert scripted and "Pump" in scripted[0]["objects"] and "motor_ang_target_velocity" in scripted[0]["message"], charged
    assert actuator_findings(rep.meta, _rubric(["HINGE", "MOTOR"]), []) == []  # admitted: an actuator the task allows


def test_a_motor_joint_that_is_off_changes_nothing_and_is_not_charged(audit_of) -> None:
    from physcodegym.verifier.rubric_eval import actuator_findings

    rep = audit_of("motor_off", lambda: D.replayed_motor(False))
    row = _motor_row(rep)
    assert row["varies"] == [] and row["acts_on"] == [], row  # measured: removing it changes nothing
    assert actuator_findings(rep.meta, _rubric(["HINGE"]), []) == []
    assert not rep.findings, _said(rep)


def test_a_stale_cache_is_named_with_the_setting_and_caps_s_val(audit_of) -> None:
    from physcodegym.verifier.rubric import charge_findings

    rep = audit_of("stale", lambda: D.stale_ball(True), D.STALE_PROGRAM)
    assert not rep.by_kind("scripted_motion"), _said(rep)  # the user must re-bake: nothing was scripted
    hits = [f for f in rep.by_kind("stale_cache") if f.objects == ["Ball"]]
    assert hits, _said(rep)
    named = [f for f in hits if "changed_after_bake" in f.evidence]
    assert named and any("sc.gravity = (0.0, 0.0, -9.81)" in e for e in named[0].evidence["changed_after_bake"])
    assert "sc.gravity" in named[0].message and "re-bake" in named[0].message
    ag = next(f.evidence["apparent_gravity"] for f in hits if "apparent_gravity" in f.evidence)
    assert abs(ag["bake_mps2"] - 4.905) < 0.3 and abs(ag["saved_mps2"] - 9.81) < 0.01, ag
    s_val, expl = charge_findings(1.0, {}, [f.model_dump() for f in rep.findings], [])
    assert s_val is not None and s_val < 1.0, expl


def test_the_same_program_baked_honestly_has_no_stale_cache(audit_of) -> None:
    rep = audit_of("stale_twin", lambda: D.stale_ball(False), D.STALE_PROGRAM.replace("-4.905", "-9.81"))
    assert rep.meta["resimulation"]["ran"] is True, rep.meta["resimulation"]
    assert not rep.findings, _said(rep)


def test_a_body_held_by_a_field_names_the_field_and_its_share_of_the_weight(audit_of) -> None:
    rep = audit_of("lift", lambda: D.field_lift(True))
    hits = [f for f in rep.by_kind("hidden_support") if "Lift" in f.objects and "Ball" in f.objects]
    assert hits, _said(rep)
    share = hits[0].evidence["weight_share"]["Lift"]["share"]
    assert 0.8 < share < 1.2, hits[0].evidence  # it alone holds the ball in mid-air
    assert "'Lift' (FORCE) carries" in hits[0].message and "% of its weight" in hits[0].message


def test_a_body_resting_on_a_rendered_pedestal_is_clean(audit_of) -> None:
    rep = audit_of("lift_twin", lambda: D.field_lift(False))
    assert not rep.findings, _said(rep)


def test_a_still_pinned_cloth_crossing_itself_beside_a_fold_is_a_self_intersection(audit_of) -> None:
    rep = audit_of("fold", lambda: D.tight_fold(True))
    hits = rep.by_kind("self_intersection")
    assert hits and hits[0].objects == ["Strip"] and hits[0].evidence.get("static"), _said(rep)
    twin = audit_of("fold_twin", lambda: D.tight_fold(False))
    assert not twin.findings, _said(twin)


def test_the_edits_after_a_bake_are_read_where_the_bake_runs() -> None:
    """A bake inside a function happens where the function is called: the scene built below the function's
    definition is not 'after the bake', the edits that follow the call (and the function's own after its bake call)
    are; output paths are no physics."""
    from physcodegym.probes.branches.resimulation import edits_after_bake

    prog = '''import bpy
def go():
    sc = bpy.context.scene
    bpy.ops.ptcache.bake_all(bake=True)
    sc.gravity = (0, 0, -9.81)
    sc.render.filepath = "//frames/"
sc = bpy.context.scene
sc.gravity = (0, 0, -2)
go()
bpy.data.objects.remove(bpy.data.objects["Plank"])
'''
    assert edits_after_bake(prog) == ["line 5: sc.gravity = (0, 0, -9.81)",
                                      "line 10: bpy.data.objects.remove(bpy.data.objects['Plank'])"]
    assert edits_after_bake(prog.replace("go()\n", "")) == []  # never called: nothing was baked
    assert edits_after_bake("import bpy\nbpy.context.scene.gravity = (0, 0, -9.81)\n") == []
