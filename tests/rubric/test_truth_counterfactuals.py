"""For every shipped counterfactual criterion, the same intervention on truth.py's scene gives the expected response."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from physcodegym.tasks.loader import load_task
from physcodegym.verifier.selftest import truth_baseline

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
    """The truth's own rubric evaluation (what `audit --task` runs, shared with the self-test) passes the criterion on a real re-bake."""
    lt = load_task(task_id)
    base = truth_baseline(lt, truth_work / task_id)
    row = next(c for c in base["criteria"] if c["id"] == criterion)
    ev = row["evidence"]
    assert row["passed"] is True, json.dumps({"reason": row["reason"], **{k: ev.get(k) for k in ("took_effect", "took_effect_evidence", "verdict")}}, default=str)[:3000]
    v = ev["verdict"]
    assert ev["took_effect"] is True and v["passed"] is True
    rec_cf = next(r for r in base["counterfactuals"] if r.get("intervention") == row_intervention(lt, criterion))
    assert rec_cf["baseline_source"] == "reused" and rec_cf["intervened_run"]["baked"] is True
    stored = lt.truth_counterfactuals
    if stored and stored.is_file():  # the shipped ground-truth response matches what the truth does now
        rec = json.loads(stored.read_text())["criteria"].get(criterion)
        assert rec is not None and rec["passed"] is True
        # Rigid and cloth solvers are deterministic: the re-bake must reproduce the stored response. Blender's
        # SPH particle solver is multi-threaded and diverges per particle after the first splashes (measured:
        # repeated truth re-runs drift, see authoring/verify.py), so a particle measure only has to land within
        # 0.05 of the stored fraction - the verdict itself is asserted exactly above.
        particle_measure = lt.task.category.value == "liquid"
        tol = 0.05 if particle_measure else 1e-3 + 1e-3 * abs(rec["measured"])
        assert abs(rec["measured"] - v["intervened"]["value"]) <= tol, (rec["measured"], v["intervened"]["value"])


def row_intervention(lt, criterion: str) -> dict:
    c = next(x for x in lt.task.rubric.criteria if x.id == criterion)
    return c.counterfactual.intervention.model_dump(mode="json")


def test_every_shipped_mechanism_has_a_counterfactual() -> None:
    """Tasks whose mechanism allows one (contacts, supports, actuation, wind) carry at least one counterfactual criterion."""
    lacking = []
    for tid in shipped_task_ids():
        t = load_task(tid).task
        if not any(c.counterfactual is not None for c in t.rubric.criteria):
            lacking.append(tid)
    assert not lacking, f"shipped tasks without a counterfactual criterion: {lacking}"
