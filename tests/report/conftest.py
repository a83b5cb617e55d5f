"""Report tests: one real miniature batch (three configurations on one task) and its report, built once."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "results" / "ci-artifacts" / "report"


@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import bench
    from physcodegym.batch.scheduler import run_batch

    root = tmp_path_factory.mktemp("report_bench")
    tdir, sdir = bench.build(root)
    out = root / "results"
    doc = run_batch(tdir, sdir, out, workers=2, metrics=["S_mot", "S_val"], progress=False)
    bs = doc["by_status"]
    assert doc["units"] == 3 and bs["done"] == 2 and bs["failed"] == 1 and sum(bs.values()) == 3, doc
    return out


@pytest.fixture(scope="session")
def report(results: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from physcodegym.report.build import build_report

    out = tmp_path_factory.mktemp("report") / "report"
    t0 = time.monotonic()
    doc = build_report(results, out)
    doc["build_seconds"] = time.monotonic() - t0
    doc["out"] = out
    return doc


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
