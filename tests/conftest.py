"""Session-wide fixtures shared by every test area, and how the suite is spread over CPUs.

The suite runs under pytest-xdist (`make test`: `-n 2 --dist loadgroup`). Every test goes to a group
(`pytest_collection_modifyitems` below) so that what a group shares is built once per session:
- a test module with a module-scoped fixture, or an area whose session fixture is one expensive job (report,
  batch), is one group, so its fixture is built on one worker only;
- tests that use one shipped task's truth bake in `truth_work` (self-test, truth counterfactuals, the truth
  audit in probes/test_shipped.py, the trajectory re-run check in tasks/test_packs.py) are grouped by that task,
  so the truth of a task is baked and evaluated once per session and re-used by every test of that task;
- everything else is spread test by test.
Groups are handed out longest first (their summed seconds in benchmarks/results/test_durations.json, written by
benchmarks/test_durations.py from a measured run; a test not measured there counts as one second), so the run
does not end with one worker finishing a long group alone.
Tests marked `alone` (they need the machine to themselves, e.g. a CPU-pinning choice that other pinned workers
would skew) are left out of the parallel run and run after it, serially (`-m alone`).

`shared_once(key, build)` builds a folder once per session for all workers (a file lock in the session's shared
temp folder): the first worker to ask builds it, the others wait and receive the same folder.

`bundled_run(config, task_id) -> Path` runs the bundled submission `submissions/<config>/<task_id>/scene.py`
once per test session through the real isolated runner (`sandbox.runner.run_program`, full 240-frame
contract) and returns its run folder (`scene.py`, `scene.blend`, `frames/0001.png … 0240.png`, `run.json`,
`run.log`). Later calls with the same arguments return the same folder, so several areas can score, audit
or inspect one real render without paying for it twice. It skips (with the reason) if that submission is
not bundled, and fails if the run is not `ok`.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
# Areas that share one thing per process: a session fixture that is one expensive job (a batch over a small
# benchmark, the report built from it), or the add-on registered in this process (panel: its tests enable,
# unregister and re-register it, in file order). One group each.
AREA_GROUPS = {"report", "batch", "panel"}
# Session fixtures keyed by a shipped task whose folder accumulates that task's bakes.
TASK_FIXTURES = {"truth_work"}


def _has_module_fixture(module: object) -> bool:
    for value in vars(module).values():
        marker = getattr(value, "_fixture_function_marker", None) or getattr(value, "_pytestfixturefunction", None)
        if marker is not None and getattr(marker, "scope", None) in ("module", "package"):
            return True
    return False


def xdist_group_of(item: pytest.Item) -> str | None:
    """The xdist group of a test (None: spread on its own). See the module docstring for the rules."""
    path = Path(str(item.fspath)).resolve()
    try:
        rel = path.relative_to(TESTS)
    except ValueError:
        return None
    area = rel.parts[0] if len(rel.parts) > 1 else ""
    if area in AREA_GROUPS:
        return f"area:{area}"
    fixtures = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    task = params.get("task_id")
    if fixtures & TASK_FIXTURES and isinstance(task, str):
        return f"task:{task}"
    module = getattr(item, "module", None)
    if module is not None and _has_module_fixture(module):
        return f"module:{rel.as_posix()}"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "alone: needs the machine to itself; runs after the parallel run, serially")


DURATIONS = REPO / "benchmarks" / "results" / "test_durations.json"
UNMEASURED_S = 1.0


def measured_seconds() -> dict[str, float]:
    """Seconds per test node id from the last measured run (empty when there is none or it is unreadable)."""
    import json

    try:
        per_test = json.loads(DURATIONS.read_text()).get("per_test", {})
        return {str(k): float(v) for k, v in per_test.items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seconds = measured_seconds()
    unit: dict[str, str] = {}  # node id -> the unit xdist hands out (its group, or the test itself)
    cost: dict[str, float] = {}
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        group = (marker.args[0] if marker and marker.args else marker.kwargs.get("name")) if marker else None
        if group is None:
            group = xdist_group_of(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
        key = group or item.nodeid
        unit[item.nodeid] = key
        cost[key] = cost.get(key, 0.0) + seconds.get(item.nodeid, UNMEASURED_S)
    order = {item.nodeid: i for i, item in enumerate(items)}
    first = {}
    for item in items:  # ties keep collection order, and a group stays in one piece
        first.setdefault(unit[item.nodeid], order[item.nodeid])
    items.sort(key=lambda it: (-cost[unit[it.nodeid]], first[unit[it.nodeid]], order[it.nodeid]))


@pytest.fixture(scope="session")
def shared_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A folder every xdist worker of this session sees (the parent of the workers' own temp folders)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if worker_id != "master" else base) / "shared"
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="session")
def shared_once(shared_root: Path) -> Callable[[str, Callable[[Path], None]], Path]:
    """shared_once(key, build) -> folder: `build(folder)` runs once per session across workers.

    A worker that finds the folder being built waits on its lock; a build that raised leaves no `.done` mark, so
    the next caller builds again (and fails the same way, in its own test)."""

    def once(key: str, build: Callable[[Path], None]) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)
        folder = shared_root / safe
        with open(shared_root / f"{safe}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not (folder / ".done").is_file():
                    if folder.exists():
                        import shutil

                        shutil.rmtree(folder)
                    folder.mkdir()
                    build(folder)
                    (folder / ".done").write_text(str(os.getpid()))
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        return folder

    return once


@pytest.fixture(scope="session")
def bundled_run(shared_once: Callable[[str, Callable[[Path], None]], Path]) -> Callable[[str, str], Path]:
    """`physcodegym run --json` of a bundled submission, as a user types it (its printed record is kept beside the
    run folder as `cli.json`): one full 240-frame run per submission and session, for every test that needs one."""

    def run(config: str, task_id: str) -> Path:
        prog = REPO / "submissions" / config / task_id / "scene.py"
        if not prog.is_file():
            pytest.skip(f"bundled submission {prog.relative_to(REPO)} is not present")

        def build(folder: Path) -> None:
            p = subprocess.run([sys.executable, "-m", "physcodegym", "run", str(prog), "--out", str(folder / "run"),
                                "--timeout", "600", "--json"], capture_output=True, text=True, timeout=900)
            assert p.returncode == 0, f"bundled run {config}/{task_id} exited {p.returncode}:\n{p.stderr[-3000:]}"
            (folder / "cli.json").write_text(p.stdout)

        return shared_once(f"bundled_run_{config}_{task_id}", build) / "run"

    return run


@pytest.fixture(scope="session")
def truth_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every truth bake of this worker's session: `truth_work / task_id` holds the task's truth
    bake (`verifier.selftest.truth_blend`) and its full evaluation (`truth_baseline`), which the self-test, the
    truth counterfactual tests, the truth audit (probes/test_shipped.py) and the trajectory re-run check
    (tasks/test_packs.py) all re-use. Their tests are grouped by task (`xdist_group_of`), so each task's truth
    is baked and evaluated once per session, on one worker."""
    return tmp_path_factory.mktemp("truth_bakes")
