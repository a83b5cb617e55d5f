"""Task selection and task-set naming: `--tasks-from` (id list or manifest) picks the batch's denominator, every
row and the store name the set and version they were scored on, and resuming on another version is refused.
No Blender run of its own: it reads the session's baseline batch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from physcodegym.batch.scheduler import run_batch
from physcodegym.batch.store import ResultsStore
from physcodegym.batch.units import discover, read_task_selection, task_set
from physcodegym.core.errors import InputError


def test_selection_file_and_manifest(tmp_path: Path) -> None:
    f = tmp_path / "demo_tasks.txt"
    f.write_text("# demo subset\nmini_b   # the second\n\nmini_a\n")
    assert read_task_selection(f) == ["mini_b", "mini_a"]
    m = tmp_path / "manifest.json"
    m.write_text(json.dumps({"set": "s", "version": "1.0.0", "tasks": [{"id": "mini_a"}, {"id": "mini_b"}]}))
    assert read_task_selection(m) == ["mini_a", "mini_b"]
    for text, why in (("# nothing\n", "selects no task"), ("a\nb\na\n", "listed twice"), ('{"tasks": [1]}', "'tasks' list"),
                      ("{oops", "invalid JSON")):
        f.write_text(text)
        with pytest.raises(InputError, match=why) as ei:
            read_task_selection(f)
        assert ei.value.file == str(f)
    with pytest.raises(InputError, match="not found"):
        read_task_selection(tmp_path / "nope.txt")


def test_discover_subset_and_unknown_id(bench: tuple[Path, Path], tmp_path: Path) -> None:
    units, tasks, _ = discover(bench[0], bench[1], tmp_path, task_ids=["mini_b"])
    assert [t["id"] for t in tasks] == ["mini_b"] and units and {u.task_id for u in units} == {"mini_b"}
    all_units, all_tasks, _ = discover(bench[0], bench[1], tmp_path)
    assert len(all_tasks) == 2 and len(all_units) > len(units)
    with pytest.raises(InputError, match="mini_z") as ei:
        discover(bench[0], bench[1], tmp_path, task_ids=["mini_a", "mini_z"])
    assert ei.value.field == "--tasks-from"
    # a custom folder's version is the hash of all its tasks' hashes: another task content, another version
    one = task_set(bench[0])
    copy = tmp_path / "tasks"
    shutil.copytree(bench[0], copy)
    tj = copy / "mini_a" / "task.json"
    tj.write_text(tj.read_text().replace('"title": "', '"title": "changed '))
    assert one["set"] == f"custom:{bench[0].name}" and one["n_tasks"] == 2 and task_set(copy)["version"] != one["version"]


def test_shipped_folder_is_named_by_the_manifest() -> None:
    from physcodegym.tasks import manifest
    from physcodegym.tasks.loader import PACKS_DIR

    doc = task_set(PACKS_DIR)
    cur = manifest.current()
    assert doc["source"] == "manifest" and (doc["set"], doc["version"], doc["sha256"]) == (cur["set"], cur["version"], cur["sha256"])
    assert isinstance(doc["stale"], list)


def test_rows_and_store_name_the_task_set(baseline: Path) -> None:
    st = ResultsStore(baseline, readonly=True)
    try:
        ts, rows, batch = st.get_meta("task_set"), st.rows(), st.get_meta("batch")
    finally:
        st.close()
    assert ts["set"].startswith("custom:") and ts["version"] and ts["n_tasks"] == 2
    assert rows and {r["task_set"] for r in rows} == {f"{ts['set']}@{ts['version']}"}
    assert batch["task_ids"] == ["mini_a", "mini_b"] and batch["tasks_from"] is None
    unit = json.loads((Path(rows[0]["evidence"]["run_dir"]).parent / "unit.json").read_text())
    assert unit["task_set"] == rows[0]["task_set"]


def _copy_store(baseline: Path, dst: Path) -> Path:
    dst.mkdir()
    for p in baseline.glob("results.sqlite*"):
        shutil.copy2(p, dst / p.name)
    return dst


def test_resume_on_another_task_version_is_refused(baseline: Path, bench: tuple[Path, Path], tmp_path: Path) -> None:
    out = _copy_store(baseline, tmp_path / "old")
    st = ResultsStore(out)
    old = dict(st.get_meta("task_set"), version="0.9.0")
    st.set_meta("task_set", old)
    st.close()
    with pytest.raises(InputError, match="mix two task versions") as ei:
        run_batch(bench[0], bench[1], out, resume=True, progress=False)
    assert ei.value.field == "--resume"
    st = ResultsStore(out, readonly=True)
    assert st.get_meta("task_set")["version"] == "0.9.0"  # nothing was overwritten
    st.close()


def test_resume_on_a_subset_of_the_same_version_runs_nothing(baseline: Path, bench: tuple[Path, Path], tmp_path: Path) -> None:
    out = _copy_store(baseline, tmp_path / "same")
    sel = tmp_path / "sel.txt"
    sel.write_text("mini_a\n")
    doc = run_batch(bench[0], bench[1], out, resume=True, progress=False, tasks_from=sel, metrics=["S_mot"])
    assert doc["ran"] == 0 and doc["units"] > 0 and doc["task_set"]["selected"] == 1 and doc["task_set"]["n_tasks"] == 2
    st = ResultsStore(out, readonly=True)
    assert [t["id"] for t in st.get_meta("tasks")] == ["mini_a"]  # the leaderboard's denominator is the selection
    st.close()
