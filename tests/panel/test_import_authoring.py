"""A task made from a real video (`tasks import`), completed in the panel with the real bpy module: load the
skeleton, annotate (roles, checklist, events with times from the timeline, a rubric criterion) through the
operators and the task_ops functions they use, save (incomplete, then complete), validate, reload, and score
a candidate against it (truth-dependent parts not applicable)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")


def _clip(path: Path) -> Path:
    """4 s at 25 fps, 320x180: a white disc sliding right (shorter than 8 s, so frames are held)."""
    import cv2

    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 25.0, (320, 180))
    for i in range(100):
        im = np.full((180, 320, 3), 110, np.uint8)
        cv2.circle(im, (40 + 2 * i, 90), 20, (255, 255, 255), -1)
        vw.write(im)
    vw.release()
    return path


class _Layout:
    """Records a draw(): props must exist, operators must be registered (a real layout refuses both)."""

    def __init__(self, log: list[tuple]) -> None:
        self.log = log

    def __getattr__(self, name: str) -> Any:
        if name in ("row", "column", "box", "split"):
            return lambda *a, **k: _Layout(self.log)
        raise AttributeError(name)

    def label(self, text: str = "", **k: Any) -> None:
        self.log.append(("label", text))

    def prop(self, data: Any, prop: str, **k: Any) -> None:
        assert prop in data.bl_rna.properties, f"{type(data).__name__} has no property {prop!r}"
        self.log.append(("prop", prop))

    def operator(self, idname: str, **k: Any) -> Any:
        mod, name = idname.split(".")
        op = getattr(getattr(bpy.ops, mod), name)
        rna = op.get_rna_type()
        self.log.append(("operator", idname, op.poll()))

        class Props:
            def __setattr__(s, key: str, value: Any) -> None:
                assert key in rna.properties, f"{idname} has no property {key!r}"

        return Props()

    def template_list(self, list_type: str, list_id: str, data: Any, prop: str, *a: Any, **k: Any) -> None:
        assert hasattr(bpy.types, list_type)
        self.log.append(("list", list_type, len(getattr(data, prop))))


def _draw() -> list[tuple]:
    log: list[tuple] = []
    bpy.types.PCG_PT_annotate.draw(type("P", (), {"layout": _Layout(log)})(), bpy.context)
    return log


def _enabled(log: list[tuple], idname: str) -> bool:
    return next(e[2] for e in log if e[0] == "operator" and e[1] == idname)


def test_imported_task_is_annotated_saved_validated_and_scored_in_the_panel(addon: Any, tmp_path: Path) -> None:
    from physcodegym.authoring.importer import import_video
    from physcodegym.evaluator.scoring import score_run
    from physcodegym.headless.commands.tasks import _validate_one
    from physcodegym.operators import task_ops
    from physcodegym.tasks.loader import load_task

    doc = import_video(_clip(tmp_path / "disc.mp4"), "video_disc", "rigid/rolling-tracks", tmp_path / "tasks", encoder="mp4v")
    folder = Path(doc["folder"])
    assert doc["source"]["held"] == {"from_frame": 121, "count": 120, "source_ends_s": 4.0}
    sc = bpy.data.scenes.new("Annotate")
    bpy.context.window.scene = sc
    sc.frame_start = 1
    st = sc.physcodegym
    log = _draw()
    assert any("load a task first" in e[1] for e in log if e[0] == "label") and not bpy.ops.physcodegym.save_task.poll()  # nothing loaded
    assert _enabled(log, "physcodegym.import_video")
    # load the skeleton: it is a draft (no checklist, events or criteria), with its reference beside the scene
    assert bpy.ops.physcodegym.load_task(task=str(folder)) == {"FINISHED"}
    assert st.task_id == "video_disc" and len(st.events) == 0 and len(st.checklist) == 0
    assert sc.frame_end == 240 and st.reference_strip
    assert _enabled(_draw(), "physcodegym.save_task")
    # roles and checklist: one through the functions the operators use, one through the operators
    task_ops.add_role(st, "disc", "the white disc")
    task_ops.add_checklist_item(st, "disc", 1, "white, flat", "disc")
    assert bpy.ops.physcodegym.add_role(role="Table Top", description="grey surface", core=False) == {"FINISHED"}
    assert bpy.ops.physcodegym.add_checklist_item(category="table", roles="table_top") == {"FINISHED"}
    # saving now keeps the work and says what is still missing
    assert bpy.ops.physcodegym.save_task() == {"FINISHED"}
    assert "still missing" in st.task_status and "events" in st.task_status and "rubric.criteria" in st.task_status
    saved = load_task(folder, draft=True).task
    assert [c.category for c in saved.checklist] == ["disc", "table"] and [r.name for r in saved.roles] == ["disc", "table_top"]
    assert bpy.ops.physcodegym.validate_task() == {"FINISHED"} and st.task_status.startswith("incomplete")
    # events with times from the timeline: start at the current frame, end set later from another frame
    sc.frame_set(31)
    assert bpy.ops.physcodegym.add_event(description="the disc slides", roles="disc", key=True) == {"FINISHED"}
    sc.frame_set(61)
    assert bpy.ops.physcodegym.set_event_time(to_end=True) == {"FINISHED"}
    task_ops.add_event(st, sc, "the disc keeps sliding on the table", "disc, table_top", 61, 100, weight=2.0)
    # a wrong item and event are removed again
    task_ops.add_checklist_item(st, "mistake")
    assert bpy.ops.physcodegym.add_event(description="mistake", roles="disc", start_frame=5, end_frame=9) == {"FINISHED"}
    assert bpy.ops.physcodegym.remove_annotation(what="EVENT") == {"FINISHED"}
    assert bpy.ops.physcodegym.remove_annotation(what="CHECKLIST", index=2) == {"FINISHED"}
    assert [e.description for e in st.events][-1] != "mistake" and len(st.checklist) == 2
    assert [(e.start_s, e.end_s) for e in st.events] == [(1.0, 2.0), (2.0, pytest.approx(3.3, abs=1e-6))]  # float32 properties
    # a rubric criterion from the check library on the active role
    st.draft_roles_index, st.new_check = 0, "moves_by_simulation"
    assert bpy.ops.physcodegym.add_criterion() == {"FINISHED"}
    assert bpy.ops.physcodegym.validate_rubric() == {"FINISHED"} and st.rubric_valid
    log = _draw()
    assert ("list", "PCG_UL_events", 2) in log and ("prop", "start_s") in log
    assert bpy.ops.physcodegym.save_task() == {"FINISHED"} and st.task_status.endswith("; complete"), st.task_status
    assert bpy.ops.physcodegym.validate_task() == {"FINISHED"} and st.task_status == "valid: complete, ready to score"
    assert list(folder.glob("task.json.*.bak"))
    # the file is now a full task: strict load, the CLI's validation has nothing missing, the source note kept
    lt = load_task(folder, check_media=True)
    t = lt.task
    assert [(e.id, e.interval.start_s, e.interval.end_s, e.key) for e in t.events] == [("ev_1", 1.0, 2.0, True), ("ev_2", 2.0, 3.3, False)]
    assert t.rubric.criteria[0].check == "moves_by_simulation" and t.rubric.criteria[0].roles == ["disc"]
    assert t.source is not None and t.source.file == "disc.mp4" and t.source.held is not None and t.truth is None
    v = _validate_one(folder, media=True)
    assert v["ok"] and v["missing"] == [] and any("repeat the last frame" in n for n in v["notes"])
    # Save Rubric works on the imported task too (the panel's checklist and events go with it)
    assert bpy.ops.physcodegym.save_rubric() == {"FINISHED"}
    assert load_task(folder).task.events[1].roles == ["disc", "table_top"]
    # reloading shows what was saved
    assert bpy.ops.physcodegym.load_task(task=str(folder)) == {"FINISHED"}
    assert (len(st.checklist), len(st.events), len(st.draft_criteria), len(st.draft_roles)) == (2, 2, 1, 2)
    # a candidate scored against it: video metrics computed, truth-dependent parts not applicable with reasons
    s = score_run(lt, lt.video_path, metrics=["S_ssim", "S_mot", "S_val"], progress=False)
    assert s.metrics["S_ssim"] > 0.99 and s.metrics["S_mot"] is not None
    assert s.states["S_val"].state != "ok" and s.states["S_val"].reason
    assert {k: v.state for k, v in s.truth.items()} == dict.fromkeys(("truth_trajectories", "truth_counterfactuals", "truth_criteria"), "not_applicable")
    assert all("disc.mp4" in v.reason for v in s.truth.values())
    json.dumps(s.to_json())  # the document is JSON as `physcodegym score --json` prints it


def test_import_video_operator_runs_in_the_background_and_loads_the_skeleton(addon: Any, tmp_path: Path) -> None:
    from physcodegym.physcodegym_addon import jobs

    clip = _clip(tmp_path / "Disc Clip.mp4")
    sc = bpy.data.scenes.new("Import")
    bpy.context.window.scene = sc
    st = sc.physcodegym
    prefs = bpy.context.preferences.addons["physcodegym"].preferences
    old, prefs.task_library = prefs.task_library, str(tmp_path / "library")
    try:
        assert bpy.ops.physcodegym.import_video(filepath=str(clip), category="rigid", encoder="mp4v") == {"FINISHED"}
        assert jobs.wait("import", timeout=300).state == "failed" and "needs a subcategory" in st.task_status
        assert bpy.ops.physcodegym.import_video(filepath=str(clip), category="wind", encoder="mp4v") == {"FINISHED"}
        assert st.task_status.startswith("importing")
        job = jobs.wait("import", timeout=300)
        assert job.state == "done", job.log[-5:]
        assert st.task_id == "disc_clip" and st.task_folder == str(tmp_path / "library" / "disc_clip")
        assert st.reference_strip and sc.frame_end - sc.frame_start + 1 == 240
        assert "still missing" in st.task_status and "checklist" in st.task_status
        assert (tmp_path / "library" / "disc_clip" / "reference.mp4").is_file()
    finally:
        prefs.task_library = old
