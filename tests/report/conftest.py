"""Report tests: one real miniature batch (three configurations on one task) and its report, built once."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "results" / "ci-artifacts" / "report"


@pytest.fixture(scope="session")
def results(shared_once) -> Path:
    """The miniature batch's results folder, built once per session for every worker (`shared_once`): a run
    measured the report's tests split over both workers, each paying the 165 s batch."""

    def build(root: Path) -> None:
        import bench
        from physcodegym.batch.scheduler import run_batch

        tdir, sdir = bench.build(root)
        doc = run_batch(tdir, sdir, root / "results", workers=2, metrics=["S_mot", "S_val"], progress=False)
        bs = doc["by_status"]
        assert doc["units"] == 3 and bs["done"] == 2 and bs["failed"] == 1 and sum(bs.values()) == 3, doc

    return shared_once("report_results", build) / "results"


@pytest.fixture(scope="session")
def report(results: Path, shared_once) -> dict:
    """The report of `results` (built once per session, like it), its document as `build_report` returned it."""

    def build(root: Path) -> None:
        from physcodegym.report.build import build_report

        t0 = time.monotonic()
        doc = build_report(results, root / "report")
        doc["build_seconds"] = time.monotonic() - t0
        (root / "doc.json").write_text(json.dumps(doc, default=str))

    root = shared_once("report_html", build)
    doc = json.loads((root / "doc.json").read_text())
    doc["out"] = root / "report"
    return doc


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
