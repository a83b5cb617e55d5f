"""Fixtures for the shipped-task tests: one bake-only re-run of truth.py per task, shared with the self-test."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def verified(truth_work: Path) -> Callable[[str], dict[str, Any]]:
    """What `physcodegym tasks verify <id>` (authoring.verify.verify_task) reports, once per session, on the
    session's truth bake of the task (`truth_work`: truth.py re-run bake-only by the sandbox runner, the same run
    `verify_task` makes, and the one the self-test, the truth audit and the counterfactual tests read), so
    cloth's and the liquids' truths are baked once per session instead of once more here."""
    from physcodegym.authoring.build import sample_blend, trajectories_digest
    from physcodegym.authoring.verify import compare_samples
    from physcodegym.samples import SceneSamples
    from physcodegym.tasks.loader import load_task
    from physcodegym.verifier.selftest import truth_blend

    cache: dict[str, dict[str, Any]] = {}

    def get(task_id: str) -> dict[str, Any]:
        if task_id not in cache:
            lt = load_task(task_id)
            assert lt.truth_trajectories is not None and lt.truth_trajectories.is_file(), task_id
            blend = truth_blend(lt, truth_work / task_id)
            npz = blend.parent / "verify_rerun.npz"
            sample_blend(blend, npz, [])  # sampled in a fresh process, as verify_task samples its re-run
            doc = {"id": lt.id, **compare_samples(SceneSamples.load_npz(lt.truth_trajectories),
                                                  SceneSamples.load_npz(npz))}
            doc["rerun_digest"] = trajectories_digest(npz)
            doc["stored_digest"] = trajectories_digest(lt.truth_trajectories)
            cache[task_id] = doc
        return cache[task_id]

    return get
