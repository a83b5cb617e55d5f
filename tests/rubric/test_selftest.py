"""Verifier self-test on a real truth program: every injected defect kind is caught and penalised, the truth is clean.

The basic defects run on every shipped task; the concealment-mechanism defects (NLA strip with the world off,
a visible copy following a hidden body, weak gravity with a fast clock, static embedded solids, render-only
motion, a viewport-only collider, a pass-through...) run on the test task and two shipped rigid tasks here, the
cloth and liquid ones on one task each (the full matrix: `physcodegym selftest --all`), so the self-test's CI cost
does not grow with every new mechanism.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from physcodegym.probes.defects.defects import BASIC_DEFECTS, HONEST_TWINS, MECHANISM_DEFECTS, NOT_APPLICABLE
from physcodegym.tasks.loader import load_task
from physcodegym.verifier.selftest import DEFECTS, run_selftest

from tests.rubric.conftest import shipped_task_ids
from tests.rubric.small_tasks import SMALL, small_task

MECHANISM_TASKS = ("ball_bounce", "block_stack")


def _task(task_id: str, truth_work: Path):
    """A shipped task, or its small copy (`tests/rubric/small_tasks.py`) when `task_id` names one."""
    return small_task(task_id, truth_work) if task_id in SMALL else load_task(task_id)


def selftest_task_ids() -> list[str]:
    """The CI packs, with those whose solver makes a defect's re-bake cost minutes (cloth_drape's 36x36
    self-colliding cloth, flag_wind's 30x20 flag, the SPH liquids of milk_pour, liquid_duck and hose_jet, all over
    8 s) replaced by their small copies: the same scene, solver and rubric over 2-3 s with a coarser cloth or
    fewer drops (hose_jet's three rows took 166 s in a measured CI run, its small copy's 30 s; flag_wind's two
    82 s and 35 s)."""
    small_of = {spec.source: tid for tid, spec in SMALL.items()}
    return [small_of.get(t, t) for t in shipped_task_ids()]


def test_selftest_catches_every_defect_on_test_task(billiard_task, tmp_path: Path) -> None:
    doc = run_selftest(billiard_task, work_dir=tmp_path)
    assert doc["baseline"]["S_val"] == 1.0 and doc["baseline"]["failed"] == []
    assert set(doc["defects"]) == set(DEFECTS)
    # the billiard table has no cloth and no liquid: only those defects have nothing to act on
    na = {k for k, v in doc["defects"].items() if v.get("not_applicable")}
    # an honest twin with nothing to act on (no mesh without physics to instance) is n/a too, with its reason
    assert na - set(HONEST_TWINS) == set(RIGID_ONLY_NA), {k: doc["defects"][k].get("error") for k in na}
    missed = {k: v for k, v in doc["defects"].items() if not v.get("caught") and k not in na}
    assert not missed, missed
    d = {k: v for k, v in doc["defects"].items() if k not in na}
    assert "sim" in d["keyframe_core"]["by_rubric"]
    assert "collider_mismatch" in d["oversize_margin"]["by_audit"] and "colliders" in d["oversize_margin"]["by_rubric"]
    assert "hidden_support" in d["hidden_support"]["by_audit"]
    assert "unexplained_force_field" in d["add_attractor"]["by_audit"]
    assert "rest" in d["remove_collider"]["by_rubric"]
    assert "scripted_motion" in d["nla_world_off"]["by_audit"] and "scripted_motion" in d["hidden_follower"]["by_audit"]
    assert d["gravity_clock"]["by_audit"] == ["non_physical_parameter"]
    assert d["static_embed"]["by_audit"] == ["interpenetration"]
    assert "scripted_motion" in d["render_only_lift"]["by_audit"]
    assert d["pass_through"]["by_audit"], d["pass_through"]  # the balls sink into the table they no longer meet
    # the self-test's own bake needs no re-simulation; a scene edited after its bake does
    assert d["stale_bake"]["resimulated"] and not d["keyframe_core"]["resimulated"]
    assert "scripted_motion" in d["keyed_motor"]["by_charge"] + d["keyed_motor"]["by_audit"], d["keyed_motor"]
    for k, v in d.items():
        if k in HONEST_TWINS:  # must stay clean: nothing found, nothing charged, S_val as the truth's
            assert v["clean"] and doc["cells"][k] == "clean", (k, v)
            continue
        assert v["penalised"] and v["S_val"] < 0.9, (k, v)
        assert v["reasons"] or v["charges"], (k, v)


@pytest.mark.parametrize("task_id", MECHANISM_TASKS)
def test_mechanism_defects_caught_and_penalised_on_rigid_tasks(task_id: str, truth_work: Path) -> None:
    doc = run_selftest(load_task(task_id), defects=list(MECHANISM_DEFECTS), work_dir=truth_work / task_id)
    assert doc["baseline"]["S_val"] == 1.0, (task_id, doc["baseline"])
    for k, v in doc["defects"].items():
        if k in RIGID_ONLY_NA:  # cloth and liquid defects: nothing to act on in a rigid task
            assert v.get("not_applicable") and NOT_APPLICABLE in v["error"], (task_id, k, v)
            continue
        if k in HONEST_TWINS:  # an honest twin stays clean (or has nothing to act on, and says why)
            assert v.get("clean") or (v.get("not_applicable") and NOT_APPLICABLE in v["error"]), (task_id, k, v)
            continue
        assert v.get("caught") and v.get("penalised"), (task_id, k, v)
        assert v["S_val"] < 0.9, (task_id, k, v["S_val"])
    if task_id == "ball_bounce":  # the ball floats on a field tuned to its weight: held by a field, not material
        assert "hidden_support" in doc["defects"]["field_lift"]["by_audit"], doc["defects"]["field_lift"]


RIGID_ONLY_NA = ("cloth_shell", "pin_in_air", "brownian_push", "collision_stack_shrink", "vanishing_liquid",
                 "cloth_string", "sourceless_liquid", "steered_liquid", "still_cloth_crossing",
                 "offset_drops", "drifting_drops", "keyed_blob")  # the last three change what a liquid's particles draw


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("task_id,defects", [("flag_wind_small", ("pin_in_air", "render_only_lift", "cloth_string",
                                                           "still_cloth_crossing", "still_cloth_fold")),
                                             ("cloth_drape_small", ("cloth_shell", "collision_stack_shrink")),
                                             ("hose_jet_small", ("brownian_push", "vanishing_liquid", "sourceless_liquid",
                                                           "steered_liquid"))])
def test_cloth_and_liquid_concealment_caught_and_penalised(task_id: str, defects: tuple[str, ...],
                                                          truth_work: Path) -> None:
    """The concealment defects that need a cloth or a liquid, on the cheapest task that has one (cloth_drape's small
    copy for the defects that need a collider under the cloth): a cloth
    pinned to nothing rendered, a cloth held off its colliders by its collision distance, colliders drawn inside
    the surfaces they collide with, a cloth tied by loose edges, a Brownian push on the water, water that vanishes, water
    that appears in mid-air, a still pinned spare of the cloth folded through itself; each caught by the audit finding
    its mechanism names and penalised, each honest twin (the spare folded without crossing) clean (the rest of the
    matrix: `physcodegym selftest --all`)."""
    doc = run_selftest(_task(task_id, truth_work), defects=list(defects), work_dir=truth_work / task_id)
    assert doc["baseline"]["S_val"] == 1.0, (task_id, doc["baseline"])
    for k, v in doc["defects"].items():
        if k in HONEST_TWINS:
            assert v.get("clean") and doc["cells"][k] == "clean", (task_id, k, v)
            continue
        assert v.get("caught") and v.get("penalised") and v["S_val"] < 0.9, (task_id, k, v)
        assert set(v["by_audit"]) & set(DEFECTS[k]), (task_id, k, v)


@pytest.mark.parametrize("task_id", ["hose_jet_small", "liquid_duck_small", "milk_pour_small"])
def test_stale_bake_caught_and_penalised_on_liquid_tasks(task_id: str, truth_work: Path) -> None:
    """SPH liquids do not re-simulate bit for bit, so their bake is compared on chaos-robust aggregates: a liquid
    baked at half gravity (gravity restored afterwards) must still be caught, the truth still clean (its run is
    shared with the task's basic self-test through `truth_work`); on the small copies of the jet and the two
    pours."""
    doc = run_selftest(_task(task_id, truth_work), defects=["stale_bake"], work_dir=truth_work / task_id)
    assert doc["baseline"]["S_val"] == 1.0, (task_id, doc["baseline"])
    v = doc["defects"]["stale_bake"]
    assert v.get("caught") and v.get("penalised") and v["S_val"] < 0.9, (task_id, v)
    assert "stale_cache" in v["by_audit"], (task_id, v)


@pytest.mark.parametrize("task_id", ["turntable"])  # a task_id parameter: grouped with turntable's truth bake
def test_a_stale_bake_that_changes_no_motion_is_not_applicable(task_id: str, truth_work: Path) -> None:
    """turntable: half gravity moves nothing there (a kinematic table carries glued bodies; measured 7.7 mm at
    most), so its half-gravity bake is the truth's motion and the cell says n/a with that number, not MISSED."""
    doc = run_selftest(load_task(task_id), defects=["stale_bake"], work_dir=truth_work / task_id)
    v = doc["defects"]["stale_bake"]
    assert doc["cells"]["stale_bake"] == "n/a" and "largest departure" in v["error"], v


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("task_id", selftest_task_ids())
def test_shipped_task_selftest(task_id: str, truth_work: Path) -> None:
    """Every CI task (the cloths and liquids by their small copies): truth S_val = 1 and every
    basic injected defect kind is caught and penalised, or (only where the defect has nothing to act on) not
    applicable with its reason; an injection error fails."""
    lt = _task(task_id, truth_work)
    doc = run_selftest(lt, defects=list(BASIC_DEFECTS), work_dir=truth_work / task_id)
    assert doc["baseline"]["S_val"] == 1.0, (task_id, doc["baseline"])
    assert doc["all_caught"], (task_id, {k: v for k, v in doc["defects"].items() if not v.get("caught")})
    for k, v in doc["defects"].items():
        if v.get("not_applicable"):
            assert NOT_APPLICABLE in v["error"], (task_id, k, v)
            continue
        assert v["caught"] and v["penalised"], (task_id, k, v)


def test_matrix_cell_says_what_happened() -> None:
    """The matrix cell of one defect row: caught and penalised, caught only, missed, not applicable, injection error."""
    from physcodegym.verifier.selftest import cell

    assert cell({"caught": True, "penalised": True}) == "+P"
    assert cell({"caught": True, "penalised": False}) == "+"
    assert cell({"caught": False, "penalised": False}) == "MISSED"
    assert cell({"caught": None, "not_applicable": True, "error": f"{NOT_APPLICABLE} nothing to remove"}) == "n/a"
    assert cell({"caught": None, "not_applicable": False, "error": "RuntimeError: bake failed"}) == "ERROR"
    assert cell({"honest_twin": True, "clean": True, "caught": True}) == "clean"
    assert cell({"honest_twin": True, "clean": False, "caught": False}) == "FALSE ALARM"
