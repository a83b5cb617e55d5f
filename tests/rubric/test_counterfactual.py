"""Every intervention kind on real re-bakes of copies of a saved scene: each is verified to take effect,
leaves the original file untouched, and moves the responding body the way physics says it must."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from physcodegym.probes.branches.counterfactual import run_counterfactual, track
from physcodegym.tasks.schema import ExpectedResponse, Intervention

IDENT = {"CueBall": "CueBall", "RedBall": "RedBall", "Table": "Table", "Wind": "Wind"}
ROLES = {"incoming_ball": "CueBall", "target_ball": "RedBall", "table": "Table", "wind": "Wind"}


def iv(kind: str, roles: list[str], **params) -> Intervention:
    return Intervention(kind=kind, roles=roles, params=params)


def cf(blend: Path, intervention: Intervention, **kw) -> dict:
    return run_counterfactual(blend, intervention, IDENT, frames=kw.pop("frames", (1, 46)), **kw)


@pytest.fixture(scope="module")
def truth(scene_dir) -> Path:
    return scene_dir("truth") / "scene.blend"


@pytest.fixture(scope="module")
def baseline(truth):
    """One baseline for the whole module (never bake the baseline twice)."""
    d = cf(truth, iv("scale_gravity", [], factor=1.0))
    return d["_samples"]["baseline"]


def test_original_file_untouched_and_effect_verified(truth, baseline) -> None:
    before = hashlib.sha256(truth.read_bytes()).hexdigest()
    d = cf(truth, iv("disable_contact", ["CueBall", "RedBall"]), baseline=baseline)
    assert hashlib.sha256(truth.read_bytes()).hexdigest() == before
    assert d["took_effect"] and d["baseline_source"] == "reused"
    assert d["trajectories"]["RedBall"]["intervened_displacement_m"] < 1e-3
    assert d["trajectories"]["RedBall"]["baseline_displacement_m"] > 0.5


def test_remove_object_and_support(truth, baseline) -> None:
    d = cf(truth, iv("remove_object", ["RedBall"]), baseline=baseline)
    assert d["took_effect"] and d["trajectories"]["RedBall"]["intervened"] == "absent"
    assert d["trajectories"]["CueBall"]["intervened_displacement_m"] > d["trajectories"]["CueBall"]["baseline_displacement_m"] + 0.5
    d = cf(truth, iv("remove_support", ["Table"]), baseline=baseline)
    assert d["took_effect"]
    assert track(d["_samples"]["intervened"], "RedBall")[-1, 2] < -1.0  # falls with nothing under it


def test_shift_release_measured_and_miss(truth, baseline) -> None:
    d = cf(truth, iv("shift_release", ["RedBall"], offset=[0.0, 0.7, 0.0]), baseline=baseline)
    assert d["took_effect"], d["took_effect_evidence"]
    assert d["trajectories"]["RedBall"]["intervened_displacement_m"] < 0.01  # the cue ball now misses it


def test_set_velocity_measured(truth, baseline) -> None:
    d = cf(truth, Intervention(kind="set_velocity", roles=["RedBall"], params={"velocity": [0.0, 1.5, 0.0]}, from_frame=4), baseline=baseline)
    assert d["took_effect"], d["took_effect_evidence"]
    tr = track(d["_samples"]["intervened"], "RedBall")
    assert tr[10, 1] > 0.3  # kept moving along +y after the hand-off


def test_scale_gravity(truth, baseline) -> None:
    d = cf(truth, iv("scale_gravity", [], factor=-0.5), baseline=baseline)
    assert d["took_effect"]
    assert track(d["_samples"]["intervened"], "RedBall")[-1, 2] > 2.0


def test_disable_actuator_freezes_scripted_target(scene_dir) -> None:
    blend = scene_dir("ghost") / "scene.blend"
    d = cf(blend, iv("disable_actuator", ["RedBall"]), frames=(1, 75))
    assert d["took_effect"] and "animation removed" in d["intervened_run"]["interventions"][0]["changed"]
    assert d["trajectories"]["RedBall"]["baseline_displacement_m"] > 2.0
    assert d["trajectories"]["RedBall"]["intervened_displacement_m"] < 1e-3


def test_disable_field_and_responds_to_twins(scene_dir) -> None:
    on = cf(scene_dir("windy") / "scene.blend", iv("disable_field", ["Wind"]))
    off = cf(scene_dir("windy_far") / "scene.blend", iv("disable_field", ["Wind"]))
    assert on["took_effect"] and off["took_effect"]
    assert on["trajectories"]["RedBall"]["max_deviation_m"] > 0.3
    assert off["trajectories"]["RedBall"]["max_deviation_m"] < 1e-3


def test_intervention_on_missing_mechanism_is_reported(truth, baseline) -> None:
    d = cf(truth, iv("disable_field", ["RedBall"]), baseline=baseline)
    assert d["ok"] is False and "not a force field" in d["reason"]


# ---------------------------------------------------------------- matched controls (SPEC §5)

RELAUNCH = Intervention(kind="set_velocity", roles=["CueBall"], params={"velocity": [3.0, 0.0, 0.0]}, from_frame=4)
RESPONDS = ExpectedResponse(measure="displacement", role="RedBall", at_s=1.5, op="gt", value=0.3)
CONTROL = Intervention(kind="enable_collider", roles=["RedBall"])


def test_failure_established_only_with_responsive_control(scene_dir) -> None:
    # the cue ball rolls through a target with no shared collider: the target never responds
    d = cf(scene_dir("nocollide") / "scene.blend", RELAUNCH, control=CONTROL, expected=RESPONDS)
    v = d["verdict"]
    assert v["intervened"]["value"] < 0.01 and v["control"]["value"] > 0.3
    assert v["control_responsive"] is True and v["passed"] is False
    # the same failure on a target that nothing could move: the control does not respond, no verdict
    d = cf(scene_dir("nocollide_passive") / "scene.blend", RELAUNCH, control=CONTROL, expected=RESPONDS)
    v = d["verdict"]
    assert v["control_responsive"] is False and v["passed"] is None and "control" in v["reason"]


def test_truth_passes_the_same_expectation(truth, baseline) -> None:
    d = cf(truth, RELAUNCH, control=CONTROL, expected=RESPONDS, baseline=baseline)
    assert d["verdict"]["passed"] is True
    assert np.isfinite(d["verdict"]["intervened"]["value"])


def test_a_re_simulation_past_the_workers_limit_is_not_credited(truth, baseline, monkeypatch) -> None:
    """A scene too slow to re-simulate within the branch limit (here the limit is cut to 0.01 s, so the truth's own
    re-bake outruns it; the real worker is killed) fails the counterfactual criterion instead of leaving it
    undetermined: otherwise a scene could skip every counterfactual by being slow. A failure that is the check's
    own (an intervention that does not apply to the scene) stays undetermined."""
    from physcodegym.verifier.checks import _cf_failure

    monkeypatch.setenv("PHYSCODEGYM_BRANCH_TIMEOUT_S", "0.01")
    d = cf(truth, RELAUNCH, control=CONTROL, expected=RESPONDS, baseline=baseline)
    assert d["ok"] is False and "worker stopped" in d["reason"], str({k: v for k, v in d.items() if k != "_samples"})
    res = _cf_failure(d)
    assert res["passed"] is False and res["evidence"].get("unverifiable") is True, res
    monkeypatch.delenv("PHYSCODEGYM_BRANCH_TIMEOUT_S")
    own = _cf_failure(cf(truth, iv("disable_field", ["RedBall"]), baseline=baseline))
    assert own["passed"] is None, own
