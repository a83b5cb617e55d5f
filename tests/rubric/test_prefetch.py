"""The rubric's counterfactuals started during the audit (`audit --task` does so) give the verdicts they give
when started after it, and branches started for another role mapping are cancelled and run again.

Real bakes: the billiard twins of `tests/rubric/scenes.py`, audited in this process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _audit_then_rubric(task: Any, run_dir: Path, early: bool, roles_file: Path | None = None) -> dict[str, Any]:
    """`audit --task` in this process: with `early`, the branches start from the audit's `on_started` hook."""
    import bpy
    from physcodegym.probes.audit.audit import audit_path_full
    from physcodegym.verifier.rubric_eval import evaluate_rubric, prefetch_counterfactuals

    started: list[Any] = []
    frames: list[tuple[int, int]] = []

    def start(samples: Any, blend: Path) -> None:
        before = bpy.context.scene.frame_current
        started.append(prefetch_counterfactuals(task, bpy.context.scene, samples, blend, run_dir, roles_file))
        frames.append((before, bpy.context.scene.frame_current))

    report, samples, scene = audit_path_full(run_dir, save_samples=False, on_started=start if early else None)
    pending = list(started[0].pending.values()) if started else []
    doc = evaluate_rubric(task, scene, samples, report, run_dir, prefetched=started[0] if started else None)
    doc["_frames_around_start"] = frames
    doc["_pending"] = pending
    return doc


def _verdicts(doc: dict[str, Any]) -> dict[str, Any]:
    return {c["id"]: (c["passed"], c["score"]) for c in doc["criteria"]}


def _cf_numbers(doc: dict[str, Any]) -> list[Any]:
    return [json.dumps({k: r.get(k) for k in ("took_effect", "trajectories", "verdict")}, sort_keys=True, default=str)
            for r in doc["counterfactuals"]]


def test_counterfactuals_started_during_the_audit_give_the_same_verdicts(billiard_task, scene_dir) -> None:
    for variant in ("truth", "ghost"):
        early = _audit_then_rubric(billiard_task, scene_dir(variant), early=True)
        late = _audit_then_rubric(billiard_task, scene_dir(variant), early=False)
        info = early["counterfactuals_started_during_audit"]
        assert info["started"] >= 1 and info["taken"] == info["started"] and info["cancelled"] == 0, info
        assert all(r.get("started_during_audit") for r in early["counterfactuals"])
        assert "counterfactuals_started_during_audit" not in late
        assert _verdicts(early) == _verdicts(late), variant
        assert _cf_numbers(early) == _cf_numbers(late), variant
        assert early["S_val"] == late["S_val"]
        # the audit's own findings do not change either (the scene it audits is put back on its frame)
        charges = [[(r["kind"], r["objects"]) for r in d["finding_charges"]] for d in (early, late)]
        assert charges[0] == charges[1], variant
        # the role mapping moves the scene to its first frame; the audit's scene is put back where it was
        (before, after), = early["_frames_around_start"]
        assert before == after
    assert _verdicts(early)["cf_contact"] == (False, 0.0)  # the ghost: the target moves without any contact
    assert charges[0], "the ghost's keyframed target is a finding"


def test_branches_started_for_another_mapping_are_cancelled_and_run_again(billiard_task, scene_dir, tmp_path) -> None:
    roles = tmp_path / "roles.json"  # the audit-time mapping swaps the balls; the rubric's own mapping does not
    roles.write_text(json.dumps({"incoming_ball": "RedBall", "target_ball": "CueBall"}))
    doc = _audit_then_rubric(billiard_task, scene_dir("truth"), early=True, roles_file=roles)
    info = doc["counterfactuals_started_during_audit"]
    assert info["started"] >= 1 and info["taken"] == 0 and info["cancelled"] == info["started"], info
    assert "role mapping changed" in info["reason"]
    assert not any(r.get("started_during_audit") for r in doc["counterfactuals"])
    assert doc["S_val"] == 1.0 and _verdicts(doc)["cf_contact"] == (True, 1.0)
    for p in doc["_pending"]:  # cancelled: their workers were waited for (killed if still baking), their files are gone
        assert p.result()["reason"].startswith("cancelled")
        worker = p.branch.run._worker
        assert worker.proc.returncode is not None
        assert not p.branch.wd.exists()


def test_criteria_asking_for_the_same_branch_share_one_bake(billiard_task, scene_dir) -> None:
    """Two criteria that remove the same contact and read at different times (as flag_wind's `responds_to` and
    `cf_no_wind` both remove the wind) bake one branch, as far as the later reader asks; each verdict is the one
    its own branch gave when started after the audit, frame for frame."""
    crit = next(c for c in billiard_task.task.rubric.criteria if c.id == "cf_contact")
    cf = crit.counterfactual
    early_read = crit.model_copy(update={"id": "cf_contact_early", "counterfactual": cf.model_copy(
        update={"expected": cf.expected.model_copy(update={"at_s": 0.8})})})
    rubric = billiard_task.task.rubric
    task = billiard_task.task.model_copy(update={"rubric": rubric.model_copy(
        update={"criteria": [*rubric.criteria, early_read]})})
    loaded = billiard_task.__class__(**{**vars(billiard_task), "task": task})
    for variant in ("truth", "ghost"):
        early = _audit_then_rubric(loaded, scene_dir(variant), early=True)
        late = _audit_then_rubric(loaded, scene_dir(variant), early=False)
        info = early["counterfactuals_started_during_audit"]
        assert info["started"] == 2 and info["branches"] == 1 and info["taken"] == 2, info
        assert _verdicts(early) == _verdicts(late), variant
        assert _cf_numbers(early) == _cf_numbers(late), variant
        frames = {r["verdict"]["at_s"]: r["frames"] for r in early["counterfactuals"]}
        assert frames == {r["verdict"]["at_s"]: r["frames"] for r in late["counterfactuals"]}, frames
        assert len(set(map(tuple, frames.values()))) == 2, frames  # each reader sees its own frames
