"""Task and reference operators: load a task, show its reference video beside the scene, jump to events; and
task annotation (roles, checklist items, events with times) so a skeleton made by `tasks import` from a real
video can be completed in the panel, saved (with the rubric draft) and validated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import bpy
from physcodegym.operators.common import (
    Gated,
    JobOperator,
    NeedsTask,
    gate,
    on_scene,
    report_status,
    role_name,
    when_set,
)
from physcodegym.physcodegym_addon import preferences

if TYPE_CHECKING:
    from physcodegym.tasks.loader import LoadedTask

STRIP_NAME = "PCG Reference"


def vse_strips(sed: Any) -> Any:
    """The sequence editor's top-level strip collection, on every Blender the manifest accepts: `strips` from
    Blender 5.0 on, `sequences` in 4.2-4.5 (the 5.0 rename; the old name is gone in 5.x)."""
    strips = getattr(sed, "strips", None)
    return strips if strips is not None else sed.sequences


def resolve_task(context: Any, ref: str) -> LoadedTask:
    """Load a task by folder, task.json path, or id (the preferences' library first, then the shipped packs);
    a skeleton whose checklist, events or criteria are still empty loads as a draft."""
    from physcodegym.tasks.loader import TASK_FILE, load_task

    ref = bpy.path.abspath(ref.strip()) if ref.strip().startswith("//") else ref.strip()
    if not ref:
        from physcodegym.core.errors import InputError

        raise InputError("no task given", field="task")
    prefs = preferences.get(context)
    lib = Path(bpy.path.abspath(prefs.task_library)) if prefs.task_library else None
    # draft: a skeleton still being annotated (an imported video) loads too; the annotation operators complete it
    if lib is not None and not Path(ref).exists() and (lib / ref / TASK_FILE).is_file():
        return load_task(lib / ref, draft=True)
    return load_task(ref, draft=True)


def task_ids(context: Any) -> list[str]:
    """Ids of the valid tasks in the library and packs (for the task field's search list)."""
    try:
        from physcodegym.tasks.loader import task_roots
    except ImportError:
        return []
    prefs = preferences.get(context)
    roots = ([Path(bpy.path.abspath(prefs.task_library))] if prefs.task_library else []) + task_roots()
    out: list[str] = []
    for root in roots:
        if root.is_dir():
            out += [p.parent.name for p in sorted(root.glob("*/task.json"))]
    return sorted(set(out))


def fill_task(st: Any, loaded_task: LoadedTask, scene: Any) -> None:
    """Copy the checklist and events (with scene frames) into the scene state."""
    t = loaded_task.task
    st.task_folder = str(loaded_task.folder)
    st.task_id, st.task_title, st.task_category = t.id, t.title, t.category.value + (
        f" / {t.subcategory.value}" if t.subcategory else "")
    st.checklist.clear()
    for c in t.checklist:
        it = st.checklist.add()
        it.name, it.category, it.count = c.id, c.category, c.count
        it.attributes, it.roles, it.layout = ", ".join(c.attributes), ", ".join(c.roles), c.layout
    st.events.clear()
    off = scene.frame_start - 1
    for e in t.events:
        ev = st.events.add()
        ev.name, ev.description, ev.kind, ev.roles = e.id, e.description, e.kind.value, ", ".join(e.roles)
        ev.start_s, ev.end_s, ev.weight, ev.key = e.interval.start_s, e.interval.end_s, e.weight, e.key
        ev.start_frame, ev.end_frame = e.interval.start_frame + off, e.interval.end_frame + off
    # the rubric draft starts from the task's own roles and criteria
    from physcodegym.operators.rubric_ops import load_draft_from_task

    load_draft_from_task(st, t)


def attach_reference(context: Any, scene: Any, video: Path, sync_range: bool = True) -> dict[str, Any]:
    """Reference video as a VSE movie strip and as the active camera's movie-clip background, both starting
    at the scene's first frame (and, with sync_range, the scene range/fps set to the video's)."""
    st = scene.physcodegym
    detach_reference(scene)
    clip = bpy.data.movieclips.load(str(video), check_existing=True)
    n = int(clip.frame_duration)
    if sync_range:
        fps = float(clip.fps) if clip.fps else 30.0
        scene.render.fps, scene.render.fps_base = round(fps), 1.0
        scene.frame_end = scene.frame_start + n - 1
    clip.frame_start = scene.frame_start
    clip.name = f"PCG {video.stem}"
    sed = scene.sequence_editor or scene.sequence_editor_create()
    st.prev_use_sequencer = scene.render.use_sequencer
    strip = vse_strips(sed).new_movie(name=STRIP_NAME, filepath=str(video), channel=1, frame_start=scene.frame_start)
    # The strip is for viewing: renders of the reconstruction must stay the 3D scene, not the video.
    scene.render.use_sequencer = False
    st.reference_strip, st.reference_clip = strip.name, clip.name
    cam = scene.camera
    if cam is not None and cam.type == "CAMERA":
        bg = cam.data.background_images.new()
        bg.source = "MOVIE_CLIP"
        bg.clip = clip
        bg.alpha = 0.5
        bg.display_depth = "FRONT"
        cam.data.show_background_images = True
        st.reference_camera = cam.name
    else:
        st.reference_camera = ""
    return {"strip": strip.name, "clip": clip.name, "frames": n, "camera": st.reference_camera}


def detach_reference(scene: Any) -> None:
    st = scene.physcodegym
    sed = scene.sequence_editor
    if sed is not None and st.reference_strip:
        s = vse_strips(sed).get(st.reference_strip)
        if s is not None:
            vse_strips(sed).remove(s)
        scene.render.use_sequencer = st.prev_use_sequencer
    cam = bpy.data.objects.get(st.reference_camera) if st.reference_camera else None
    clip = bpy.data.movieclips.get(st.reference_clip) if st.reference_clip else None
    if cam is not None and cam.type == "CAMERA" and clip is not None:
        for bg in list(cam.data.background_images):
            if bg.source == "MOVIE_CLIP" and bg.clip == clip:
                cam.data.background_images.remove(bg)
    st.reference_strip = st.reference_clip = st.reference_camera = ""


def _csv(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _unique(names: set[str], stem: str) -> str:
    i = 1
    while f"{stem}_{i}" in names:
        i += 1
    return f"{stem}_{i}"


def add_role(st: Any, name: str, description: str = "", core: bool = True, object_name: str = "") -> Any:
    """A role in the rubric draft without a scene object (a real video has none): events, checklist items and
    criteria name it; an object can be assigned later with Assign Role."""
    name = role_name(name)
    r = next((r for r in st.draft_roles if r.name == name), None) or st.draft_roles.add()
    r.name, r.description, r.core = name, description or r.description or name, core
    if object_name:
        r.object_name = object_name
    st.rubric_valid = False
    return r


def add_checklist_item(st: Any, category: str, count: int = 1, attributes: str = "", roles: str = "", layout: str = "",
                       item_id: str = "") -> Any:
    """One object-checklist item (comma-separated attributes and roles, as the panel shows them)."""
    it = st.checklist.add()
    it.name = item_id or _unique({c.name for c in st.checklist}, f"obj_{role_name(category) or 'object'}")
    it.category, it.count, it.attributes, it.roles, it.layout = category, count, attributes, roles, layout
    return it


def event_seconds(scene: Any, frame: int) -> float:
    """Reference time of a scene frame (the reference starts at the scene's first frame, 30 fps)."""
    from physcodegym.tasks.schema import FPS, FRAMES

    return round(min(max(0.0, (frame - scene.frame_start) / FPS), FRAMES / FPS), 6)


def set_event_time(st: Any, scene: Any, index: int, start_frame: int | None = None,
                   end_frame: int | None = None) -> Any:
    """Set an event's start / end from scene frames (seconds and frames stay in step)."""
    ev = st.events[index]
    if start_frame is not None:
        ev.start_frame, ev.start_s = start_frame, event_seconds(scene, start_frame)
    if end_frame is not None:
        ev.end_frame, ev.end_s = end_frame, event_seconds(scene, end_frame)
    if ev.end_s < ev.start_s:
        ev.start_s, ev.end_s, ev.start_frame, ev.end_frame = ev.end_s, ev.start_s, ev.end_frame, ev.start_frame
    return ev


def add_event(st: Any, scene: Any, description: str, roles: str, start_frame: int, end_frame: int, weight: float = 1.0,
              key: bool = False, kind: str = "action", event_id: str = "") -> Any:
    """One event of the reference with its time interval from scene frames."""
    ev = st.events.add()
    ev.name = event_id or _unique({e.name for e in st.events}, "ev")
    ev.description, ev.roles, ev.weight, ev.key, ev.kind = description, roles, weight, key, kind
    set_event_time(st, scene, len(st.events) - 1, start_frame, end_frame)
    st.events_index = len(st.events) - 1
    return ev


def annotations_doc(st: Any, base: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(checklist, events) as task.json documents from the panel state; what the panel does not edit
    (an event's `after`, `persists_until_s`, `evidence`) is kept from the file's item of the same id."""
    checklist = [{"id": c.name, "category": c.category, "count": c.count, "attributes": _csv(c.attributes),
                  "layout": c.layout, "roles": _csv(c.roles)} for c in st.checklist]
    old = {e.get("id"): e for e in base.get("events", []) if isinstance(e, dict)}
    events = []
    for e in st.events:
        doc = {k: v for k, v in old.get(e.name, {}).items() if k in ("after", "persists_until_s", "evidence")}
        doc.update(id=e.name, kind=e.kind or "action", description=e.description or e.name, roles=_csv(e.roles),
                   interval={"start_s": round(e.start_s, 6), "end_s": round(e.end_s, 6)}, weight=round(e.weight, 6),
                   key=e.key)
        events.append(doc)
    return checklist, events


def task_doc(st: Any) -> tuple[Path, dict[str, Any]]:
    """The loaded task's file with the panel's checklist, events, roles and rubric draft in place."""
    import json

    from physcodegym.core.errors import InputError
    from physcodegym.operators.rubric_ops import draft_rubric_doc
    from physcodegym.tasks.loader import TASK_FILE

    if not st.task_folder:
        raise InputError("load a task first: annotations are saved into its task folder", field="task")
    path = Path(st.task_folder) / TASK_FILE
    base = json.loads(path.read_text(encoding="utf-8"))
    doc = dict(base)
    doc["checklist"], doc["events"] = annotations_doc(st, base)
    doc["roles"], rubric = draft_rubric_doc(st)
    doc["rubric"] = {**base.get("rubric", {}), **rubric}
    return path, doc


def save_task(st: Any) -> dict[str, Any]:
    """Validate and save the whole annotation (checklist, events, roles, rubric) into task.json, atomically,
    the previous file kept as a backup. A skeleton may be saved incomplete; the answer lists what is missing."""
    import json
    import shutil
    import time

    from physcodegym.core import atomic
    from physcodegym.core.errors import from_validation
    from physcodegym.tasks.loader import TASK_FILE
    from physcodegym.tasks.schema import DraftTask, Task, missing_annotations
    from pydantic import ValidationError

    path, doc = task_doc(st)
    try:
        task = DraftTask.model_validate(doc)
        missing = missing_annotations(task)
        if not missing:
            task = Task.model_validate(doc)
    except ValidationError as e:
        raise from_validation(e, file=str(path)) from e
    backup = path.with_name(f"{TASK_FILE}.{time.strftime('%Y%m%d-%H%M%S')}.bak")
    shutil.copy2(path, backup)
    atomic.write_text(path, json.dumps(task.model_dump(mode="json"), indent=2) + "\n")
    return {"path": str(path), "backup": str(backup), "missing": missing, "complete": not missing}


def _missing_text(missing: list[dict[str, str]]) -> str:
    return "; ".join(f"{m['field']}: {m['need']}" for m in missing)


class PCG_OT_load_task(Gated, bpy.types.Operator):
    """Load a task: its checklist, events and rubric, and its reference video beside the scene"""

    bl_idname = "physcodegym.load_task"
    bl_label = "Load Task"
    bl_options = {"REGISTER", "UNDO"}

    task: bpy.props.StringProperty(name="Task", description="Task id or folder (default: the panel's task field)")
    with_reference: bpy.props.BoolProperty(name="Reference video", default=True)
    feature = "tasks"

    def execute(self, context: Any) -> set[str]:
        from physcodegym.core.errors import InputError

        scene = context.scene
        st = scene.physcodegym
        ref = self.task or st.task_ref
        try:
            loaded_task = resolve_task(context, ref)
        except InputError as e:
            st.task_status = f"error: {e}"
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        st.task_ref = ref
        fill_task(st, loaded_task, scene)
        msg = f"loaded {loaded_task.id}: {len(st.checklist)} checklist items, {len(st.events)} events"
        if self.with_reference:
            if loaded_task.video_path.is_file():
                info = attach_reference(context, scene, loaded_task.video_path, st.sync_range)
                # events were placed before the range may have moved; recompute their frames
                off = scene.frame_start - 1
                for ev, e in zip(st.events, loaded_task.task.events, strict=True):
                    ev.start_frame, ev.end_frame = e.interval.start_frame + off, e.interval.end_frame + off
                msg += f"; reference {info['frames']} frames" + ("" if info["camera"] else " (no camera: strip only)")
            else:
                msg += f"; reference video missing: {loaded_task.video_path}"
                self.report({"WARNING"}, f"reference video missing: {loaded_task.video_path}")
        return report_status(self, st, "task_status", msg)


class PCG_OT_remove_reference(bpy.types.Operator):
    """Remove the reference strip and camera background this panel added"""

    bl_idname = "physcodegym.remove_reference"
    bl_label = "Remove Reference"
    bl_options = {"REGISTER", "UNDO"}
    poll = when_set("reference_strip", "reference_clip")

    def execute(self, context: Any) -> set[str]:
        detach_reference(context.scene)
        return {"FINISHED"}


class PCG_OT_jump_to_event(bpy.types.Operator):
    """Jump to the first frame of an event of the loaded task"""

    bl_idname = "physcodegym.jump_to_event"
    bl_label = "Jump to Event"

    index: bpy.props.IntProperty(default=-1, options={"SKIP_SAVE"})
    to_end: bpy.props.BoolProperty(default=False, options={"SKIP_SAVE"})
    poll = when_set("events")

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        i = self.index if self.index >= 0 else st.events_index
        if not (0 <= i < len(st.events)):
            self.report({"ERROR"}, f"no event {i}")
            return {"CANCELLED"}
        st.events_index = i
        ev = st.events[i]
        context.scene.frame_set(ev.end_frame if self.to_end else ev.start_frame)
        return {"FINISHED"}


class _Annotate(NeedsTask):
    bl_options = {"REGISTER", "UNDO"}


class _TaskFile(NeedsTask):
    """Save / Validate Task: they act on task.json, not on the scene (no undo step)."""

    bl_options = {"REGISTER"}


class PCG_OT_add_role(_Annotate, bpy.types.Operator):
    """Add a role by name (no scene object needed: a real video's task names what it shows)"""

    bl_idname = "physcodegym.add_role"
    bl_label = "Add Role"

    role: bpy.props.StringProperty(name="Role", options={"SKIP_SAVE"})
    description: bpy.props.StringProperty(name="Description", options={"SKIP_SAVE"})
    core: bpy.props.BoolProperty(name="Core", default=True, description="Core objects must move by simulation")

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        name = (self.role or st.new_role_name).strip()
        if not name:
            self.report({"ERROR"}, "give a role name")
            return {"CANCELLED"}
        add_role(st, name, self.description, self.core)
        st.draft_roles_index = len(st.draft_roles) - 1
        return {"FINISHED"}


class PCG_OT_add_checklist_item(_Annotate, bpy.types.Operator):
    """Add an object-checklist item (what is in the video: category, count, appearance, roles)"""

    bl_idname = "physcodegym.add_checklist_item"
    bl_label = "Add Checklist Item"

    category: bpy.props.StringProperty(name="Category", default="object", options={"SKIP_SAVE"})
    count: bpy.props.IntProperty(name="Count", default=1, min=1, options={"SKIP_SAVE"})
    attributes: bpy.props.StringProperty(name="Attributes", description="Comma-separated: colour, material, size",
                                         options={"SKIP_SAVE"})
    roles: bpy.props.StringProperty(name="Roles", description="Comma-separated role names", options={"SKIP_SAVE"})
    layout: bpy.props.StringProperty(name="Layout", description="Initial spatial layout in words",
                                     options={"SKIP_SAVE"})

    def invoke(self, context: Any, event: Any) -> set[str]:
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context: Any) -> set[str]:
        add_checklist_item(context.scene.physcodegym, self.category, self.count, self.attributes, self.roles,
                           self.layout)
        return {"FINISHED"}


class PCG_OT_add_event(_Annotate, bpy.types.Operator):
    """Add an event of the reference, from the current frame (or the given frames) for its duration"""

    bl_idname = "physcodegym.add_event"
    bl_label = "Add Event"

    description: bpy.props.StringProperty(name="Description", options={"SKIP_SAVE"})
    roles: bpy.props.StringProperty(name="Roles", description="Comma-separated role names", options={"SKIP_SAVE"})
    kind: bpy.props.EnumProperty(name="Kind",
                                 items=[(k, k.replace("_", " "), "") for k in (
                                     "action", "order", "final_state", "persistence")])
    start_frame: bpy.props.IntProperty(name="Start frame", default=-1, description="-1: the current frame",
                                       options={"SKIP_SAVE"})
    end_frame: bpy.props.IntProperty(name="End frame", default=-1, description="-1: start + 15 frames",
                                     options={"SKIP_SAVE"})
    weight: bpy.props.FloatProperty(name="Weight", default=1.0, min=0.001, options={"SKIP_SAVE"})
    key: bpy.props.BoolProperty(name="Key", description="A failed key event caps S_evt at 0", options={"SKIP_SAVE"})

    def invoke(self, context: Any, event: Any) -> set[str]:
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context: Any) -> set[str]:
        scene = context.scene
        start = self.start_frame if self.start_frame >= 0 else scene.frame_current
        end = self.end_frame if self.end_frame >= 0 else min(scene.frame_end, start + 15)
        ev = add_event(scene.physcodegym, scene, self.description, self.roles, start, end, self.weight, self.key,
                       self.kind)
        self.report({"INFO"}, f"event {ev.name}: {ev.start_s:.3f}-{ev.end_s:.3f} s")
        return {"FINISHED"}


class PCG_OT_set_event_time(_Annotate, bpy.types.Operator):
    """Set the active event's start or end to the current frame"""

    bl_idname = "physcodegym.set_event_time"
    bl_label = "Set Event Time"

    to_end: bpy.props.BoolProperty(name="End", default=False, options={"SKIP_SAVE"})

    def execute(self, context: Any) -> set[str]:
        st, scene = context.scene.physcodegym, context.scene
        if not (0 <= st.events_index < len(st.events)):
            self.report({"ERROR"}, "no active event")
            return {"CANCELLED"}
        f = scene.frame_current
        if self.to_end:
            set_event_time(st, scene, st.events_index, end_frame=f)
        else:
            set_event_time(st, scene, st.events_index, start_frame=f)
        return {"FINISHED"}


class PCG_OT_remove_annotation(_Annotate, bpy.types.Operator):
    """Remove a checklist item (by index) or the active event"""

    bl_idname = "physcodegym.remove_annotation"
    bl_label = "Remove"

    what: bpy.props.EnumProperty(items=[("EVENT", "Event", ""), ("CHECKLIST", "Checklist item", "")])
    index: bpy.props.IntProperty(default=-1, options={"SKIP_SAVE"})

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        coll = st.events if self.what == "EVENT" else st.checklist
        i = self.index if self.index >= 0 else (st.events_index if self.what == "EVENT" else len(coll) - 1)
        if not (0 <= i < len(coll)):
            return {"CANCELLED"}
        coll.remove(i)
        if self.what == "EVENT":
            st.events_index = max(0, min(st.events_index, len(coll) - 1))
        return {"FINISHED"}


class PCG_OT_save_task(_TaskFile, bpy.types.Operator):
    """Save checklist, events, roles and rubric into task.json (previous file kept as a backup); an incomplete
    annotation is saved too and the status lists what is still missing"""

    bl_idname = "physcodegym.save_task"
    bl_label = "Save Task"

    def execute(self, context: Any) -> set[str]:
        from physcodegym.core.errors import InputError
        from physcodegym.operators.rubric_ops import DraftError

        st = context.scene.physcodegym
        try:
            r = save_task(st)
        except (InputError, DraftError) as e:
            return report_status(self, st, "task_status", f"not saved, invalid: {e}", "ERROR")
        st.rubric_valid = r["complete"]
        return report_status(self, st, "task_status", f"saved {r['path']}" + (
            "; complete" if r["complete"] else f"; still missing: {_missing_text(r['missing'])}"))


class PCG_OT_validate_task(_TaskFile, bpy.types.Operator):
    """Validate the saved task.json: complete (ready to score) or what an annotator still has to add"""

    bl_idname = "physcodegym.validate_task"
    bl_label = "Validate Task"

    def execute(self, context: Any) -> set[str]:
        from physcodegym.core.errors import InputError
        from physcodegym.tasks.loader import load_task
        from physcodegym.tasks.schema import missing_annotations

        st = context.scene.physcodegym
        try:
            missing = missing_annotations(load_task(st.task_folder, draft=True).task)
            if not missing:
                load_task(st.task_folder, check_media=True)
        except InputError as e:
            return report_status(self, st, "task_status", f"invalid: {e}", "ERROR")
        if missing:
            return report_status(self, st, "task_status", f"incomplete: {_missing_text(missing)}", "WARNING")
        return report_status(self, st, "task_status", "valid: complete, ready to score")


IMPORT_JOB = "import"


class PCG_OT_import_video(JobOperator, bpy.types.Operator):
    """Make a task skeleton from a video (normalised to 240 frames, 30 fps, 640x360, in a background process)
    in the preferences' task library (else the runs folder), then load it for annotation"""

    bl_idname = "physcodegym.import_video"
    bl_label = "Import Video as Task"

    filepath: bpy.props.StringProperty(name="Video", subtype="FILE_PATH")
    task_id: bpy.props.StringProperty(name="Task id", description="Lower-case letters, digits, _ and -")
    category: bpy.props.StringProperty(name="Category", default="rigid/falling-bouncing",
                                       description="category[/subcategory]")
    start: bpy.props.FloatProperty(name="Start (s)", default=0.0, min=0.0)
    end: bpy.props.FloatProperty(name="End (s)", default=0.0, min=0.0, description="0: start + 8 s or the clip's end")
    encoder: bpy.props.EnumProperty(name="Encoder", items=[(k, k, "") for k in ("auto", "h264", "mp4v")])
    job_name, busy, feature = IMPORT_JOB, "an import is running", "tasks"

    @classmethod
    def ready(cls, context: Any) -> bool:
        return gate(cls, context, "score")  # decoding needs cv2 (as scoring does)

    def invoke(self, context: Any, event: Any) -> set[str]:
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context: Any) -> set[str]:
        from physcodegym.core import launch
        from physcodegym.operators.common import work_dir
        from physcodegym.physcodegym_addon import jobs

        video = Path(bpy.path.abspath(self.filepath))
        task_id = self.task_id or role_name(video.stem).replace("obj_", "video_", 1)
        prefs = preferences.get(context)
        root = Path(bpy.path.abspath(prefs.task_library)) if prefs.task_library else work_dir(context, "imports")
        args = ["tasks", "import", str(video), "--id", task_id, "--category", self.category, "--out", str(root),
                "--start", str(self.start), "--encoder", self.encoder, "--json"]
        if self.end > 0:
            args += ["--end", str(self.end)]

        def done(sc: Any, job: jobs.Job) -> None:
            st = sc.physcodegym
            if job.state != "done" or not isinstance(job.doc, dict) or not job.doc.get("folder"):
                err = (job.doc.get("error", {}).get("message") if isinstance(job.doc, dict)
                       and isinstance(job.doc.get("error"), dict) else job.message)
                st.task_status = f"import failed: {err}"
                return
            loaded_task = resolve_task(bpy.context, job.doc["folder"])
            st.task_ref = job.doc["folder"]
            fill_task(st, loaded_task, sc)
            attach_reference(bpy.context, sc, loaded_task.video_path, st.sync_range)
            st.task_status = f"imported {loaded_task.id}; still missing: {_missing_text(job.doc.get('missing', []))}"

        jobs.submit(jobs.Job(IMPORT_JOB, launch.cli_argv(args), on_done=on_scene(context, done),
                             env=launch.child_env()))
        context.scene.physcodegym.task_status = f"importing {video.name}..."
        return {"FINISHED"}


CLASSES = (
    PCG_OT_import_video,
    PCG_OT_load_task,
    PCG_OT_remove_reference,
    PCG_OT_jump_to_event,
    PCG_OT_add_role,
    PCG_OT_add_checklist_item,
    PCG_OT_add_event,
    PCG_OT_set_event_time,
    PCG_OT_remove_annotation,
    PCG_OT_save_task,
    PCG_OT_validate_task,
)
