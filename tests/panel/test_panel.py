"""The Blender panel with the real bpy module: registration, every operator through bpy.ops on real
scenes, and every panel's draw() in every state through a recording layout (there is no window here)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from physcodegym.physcodegym_addon import features, jobs, state, witness  # noqa: E402

VIDEO_FRAMES = 48


def fresh_scene(name: str = "Shot") -> Any:
    """An empty current scene (every other scene and object removed)."""
    import bpy
    from physcodegym.physcodegym_addon import jobs

    for j in list(jobs.JOBS.values()):
        j.cancel()
    jobs.JOBS.clear()
    state.clear()
    sc = bpy.data.scenes.new(name + ".tmp")
    bpy.context.window.scene = sc
    for other in list(bpy.data.scenes):
        if other != sc:
            bpy.data.scenes.remove(other)
    bpy.data.batch_remove(list(bpy.data.objects) + list(bpy.data.meshes) + list(bpy.data.cameras) + list(bpy.data.movieclips) + list(bpy.data.images))
    bpy.data.orphans_purge(do_recursive=True)
    sc.name = name
    sc.frame_start, sc.frame_end = 1, 40
    sc.render.fps = 30
    return sc


def build_drop_scene(with_support: bool = False, scripted: bool = False) -> Any:
    """Passive ground, an active cube falling from z=3 (on a passive support box if asked), a camera.

    scripted=True keyframes the cube's location instead of simulating it (a scripted_motion defect)."""
    import bpy

    sc = fresh_scene()
    ctx = bpy.context
    bpy.ops.mesh.primitive_plane_add(size=20, location=(0, 0, 0))
    ground = ctx.active_object
    ground.name = "Ground"
    bpy.ops.rigidbody.object_add(type="PASSIVE")
    if with_support:
        bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 0.5))
        sup = ctx.active_object
        sup.name = "Support"
        bpy.ops.rigidbody.object_add(type="PASSIVE")
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0, 0, 3))
    cube = ctx.active_object
    cube.name = "Cube"
    if scripted:
        cube.keyframe_insert("location", frame=1)
        cube.location.z = 0.25
        cube.keyframe_insert("location", frame=30)
    else:
        bpy.ops.rigidbody.object_add(type="ACTIVE")
    bpy.ops.object.camera_add(location=(0, -10, 2), rotation=(1.45, 0, 0))
    sc.camera = ctx.active_object
    sc.camera.name = "Cam"
    if sc.rigidbody_world is not None:
        sc.rigidbody_world.point_cache.frame_end = sc.frame_end
    bpy.ops.object.select_all(action="DESELECT")
    sc.frame_set(1)
    return sc


def wait_job(name: str, timeout: float = 180.0) -> Any:
    from physcodegym.physcodegym_addon import jobs

    return jobs.wait(name, timeout=timeout)


# ------------------------------------------------------------------ recording layout


class Recorder:
    """Stands in for UILayout: records calls and checks what a real layout would refuse (unknown
    properties, unregistered operators or UI lists)."""

    def __init__(self, log: list[tuple], depth: int = 0) -> None:
        self.log, self.depth = log, depth
        self.enabled = self.active = True
        self.alert = False
        self.scale_y = 1.0

    def _child(self, kind: str, *a: Any, **k: Any) -> Recorder:
        self.log.append((kind, self.depth))
        return Recorder(self.log, self.depth + 1)

    def row(self, *a: Any, **k: Any) -> Recorder:
        return self._child("row")

    def column(self, *a: Any, **k: Any) -> Recorder:
        return self._child("column")

    def box(self, *a: Any, **k: Any) -> Recorder:
        return self._child("box")

    def split(self, *a: Any, **k: Any) -> Recorder:
        return self._child("split")

    def label(self, text: str = "", icon: str = "NONE", **k: Any) -> None:
        assert isinstance(text, str)
        self._icon(icon)
        self.log.append(("label", text, self.enabled))

    def _icon(self, icon: str) -> None:
        items = bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"].enum_items
        assert icon in items, f"unknown icon {icon!r}"

    def prop(self, data: Any, prop: str, text: str | None = None, icon: str = "NONE", **k: Any) -> None:
        assert prop in data.bl_rna.properties, f"{type(data).__name__} has no property {prop!r}"
        self._icon(icon)
        self.log.append(("prop", prop, self.enabled))

    def operator(self, idname: str, text: str | None = None, icon: str = "NONE", **k: Any) -> Any:
        mod, name = idname.split(".")
        op = getattr(getattr(bpy.ops, mod), name)
        rna = op.get_rna_type()  # raises KeyError for an unregistered operator
        self._icon(icon)
        poll = op.poll()
        self.log.append(("operator", idname, self.enabled and poll))

        class Props:
            def __setattr__(s, key: str, value: Any) -> None:
                assert key in rna.properties, f"{idname} has no property {key!r}"

        return Props()

    def template_list(self, list_type: str, list_id: str, data: Any, prop: str, active_data: Any, active_prop: str, **k: Any) -> None:
        assert hasattr(bpy.types, list_type), f"UI list {list_type} not registered"
        assert prop in data.bl_rna.properties and active_prop in active_data.bl_rna.properties
        ul = getattr(bpy.types, list_type)
        for i, item in enumerate(getattr(data, prop)):  # draw every row as the list would
            ul.draw_item(None, bpy.context, Recorder(self.log, self.depth + 1), data, item, 0, active_data, active_prop, i)
        self.log.append(("list", list_type, len(getattr(data, prop))))

    def progress(self, factor: float = 0.0, type: str = "BAR", text: str = "") -> None:
        assert 0.0 <= factor <= 1.0
        self.log.append(("progress", factor, text))

    def template_icon(self, icon_value: int = 0, scale: float = 1.0) -> None:
        self.log.append(("icon", icon_value))


PANELS = ("PCG_PT_main", "PCG_PT_task", "PCG_PT_reference", "PCG_PT_agent", "PCG_PT_audit", "PCG_PT_counterfactual", "PCG_PT_rubric", "PCG_PT_scores")


def draw_all() -> dict[str, list[tuple]]:
    """Run every panel's draw() with a recording layout; returns the log per panel."""
    out = {}
    for name in PANELS:
        cls = getattr(bpy.types, name)
        log: list[tuple] = []
        holder = type("P", (), {"layout": Recorder(log)})()
        cls.draw(holder, bpy.context)
        out[name] = log
    return out


def labels(log: list[tuple]) -> str:
    return "\n".join(e[1] for e in log if e[0] == "label")


def op_enabled(log: list[tuple], idname: str) -> bool:
    hits = [e[2] for e in log if e[0] == "operator" and e[1] == idname]
    assert hits, f"{idname} not drawn"
    return hits[0]


# ------------------------------------------------------------------ registration


def test_register_unregister_cycle(addon: Any) -> None:
    from physcodegym.panels import registration

    assert registration.is_registered()
    assert hasattr(bpy.types.Scene, "physcodegym") and hasattr(bpy.types, "PCG_PT_audit")
    n_ops = len([o for o in dir(bpy.ops.physcodegym) if not o.startswith("_")])
    assert n_ops >= 15
    prefs = bpy.context.preferences.addons["physcodegym"].preferences
    assert prefs.openai_key_env == "OPENAI_API_KEY" and prefs.preview_engine == "BLENDER_WORKBENCH"
    runs = prefs.runs_folder
    registration.unregister()
    assert not hasattr(bpy.types.Scene, "physcodegym") and not hasattr(bpy.types, "PCG_PT_audit")
    assert not bpy.app.timers.is_registered(jobs.tick)
    with pytest.raises(KeyError):
        bpy.ops.physcodegym.load_task.get_rna_type()
    registration.register()
    assert hasattr(bpy.types.Scene, "physcodegym") and bpy.ops.physcodegym.load_task.poll() in (True, False)
    prefs = bpy.context.preferences.addons["physcodegym"].preferences  # the old one died with its class
    prefs.runs_folder = runs
    assert prefs.anthropic_key_env == "ANTHROPIC_API_KEY"
    # the key itself is never a property: only variable names are stored
    assert not [p for p in prefs.bl_rna.properties.keys() if p.endswith("_key") or p == "api_key"]


# ------------------------------------------------------------------ task and reference


def test_load_task_reference_and_events(addon: Any, task_folder: Path) -> None:
    sc = build_drop_scene()
    st = sc.physcodegym
    assert bpy.ops.physcodegym.load_task(task=str(task_folder)) == {"FINISHED"}
    assert st.task_id == "panel_drop" and len(st.checklist) == 1 and len(st.events) == 2
    strip = sc.sequence_editor.strips[st.reference_strip]
    assert strip.type == "MOVIE" and strip.frame_final_start == sc.frame_start
    assert strip.frame_final_duration == VIDEO_FRAMES
    assert (sc.frame_start, sc.frame_end) == (1, VIDEO_FRAMES) and sc.render.fps == 30
    assert sc.render.use_sequencer is False  # renders of the reconstruction stay the 3D scene
    cam = sc.camera.data
    bg = [b for b in cam.background_images if b.source == "MOVIE_CLIP"]
    assert len(bg) == 1 and bg[0].clip.name == st.reference_clip and cam.show_background_images
    assert bg[0].clip.frame_start == sc.frame_start and bg[0].clip.frame_duration == VIDEO_FRAMES
    # events carry scene frames; jumping lands on their first (or last) frame
    land = st.events[1]
    assert (land.start_frame, land.end_frame, land.key) == (19, 31, True)
    assert bpy.ops.physcodegym.jump_to_event(index=1) == {"FINISHED"} and sc.frame_current == 19
    assert bpy.ops.physcodegym.jump_to_event(index=1, to_end=True) == {"FINISHED"} and sc.frame_current == 31
    st.events_index = 0  # clicking a row of the events list
    assert sc.frame_current == st.events[0].start_frame == 1
    # loading again replaces (never duplicates) the strip and background
    assert bpy.ops.physcodegym.load_task(task=str(task_folder)) == {"FINISHED"}
    assert len(sc.sequence_editor.strips) == 1 and len([b for b in cam.background_images if b.source == "MOVIE_CLIP"]) == 1
    assert bpy.ops.physcodegym.remove_reference() == {"FINISHED"}
    assert len(sc.sequence_editor.strips) == 0 and not [b for b in cam.background_images if b.source == "MOVIE_CLIP"]
    assert sc.render.use_sequencer is True


def test_load_task_by_library_id_and_bad_input(addon: Any, task_folder: Path, tmp_path: Path) -> None:
    sc = build_drop_scene()
    prefs = bpy.context.preferences.addons["physcodegym"].preferences
    prefs.task_library = str(task_folder.parent)
    try:
        assert bpy.ops.physcodegym.load_task(task="panel_drop", with_reference=False) == {"FINISHED"}
        assert sc.physcodegym.task_folder == str(task_folder.resolve()) and not sc.physcodegym.reference_strip
    finally:
        prefs.task_library = ""
    bad = tmp_path / "bad_task"
    bad.mkdir()
    doc = json.loads((task_folder / "task.json").read_text())
    doc["events"][0]["weight"] = 0
    (bad / "task.json").write_text(json.dumps(doc))
    with pytest.raises(RuntimeError, match=r"task\.json: events\[0\]\.weight"):
        bpy.ops.physcodegym.load_task(task=str(bad))
    assert "events[0].weight" in sc.physcodegym.task_status


# ------------------------------------------------------------------ jobs (timer + queue)


def test_job_success_failure_cancel() -> None:
    ok = jobs.submit(jobs.Job("t_ok", [sys.executable, "-c", "import sys; print('frame 5', file=sys.stderr); print('{\"a\": 1}')"]))
    bad = jobs.submit(
        jobs.Job("t_bad", [sys.executable, "-m", "physcodegym", "tasks", "show", "/nonexistent/task", "--json"])
    )
    slow = jobs.submit(jobs.Job("t_slow", [sys.executable, "-c", "import time; time.sleep(60)"]))
    assert bpy.app.timers.is_registered(jobs.tick)
    assert jobs.wait("t_ok").state == "done" and ok.doc == {"a": 1} and "frame 5" in ok.log
    assert jobs.wait("t_bad").state == "failed" and bad.returncode == 2 and "/nonexistent/task" in bad.message
    assert slow.running
    t = time.time()
    assert jobs.cancel("t_slow") and slow.state == "cancelled" and time.time() - t < 5
    assert slow._proc.poll() is not None  # the child is gone
    assert jobs.tick() is None  # nothing left running: the timer stops itself


GRANDPARENT = (
    "import subprocess, sys, time\n"
    "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
    "print('grandchild', g.pid, file=sys.stderr, flush=True)\n"
    "time.sleep(120)\n"
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"  # a zombie is dead, waiting for its (re)parent to reap it


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_cancel_stops_what_the_child_started() -> None:
    """Stop means stop: a child's own children (an audit's counterfactual workers) die with it."""
    job = jobs.submit(jobs.Job("t_tree", [sys.executable, "-c", GRANDPARENT]))
    t_end = time.time() + 60
    while not any(ln.startswith("grandchild ") for ln in job.log) and time.time() < t_end:
        jobs.tick()
        time.sleep(0.05)
    pid = int(next(ln for ln in job.log if ln.startswith("grandchild ")).split()[1])
    assert _alive(pid)
    t = time.time()
    assert jobs.cancel("t_tree") and job.state == "cancelled" and time.time() - t < 10
    t_end = time.time() + 5
    while _alive(pid) and time.time() < t_end:
        time.sleep(0.05)
    assert not _alive(pid) and job._proc.poll() is not None


# ------------------------------------------------------------------ rubric authoring


def _select(*names: str) -> None:
    for o in bpy.context.view_layer.objects:
        o.select_set(o.name in names)
    bpy.context.view_layer.objects.active = bpy.data.objects[names[0]] if names else None


def test_rubric_authoring_saves_a_valid_rubric(addon: Any, task_folder: Path) -> None:
    from physcodegym.tasks.loader import load_task

    sc = build_drop_scene(with_support=True)
    st = sc.physcodegym
    bpy.ops.physcodegym.load_task(task=str(task_folder), with_reference=False)
    assert [r.name for r in st.draft_roles] == ["cube", "ground"] and [c.name for c in st.draft_criteria] == ["c_sim"]
    # a new role from the selection, then criteria from the check library for it
    _select("Support")
    assert bpy.ops.physcodegym.assign_role(role="pedestal", core=False) == {"FINISHED"}
    _select("Cube")
    bpy.ops.physcodegym.assign_role(role="cube")
    st.new_check, st.new_params_json, st.new_weight, st.new_structural = "supported_by", '{"support": "pedestal"}', 2.0, True
    assert bpy.ops.physcodegym.add_criterion() == {"FINISHED"}
    c = st.draft_criteria[-1]
    assert (c.check, c.roles, c.weight, c.structural) == ("supported_by", "cube", 2.0, True)
    st.new_check, st.new_params_json, st.new_thresholds_json = "no_interpenetration", "{}", '{"max_depth_m": 0.01}'
    bpy.ops.physcodegym.add_criterion()
    # malformed JSON is refused and names the field
    st.new_params_json = "{support: pedestal"
    with pytest.raises(RuntimeError, match="new_params_json"):
        bpy.ops.physcodegym.add_criterion()
    assert bpy.ops.physcodegym.validate_rubric() == {"FINISHED"} and st.rubric_valid
    before = (task_folder / "task.json").read_text()
    assert bpy.ops.physcodegym.save_rubric() == {"FINISHED"}
    lt = load_task(task_folder)  # the saved file passes the schema
    crit = {c.id: c for c in lt.task.rubric.criteria}
    assert set(crit) == {"c_sim", "c_supported_by_1", "c_no_interpenetration_1"}
    assert crit["c_supported_by_1"].params == {"support": "pedestal"} and crit["c_supported_by_1"].structural
    assert crit["c_no_interpenetration_1"].thresholds == {"max_depth_m": 0.01}
    roles = {r.name: r for r in lt.task.roles}
    assert roles["pedestal"].name_hints == ["Support"] and roles["pedestal"].core is False
    assert roles["cube"].name_hints[0] == "Cube" and roles["cube"].description == "red cube"  # untouched fields kept
    assert lt.task.events[1].key and lt.task.title == "A cube drops onto the ground"
    backups = list(task_folder.glob("task.json.*.bak"))
    assert len(backups) == 1 and backups[0].read_text() == before


def test_rubric_invalid_draft_is_not_saved(addon: Any, task_folder: Path) -> None:
    sc = build_drop_scene()
    st = sc.physcodegym
    bpy.ops.physcodegym.load_task(task=str(task_folder), with_reference=False)
    _select("Cube")
    st.new_check, st.new_params_json = "supported_by", '{"support": "table"}'  # no role "table"
    bpy.ops.physcodegym.add_criterion()
    before = (task_folder / "task.json").read_text()
    with pytest.raises(RuntimeError, match=r"unknown roles \['table'\]"):
        bpy.ops.physcodegym.validate_rubric()
    assert not st.rubric_valid
    with pytest.raises(RuntimeError, match="not saved"):
        bpy.ops.physcodegym.save_rubric()
    assert (task_folder / "task.json").read_text() == before and not list(task_folder.glob("*.bak"))
    # removing the offending criterion (the active one) makes the draft valid again
    assert st.draft_criteria[st.draft_criteria_index].params_json == '{"support": "table"}'
    assert bpy.ops.physcodegym.remove_draft_item(what="CRITERION") == {"FINISHED"}
    assert [c.name for c in st.draft_criteria] == ["c_sim"]
    assert bpy.ops.physcodegym.validate_rubric() == {"FINISHED"} and st.rubric_valid
    st.draft_roles_index = 1
    assert bpy.ops.physcodegym.remove_draft_item(what="ROLE") == {"FINISHED"} and [r.name for r in st.draft_roles] == ["cube"]


# ------------------------------------------------------------------ panels


def test_panels_draw_in_every_state(addon: Any, task_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sc = build_drop_scene()
    st = sc.physcodegym
    # 1. nothing loaded
    logs = draw_all()
    assert "idle" in labels(logs["PCG_PT_main"])
    assert op_enabled(logs["PCG_PT_task"], "physcodegym.load_task")
    assert "load a task" in labels(logs["PCG_PT_reference"])
    assert not op_enabled(logs["PCG_PT_rubric"], "physcodegym.save_rubric")  # no task folder yet
    # 2. task loaded with its reference
    bpy.ops.physcodegym.load_task(task=str(task_folder))
    logs = draw_all()
    assert "the cube lands" in labels(logs["PCG_PT_task"]) and ("list", "PCG_UL_events", 2) in logs["PCG_PT_task"]
    assert "VSE strip: PCG Reference" in labels(logs["PCG_PT_reference"])
    assert op_enabled(logs["PCG_PT_rubric"], "physcodegym.save_rubric")
    # 3. results present: findings with S_val, counterfactual summary, scores with a missing metric
    from physcodegym.operators.agent_ops import apply_scores
    from physcodegym.operators.audit_ops import apply_audit

    apply_audit(sc, {"findings": [{"kind": "interpenetration", "objects": ["Cube", "Ground"], "frames": [5, 9], "value": 0.03, "unit": "m",
                                   "message": "overlap", "evidence": {"contact_points": [[0, 0, 0.1]]}}],
                     "criteria": [{"id": "c_sim", "score": 1.0, "passed": True}], "S_val": 0.75})
    st.counterfactual_result_json, st.counterfactual_verdict = json.dumps({"intervention": {"kind": "remove_object", "roles": ["cube"]}}), "took effect"
    from physcodegym.evaluator.score_document import read_score

    metrics = {"S_ssim": 0.8, "S_lpips": None, "S_obj": 0.5, "S_evt": 1.0, "S_mot": 0.4, "S_val": 0.75}
    apply_scores(sc, read_score({
        "task": "t", "candidate": "run", "candidate_kind": "run", "metrics": metrics,
        "states": {k: {"state": "ok" if v is not None else "uncomputable",
                       "reason": None if v is not None else "torch not installed"} for k, v in metrics.items()},
        "missing": {"S_lpips": "torch not installed"}, "S_vis": 0.65, "S_phys": 0.72, "S_tot": 0.68,
        "coverage": {"S_vis": ["S_ssim", "S_obj"], "S_phys": ["S_evt", "S_mot", "S_val"],
                     "S_tot": ["S_ssim", "S_obj", "S_evt", "S_mot", "S_val"]},
        "per_frame": {}, "details": {}, "timings": {}}))
    logs = draw_all()
    assert "S_val = 0.750 (1/1 criteria passed)" in labels(logs["PCG_PT_audit"])
    assert ("list", "PCG_UL_findings", 1) in logs["PCG_PT_audit"] and "overlap" in labels(logs["PCG_PT_audit"])
    assert "took effect" in labels(logs["PCG_PT_counterfactual"])
    sl = labels(logs["PCG_PT_scores"])
    assert "S_ssim: 0.800" in sl and "S_lpips: missing" in sl and "torch not installed" in sl and "S_tot: 0.680" in sl
    assert "S_vis: 0.650 (of S_ssim, S_obj)" in sl  # a partial aggregate names what it rests on
    # 4. a running job shows progress and a stop button
    jobs.submit(jobs.Job("audit", [sys.executable, "-c", "import time; time.sleep(30)"]))
    logs = draw_all()
    assert any(e[0] == "progress" for e in logs["PCG_PT_audit"]) and op_enabled(logs["PCG_PT_audit"], "physcodegym.cancel_job")
    assert "1 background job(s) running" in labels(logs["PCG_PT_main"])
    assert not op_enabled(logs["PCG_PT_audit"], "physcodegym.run_audit")  # one audit at a time
    jobs.cancel("audit")
    assert "audit: cancelled" in labels(draw_all()["PCG_PT_audit"])
    # 5. every library missing: buttons disabled with the reason (the state of a Blender lacking them)
    real = features._status
    monkeypatch.setattr(features, "_status", lambda name: (False, f"not available: {features.REQUIREMENTS[name][0]} missing"))
    logs = draw_all()
    assert "not available: physcodegym.probes.audit.audit missing" in labels(logs["PCG_PT_audit"])
    assert not op_enabled(logs["PCG_PT_audit"], "physcodegym.run_audit")
    assert "not available: physcodegym.probes.branches.counterfactual missing" in labels(logs["PCG_PT_counterfactual"])
    assert "not available" in labels(logs["PCG_PT_agent"]) and "not available" in labels(logs["PCG_PT_scores"])
    assert "not available: pydantic missing" in labels(logs["PCG_PT_task"])
    monkeypatch.setattr(features, "_status", real)
    # 6. optional heavy dependency (LPIPS) absent: only its toggle is greyed, with the reason
    if not features.available("lpips"):
        logs = draw_all()
        assert ("prop", "score_with_lpips", False) in logs["PCG_PT_scores"]
        assert "LPIPS not available" in labels(logs["PCG_PT_scores"])
    # preferences draw too (keys: only variable names, shown as set / not set)
    log: list[tuple] = []
    from physcodegym.physcodegym_addon.preferences import draw_preferences

    draw_preferences(bpy.context.preferences.addons["physcodegym"].preferences, Recorder(log))
    assert "only the variable names are saved" in labels(log)


def test_finding_selection_selects_jumps_and_sets_witness(addon: Any) -> None:
    from physcodegym.operators.audit_ops import apply_audit

    sc = build_drop_scene()
    bpy.ops.ptcache.bake_all(bake=True)
    apply_audit(sc, {"findings": [
        {"kind": "interpenetration", "objects": ["Cube", "Ground"], "frames": [12, 14], "value": 0.02, "unit": "m", "message": "m",
         "evidence": {"contact_points": [[0.1, 0.2, 0.0], [0.3, 0.2, 0.0]], "depth_vector": [[0, 0, 0], [0, 0, -0.02]]}},
        {"kind": "not_simulated", "objects": ["Cube"], "frames": [3, 20], "value": None, "message": "trajectory only", "evidence": {}},
    ]})
    _select("Ground")
    assert bpy.ops.physcodegym.select_finding(index=0) == {"FINISHED"}
    assert sc.frame_current == 12 and {o.name for o in bpy.context.selected_objects} == {"Cube", "Ground"}
    w = state.WITNESS[sc.name]
    assert w["points"] == [(0.1, 0.2, 0.0), (0.3, 0.2, 0.0)] and w["segments"] == [((0, 0, 0), (0, 0, -0.02))]
    assert witness.draw_handler_active()
    bpy.ops.physcodegym.select_finding(index=1)  # no geometry in the evidence: the object's trajectory
    w = state.WITNESS[sc.name]
    assert sc.frame_current == 3 and len(w["polylines"]) == 1 and len(w["polylines"][0]) == 18
    zs = [p[2] for p in w["polylines"][0]]
    assert zs[0] > zs[-1] + 0.1  # the baked cube falls over frames 3..20
    witness.draw_callback()  # background mode: returns without touching gpu


# ------------------------------------------------------------------ counterfactual


def _track(sc: Any, name: str, frames: range) -> np.ndarray:
    out = []
    for f in frames:
        sc.frame_set(f)
        out.append(tuple(sc.objects[name].matrix_world.translation))
    sc.frame_set(sc.frame_start)
    return np.array(out)


@pytest.mark.skipif(not features.available("counterfactual"), reason=features.reason("counterfactual"))
def test_counterfactual_on_copy_leaves_user_scene_untouched(addon: Any, task_folder: Path) -> None:
    sc = build_drop_scene(with_support=True)
    st = sc.physcodegym
    bpy.ops.physcodegym.load_task(task=str(task_folder), with_reference=False)
    bpy.ops.ptcache.bake_all(bake=True)  # the user's own bake, which must survive untouched
    pc = sc.rigidbody_world.point_cache
    before = _track(sc, "Cube", range(1, 41))
    info_before, objects_before = pc.info, sorted(o.name for o in sc.objects)
    assert pc.is_baked and before[-1, 2] > 1.0  # resting on the support
    _select("Support")
    st.counterfactual_kind, st.counterfactual_params_json = "remove_support", "{}"
    assert bpy.ops.physcodegym.run_counterfactual() == {"FINISHED"}
    job = wait_job("counterfactual")
    assert job.state == "done", (job.message, job.log[-10:])
    # the user's scene, objects and cache are exactly as they were
    assert sc.physcodegym.counterfactual_status.startswith("done")
    assert pc.is_baked and pc.info == info_before and sorted(o.name for o in sc.objects) == objects_before
    assert sc.objects["Support"].rigid_body is not None
    assert np.array_equal(_track(sc, "Cube", range(1, 41)), before)
    doc = json.loads(st.counterfactual_result_json)
    assert doc["took_effect"] is True and doc["intervention"]["kind"] == "remove_support"
    assert doc["intervention"]["roles"] == ["support"] and doc["mapping"]["support"] == "Support"
    # baseline vs intervened: the cube now falls to the ground
    tr = state.TRAJECTORIES[sc.name]
    base, inter = np.array(tr["baseline"]["Cube"]), np.array(tr["intervened"]["Cube"])
    assert abs(base[-1, 2] - before[-1, 2]) < 1e-4 and inter[-1, 2] < 0.5
    assert "Support" in tr["baseline"] and "Support" not in tr["intervened"]
    # the plot image has drawn curves, and the intervened copy is kept as its own scene
    im = bpy.data.images[st.counterfactual_plot_image]
    px = np.empty(len(im.pixels), dtype=np.float32)
    im.pixels.foreach_get(px)
    rgb = px.reshape(-1, 4)[:, :3]
    assert (np.abs(rgb - 0.12).max(axis=1) > 0.3).sum() > 200
    copy = bpy.data.scenes[st.counterfactual_copy_scene]
    assert copy != sc and not any(o.name.startswith("Support") for o in copy.objects)
    assert any(o.name.startswith("Cube") for o in copy.objects) and bpy.context.window.scene == sc
    # a counterfactual criterion from the intervention just run validates and saves
    st.counterfactual_measure, st.counterfactual_expect_role, st.counterfactual_expect_op, st.counterfactual_expect_value = "final_height", "cube", "lt", 0.6
    assert bpy.ops.physcodegym.add_counterfactual_criterion() == {"FINISHED"}
    c = st.draft_criteria[-1]
    assert c.check == "counterfactual" and json.loads(c.counterfactual_json)["intervention"]["kind"] == "remove_support"
    assert bpy.ops.physcodegym.save_rubric() == {"FINISHED"}
    from physcodegym.tasks.loader import load_task

    saved = load_task(task_folder).task
    counterfactual = next(c for c in saved.rubric.criteria if c.check == "counterfactual").counterfactual
    assert counterfactual.expected.measure == "final_height" and counterfactual.expected.value == 0.6 and "support" in {r.name for r in saved.roles}
    cl = labels(draw_all()["PCG_PT_counterfactual"])
    assert f"kept copy: scene '{st.counterfactual_copy_scene}'" in cl and "plot: image" in cl and "took effect" in cl
    kept = st.counterfactual_copy_scene
    assert bpy.ops.physcodegym.clear_counterfactual() == {"FINISHED"} and kept not in bpy.data.scenes and sc.name in bpy.data.scenes


# ------------------------------------------------------------------ audit


@pytest.mark.skipif(not features.available("audit"), reason=features.reason("audit"))
def test_audit_findings_match_headless_audit(addon: Any, task_folder: Path, tmp_path: Path) -> None:
    sc = build_drop_scene(scripted=True)  # a keyframed "falling" cube: scripted motion
    st = sc.physcodegym
    bpy.ops.physcodegym.load_task(task=str(task_folder), with_reference=False)
    rbw_baked = sc.rigidbody_world.point_cache.is_baked
    # a run can be stopped from the UI; nothing is applied from it
    assert bpy.ops.physcodegym.run_audit() == {"FINISHED"}
    assert bpy.ops.physcodegym.cancel_job(job="audit") == {"FINISHED"}
    assert jobs.get("audit").state == "cancelled" and len(st.findings) == 0
    assert bpy.ops.physcodegym.run_audit() == {"FINISHED"}
    job = wait_job("audit")
    assert job.state == "done", (job.message, job.log[-10:])
    assert sc.rigidbody_world.point_cache.is_baked == rbw_baked  # the live scene was not baked by the audit
    # the same scene saved independently, audited by the headless command
    ref = tmp_path / "ref.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(ref), copy=True)
    p = subprocess.run([sys.executable, "-m", "physcodegym", "audit", str(ref), "--task", str(task_folder), "--json"],
                       capture_output=True, text=True, timeout=300)
    head = json.loads(p.stdout)
    want = [(f["kind"], ",".join(f["objects"]), f["message"]) for f in head["findings"]]
    got = [(f.kind, f.objects, f.message) for f in st.findings]
    assert got == want and any(k == "scripted_motion" and "Cube" in o for k, o, _ in got)
    for f, h in zip(st.findings, head["findings"], strict=True):
        assert f.first_frame == (min(h["frames"]) if h["frames"] else -1)
        assert f.has_value == (h["value"] is not None) and (h["value"] is None or abs(f.value - h["value"]) <= 1e-5 * max(1, abs(h["value"])))
    assert st.s_val_set == (head.get("S_val") is not None)
    if st.s_val_set:
        assert abs(st.s_val - head["S_val"]) < 1e-6 and len(st.criteria) == len(head["criteria"])
    # selecting a finding selects its objects and jumps to its first frame
    i = next(i for i, f in enumerate(st.findings) if f.kind == "scripted_motion")
    bpy.ops.physcodegym.select_finding(index=i)
    assert "Cube" in {o.name for o in bpy.context.selected_objects}
    if st.findings[i].first_frame >= 0:
        assert sc.frame_current == st.findings[i].first_frame


# ------------------------------------------------------------------ agent, submission, score


@pytest.mark.skipif(not features.available("agent"), reason=features.reason("agent"))
def test_agent_run_is_non_blocking_shows_progress_and_stops(addon: Any, task_folder_240: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from physcodegym.testing.loopback import LoopbackLLM, Reply

    sc = build_drop_scene()
    st = sc.physcodegym
    bpy.ops.physcodegym.load_task(task=str(task_folder_240), with_reference=False)
    prefs = bpy.context.preferences.addons["physcodegym"].preferences
    with LoopbackLLM(api_key="sk-panel") as llm:
        # Keep the agent busy with cheap observation calls, so the run is still going when the UI stops it
        # (a text-only reply ends the run within a second, which made this test racy).
        llm.respond_with(lambda req: Reply.tool("video_info", {}, text="Looking at the video first."))
        monkeypatch.setenv("PCG_TEST_KEY", "sk-panel")  # a custom variable name: passed to the child, never stored
        prefs.provider, prefs.model, prefs.base_url, prefs.openai_key_env = "openai", "loopback-agent", llm.openai_base_url, "PCG_TEST_KEY"
        st.run_dir = str(tmp_path / "run")
        try:
            assert bpy.ops.physcodegym.start_agent() == {"FINISHED"}
            job = jobs.get("agent")
            assert job.running  # the operator returned while the run goes on
            assert not bpy.ops.physcodegym.start_agent.poll()  # one run at a time
            t_end = time.time() + 90
            while time.time() < t_end and job.running and (st.agent_tokens == 0 or len(llm.requests) < 2):
                jobs.tick()
                time.sleep(0.1)
            assert job.running, (job.message, job.log[-10:])
            assert len(llm.requests) >= 2 and st.agent_tokens > 0 and "running" in st.agent_status
            assert (tmp_path / "run" / "trace.jsonl").is_file()
            al = draw_all()["PCG_PT_agent"]
            assert any(e[0] == "progress" for e in al) and f"tokens {st.agent_tokens}" in labels(al)
            assert bpy.ops.physcodegym.cancel_job(job="agent") == {"FINISHED"}
            assert job.state == "cancelled" and job._proc.poll() is not None
        finally:
            prefs.base_url, prefs.openai_key_env, prefs.model = "", "OPENAI_API_KEY", "gpt-4o"
    assert "sk-panel" not in json.dumps({k: str(getattr(st, k)) for k in st.bl_rna.properties.keys() if k != "rna_type"})


def test_load_submission_scene_for_audit(addon: Any, task_folder: Path, tmp_path: Path) -> None:
    sub = build_drop_scene(with_support=True)
    (tmp_path / "run" / "submission").mkdir(parents=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "run" / "submission" / "scene.blend"), copy=True)
    (tmp_path / "run" / "previews").mkdir()
    bpy.data.images.new("p", 8, 8).save_render(str(tmp_path / "run" / "previews" / "p1.png"))
    assert sub is not None
    sc = build_drop_scene()
    st = sc.physcodegym
    bpy.ops.physcodegym.load_task(task=str(task_folder), with_reference=False)
    st.run_dir = str(tmp_path / "run")
    assert bpy.ops.physcodegym.refresh_agent() == {"FINISHED"}
    assert st.submission_blend.endswith("submission/scene.blend") and st.agent_preview.endswith("p1.png")
    assert bpy.data.images.get("PCG Preview") is not None
    assert bpy.ops.physcodegym.load_submission() == {"FINISHED"}
    new = bpy.context.window.scene
    assert new != sc and new.name == st.submission_scene and new.name.startswith("PCG Submission")
    assert any(o.name.startswith("Support") for o in new.objects) and new.rigidbody_world is not None
    assert new.physcodegym.task_id == "panel_drop" and len(new.physcodegym.events) == 2
    assert "Support" not in sc.objects  # the user's scene is unchanged


@pytest.mark.skipif(not features.available("score"), reason=features.reason("score"))
def test_score_reference_against_itself(addon: Any, task_folder_240: Path) -> None:
    sc = build_drop_scene()
    st = sc.physcodegym
    bpy.ops.physcodegym.load_task(task=str(task_folder_240), with_reference=False)
    st.score_candidate = str(task_folder_240 / "reference.mp4")
    assert bpy.ops.physcodegym.run_score() == {"FINISHED"}
    job = wait_job("score", timeout=240)
    assert job.state == "done", (job.message, job.log[-10:])
    m = {x.name: x for x in st.scores}
    assert list(m) == ["S_ssim", "S_lpips", "S_obj", "S_evt", "S_mot", "S_val"]
    assert m["S_ssim"].has_value and m["S_ssim"].value > 0.99
    assert not m["S_lpips"].has_value and m["S_lpips"].reason  # not requested / not installed: missing with a reason
    agg = json.loads(st.aggregates_json)
    assert set(agg) >= {"S_vis", "S_phys", "S_tot"}
    labels_ = labels(draw_all()["PCG_PT_scores"])
    assert "S_ssim: 1.000" in labels_ or "S_ssim: 0.99" in labels_


def test_render_preview_uses_preference_engine(addon: Any) -> None:
    sc = build_drop_scene()
    sc.frame_set(12)
    assert bpy.context.preferences.addons["physcodegym"].preferences.preview_engine == "BLENDER_WORKBENCH"
    assert bpy.ops.physcodegym.render_preview() == {"FINISHED"}
    job = wait_job("preview")
    assert job.state == "done" and job.doc["engine"] == "BLENDER_WORKBENCH" and job.doc["frame"] == 12, (job.message, job.log[-5:])
    im = bpy.data.images["PCG Frame Preview"]
    assert tuple(im.size) == (640, 360)
    px = np.empty(len(im.pixels), dtype=np.float32)
    im.pixels.foreach_get(px)
    assert px.reshape(-1, 4)[:, :3].std() > 0.01  # an actual render (ground, cube), not a blank frame
    assert sc.render.engine != "" and sc.render.resolution_x == 1920  # the user's own settings untouched


@pytest.mark.skipif(not features.available("audit"), reason=features.reason("audit"))
def test_audit_twin_without_the_defect_has_no_scripted_motion(addon: Any) -> None:
    sc = build_drop_scene(scripted=False)  # the same cube, now falling by simulation
    assert bpy.ops.physcodegym.run_audit() == {"FINISHED"}
    job = wait_job("audit")
    assert job.state == "done", (job.message, job.log[-10:])
    kinds = {f.kind for f in sc.physcodegym.findings}
    assert "scripted_motion" not in kinds and "not_simulated" not in kinds
    assert sc.physcodegym.audit_status.startswith(f"{len(sc.physcodegym.findings)} findings")
