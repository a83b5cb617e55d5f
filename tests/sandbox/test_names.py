"""Every file name a program can leave is handled: the runner always writes its record.

A name that is not UTF-8, one with a newline, names that differ only in case: the run ends with its record written
(`ok` when the contract outputs are fine: the other names are listed as ignored, escaped, never read; `invalid`
when such a name sits among the frames). A folder the runner began but holds no readable record is `invalid` for
every reader, never a plain folder to audit."""

from __future__ import annotations

import json
import os
from pathlib import Path

from physcodegym.sandbox import artifacts
from physcodegym.sandbox.runner import RunRecord, run_program

SAVE = """
import bpy
import os
bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, 1
sc.render.engine = 'BLENDER_WORKBENCH'
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
bpy.ops.object.camera_add(location=(0, -12, 3), rotation=(1.45, 0, 0))
sc.camera = bpy.context.active_object
bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))
"""

NAMES = """
for name in (b"bad\\xff\\xfe.txt", "new\\nline.txt", "Scene.blend", "SCENE.BLEND", "scene.BLEND", "tab\\there"):
    with open(name, "wb") as fh:
        fh.write(b"x")
"""


def _prog(tmp: Path, src: str) -> Path:
    p = tmp / "src" / "scene.py"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(src)
    return p


def _on_disk(out: Path) -> dict:
    raw = (out / "run.json").read_bytes()
    raw.decode("utf-8")  # strict: the record itself is valid UTF-8
    return json.loads(raw)


def test_odd_names_beside_the_outputs_are_recorded_escaped(tmp_path: Path) -> None:
    out = tmp_path / "run"
    rec = run_program(_prog(tmp_path, SAVE + NAMES), out, timeout_s=120, mode="bake_only", expected_frames=1)
    doc = _on_disk(out)
    assert rec.status == "ok", rec.reason
    assert doc["status"] == "ok" and RunRecord.model_validate(doc).status == "ok"
    ignored = doc["ignored"]
    assert repr(b"bad\xff\xfe.txt") in ignored  # the raw bytes, escaped: b'bad\xff\xfe.txt'
    assert repr("new\nline.txt") in ignored and repr("tab\there") in ignored
    assert {"Scene.blend", "SCENE.BLEND", "scene.BLEND"} <= set(ignored)
    assert not any("\n" in n for n in ignored)
    assert list(doc["artifacts"]) == ["scene.blend"]  # only the contract name is accepted, whatever its cousins
    assert doc["blender_version"] and doc["blender_version_source"] == "child"
    assert artifacts.validated_run(out).valid


def test_an_odd_name_among_the_frames_makes_the_run_invalid_with_a_record(tmp_path: Path) -> None:
    src = SAVE + "os.makedirs('frames', exist_ok=True)\nopen(b'frames/0001\\xff.png', 'wb').write(b'x')\n"
    src += "bpy.ops.render.render(animation=True)\n"
    src = src.replace("bpy.ops.wm.save_as_mainfile", "sc.render.filepath = '//frames/'\nbpy.ops.wm.save_as_mainfile")
    out = tmp_path / "run"
    rec = run_program(_prog(tmp_path, src), out, timeout_s=120, mode="full", expected_frames=1)
    doc = _on_disk(out)
    assert rec.status == doc["status"] == "invalid", rec.reason
    assert repr(b"0001\xff.png") in rec.reason


def test_a_run_folder_without_a_readable_record_is_invalid(tmp_path: Path) -> None:
    out = tmp_path / "run"
    rec = run_program(_prog(tmp_path, SAVE), out, timeout_s=120, mode="bake_only", expected_frames=1)
    assert rec.status == "ok", rec.reason
    (out / "run.json").unlink()  # as a runner that crashed before its record would leave it
    assert artifacts.is_run_folder(out)
    vr = artifacts.validated_run(out)
    assert not vr.valid and "run.json" in (vr.reason or "")
    from physcodegym.metrics.video import is_run_dir
    from physcodegym.verifier.audit_run import check_input

    doc = check_input(out, None)  # the audit: invalid, not a plain folder whose scene.blend it would open
    assert doc is not None and doc["status"] == "invalid" and "run.json" in doc["invalid_reason"]
    (out / "run.json").write_bytes(b"\xff{not json")
    vr = artifacts.validated_run(out)
    assert not vr.valid and "not valid JSON" in (vr.reason or "")
    # control: a plain folder with a scene.blend only is not a run folder
    plain = tmp_path / "plain"
    plain.mkdir()
    os.link(out / "scene.blend", plain / "scene.blend")
    assert not artifacts.is_run_folder(plain)
    (out / "scene.blend").unlink()
    assert is_run_dir(out)  # the score: still a run folder (run.log, scene.py), so `validated_run` decides
