"""Fixtures for the rubric tests: real baked scenes (one child process each, built once per session)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
TASK_DIR = HERE / "data" / "billiard"


@pytest.fixture(scope="session")
def scene_dir(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """scene_dir(variant) -> folder with scene.blend of tests/rubric/scenes.py's variant."""
    cache: dict[str, Path] = {}

    def build(variant: str) -> Path:
        if variant not in cache:
            out = tmp_path_factory.mktemp(f"scene_{variant}")
            p = subprocess.run([sys.executable, str(HERE / "scenes.py"), "--pcg-out", str(out), "--pcg-variant", variant], capture_output=True, text=True, timeout=300)
            assert (out / "scene.blend").is_file(), p.stderr[-2000:]
            cache[variant] = out
        return cache[variant]

    return build


@pytest.fixture(scope="session")
def billiard_task() -> Any:
    from physcodegym.tasks.loader import load_task

    return load_task(TASK_DIR)


def evaluate(loaded_task: Any, run_dir: Path, roles_file: Path | None = None) -> dict[str, Any]:
    """Open a saved scene in this process, sample it and evaluate the rubric (what `audit --task` does)."""
    import bpy
    from physcodegym.probes.scene.sampling import sample_scene
    from physcodegym.verifier.rubric_eval import evaluate_rubric

    bpy.ops.wm.open_mainfile(filepath=str(run_dir / "scene.blend"))
    samples = sample_scene(bpy.context.scene)
    return evaluate_rubric(loaded_task, bpy.context.scene, samples, None, run_dir, roles_file=roles_file)


@pytest.fixture(scope="session")
def evaluated(scene_dir: Callable[[str], Path], billiard_task: Any) -> Callable[[str], dict[str, Any]]:
    cache: dict[str, dict[str, Any]] = {}

    def get(variant: str) -> dict[str, Any]:
        if variant not in cache:
            cache[variant] = evaluate(billiard_task, scene_dir(variant))
        return cache[variant]

    return get


def shipped_task_ids() -> list[str]:
    """The CI packs (`testing.ci_tasks`: a fixed list, so the suite does not grow with every new pack) that are
    shipped with task.json and truth.py at collection time; an invalid task.json is someone's bug, not a skip."""
    from physcodegym.tasks.loader import PACKS_DIR, list_tasks
    from physcodegym.testing.ci_tasks import ci_tasks

    return ci_tasks([t.id for t in list_tasks([PACKS_DIR]) if t.truth_program and t.truth_program.is_file()])
