"""Shipped tasks: each reference scores 1.0 against itself on S_ssim and S_mot through the real decode path, and a
bundled shortcut submission scores below the faithful one on S_mot or S_ssim (real isolated runs, shared fixture)."""

from __future__ import annotations

import pytest
from physcodegym.evaluator.scoring import score_run
from physcodegym.tasks.loader import PACKS_DIR, list_tasks, load_task
from physcodegym.testing.ci_tasks import ci_tasks

# the CI packs only (testing/ci_tasks.py): a new pack's reference is checked by `physcodegym tasks verify`
SHIPPED = ci_tasks([lt.id for lt in list_tasks([PACKS_DIR])]) if PACKS_DIR.is_dir() else []


@pytest.mark.skipif(not SHIPPED, reason="no shipped task packs in tasks/packs")
@pytest.mark.parametrize("task_id", SHIPPED)
def test_reference_scores_one_against_itself(task_id):
    lt = load_task(task_id)
    doc = score_run(lt, lt.video_path, metrics=["ssim", "motion"])
    assert doc.metrics["S_ssim"] == pytest.approx(1.0, abs=1e-6)
    assert doc.metrics["S_mot"] == 1.0
    assert doc.details["S_mot"]["ref_moving_pixels"] > 0  # the reference really moves: not a 0/0 case
    assert len(doc.per_frame["S_ssim"]) == 240


@pytest.mark.slow
@pytest.mark.parametrize("task_id", ["flag_wind"])
def test_shortcut_submission_scores_below_faithful(bundled_run, task_id):
    lt = load_task(task_id)
    faithful = score_run(lt, bundled_run("faithful-agent", task_id), metrics=["ssim", "motion"])
    shortcut = score_run(lt, bundled_run("shortcut-agent", task_id), metrics=["ssim", "motion"])
    f, s = faithful.metrics, shortcut.metrics
    assert f["S_ssim"] > 0.8 and f["S_mot"] > 0.5, f  # the faithful rebuild is close to its reference
    assert s["S_mot"] < f["S_mot"] or s["S_ssim"] < f["S_ssim"], (f, s)
