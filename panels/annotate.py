"""The "Annotate" sub-panel: complete a task skeleton (e.g. one `physcodegym tasks import` made from a real
video) in Blender: roles by name, the object checklist, events with times taken from the timeline, then save
(checklist, events, roles and the Rubric panel's criteria together) and validate. Draw only; operators in
`operators/task_ops.py`."""

from __future__ import annotations

from typing import Any

import bpy
from physcodegym.panels.main import _drawer, _Sub


class PCG_PT_annotate(_Sub, bpy.types.Panel):
    bl_label = "Annotate"
    bl_options = {"DEFAULT_CLOSED"}

    @_drawer("tasks")
    def draw(layout: Any, st: Any, context: Any) -> None:
        layout.operator("physcodegym.import_video", icon="FILE_MOVIE")
        if not st.task_folder:
            layout.label(text="load a task first (or import a video: it becomes a task skeleton)", icon="INFO")
            return
        row = layout.row(align=True)
        row.prop(st, "new_role_name", text="Role")
        row.operator("physcodegym.add_role", text="Add", icon="ADD")
        layout.label(text=f"{len(st.draft_roles)} role(s): " + ", ".join(r.name for r in st.draft_roles))
        box = layout.box()
        box.label(text="Object checklist")
        for i, it in enumerate(st.checklist):
            r = box.row(align=True)
            r.prop(it, "count", text="")
            r.prop(it, "category", text="")
            r.prop(it, "attributes", text="")
            r.prop(it, "roles", text="")
            op = r.operator("physcodegym.remove_annotation", text="", icon="REMOVE")
            op.what, op.index = "CHECKLIST", i
        box.operator("physcodegym.add_checklist_item", icon="ADD")
        box = layout.box()
        box.label(text="Events (times from the timeline)")
        box.template_list("PCG_UL_events", "annotate", st, "events", st, "events_index", rows=3)
        r = box.row(align=True)
        r.operator("physcodegym.add_event", icon="ADD")
        r.operator("physcodegym.remove_annotation", text="", icon="REMOVE").what = "EVENT"
        if 0 <= st.events_index < len(st.events):
            ev = st.events[st.events_index]
            for p in ("description", "roles", "kind", "start_s", "end_s", "weight", "key"):
                box.prop(ev, p)
            r = box.row(align=True)
            r.operator("physcodegym.set_event_time", text="Start = current frame").to_end = False
            r.operator("physcodegym.set_event_time", text="End = current frame").to_end = True
        row = layout.row(align=True)
        row.operator("physcodegym.save_task", icon="FILE_TICK")
        row.operator("physcodegym.validate_task", icon="CHECKMARK")
        if st.task_status:
            layout.label(text=st.task_status)


CLASSES = (PCG_PT_annotate,)
