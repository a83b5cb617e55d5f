"""How the suite is spread over CPUs (tests/conftest.py, Makefile `test`) keeps every test in a run.

No Blender: static reads of the Makefile and of the test files, and the grouping function on collected items.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _alone_files_in_makefile() -> set[str]:
    m = re.search(r"^ALONE_FILES\s*=\s*(.+)$", (REPO / "Makefile").read_text(), re.M)
    assert m, "Makefile has no ALONE_FILES line"
    return set(m.group(1).split())


def test_every_file_with_an_alone_test_is_run_by_the_serial_phase() -> None:
    """The parallel phase deselects `alone` tests; the serial phase collects only ALONE_FILES. A file with an
    `alone` test missing from that list would run nowhere."""
    marked = {p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("test_*.py")
              if re.search(r"^\s*@pytest\.mark\.alone\b", p.read_text(encoding="utf-8"), re.M)}
    assert marked, "no test is marked alone (then drop the serial phase and ALONE_FILES)"
    assert marked <= _alone_files_in_makefile(), marked - _alone_files_in_makefile()


def test_both_phases_run_under_the_readme_test_command() -> None:
    make = (REPO / "Makefile").read_text()
    body = make.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert '-m "not alone"' in body and "--dist loadgroup" in body and "-m alone" in body and "$(ALONE_FILES)" in body


def test_groups_keep_shared_fixtures_on_one_worker(request: pytest.FixtureRequest) -> None:
    """A module with a module-scoped fixture is one group; truth_work tests group by task; report and batch by
    area; a plain test is spread alone."""
    import importlib.util
    import types

    spec = importlib.util.spec_from_file_location("suite_conftest", REPO / "tests" / "conftest.py")
    assert spec and spec.loader
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)

    @pytest.fixture(scope="module")
    def mod_fixture() -> None:
        return None

    with_fixture = types.ModuleType("m1")
    with_fixture.fx = mod_fixture  # type: ignore[attr-defined]
    plain = types.ModuleType("m2")

    def item(path: str, module: types.ModuleType, fixtures: tuple[str, ...] = (), params: dict | None = None):
        return types.SimpleNamespace(fspath=REPO / "tests" / path, module=module, fixturenames=fixtures,
                                     callspec=types.SimpleNamespace(params=params or {}))

    assert conf.xdist_group_of(item("probes/test_x.py", with_fixture)) == "module:probes/test_x.py"
    assert conf.xdist_group_of(item("probes/test_y.py", plain)) is None
    assert conf.xdist_group_of(item("report/test_z.py", plain)) == "area:report"
    assert conf.xdist_group_of(item("rubric/test_s.py", plain, ("truth_work",), {"task_id": "pendulum"})) == "task:pendulum"
    assert conf.xdist_group_of(item("rubric/test_s.py", plain, (), {"task_id": "pendulum"})) is None


def test_groups_are_set_before_xdist_reads_them(request: pytest.FixtureRequest) -> None:
    """xdist's worker turns `xdist_group` marks into node-id suffixes in its own collection hook; a conftest hook
    that runs after it sets marks nobody reads (measured: each of milk_pour's truth bakes ran on both workers)."""
    impls = request.config.hook.pytest_collection_modifyitems.get_hookimpls()
    ours = [h for h in impls if str(getattr(h, "plugin_name", "")).endswith("tests/conftest.py")]
    assert len(ours) == 1 and ours[0].tryfirst, [(h.plugin_name, h.tryfirst) for h in impls]


# Test files that bake, render or self-test one shipped pack per parametrised case: they must run over the CI
# packs only (testing/ci_tasks.py), so the suite does not grow with every new pack. The cheap structural tests
# (tasks/test_packs.py's validation, policy and event checks, tasks/test_families.py) cover every pack.
BAKING_FILES = ("tests/rubric/test_selftest.py", "tests/rubric/test_truth_counterfactuals.py",
                "tests/probes/test_shipped.py", "tests/evaluator/test_shipped.py", "tests/tasks/test_packs.py")
STRUCTURAL = {"test_pack_validates_with_media", "test_truth_program_passes_the_policy",
              "test_events_rederive_from_truth_trajectories"}


def packs_outside_ci(nodeids: list[str], packs: set[str], ci: set[str]) -> list[str]:
    """The collected node ids whose parameters name a pack outside the CI set (structural tests excepted)."""
    bad = []
    for nid in nodeids:
        name, _, params = nid.partition("[")
        if not params or name.rsplit("::", 1)[-1] in STRUCTURAL:
            continue
        if set(re.split(r"[-\]]", params)) & (packs - ci):
            bad.append(nid)
    return bad


def test_packs_outside_the_ci_set_are_told_apart() -> None:
    ci, packs = {"ball_bounce"}, {"ball_bounce", "new_pack"}
    ids = ["tests/rubric/test_selftest.py::test_shipped_task_selftest[ball_bounce]",
           "tests/rubric/test_selftest.py::test_shipped_task_selftest[new_pack]",
           "tests/rubric/test_truth_counterfactuals.py::test_truth_gives_expected_response[new_pack-cf_x]",
           "tests/tasks/test_packs.py::test_pack_validates_with_media[new_pack]"]
    assert packs_outside_ci(ids, packs, ci) == ids[1:3]


def test_baking_tests_run_over_the_ci_packs_only() -> None:
    """Collect the files that bake per pack (a subprocess, no Blender work): no case names a shipped pack outside
    testing/ci_tasks.py, and every CI pack is still covered by the self-test (itself or its small copy)."""
    import subprocess
    import sys

    from physcodegym.testing.ci_tasks import CI_TASKS

    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        *BAKING_FILES], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    ids = [ln.strip() for ln in p.stdout.splitlines() if "::" in ln]
    packs = {d.name for d in (REPO / "tasks" / "packs").iterdir() if (d / "task.json").is_file()}
    assert not packs_outside_ci(ids, packs, set(CI_TASKS)), packs_outside_ci(ids, packs, set(CI_TASKS))
    from tests.rubric.small_tasks import SMALL

    small_of = {spec.source: tid for tid, spec in SMALL.items()}
    for t in CI_TASKS:  # the pack itself, or its small copy (same scene, solver and rubric over fewer frames)
        assert f"tests/rubric/test_selftest.py::test_shipped_task_selftest[{small_of.get(t, t)}]" in ids, t


def test_a_partial_run_refreshes_only_its_files_in_the_durations_table() -> None:
    """benchmarks/test_durations.py --merge: the measured files' tests are replaced (a test gone from them drops
    out), the other files keep their stored seconds."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("test_durations", REPO / "benchmarks" / "test_durations.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    stored = {"tests/a.py::x": 5.0, "tests/a.py::gone": 7.0, "tests/b.py::y": 3.0}
    out = mod.merged({"tests/a.py::x": {"setup": 1.0, "call": 2.0}}, stored)
    assert out == {"tests/a.py::x": {"setup": 1.0, "call": 2.0}, "tests/b.py::y": {"call": 3.0}}


INNER_GROUPED = '''
import os
import pytest


@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("i", range(6))
def test_grouped(i, request):
    with open(os.environ["PCG_OUT"], "a") as f:
        f.write(f"{request.node.nodeid} {os.environ.get('PYTEST_XDIST_WORKER')}\\n")
'''


def test_an_xdist_group_reaches_one_worker(tmp_path: Path) -> None:
    """The suite's groups only work if xdist turns the mark into a node-id suffix that the scheduler reads; with
    pytest 9 (a structured node id) xdist 3.8's suffix was silently ignored and every group split over both
    workers. A real `pytest -n 2 --dist loadgroup` on six grouped tests: every node id carries the group and one
    worker runs them all."""
    (tmp_path / "test_inner.py").write_text(INNER_GROUPED)
    (tmp_path / "none.ini").write_text("[pytest]\n")  # not the repository's configuration
    out = tmp_path / "seen.txt"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                        "-c", str(tmp_path / "none.ini"), "--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path, env={**os.environ, "PCG_OUT": str(out)})
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rows = [ln.split() for ln in out.read_text().splitlines()]
    assert len(rows) == 6 and all(nid.endswith("@shared") for nid, _ in rows), rows
    assert len({w for _, w in rows}) == 1, rows
