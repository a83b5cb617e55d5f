"""`physcodegym score` with the judges: loopback judge gives S_obj/S_evt; no judge -> missing with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest
from physcodegym.headless.cli import main
from physcodegym.testing.loopback import LoopbackLLM, judge_responder

from .conftest import KEY, TASK, video


def _write_mp4(path: Path, frames) -> None:
    w = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 30, (640, 360))
    for f in frames:
        w.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
    w.release()


@pytest.fixture(scope="module")
def scored_task(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("score")
    folder = root / "judge_cli"
    folder.mkdir()
    (folder / "task.json").write_text(json.dumps(dict(TASK, id="judge_cli")))
    _write_mp4(folder / "reference.mp4", video(240))
    cand = root / "candidate.mp4"
    _write_mp4(cand, video(240, ball=(200, 60, 40)))
    return folder, cand


def test_score_with_loopback_judge_and_without(scored_task, tmp_path: Path, monkeypatch, capfd) -> None:
    folder, cand = scored_task
    monkeypatch.setenv("PHYSCODEGYM_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with LoopbackLLM(api_key=KEY) as llm:
        llm.respond_with(judge_responder("fail"))
        code = main(["score", "--task", str(folder), "--candidate", str(cand), "--metrics", "obj,evt", "--judge-provider",
                     "openai", "--judge-model", "loopback-judge", "--judge-base-url", llm.openai_base_url,
                     "--judge-cache", str(tmp_path / "cache"), "--json"])
        assert llm.validation_errors == [] and len(llm.chat_requests) == 3 + 9
    doc = json.loads(capfd.readouterr().out)
    assert code == 0
    assert doc["metrics"]["S_obj"] == 0.0 and doc["metrics"]["S_evt"] == 0.0  # all fail; key cap applied
    assert doc["states"]["S_evt"]["state"] == "ok" and "capped" in doc["states"]["S_evt"]["reason"]
    # no judge: both missing with the reason, never a number
    code = main(["score", "--task", str(folder), "--candidate", str(cand), "--metrics", "obj,evt", "--json"])
    doc = json.loads(capfd.readouterr().out)
    assert code == 0 and doc["metrics"]["S_obj"] is None and doc["metrics"]["S_evt"] is None
    assert "--judge-provider" in doc["missing"]["S_obj"] and "--judge-provider" in doc["missing"]["S_evt"]
    # a judge provider without a key: exit 2 naming the variable
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    code = main(["score", "--task", str(folder), "--candidate", str(cand), "--metrics", "obj", "--judge-provider",
                 "anthropic", "--judge-model", "m", "--json"])
    doc = json.loads(capfd.readouterr().out)
    assert code == 2 and doc["error"]["field"] == "ANTHROPIC_API_KEY"
