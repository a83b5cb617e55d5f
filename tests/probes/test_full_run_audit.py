"""Auditing a full 240-frame run folder (frames/ present) with its task: the rendered-frame check runs on a
subset of frames and must use the camera at those frames (regression: it once broadcast 240 against 48)."""

from __future__ import annotations

from physcodegym.tasks.loader import load_task


def test_full_run_folder_audits_with_screen_check_and_rubric(bundled_run) -> None:
    from physcodegym.verifier.validity import s_val_for_run

    run = bundled_run("faithful-agent", "flag_wind")  # shared with the evaluator tests (one render per session)
    assert len(list((run / "frames").glob("*.png"))) == 240
    res = s_val_for_run(load_task("flag_wind"), run)
    assert res.state.value == "ok", res.reason
    assert res.value == 1.0
