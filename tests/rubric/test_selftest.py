"""Verifier self-test on a real truth program: every injected defect kind is caught, the truth is clean."""

from __future__ import annotations

from pathlib import Path

import pytest
from physcodegym.tasks.loader import load_task
from physcodegym.verifier.selftest import DEFECTS, run_selftest

from tests.rubric.conftest import shipped_task_ids


def test_selftest_catches_every_defect_on_test_task(billiard_task, tmp_path: Path) -> None:
    doc = run_selftest(billiard_task, work_dir=tmp_path)
    assert doc["baseline"]["S_val"] == 1.0 and doc["baseline"]["failed"] == []
    assert set(doc["defects"]) == set(DEFECTS)
    missed = {k: v for k, v in doc["defects"].items() if not v.get("caught")}
    assert not missed, missed
    d = doc["defects"]
    assert "sim" in d["keyframe_core"]["by_rubric"]
    assert "collider_mismatch" in d["oversize_margin"]["scan_kinds"] and "colliders" in d["oversize_margin"]["by_rubric"]
    assert "hidden_support" in d["hidden_support"]["scan_kinds"]
    assert "unexplained_force_field" in d["add_attractor"]["scan_kinds"]
    assert "rest" in d["remove_collider"]["by_rubric"]
    for v in d.values():
        assert v["S_val"] < 1.0 and v["reasons"]


@pytest.mark.parametrize("task_id", shipped_task_ids())
def test_shipped_task_selftest(task_id: str, truth_work: Path) -> None:
    """Every shipped task: truth S_val = 1 and every injected defect kind is caught."""
    lt = load_task(task_id)
    doc = run_selftest(lt, work_dir=truth_work / task_id)
    assert doc["baseline"]["S_val"] == 1.0, (task_id, doc["baseline"])
    assert doc["all_caught"], (task_id, {k: v for k, v in doc["defects"].items() if not v.get("caught")})
