"""The agent run document (`agent_run.json`) as a typed model: its JSON stays the public one, and a malformed
document is refused with the field that breaks it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from physcodegym.agent.budget import Budget, BudgetLimits
from physcodegym.agent.run_document import AgentRunDocument, ScoreUnavailable, read_agent_run
from physcodegym.agent.trace import agent_run_doc, write_agent_run
from physcodegym.evaluator.score_document import ScoreDocument, read_score

# The historical key order of agent_run.json (the CLI prints it; scripts read it): a public contract.
KEYS = ["status", "reason", "task", "provider", "model", "transport", "run_dir", "started", "updated", "steps",
        "segments", "budget", "limits", "revisions", "launches", "finalized", "submission", "trace"]
BUDGET_KEYS = ["launches_used", "launches_left", "max_launches", "seconds_left", "tokens_used", "tokens_left",
               "cost_usd", "cost_left_usd", "launches_by_tool", "input_tokens", "output_tokens", "steps",
               "elapsed_before_s", "elapsed_s"]
LIMIT_KEYS = ["max_launches", "wall_clock_s", "max_tokens", "max_cost_usd", "max_steps"]
LAUNCH_KEYS = ["launch", "tool", "mode", "status", "revision", "seconds"]


def _budget() -> Budget:
    b = Budget(limits=BudgetLimits(max_launches=4, max_cost_usd=2.0))
    b.use_launch("run_scene")
    b.use_launch("inspect_scene")
    b.add_usage(1200, 300, 0.0123456789)
    b.steps = 3
    return b


def _state(finalized: bool = True) -> dict:
    """Toolbox state as `agent.tools.Toolbox` keeps it (launch entries carry more than the document shows)."""
    return {
        "revisions": [{"sha256": "a"}, {"sha256": "b"}],
        "launches": [
            {"launch": 1, "tool": "run_scene", "mode": "full", "dir": "launches/001_run_scene", "status": "ok",
             "revision": 2, "seconds": 12.5, "scene_sha256": "b", "missing": [], "has_blend": True},
            {"launch": 2, "tool": "inspect_scene", "mode": "inspect", "dir": "launches/002_inspect_scene",
             "status": "ok", "blend": "launches/001_run_scene/out/scene.blend"},
        ],
        "last_full_run": 0,
        "finalized": {"launch": 1, "revision": 2, "scene_sha256": "b"} if finalized else None,
    }


def _score_raw() -> dict:
    metrics = {"S_ssim": 0.8, "S_lpips": None, "S_obj": 0.5, "S_evt": 1.0, "S_mot": 0.4, "S_val": 0.75}
    return read_score({
        "task": "t", "candidate": "run", "candidate_kind": "run", "metrics": metrics,
        "states": {k: {"state": "ok" if v is not None else "uncomputable",
                       "reason": None if v is not None else "torch not installed"} for k, v in metrics.items()},
        "missing": {"S_lpips": "torch not installed"}, "S_vis": 0.65, "S_phys": 0.72, "S_tot": 0.68,
        "coverage": {"S_vis": ["S_ssim", "S_obj"], "S_phys": ["S_evt", "S_mot", "S_val"],
                     "S_tot": ["S_ssim", "S_obj", "S_evt", "S_mot", "S_val"]},
        "per_frame": {}, "details": {}, "timings": {}}).to_json()


def test_document_round_trips_in_the_historical_key_order(tmp_path: Path) -> None:
    b = _budget()
    doc = agent_run_doc("finalized", "done", "t", "openai", "m", tmp_path, "2026-01-01T00:00:00Z", b, _state(),
                        transport="stdio", segments=2)
    js = doc.to_json()
    assert list(js) == KEYS
    assert list(js["budget"]) == BUDGET_KEYS and list(js["limits"]) == LIMIT_KEYS
    assert [list(e) for e in js["launches"]] == [LAUNCH_KEYS, LAUNCH_KEYS]
    assert js["launches"][1]["revision"] is None and js["launches"][1]["seconds"] is None
    assert js["budget"]["cost_usd"] == b.cost_usd  # the counter itself, not remaining()'s rounded copy
    assert js["submission"] == "submission" and js["revisions"] == 2 and js["steps"] == 3
    assert read_agent_run(js).to_json() == js
    assert json.dumps(read_agent_run(json.loads(json.dumps(js))).to_json()) == json.dumps(js)
    # the agent loop has no transport nor segments: absent, not null
    loop_doc = agent_run_doc("running", "", "t", "openai", "m", tmp_path, "s", b, _state(False)).to_json()
    assert list(loop_doc) == [k for k in KEYS if k not in ("transport", "segments")]
    assert loop_doc["finalized"] is None and loop_doc["submission"] is None
    assert read_agent_run(loop_doc).to_json() == loop_doc


def test_malformed_document_names_the_field(tmp_path: Path) -> None:
    good = agent_run_doc("running", "", "t", "p", "m", tmp_path, "s", _budget(), _state()).to_json()
    with pytest.raises(ValueError, match=r"agent_run\.json is not a valid agent run document: budget: Field required"):
        read_agent_run({k: v for k, v in good.items() if k != "budget"}, "agent_run.json")
    with pytest.raises(ValueError, match=r"launches: Input should be a valid list"):
        read_agent_run({**good, "launches": {"launch": 1}})
    with pytest.raises(ValueError, match=r"budget\.launches_used"):
        read_agent_run({**good, "budget": {**good["budget"], "launches_used": "many"}})
    with pytest.raises(ValueError, match=r"\(document\)"):
        read_agent_run(["not", "a", "document"])


def test_each_kind_of_score_validates_and_dumps_back_unchanged(tmp_path: Path) -> None:
    base = agent_run_doc("finalized", "done", "t", "p", "m", tmp_path, "s", _budget(), _state()).to_json()
    score = _score_raw()
    doc = read_agent_run({**base, "score": score})
    assert isinstance(doc.score, ScoreDocument) and doc.score.S_tot == 0.68
    assert doc.to_json()["score"] == score and list(doc.to_json()) == [*base, "score"]
    none = {"state": "no_submission", "reason": "the run ended 'stopped' without a finalized submission", "S_tot": 0.0}
    doc = read_agent_run({**base, "score": none})
    assert isinstance(doc.score, ScoreUnavailable) and doc.score.state == "no_submission"
    assert doc.to_json()["score"] == none
    err = {"state": "error", "reason": "RuntimeError: boom"}
    assert read_agent_run({**base, "score": err}).to_json()["score"] == err  # no S_tot: absent, not null


def test_a_rewrite_keeps_a_valid_score_and_drops_an_invalid_one(tmp_path: Path) -> None:
    path = tmp_path / "agent_run.json"
    base = agent_run_doc("stopped", "", "t", "p", "m", tmp_path, "s", _budget(), _state(False))
    path.write_text(json.dumps({**base.to_json(), "score": _score_raw()}))
    kept = write_agent_run(path, agent_run_doc("stopped", "", "t", "p", "m", tmp_path, "s", _budget(), _state(False)))
    assert isinstance(kept.score, ScoreDocument) and json.loads(path.read_text())["score"] == _score_raw()
    path.write_text(json.dumps({**base.to_json(), "score": {"S_tot": "high"}}))
    dropped = write_agent_run(path, agent_run_doc("stopped", "", "t", "p", "m", tmp_path, "s", _budget(), _state(False)))
    assert dropped.score is None and "score" not in json.loads(path.read_text())
    assert isinstance(AgentRunDocument.model_validate(json.loads(path.read_text())), AgentRunDocument)
