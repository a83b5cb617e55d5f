"""Batch tests: a miniature benchmark (two tiny tasks, good and faulty submissions) and one baseline batch."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mini import METRICS  # noqa: E402


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    import mini

    return mini.build(tmp_path_factory.mktemp("bench"))


@pytest.fixture(scope="session")
def baseline(bench: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted batch over every configuration (process pool, 2 workers)."""
    from physcodegym.batch.scheduler import run_batch

    out = tmp_path_factory.mktemp("baseline")
    doc = run_batch(bench[0], bench[1], out, workers=2, metrics=METRICS, progress=False)
    assert doc["units"] == 7 and doc["ran"] == 7
    return out
