"""Malformed task folders are refused with the file and the field, and the CLI exits 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from physcodegym.authoring.build import PACKS_DIR
from physcodegym.core.errors import InputError
from physcodegym.tasks.loader import load_task

SOURCE = PACKS_DIR / "ball_bounce"


@pytest.fixture()
def task_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "ball_bounce"
    dst.mkdir()
    for name in ("task.json", "reference.mp4"):
        shutil.copyfile(SOURCE / name, dst / name)
    return dst


def _edit(folder: Path, fn) -> Path:
    raw = json.loads((folder / "task.json").read_text())
    fn(raw)
    (folder / "task.json").write_text(json.dumps(raw))
    return folder


def _bad_subcategory(r):
    r["subcategory"] = "pouring-filling"


def _unknown_role(r):
    r["events"][0]["roles"] = ["ball", "trampoline"]


def _unknown_check(r):
    r["rubric"]["criteria"][0]["check"] = "looks_physical"


def _missing_field(r):
    del r["events"][1]["weight"]


def _missing_param(r):
    r["rubric"]["criteria"][2]["params"] = {}


CASES = [
    (_bad_subcategory, "<root>", "not in category"),
    (_unknown_role, "<root>", "trampoline"),
    (_unknown_check, "rubric.criteria[0]", "looks_physical"),
    (_missing_field, "events[1].weight", "Field required"),
    (_missing_param, "rubric.criteria[2]", "support"),
]


@pytest.mark.parametrize("edit,field,text", CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_malformed_task_names_file_and_field(task_copy, edit, field, text):
    _edit(task_copy, edit)
    with pytest.raises(InputError) as ei:
        load_task(task_copy)
    e = ei.value
    assert e.file == str(task_copy / "task.json")
    assert e.field == field, (e.field, e.message)
    assert text in e.message or any(text in p["message"] for p in e.extra.get("problems", []))


def test_the_unmodified_copy_is_valid(task_copy):
    assert load_task(task_copy, check_media=True).id == "ball_bounce"


def test_wrong_length_video_is_refused(task_copy):
    import cv2

    vw = cv2.VideoWriter(str(task_copy / "reference.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), 30, (640, 360))
    for i in range(10):
        vw.write(np.full((360, 640, 3), i * 20, np.uint8))
    vw.release()
    with pytest.raises(InputError) as ei:
        load_task(task_copy, check_media=True)
    assert ei.value.file == str(task_copy / "reference.mp4")
    assert ei.value.field == "video"
    assert "10 frames" in ei.value.message


def test_cli_validate_bad_task_exits_2(task_copy):
    _edit(task_copy, _unknown_check)
    r = subprocess.run([sys.executable, "-m", "physcodegym", "tasks", "validate", str(task_copy), "--json"], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr[-500:]
    doc = json.loads(r.stdout)
    err = doc.get("error", doc)
    assert err["file"] == str(task_copy / "task.json")
    assert err["field"] == "rubric.criteria[0]"


def test_cli_validate_good_task_exits_0(task_copy):
    r = subprocess.run([sys.executable, "-m", "physcodegym", "tasks", "validate", str(task_copy), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-500:]
    assert json.loads(r.stdout)["ok"] is True


def test_build_refuses_a_folder_without_truth(tmp_path):
    from physcodegym.authoring.build import build_tasks

    with pytest.raises(InputError) as ei:
        build_tasks([str(tmp_path)])
    assert ei.value.file == str(tmp_path / "truth.py")


def test_strip_render_drops_only_render_calls():
    from physcodegym.authoring.truthrun import strip_render

    src = "import bpy\nbpy.ops.ptcache.bake_all(bake=True)\nbpy.ops.render.render(animation=True)\nx = 1\n"
    out = strip_render(src)
    assert "render.render" not in out and "bake_all" in out and "x = 1" in out
