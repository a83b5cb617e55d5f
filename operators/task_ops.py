"""Task and reference operators: load a task, show its reference video beside the scene, jump to events."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import bpy
from physcodegym.operators.common import gate
from physcodegym.physcodegym_addon import preferences

if TYPE_CHECKING:
    from physcodegym.tasks.loader import LoadedTask

STRIP_NAME = "PCG Reference"


def resolve_task(context: Any, ref: str) -> LoadedTask:
    """Load a task by folder, task.json path, or id (the preferences' library first, then the shipped packs)."""
    from physcodegym.tasks.loader import TASK_FILE, load_task

    ref = bpy.path.abspath(ref.strip()) if ref.strip().startswith("//") else ref.strip()
    if not ref:
        from physcodegym.core.errors import InputError

        raise InputError("no task given", field="task")
    prefs = preferences.get(context)
    lib = Path(bpy.path.abspath(prefs.task_library)) if prefs.task_library else None
    if lib is not None and not Path(ref).exists() and (lib / ref / TASK_FILE).is_file():
        return load_task(lib / ref)
    return load_task(ref)


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
    st.task_id, st.task_title, st.task_category = t.id, t.title, t.category.value + (f" / {t.subcategory.value}" if t.subcategory else "")
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
    strip = sed.strips.new_movie(name=STRIP_NAME, filepath=str(video), channel=1, frame_start=scene.frame_start)
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
        s = sed.strips.get(st.reference_strip)
        if s is not None:
            sed.strips.remove(s)
        scene.render.use_sequencer = st.prev_use_sequencer
    cam = bpy.data.objects.get(st.reference_camera) if st.reference_camera else None
    clip = bpy.data.movieclips.get(st.reference_clip) if st.reference_clip else None
    if cam is not None and cam.type == "CAMERA" and clip is not None:
        for bg in list(cam.data.background_images):
            if bg.source == "MOVIE_CLIP" and bg.clip == clip:
                cam.data.background_images.remove(bg)
    st.reference_strip = st.reference_clip = st.reference_camera = ""


class PCG_OT_load_task(bpy.types.Operator):
    """Load a task: its checklist, events and rubric, and its reference video beside the scene"""

    bl_idname = "physcodegym.load_task"
    bl_label = "Load Task"
    bl_options = {"REGISTER", "UNDO"}

    task: bpy.props.StringProperty(name="Task", description="Task id or folder (default: the panel's task field)")
    with_reference: bpy.props.BoolProperty(name="Reference video", default=True)

    @classmethod
    def poll(cls, context: Any) -> bool:
        return gate(cls, context, "tasks")

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
        st.task_status = msg
        self.report({"INFO"}, msg)
        return {"FINISHED"}


class PCG_OT_remove_reference(bpy.types.Operator):
    """Remove the reference strip and camera background this panel added"""

    bl_idname = "physcodegym.remove_reference"
    bl_label = "Remove Reference"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: Any) -> bool:
        return bool(context.scene.physcodegym.reference_strip or context.scene.physcodegym.reference_clip)

    def execute(self, context: Any) -> set[str]:
        detach_reference(context.scene)
        return {"FINISHED"}


class PCG_OT_jump_to_event(bpy.types.Operator):
    """Jump to the first frame of an event of the loaded task"""

    bl_idname = "physcodegym.jump_to_event"
    bl_label = "Jump to Event"

    index: bpy.props.IntProperty(default=-1, options={"SKIP_SAVE"})
    to_end: bpy.props.BoolProperty(default=False, options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context: Any) -> bool:
        return len(context.scene.physcodegym.events) > 0

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


CLASSES = (PCG_OT_load_task, PCG_OT_remove_reference, PCG_OT_jump_to_event)
