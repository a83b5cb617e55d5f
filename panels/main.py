"""The "PhysCodeGym" sidebar tab of the 3D Viewport: Task, Reference, Agent, Audit, Counterfactual,
Rubric, Scores. Panels only draw state and call operators; what is unavailable is drawn disabled with
the reason."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import bpy
from physcodegym.physcodegym_addon import features, jobs, preferences


def _job_row(layout: Any, name: str) -> None:
    """Progress bar and Stop button of a running job, or its last message."""
    job = jobs.get(name)
    if job is None:
        return
    row = layout.row(align=True)
    if job.running:
        row.progress(factor=job.progress, type="BAR", text=f"{name}: {job.seconds:.0f} s")
        op = row.operator("physcodegym.cancel_job", text="", icon="CANCEL")
        op.job = name
    else:
        row.label(text=f"{name}: {job.state} {job.message}", icon="CHECKMARK" if job.state == "done" else "ERROR")


def _unavailable(layout: Any, feature: str) -> bool:
    ok, why = features.status(feature)
    if not ok:
        layout.label(text=why, icon="ERROR")
    return not ok


class _Base:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "PhysCodeGym"


class _Sub(_Base):
    """A sub-panel of the main panel (mixins: only the concrete panels are registered)."""

    bl_parent_id = "PCG_PT_main"


def _drawer(feature: str | None = None) -> Callable[[Callable[[Any, Any, Any], None]], Callable[[Any, Any], None]]:
    """Decorator: a Panel.draw(self, context) from a function of (layout, scene state, context); with `feature`,
    only the reason is drawn while that feature is unavailable."""

    def wrap(body: Callable[[Any, Any, Any], None]) -> Callable[[Any, Any], None]:
        def draw(self: Any, context: Any) -> None:
            if feature is None or not _unavailable(self.layout, feature):
                body(self.layout, context.scene.physcodegym, context)

        return draw

    return wrap


def _list_row(fill: Callable[[Any, Any, int], None]) -> Callable[..., None]:
    """A UIList.draw_item that draws an item as one aligned row: `fill(row, item, index)`."""

    def draw_item(self: Any, context: Any, layout: Any, data: Any, item: Any, icon: Any, active_data: Any,
                  active_propname: str, index: int = 0) -> None:
        fill(layout.row(align=True), item, index)

    return draw_item


def _event_row(row: Any, item: Any, index: int) -> None:
    op = row.operator("physcodegym.jump_to_event", text="", icon="TIME", emboss=False)
    op.index = index
    row.label(
        text=f"{item.start_s:.2f}-{item.end_s:.2f} s  {item.name}",
        icon="KEYTYPE_KEYFRAME_VEC" if item.key else "NONE",
    )
    row.label(text=item.description)


class PCG_UL_events(bpy.types.UIList):
    draw_item = _list_row(_event_row)


def _finding_row(row: Any, item: Any, index: int) -> None:
    row.label(text=item.kind, icon="ERROR")
    row.label(text=item.objects or "-")
    val = f"{item.value:.4g} {item.unit}" if item.has_value else ""
    row.label(text=f"f{item.frames} {val}".strip())


class PCG_UL_findings(bpy.types.UIList):
    draw_item = _list_row(_finding_row)


def _role_row(row: Any, item: Any, index: int) -> None:
    row.prop(item, "name", text="", emboss=False)
    row.label(text=item.object_name or "(unassigned)", icon="OBJECT_DATA")
    row.prop(item, "core", text="core")


class PCG_UL_roles(bpy.types.UIList):
    draw_item = _list_row(_role_row)


def _criterion_row(row: Any, item: Any, index: int) -> None:
    row.prop(item, "name", text="", emboss=False)
    row.label(text=item.check)
    row.label(text=item.roles)


class PCG_UL_criteria(bpy.types.UIList):
    draw_item = _list_row(_criterion_row)


class PCG_PT_main(_Base, bpy.types.Panel):
    bl_label = "PhysCodeGym"
    bl_idname = "PCG_PT_main"

    def draw(self, context: Any) -> None:
        layout = self.layout
        busy = [j for j in jobs.JOBS.values() if j.running]
        layout.label(
            text=f"{len(busy)} background job(s) running" if busy else "idle", icon="SORTTIME" if busy else "CHECKMARK"
        )


class PCG_PT_task(_Sub, bpy.types.Panel):
    bl_label = "Task"

    @_drawer("tasks")
    def draw(layout: Any, st: Any, context: Any) -> None:
        row = layout.row(align=True)
        row.prop(st, "task_ref", text="")
        row.operator("physcodegym.load_task", text="Load", icon="IMPORT")
        if st.task_status:
            layout.label(text=st.task_status)
        if not st.task_id:
            return
        layout.label(text=f"{st.task_title} [{st.task_category}]", icon="INFO")
        box = layout.box()
        box.label(text="Object checklist")
        for it in st.checklist:
            box.label(text=f"{it.count} x {it.category}: {it.attributes}  ({it.roles})")
        layout.label(text="Events (click to jump)")
        layout.template_list("PCG_UL_events", "", st, "events", st, "events_index", rows=3)


class PCG_PT_reference(_Sub, bpy.types.Panel):
    bl_label = "Reference"
    bl_options = {"DEFAULT_CLOSED"}

    @_drawer()
    def draw(layout: Any, st: Any, context: Any) -> None:
        layout.prop(st, "sync_range")
        if st.reference_strip:
            layout.label(text=f"VSE strip: {st.reference_strip}", icon="SEQUENCE")
            layout.label(text=f"camera background: {st.reference_camera or 'no camera'}", icon="CAMERA_DATA")
            layout.label(text=f"frames {context.scene.frame_start}-{context.scene.frame_end}")
            layout.operator("physcodegym.remove_reference", icon="X")
        else:
            layout.label(text="load a task to show its reference video")


class PCG_PT_agent(_Sub, bpy.types.Panel):
    bl_label = "Agent"
    bl_options = {"DEFAULT_CLOSED"}

    @_drawer("agent")
    def draw(layout: Any, st: Any, context: Any) -> None:
        prefs = preferences.get(context)
        layout.label(text=f"{prefs.provider} / {prefs.model}", icon="PREFERENCES")
        var = preferences.api_key_env(prefs)
        if var and not os.environ.get(var):
            layout.label(text=f"{var} is not set", icon="ERROR")
        layout.prop(st, "run_dir")
        row = layout.row(align=True)
        row.operator("physcodegym.start_agent", icon="PLAY")
        row.operator("physcodegym.refresh_agent", text="", icon="FILE_REFRESH")
        row = layout.row(align=True)
        row.operator("physcodegym.render_preview", icon="RENDER_STILL")
        row.label(text=prefs.preview_engine.replace("BLENDER_", "").title())
        _job_row(layout, "agent")
        _job_row(layout, "preview")
        if st.agent_status:
            layout.label(text=st.agent_status)
        layout.label(text=f"launches {st.agent_launches}  tokens {st.agent_tokens}  cost ${st.agent_cost:.4f}")
        im = bpy.data.images.get("PCG Preview")
        if im is not None:
            layout.label(text=f"preview: {os.path.basename(st.agent_preview)}", icon="IMAGE_DATA")
            if not bpy.app.background:  # previews need a GPU context
                im.preview_ensure()
                layout.template_icon(icon_value=im.preview.icon_id, scale=8.0)
        if st.submission_blend:
            layout.operator("physcodegym.load_submission", icon="SCENE_DATA")


class PCG_PT_audit(_Sub, bpy.types.Panel):
    bl_label = "Audit"

    @_drawer()
    def draw(layout: Any, st: Any, context: Any) -> None:
        col = layout.column()
        ok, why = features.status("audit")
        col.enabled = ok
        row = col.row(align=True)
        row.operator("physcodegym.run_audit", icon="VIEWZOOM")
        sub = row.row()
        rok, rwhy = features.status("rubric_eval")
        sub.enabled = rok and bool(st.task_folder)
        sub.prop(st, "audit_with_rubric", text="Rubric")
        if not ok:
            layout.label(text=why, icon="ERROR")
        elif not rok:
            layout.label(text=f"S_val {rwhy}", icon="INFO")
        _job_row(layout, "audit")
        if st.audit_status:
            layout.label(text=st.audit_status)
        if st.s_val_set:
            layout.label(
                text=f"S_val = {st.s_val:.3f} ({sum(c.passed for c in st.criteria)}/{len(st.criteria)} criteria "
                "passed)",
                icon="CHECKMARK",
            )
        elif st.task_id and len(st.findings):
            layout.label(text="S_val: not computed (run with the rubric)")
        if len(st.findings) or st.audit_status:
            layout.template_list("PCG_UL_findings", "", st, "findings", st, "findings_index", rows=4)
            if 0 <= st.findings_index < len(st.findings):
                f = st.findings[st.findings_index]
                box = layout.box()
                box.label(text=f.message)
                box.label(text=f"objects: {f.objects}  frames: {f.frames}")
        for c in st.criteria:
            layout.label(
                text=f"{c.name}: {c.score:.2f}" if c.has_score else f"{c.name}: {c.state} {c.message}",
                icon="CHECKMARK" if c.passed else "X",
            )


class PCG_PT_counterfactual(_Sub, bpy.types.Panel):
    bl_label = "Counterfactual"
    bl_options = {"DEFAULT_CLOSED"}

    @_drawer()
    def draw(layout: Any, st: Any, context: Any) -> None:
        col = layout.column()
        ok, why = features.status("counterfactual")
        col.enabled = ok
        col.prop(st, "counterfactual_kind")
        col.prop(st, "counterfactual_params_json")
        col.prop(st, "counterfactual_from_frame")
        col.label(text=f"on: {', '.join(o.name for o in context.selected_objects) or '(nothing selected)'}")
        col.operator("physcodegym.run_counterfactual", icon="MOD_PHYSICS")
        if not ok:
            layout.label(text=why, icon="ERROR")
        _job_row(layout, "counterfactual")
        for text in (st.counterfactual_status, st.counterfactual_verdict):
            if text:
                layout.label(text=text)
        if st.counterfactual_copy_scene:
            layout.label(text=f"kept copy: scene '{st.counterfactual_copy_scene}'", icon="SCENE_DATA")
        if st.counterfactual_plot_image and bpy.data.images.get(st.counterfactual_plot_image) is not None:
            layout.label(text=f"plot: image '{st.counterfactual_plot_image}' (Image Editor)", icon="IMAGE_DATA")
        if st.counterfactual_result_json:
            layout.operator("physcodegym.clear_counterfactual", icon="X")


class PCG_PT_rubric(_Sub, bpy.types.Panel):
    bl_label = "Rubric"
    bl_options = {"DEFAULT_CLOSED"}

    @_drawer("tasks")
    def draw(layout: Any, st: Any, context: Any) -> None:
        row = layout.row(align=True)
        row.prop(st, "new_role_name", text="Role")
        row.operator("physcodegym.assign_role", text="Assign", icon="RESTRICT_SELECT_OFF")
        row = layout.row()
        row.template_list("PCG_UL_roles", "", st, "draft_roles", st, "draft_roles_index", rows=3)
        row.operator("physcodegym.remove_draft_item", text="", icon="REMOVE").what = "ROLE"
        box = layout.box()
        box.prop(st, "new_check")
        box.prop(st, "new_params_json")
        box.prop(st, "new_thresholds_json")
        r = box.row()
        r.prop(st, "new_weight")
        r.prop(st, "new_structural")
        box.operator("physcodegym.add_criterion", icon="ADD")
        box = layout.box()
        box.label(text="Counterfactual criterion (from the last run)")
        box.prop(st, "counterfactual_measure")
        r = box.row(align=True)
        r.prop(st, "counterfactual_expect_role")
        r.prop(st, "counterfactual_expect_op", text="")
        r.prop(st, "counterfactual_expect_value", text="")
        r = box.row(align=True)
        r.prop(st, "counterfactual_expect_at_s")
        r.prop(st, "counterfactual_relative")
        box.operator("physcodegym.add_counterfactual_criterion", icon="ADD")
        row = layout.row()
        row.template_list("PCG_UL_criteria", "", st, "draft_criteria", st, "draft_criteria_index", rows=3)
        row.operator("physcodegym.remove_draft_item", text="", icon="REMOVE").what = "CRITERION"
        if 0 <= st.draft_criteria_index < len(st.draft_criteria):
            c = st.draft_criteria[st.draft_criteria_index]
            b = layout.box()
            for p in ("description", "check", "roles", "params_json", "thresholds_json", "weight", "structural"):
                b.prop(c, p)
        row = layout.row(align=True)
        row.operator("physcodegym.validate_rubric", icon="CHECKMARK")
        row.operator("physcodegym.save_rubric", icon="FILE_TICK")
        if st.rubric_status:
            layout.label(text=st.rubric_status, icon="CHECKMARK" if st.rubric_valid else "ERROR")


class PCG_PT_scores(_Sub, bpy.types.Panel):
    bl_label = "Scores"
    bl_options = {"DEFAULT_CLOSED"}

    @_drawer("score")
    def draw(layout: Any, st: Any, context: Any) -> None:
        layout.prop(st, "score_candidate")
        row = layout.row(align=True)
        row.operator("physcodegym.run_score", icon="SORTSIZE")
        sub = row.row()
        ok, why = features.status("lpips")
        sub.enabled = ok
        sub.prop(st, "score_with_lpips")
        if not ok:
            layout.label(text=f"LPIPS {why}", icon="INFO")
        _job_row(layout, "score")
        if st.score_status:
            layout.label(text=st.score_status)
        for m in st.scores:
            if m.has_value:
                layout.label(text=f"{m.name}: {m.value:.3f}", icon="CHECKMARK")
            else:
                layout.label(text=f"{m.name}: missing ({m.state}) {m.reason}", icon="ERROR")
        if st.aggregates_json:
            try:
                agg = json.loads(st.aggregates_json)
            except json.JSONDecodeError:
                agg = {}
            cover = agg.get("coverage") or {}
            for k in ("S_vis", "S_phys", "S_tot"):
                v = agg.get(k)
                text = f"{k}: {v:.3f}" if isinstance(v, (int, float)) else f"{k}: none"
                if cover.get(k):  # the metrics it rests on: a partial aggregate is not mistaken for a full one
                    text += f" (of {', '.join(cover[k])})"
                layout.label(text=text)


CLASSES = (
    PCG_UL_events,
    PCG_UL_findings,
    PCG_UL_roles,
    PCG_UL_criteria,
    PCG_PT_main,
    PCG_PT_task,
    PCG_PT_reference,
    PCG_PT_agent,
    PCG_PT_audit,
    PCG_PT_counterfactual,
    PCG_PT_rubric,
    PCG_PT_scores,
)
