"""Per-scene panel state (`scene.physcodegym`): loaded task, findings, counterfactual, rubric draft, run, scores.

Everything here is plain data saved with the .blend (never an API key); the heavy results (trajectories,
witness geometry) live in `state.py` for the session and are re-derived from files when needed.
"""

from __future__ import annotations

from typing import Any

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)


def _check_items() -> list[tuple[str, str, str]]:
    try:
        from physcodegym.tasks.schema import CHECKS
    except ImportError:  # pydantic missing: rubric authoring is greyed out anyway
        return [("audit_clean", "audit_clean", "")]
    return [(k, k, ("params: " + ", ".join(v)) if v else "no required params") for k, v in CHECKS.items()]


def _intervention_items() -> list[tuple[str, str, str]]:
    try:
        from physcodegym.tasks.schema import InterventionKind
    except ImportError:
        return [("remove_object", "remove_object", "")]
    return [(k.value, k.value.replace("_", " "), k.value) for k in InterventionKind]


CHECK_ITEMS = _check_items()
MEASURES = (
    "displacement",
    "max_displacement",
    "final_height",
    "min_height",
    "path_deviation",
    "particles_inside",
    "vertex_displacement",
)
INTERVENTION_ITEMS = _intervention_items()


class PCG_ChecklistItem(bpy.types.PropertyGroup):
    category: StringProperty()
    count: IntProperty(default=1)
    attributes: StringProperty()
    roles: StringProperty()
    layout: StringProperty()


class PCG_Event(bpy.types.PropertyGroup):
    description: StringProperty()
    kind: StringProperty()
    roles: StringProperty()
    start_s: FloatProperty()
    end_s: FloatProperty()
    start_frame: IntProperty()
    end_frame: IntProperty()
    weight: FloatProperty()
    key: BoolProperty()


def _on_event_selected(self: Any, context: Any) -> None:
    """Clicking an event in the list jumps to its first frame."""
    if 0 <= self.events_index < len(self.events):
        context.scene.frame_set(self.events[self.events_index].start_frame)


def _on_finding_selected(self: Any, context: Any) -> None:
    from physcodegym.physcodegym_addon import witness

    witness.focus_finding(context, self.findings_index)


class PCG_Finding(bpy.types.PropertyGroup):
    kind: StringProperty()
    objects: StringProperty()  # comma-separated object names
    frames: StringProperty()  # compact frame list, e.g. "12-30"
    first_frame: IntProperty(default=-1)
    value: FloatProperty()
    has_value: BoolProperty()
    unit: StringProperty()
    message: StringProperty()
    evidence_json: StringProperty()  # the finding's evidence as JSON (drawn as its witness)


class PCG_CriterionResult(bpy.types.PropertyGroup):
    score: FloatProperty()
    has_score: BoolProperty()
    passed: BoolProperty()
    state: StringProperty()
    message: StringProperty()


class PCG_RoleDraft(bpy.types.PropertyGroup):
    description: StringProperty(name="Description")
    object_name: StringProperty(name="Object")
    extra_json: StringProperty(default="{}")  # fields the panel does not edit (hints, screen position), kept on save
    core: BoolProperty(name="Core", default=True, description="Core objects must move by simulation")


class PCG_CriterionDraft(bpy.types.PropertyGroup):
    description: StringProperty(name="Description")
    check: EnumProperty(name="Check", items=CHECK_ITEMS)
    roles: StringProperty(name="Roles", description="Comma-separated role names")
    params_json: StringProperty(name="Params", default="{}")
    thresholds_json: StringProperty(name="Thresholds", default="{}")
    weight: FloatProperty(name="Weight", default=1.0, min=0.001)
    structural: BoolProperty(name="Structural")
    counterfactual_json: StringProperty(default="")
    extra_json: StringProperty(default="{}")  # fields the panel does not edit (evidence, cap), kept on save


class PCG_Metric(bpy.types.PropertyGroup):
    value: FloatProperty()
    has_value: BoolProperty()
    state: StringProperty()
    reason: StringProperty()


class PCG_SceneState(bpy.types.PropertyGroup):
    # task
    task_ref: StringProperty(name="Task", description="Task id (from the library) or a task folder")
    task_folder: StringProperty()
    task_id: StringProperty()
    task_title: StringProperty()
    task_category: StringProperty()
    task_status: StringProperty()
    checklist: CollectionProperty(type=PCG_ChecklistItem)
    events: CollectionProperty(type=PCG_Event)
    events_index: IntProperty(update=_on_event_selected)
    # reference
    reference_strip: StringProperty()
    reference_clip: StringProperty()
    reference_camera: StringProperty()
    sync_range: BoolProperty(
        name="Sync frame range", default=True, description="Set the scene range and fps to the video's"
    )
    prev_use_sequencer: BoolProperty(default=True)
    # audit
    findings: CollectionProperty(type=PCG_Finding)
    findings_index: IntProperty(update=_on_finding_selected)
    audit_status: StringProperty()
    audit_with_rubric: BoolProperty(
        name="Evaluate rubric", default=True, description="Also evaluate the loaded task's rubric (S_val)"
    )
    criteria: CollectionProperty(type=PCG_CriterionResult)
    s_val: FloatProperty()
    s_val_set: BoolProperty()
    # counterfactual
    counterfactual_kind: EnumProperty(name="Intervention", items=INTERVENTION_ITEMS)
    counterfactual_params_json: StringProperty(
        name="Params", default="{}", description='JSON, e.g. {"offset": [0.5, 0, 0]} or {"factor": 0.5}'
    )
    counterfactual_from_frame: IntProperty(name="From frame", default=0, min=0, description="0: from the first frame")
    counterfactual_objects: StringProperty()
    counterfactual_status: StringProperty()
    counterfactual_verdict: StringProperty()
    counterfactual_result_json: StringProperty()
    counterfactual_copy_scene: StringProperty()
    counterfactual_measure: EnumProperty(
        name="Measure",
        items=[(m, m.replace("_", " "), "") for m in MEASURES],
        default="path_deviation",
        description="What the expected response measures on the intervened trajectories",
    )
    counterfactual_expect_role: StringProperty(
        name="Role", description="Role whose response is measured (default: first intervened role)"
    )
    counterfactual_expect_op: EnumProperty(
        name="Op", items=[(o, o, "") for o in ("gt", "ge", "lt", "le")], default="gt"
    )
    counterfactual_expect_value: FloatProperty(name="Value", default=0.1)
    counterfactual_expect_at_s: FloatProperty(
        name="At (s)", default=0.0, min=0.0, max=8.0, description="0: the last frame"
    )
    counterfactual_relative: BoolProperty(name="Relative to baseline")
    counterfactual_plot_image: StringProperty()
    # rubric authoring
    draft_roles: CollectionProperty(type=PCG_RoleDraft)
    draft_roles_index: IntProperty()
    draft_criteria: CollectionProperty(type=PCG_CriterionDraft)
    draft_criteria_index: IntProperty()
    new_role_name: StringProperty(name="Role", default="")
    new_check: EnumProperty(name="Check", items=CHECK_ITEMS)
    new_params_json: StringProperty(name="Params", default="{}")
    new_thresholds_json: StringProperty(name="Thresholds", default="{}")
    new_weight: FloatProperty(name="Weight", default=1.0, min=0.001)
    new_structural: BoolProperty(name="Structural")
    rubric_status: StringProperty()
    rubric_valid: BoolProperty()
    rubric_saved_path: StringProperty()
    # agent
    run_dir: StringProperty(name="Run folder", subtype="DIR_PATH")
    agent_status: StringProperty()
    agent_launches: IntProperty()
    agent_tokens: IntProperty()
    agent_cost: FloatProperty()
    agent_preview: StringProperty()
    submission_blend: StringProperty()
    submission_scene: StringProperty()
    # scores
    scores: CollectionProperty(type=PCG_Metric)
    score_candidate: StringProperty(
        name="Candidate", subtype="DIR_PATH", description="Run folder or video (default: the run folder)"
    )
    score_with_lpips: BoolProperty(name="LPIPS", default=False, description="Needs torch + lpips")
    score_status: StringProperty()
    aggregates_json: StringProperty()


CLASSES = (
    PCG_ChecklistItem,
    PCG_Event,
    PCG_Finding,
    PCG_CriterionResult,
    PCG_RoleDraft,
    PCG_CriterionDraft,
    PCG_Metric,
    PCG_SceneState,
)


def register() -> None:
    bpy.types.Scene.physcodegym = PointerProperty(type=PCG_SceneState)


def unregister() -> None:
    if hasattr(bpy.types.Scene, "physcodegym"):
        del bpy.types.Scene.physcodegym
