"""Fixtures for the shipped-task tests: the list of shipped tasks and one bake-only re-run per task."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture(scope="session")
def verified() -> Callable[[str], dict[str, Any]]:
    """verify_task(id) once per session (re-runs truth.py bake-only and compares trajectories)."""
    from physcodegym.authoring.verify import verify_task

    cache: dict[str, dict[str, Any]] = {}

    def get(task_id: str) -> dict[str, Any]:
        if task_id not in cache:
            cache[task_id] = verify_task(task_id)
        return cache[task_id]

    return get
