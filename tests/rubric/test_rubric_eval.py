"""Rubric evaluation on real baked twins: the truth scene scores S_val = 1, the ghost (keyframed target,
no contact) fails the criteria that name its defects and is capped."""

from __future__ import annotations

import json


def by_id(doc: dict) -> dict:
    return {c["id"]: c for c in doc["criteria"]}


def test_truth_scores_one_with_evidence(evaluated) -> None:
    doc = evaluated("truth")
    assert doc["S_val"] == 1.0, json.dumps(doc["criteria"], default=str)[:3000]
    c = by_id(doc)
    assert c["hit"]["evidence"]["CueBall|RedBall"]["first_contact_frame"] is not None
    assert c["rest"]["evidence"]["RedBall"]["gap_m"] < 0.06
    assert c["cf_contact"]["evidence"]["took_effect"] is True
    v = c["cf_contact"]["evidence"]["verdict"]
    assert v["intervened"]["value"] < 0.01 and v["preserved"]["incoming_ball"]["ok"]
    assert doc["mapping"]["roles"]["target_ball"]["object"] == "RedBall"
    # the counterfactual re-used the audit's samples as its baseline
    assert doc["counterfactuals"][0]["baseline_source"] == "reused"


def test_ghost_fails_named_criteria_and_is_capped(evaluated) -> None:
    doc = evaluated("ghost")
    c = by_id(doc)
    for cid in ("sim", "solid", "clean", "cf_contact"):
        assert c[cid]["passed"] is False, (cid, c[cid])
    assert "RedBall" in c["sim"]["reason"] and "keyframed" in c["sim"]["reason"]
    assert c["cf_contact"]["evidence"]["verdict"]["intervened"]["value"] > 0.5  # target moves without any contact
    assert c["stable"]["passed"] is True and c["colliders"]["passed"] is True
    assert doc["S_val"] <= 0.5 and {x["criterion"] for x in doc["aggregation"]["caps"]} >= {"sim", "cf_contact"}


def test_unmapped_required_role_fails_with_reason(scene_dir, billiard_task, tmp_path) -> None:
    from tests.rubric.conftest import evaluate

    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps({"target_ball": "NoSuchBall"}))
    doc = evaluate(billiard_task, scene_dir("truth"), roles_file=roles)
    assert doc["mapping"]["unmapped"] == ["target_ball"]
    assert any("NoSuchBall" in p for p in doc["mapping"]["problems"])
    c = by_id(doc)
    for cid in ("sim", "rest", "stable", "cf_contact"):
        assert c[cid]["passed"] is False and "target_ball" in c[cid]["reason"], c[cid]
    assert c["hit"]["passed"] is False  # its `other` is the unmapped role
    assert doc["S_val"] <= 0.5
