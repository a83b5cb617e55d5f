"""For every shipped counterfactual criterion, the same intervention on truth.py's scene gives the expected response."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from physcodegym.probes.counterfactual import run_counterfactual
from physcodegym.probes.selftest import truth_blend, truth_mapping
from physcodegym.tasks.loader import load_task

from tests.rubric.conftest import shipped_task_ids


def _cf_criteria() -> list[tuple[str, str]]:
    out = []
    for tid in shipped_task_ids():
        for c in load_task(tid).task.rubric.criteria:
            if c.counterfactual is not None:
                out.append((tid, c.id))
    return out


@pytest.mark.parametrize(("task_id", "criterion"), _cf_criteria())
def test_truth_gives_expected_response(task_id: str, criterion: str, truth_work: Path) -> None:
    lt = load_task(task_id)
    c = next(x for x in lt.task.rubric.criteria if x.id == criterion)
    cf = c.counterfactual
    blend = truth_blend(lt, truth_work / task_id)
    doc = run_counterfactual(blend, cf.intervention, truth_mapping(lt), control=cf.control, expected=cf.expected, work_dir=truth_work / task_id / f"cf_{criterion}")
    assert doc["ok"] and doc["took_effect"], doc.get("reason")
    v = doc["verdict"]
    assert v["passed"] is True, json.dumps({k: v.get(k) for k in ("intervened", "preserved", "control", "reason")}, default=str)
    stored = lt.truth_counterfactuals
    if stored and stored.is_file():  # the shipped ground-truth response matches what the truth does now
        rec = json.loads(stored.read_text())["criteria"].get(criterion)
        assert rec is not None and rec["passed"] is True
        assert abs(rec["measured"] - v["intervened"]["value"]) <= 1e-3 + 1e-3 * abs(rec["measured"])


def test_every_shipped_mechanism_has_a_counterfactual() -> None:
    """Tasks whose mechanism allows one (contacts, supports, actuation, wind) carry at least one counterfactual criterion."""
    lacking = []
    for tid in shipped_task_ids():
        t = load_task(tid).task
        if not any(c.counterfactual is not None for c in t.rubric.criteria):
            lacking.append(tid)
    assert not lacking, f"shipped tasks without a counterfactual criterion: {lacking}"
