"""CLI contracts of `counterfactual` and `selftest`, and S_val for a run folder from pure Python."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from physcodegym.metrics.results import MetricState
from physcodegym.verifier.validity import result_from_audit, s_val_for_run


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "physcodegym", *args], capture_output=True, text=True, timeout=600)


def test_counterfactual_cli_bad_input_exit_2(tmp_path: Path, scene_dir) -> None:
    p = cli("counterfactual", str(tmp_path), "--intervention", "disable_contact:a,b", "--json")
    assert p.returncode == 2 and "scene.blend" in json.loads(p.stdout)["error"]["file"]
    p = cli("counterfactual", str(scene_dir("truth")), "--intervention", "teleport:a", "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["field"] == "--intervention.kind"
    p = cli("selftest", "--task", "tests/rubric/data/billiard", "--defects", "melt", "--json")
    assert p.returncode == 2 and "melt" in json.loads(p.stdout)["error"]["message"]


def test_counterfactual_cli_with_task_roles_verdict_and_plot(tmp_path: Path, scene_dir) -> None:
    exp = {"measure": "displacement", "role": "target_ball", "at_s": 1.5, "op": "lt", "value": 0.01, "preserved_roles": ["incoming_ball"], "preserved_until_s": 0.5}
    png = tmp_path / "cf.png"
    p = cli(
        "counterfactual", str(scene_dir("truth")), "--task", "tests/rubric/data/billiard",
        "--intervention", "disable_contact:incoming_ball,target_ball", "--expected", json.dumps(exp), "--plot", str(png), "--json",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["mapping"]["target_ball"] == "RedBall" and doc["took_effect"] is True
    assert doc["verdict"]["passed"] is True and doc["trajectories"]["target_ball"]["intervened_displacement_m"] < 1e-3
    assert png.is_file() and png.stat().st_size > 5000


def test_s_val_for_run_twins(billiard_task, scene_dir, tmp_path: Path) -> None:
    good = s_val_for_run(billiard_task, scene_dir("truth"))
    bad = s_val_for_run(billiard_task, scene_dir("ghost"))
    assert good.state == MetricState.ok and good.value == 1.0, good.reason
    assert bad.state == MetricState.ok and bad.value <= 0.5 and "sim" in bad.reason and "cf_contact" in bad.reason
    assert {c["id"] for c in bad.details["criteria"] if c["passed"] is False} >= {"sim", "cf_contact"}
    none = s_val_for_run(billiard_task, tmp_path)
    assert none.state == MetricState.not_applicable and none.value is None


def test_result_from_audit_missing_when_nothing_evaluable() -> None:
    r = result_from_audit({"criteria": [{"id": "a", "passed": None}], "S_val": None, "findings": []})
    assert r.state == MetricState.uncomputable and r.value is None


def test_audit_that_cannot_finish_is_not_certified(billiard_task, scene_dir) -> None:
    """A scene the audit cannot finish (here: a 1 s budget) scores S_val 0, never 'missing' (which would leave
    S_phys to the other metrics and reward a scene built to outlast or crash the audit)."""
    r = s_val_for_run(billiard_task, scene_dir("truth"), timeout_s=1)
    assert r.state == MetricState.ok and r.value == 0.0, (r.state, r.reason)
    assert r.reason.startswith("not certified: ") and r.details["uncertified"] is True


def test_selftest_saves_each_task_as_it_is_done_and_resumes(tmp_path: Path) -> None:
    """A Blender crash late in `selftest --all` (one process opens many files) must not lose the tasks already done:
    each task's result is written to <work-dir>/<task>/selftest.json when it ends, and `--resume` re-uses it."""
    args = ("selftest", "--task", "tests/rubric/data/billiard", "--defects", "keyframe_core", "--work-dir",
            str(tmp_path), "--json")
    p = cli(*args)
    assert p.returncode == 0, p.stderr[-2000:]
    saved = tmp_path / json.loads(p.stdout)["tasks"][0]["task"] / "selftest.json"
    first = json.loads(saved.read_text())
    assert first == json.loads(p.stdout)["tasks"][0] and "keyframe_core" in first["defects"]
    mtime = saved.stat().st_mtime_ns
    p2 = cli(*args, "--resume")
    assert p2.returncode == 0, p2.stderr[-2000:]
    assert json.loads(p2.stdout)["tasks"][0] == first and saved.stat().st_mtime_ns == mtime  # re-used, not re-run


def test_the_audit_document_is_typed_at_the_wall(billiard_task, scene_dir) -> None:
    """What the walled audit child hands back is validated before S_val rests on it (`AuditDocument`): a real audit
    document of the truth passes, and the same document with an S_val out of range, a finding of an unknown kind
    or a criterion without an id does not."""
    import copy

    import pytest
    from physcodegym.verifier.audit_run import AuditDocument, AuditRequest, audit
    from pydantic import ValidationError

    doc = audit(AuditRequest(path=scene_dir("ghost")), billiard_task)
    assert doc["status"] == "ok" and doc["findings"], doc.get("S_val_reason")
    AuditDocument.model_validate(doc)
    bad_sval = {**copy.deepcopy(doc), "S_val": 1.5}
    bad_kind = copy.deepcopy(doc)
    bad_kind["findings"][0]["kind"] = "looks_fine"
    bad_crit = copy.deepcopy(doc)
    bad_crit["criteria"][0].pop("id")
    for bad in (bad_sval, bad_kind, bad_crit):
        with pytest.raises(ValidationError):
            AuditDocument.model_validate(bad)
