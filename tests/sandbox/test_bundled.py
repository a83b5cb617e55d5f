"""The session fixture `bundled_run` gives other areas one real, full-contract run of a bundled submission."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_bundled_run_fixture(bundled_run) -> None:
    run = bundled_run("faithful-agent", "ball_bounce")
    rec = json.loads((run / "run.json").read_text())
    assert rec["status"] == "ok" and rec["outputs"]["frame_count"] == 240 and rec["violations"] == []
    assert (run / "scene.blend").is_file() and (run / "frames" / "0240.png").is_file()
    assert bundled_run("faithful-agent", "ball_bounce") == run  # once per session
