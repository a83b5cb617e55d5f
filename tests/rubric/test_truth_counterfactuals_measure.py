"""verifier.truth_counterfactuals.measure: the ground-truth responses a task ships, measured on its truth scene.

The truth bake is taken from the work folder's cache (`truth_<id>/scene.blend`), so the test re-uses the rubric
fixtures' real scenes: the billiard truth (the cue ball's contact moves the red ball) and its ghost twin (the red
ball's motion is keyframed, so separating the balls changes nothing the rubric expects).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from physcodegym.tasks.loader import load_task
from physcodegym.verifier import truth_counterfactuals

HERE = Path(__file__).resolve().parent


def _task_with_truth(tmp: Path, scene: Path) -> tuple[Path, Path]:
    """A copy of the billiard task whose truth bake is `scene` (placed in the work folder's cache)."""
    folder = tmp / "tasks" / "billiard"
    folder.mkdir(parents=True)
    shutil.copy(HERE / "data" / "billiard" / "task.json", folder / "task.json")
    loaded_task = load_task(folder)
    assert loaded_task.truth_program is not None
    loaded_task.truth_program.parent.mkdir(parents=True, exist_ok=True)
    loaded_task.truth_program.write_text("# never run: the bake is cached\n")
    work = tmp / "work"
    (work / f"truth_{loaded_task.id}").mkdir(parents=True)
    shutil.copy(scene / "scene.blend", work / f"truth_{loaded_task.id}" / "scene.blend")
    return folder, work


@pytest.mark.parametrize(("variant", "passes"), [("truth", True), ("ghost", False)])
def test_measure_writes_the_truth_responses(
    variant: str, passes: bool, tmp_path: Path, scene_dir: Callable[[str], Path]
) -> None:
    folder, work = _task_with_truth(tmp_path, scene_dir(variant))
    doc = truth_counterfactuals.measure(load_task(folder), work)
    target = folder / "truth_counterfactuals.json"
    assert doc["written"] == str(target) and target.is_file()
    stored = json.loads(target.read_text())
    assert stored == json.loads(json.dumps({k: v for k, v in doc.items() if k != "written"}, default=str))
    assert list(stored["criteria"]) == ["cf_contact"]  # only counterfactual criteria are measured
    rec = stored["criteria"]["cf_contact"]
    assert rec["intervention"]["kind"] == "disable_contact" and rec["expected"]["role"] == "target_ball"
    assert rec["passed"] is passes, rec
    if passes:
        assert rec["took_effect"] is True and rec["measured"] < 0.01  # the red ball stays put without the contact
