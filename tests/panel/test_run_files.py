"""The panel's view of an agent run folder (`agent.run_files.read_progress`), laid out as the loop writes it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from physcodegym.agent.run_files import read_progress
from physcodegym.agent.trace import AGENT_RUN_FILE


def _touch(p: Path, mtime: float, data: bytes = b"x") -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    os.utime(p, (mtime, mtime))
    return p


def test_progress_from_the_agent_run_document(tmp_path: Path) -> None:
    budget = {"launches_used": 3, "input_tokens": 100, "output_tokens": 20, "cost_usd": 0.5}
    (tmp_path / AGENT_RUN_FILE).write_text(json.dumps({"status": "running", "budget": budget}))
    (tmp_path / "run.json").write_text(json.dumps({"status": "ok"}))  # a program run record is not the agent's document
    _touch(tmp_path / "images" / "a.png", 1000)
    newest = _touch(tmp_path / "launches" / "002_render_preview" / "preview.png", 2000)
    late = _touch(tmp_path / "launches" / "003_run_scene" / "out" / "scene.blend", 3000)
    sub = _touch(tmp_path / "submission" / "scene.blend", 2500)
    pr = read_progress(tmp_path)
    assert pr["status"] == "running" and pr["launches"] == 3 and pr["tokens"] == 120 and pr["cost_usd"] == 0.5
    assert pr["preview"] == str(newest)
    assert (
        pr["submission_blend"] == str(sub) and str(late) != pr["submission_blend"]
    )  # the submission wins over newer launches


def test_progress_falls_back_to_the_trace_while_the_document_is_being_replaced(tmp_path: Path) -> None:
    (tmp_path / AGENT_RUN_FILE).write_text(
        '{"status": "runn'
    )  # torn (never happens with the atomic write, but the UI copes)
    lines = [
        json.dumps({"type": "start"}),
        json.dumps(
            {"type": "tool", "budget": {"launches_used": 1, "input_tokens": 5, "output_tokens": 5, "cost_usd": 0.1}}
        ),
        json.dumps(
            {"type": "tool", "budget": {"launches_used": 2, "input_tokens": 7, "output_tokens": 3, "cost_usd": 0.2}}
        ),
        '{"type": "mod',
    ]
    (tmp_path / "trace.jsonl").write_text("\n".join(lines))
    pr = read_progress(tmp_path)
    assert pr["status"] == "" and pr["launches"] == 2 and pr["tokens"] == 10 and pr["cost_usd"] == 0.2
    assert pr["preview"] is None and pr["submission_blend"] is None


def test_submission_folder_is_recognised_relative_to_the_run(tmp_path: Path) -> None:
    run = tmp_path / "submission" / "bb1"  # a run folder that itself lives under a folder called submission
    a = _touch(run / "launches" / "001_run_scene" / "out" / "scene.blend", 1000)
    b = _touch(run / "launches" / "002_run_scene" / "out" / "scene.blend", 2000)
    assert read_progress(run)["submission_blend"] == str(b) != str(a)
