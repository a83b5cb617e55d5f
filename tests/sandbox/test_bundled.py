"""The session fixture `bundled_run` gives other areas one real, full-contract run of a bundled submission."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_a_bundled_submission_runs_the_full_240_frame_contract_through_the_cli(bundled_run) -> None:
    """`physcodegym run --json` of the faithful ball_bounce: status ok, 240 frames ending at 0240.png, nothing
    missing, and run.json says the same as the printed record. (This is also what the former
    test_runner.py::test_full_240_frame_contract_cli checked on a scene of its own, a second 240-frame run.)"""
    run = bundled_run("faithful-agent", "ball_bounce")
    doc = json.loads((run.parent / "cli.json").read_text())
    assert doc["status"] == "ok" and doc["outputs"]["frame_count"] == 240 and doc["missing"] == [], doc
    assert doc["violations"] == []
    rec = json.loads((run / "run.json").read_text())
    assert rec["status"] == "ok" and rec["outputs"]["frame_count"] == 240 and rec["program_sha256"] == doc["program_sha256"]
    assert sorted(x.name for x in (run / "frames").iterdir())[-1] == "0240.png"
    assert (run / "scene.blend").is_file()
    assert bundled_run("faithful-agent", "ball_bounce") == run  # once per session
