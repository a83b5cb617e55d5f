"""How the suite is spread over CPUs (tests/conftest.py, Makefile `test`) keeps every test in a run.

No Blender: static reads of the Makefile and of the test files, and the grouping function on collected items.
"""

from __future__ import annotations

import re
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
