"""Rubric authoring against the live scene: roles from selected objects, criteria from the check library,
counterfactual criteria from the intervention just run; validated by the task schema and saved atomically
into the task folder (the previous task.json is kept as a backup)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bpy
from physcodegym.core import atomic
from physcodegym.operators.common import Gated, NeedsTask, report_status, role_name
from physcodegym.physcodegym_addon import state

if TYPE_CHECKING:
    from physcodegym.tasks.schema import Task


def load_draft_from_task(st: Any, task: Task) -> None:
    """Start the draft from the task's own roles and criteria."""
    st.draft_roles.clear()
    for r in task.roles:
        d = st.draft_roles.add()
        d.name, d.description, d.core = r.name, r.description, r.core
        d.object_name = (r.name_hints[0] if r.name_hints else "") or (r.truth_object or "")
        d.extra_json = json.dumps(r.model_dump(mode="json", exclude={"name", "description", "core"}))
    st.draft_criteria.clear()
    for c in task.rubric.criteria:
        d = st.draft_criteria.add()
        d.name, d.description, d.check, d.roles = c.id, c.description, c.check, ", ".join(c.roles)
        d.params_json, d.thresholds_json = json.dumps(c.params), json.dumps(c.thresholds)
        d.weight, d.structural = c.weight, c.structural
        d.counterfactual_json = c.counterfactual.model_dump_json() if c.counterfactual else ""
        d.extra_json = json.dumps({k: v for k, v in c.model_dump(mode="json").items() if k in ("cap", "evidence")})


class DraftError(ValueError):
    """A draft field that is not valid JSON / not well-formed; names the draft item and field."""


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError as e:
        raise DraftError(f"{where}: invalid JSON ({e.msg} at column {e.colno})") from e


def draft_rubric_doc(st: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(roles, rubric) as JSON documents from the draft."""
    roles = []
    for i, r in enumerate(st.draft_roles):
        doc = _json(r.extra_json, f"draft_roles[{i}].extra_json")
        hints = [h for h in doc.get("name_hints", []) if h != r.object_name]
        if r.object_name:
            hints.insert(0, r.object_name)
        doc.update(name=r.name, description=r.description or r.name, core=r.core, name_hints=hints)
        roles.append(doc)
    criteria = []
    for i, c in enumerate(st.draft_criteria):
        doc = _json(c.extra_json, f"draft_criteria[{i}].extra_json")
        doc.update(
            id=c.name,
            description=c.description or c.name,
            weight=round(c.weight, 6),
            roles=[x.strip() for x in c.roles.split(",") if x.strip()],
            check=c.check,
            params=_json(c.params_json, f"draft_criteria[{i}].params_json"),
            thresholds=_json(c.thresholds_json, f"draft_criteria[{i}].thresholds_json"),
            structural=c.structural,
        )
        if c.counterfactual_json:
            doc["counterfactual"] = _json(c.counterfactual_json, f"draft_criteria[{i}].counterfactual_json")
        criteria.append(doc)
    return roles, {"criteria": criteria}


def validated_task(st: Any) -> tuple[Any, dict[str, Any]]:
    """The loaded task with the draft's roles and rubric, validated by the schema; raises InputError/DraftError."""
    from physcodegym.core.errors import InputError, from_validation
    from physcodegym.tasks.loader import TASK_FILE
    from physcodegym.tasks.schema import Task
    from pydantic import ValidationError

    if not st.task_folder:
        raise InputError("load a task first: a rubric is saved into its task folder", field="task")
    path = Path(st.task_folder) / TASK_FILE
    base = json.loads(path.read_text(encoding="utf-8"))
    roles, rubric = draft_rubric_doc(st)
    doc = dict(base)
    if st.checklist or st.events:  # annotated in the panel (an imported video's skeleton has none in the file)
        from physcodegym.operators.task_ops import annotations_doc

        doc["checklist"], doc["events"] = annotations_doc(st, base)
    doc["roles"] = roles
    doc["rubric"] = {**base.get("rubric", {}), **rubric}
    try:
        return Task.model_validate(doc), doc
    except ValidationError as e:
        raise from_validation(e, file=str(path)) from e


def _next_id(st: Any, stem: str) -> str:
    ids = {c.name for c in st.draft_criteria}
    i = 1
    while f"{stem}_{i}" in ids:
        i += 1
    return f"{stem}_{i}"


def _new_criterion(st: Any, stem: str) -> Any:
    """Append a criterion named `<stem>_<n>` (the first free n) to the draft and make it the active row."""
    c = st.draft_criteria.add()
    c.name = _next_id(st, stem)
    st.draft_criteria_index = len(st.draft_criteria) - 1
    return c


def _draft_changed(st: Any) -> set[str]:
    """An operator's result after it edited the draft: the draft is no longer validated (Validate / Save check it)."""
    st.rubric_valid = False
    return {"FINISHED"}


def _selected_roles(st: Any, context: Any) -> list[str]:
    by_obj = {r.object_name: r.name for r in st.draft_roles if r.object_name}
    return [by_obj[o.name] for o in sorted(context.selected_objects, key=lambda o: o.name) if o.name in by_obj]


class PCG_OT_assign_role(bpy.types.Operator):
    """Assign a role to each selected object (the role name field, or one derived from the object name)"""

    bl_idname = "physcodegym.assign_role"
    bl_label = "Assign Role"
    bl_options = {"REGISTER", "UNDO"}

    role: bpy.props.StringProperty(name="Role", options={"SKIP_SAVE"})
    core: bpy.props.BoolProperty(name="Core", default=True)

    @classmethod
    def poll(cls, context: Any) -> bool:
        if not context.selected_objects:
            cls.poll_message_set("select the objects that play the role")
            return False
        return True

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        base = self.role or st.new_role_name
        sel = sorted(context.selected_objects, key=lambda o: o.name)
        for i, o in enumerate(sel):
            name = role_name(base) if base else role_name(o.name)
            if base and len(sel) > 1:
                name = f"{name}_{i + 1}"
            for j in reversed(range(len(st.draft_roles))):  # an object plays one role
                if st.draft_roles[j].object_name == o.name and st.draft_roles[j].name != name:
                    st.draft_roles[j].object_name = ""
            r = next((r for r in st.draft_roles if r.name == name), None)
            if r is None:
                r = st.draft_roles.add()
                r.name, r.description = name, o.name
            r.object_name, r.core = o.name, self.core
        return _draft_changed(st)


class PCG_OT_remove_draft_item(bpy.types.Operator):
    """Remove the active role or criterion from the rubric draft"""

    bl_idname = "physcodegym.remove_draft_item"
    bl_label = "Remove"
    bl_options = {"REGISTER", "UNDO"}

    what: bpy.props.EnumProperty(items=[("ROLE", "Role", ""), ("CRITERION", "Criterion", "")])

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        coll, idx = (st.draft_roles, "draft_roles_index") if self.what == "ROLE" else (st.draft_criteria,
                                                                                       "draft_criteria_index")
        i = getattr(st, idx)
        if not (0 <= i < len(coll)):
            return {"CANCELLED"}
        coll.remove(i)
        setattr(st, idx, max(0, i - 1))
        return _draft_changed(st)


class _EditDraft(Gated):
    """Mixin of the operators that add to the rubric draft: undoable; they need the task library (not a loaded
    task)."""

    bl_options = {"REGISTER", "UNDO"}
    feature = "tasks"


class PCG_OT_add_criterion(_EditDraft, bpy.types.Operator):
    """Add a criterion from the check library for the selected objects' roles"""

    bl_idname = "physcodegym.add_criterion"
    bl_label = "Add Criterion"

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        try:
            params = _json(st.new_params_json, "new_params_json")
            thresholds = _json(st.new_thresholds_json, "new_thresholds_json")
        except DraftError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        roles = _selected_roles(st, context)
        if not roles and 0 <= st.draft_roles_index < len(st.draft_roles):
            roles = [st.draft_roles[st.draft_roles_index].name]
        c = _new_criterion(st, f"c_{st.new_check}")
        c.check, c.roles, c.weight, c.structural = st.new_check, ", ".join(roles), st.new_weight, st.new_structural
        c.description = f"{st.new_check.replace('_', ' ')} for {', '.join(roles) or 'the scene'}"
        c.params_json, c.thresholds_json = json.dumps(params), json.dumps(thresholds)
        return _draft_changed(st)


class PCG_OT_add_counterfactual_criterion(_EditDraft, bpy.types.Operator):
    """Add a counterfactual criterion from the intervention just run and the expected response fields"""

    bl_idname = "physcodegym.add_counterfactual_criterion"
    bl_label = "Add Counterfactual Criterion"

    @classmethod
    def ready(cls, context: Any) -> bool:
        if not _last_intervention(context.scene):
            cls.poll_message_set("run a counterfactual first")
            return False
        return True

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        last = _last_intervention(context.scene)
        iv, mapping = dict(last["intervention"]), last.get("mapping") or {}
        # the intervention's roles become rubric roles (assigned to their objects) if the draft lacks them
        known = {r.name for r in st.draft_roles}
        for r in iv.get("roles", []):
            if r not in known and r in mapping:
                d = st.draft_roles.add()
                d.name, d.description, d.object_name = r, mapping[r], mapping[r]
                known.add(r)
        role = st.counterfactual_expect_role or (iv.get("roles") or [next(iter(known), "")])[0]
        expected = {"measure": st.counterfactual_measure, "role": role, "op": st.counterfactual_expect_op,
                    "value": round(st.counterfactual_expect_value, 6),
                    "relative_to_baseline": st.counterfactual_relative}
        if st.counterfactual_expect_at_s > 0:
            expected["at_s"] = round(st.counterfactual_expect_at_s, 4)
        c = _new_criterion(st, f"cf_{iv.get('kind', 'x')}")
        c.check, c.roles, c.weight = "counterfactual", ", ".join(iv.get("roles", [])), st.new_weight
        c.description = (f"{iv.get('kind', '').replace('_', ' ')} -> {st.counterfactual_measure} of {role} "
                         f"{st.counterfactual_expect_op} {st.counterfactual_expect_value}")
        c.counterfactual_json = json.dumps({"intervention": iv, "expected": expected})
        return _draft_changed(st)


def _last_intervention(scene: Any) -> dict[str, Any] | None:
    last = state.LAST_INTERVENTION.get(scene.name)
    if last and last.get("intervention"):
        return last
    st = scene.physcodegym
    if st.counterfactual_result_json:
        try:
            doc = json.loads(st.counterfactual_result_json)
        except json.JSONDecodeError:
            return None
        if doc.get("intervention"):
            return {"intervention": doc["intervention"], "mapping": doc.get("mapping") or {}}
    return None


class _ChecksDraft:
    """Mixin of Validate and Save Rubric: execute() validates the draft (`validated_task`); a draft that does not
    validate is refused with "<refused>: <error>", a valid one goes to `accept(st, task)`."""

    refused = "invalid"

    def execute(self, context: Any) -> set[str]:
        from physcodegym.core.errors import InputError

        st = context.scene.physcodegym
        try:
            task, _doc = validated_task(st)
        except (InputError, DraftError) as e:
            st.rubric_valid = False
            return report_status(self, st, "rubric_status", f"{self.refused}: {e}", "ERROR")
        return self.accept(st, task)

    def accept(self, st: Any, task: Task) -> set[str]:
        raise NotImplementedError


class PCG_OT_validate_rubric(_ChecksDraft, Gated, bpy.types.Operator):
    """Validate the rubric draft against the task schema"""

    bl_idname = "physcodegym.validate_rubric"
    bl_label = "Validate Rubric"
    feature = "tasks"

    def accept(self, st: Any, task: Task) -> set[str]:
        st.rubric_valid = True
        st.rubric_status = f"valid: {len(task.roles)} roles, {len(task.rubric.criteria)} criteria"
        return {"FINISHED"}


class PCG_OT_save_rubric(_ChecksDraft, NeedsTask, bpy.types.Operator):
    """Validate the draft and save it into the task folder's task.json (previous file kept as a backup)"""

    bl_idname = "physcodegym.save_rubric"
    bl_label = "Save Rubric"
    refused = "not saved, invalid"

    def accept(self, st: Any, task: Task) -> set[str]:
        from physcodegym.tasks.loader import TASK_FILE

        path = Path(st.task_folder) / TASK_FILE
        backup = path.with_name(f"{TASK_FILE}.{time.strftime('%Y%m%d-%H%M%S')}.bak")
        shutil.copy2(path, backup)
        atomic.write_text(path, json.dumps(task.model_dump(mode="json"), indent=2) + "\n")
        st.rubric_valid, st.rubric_saved_path = True, str(path)
        return report_status(self, st, "rubric_status",
                             f"saved {len(task.rubric.criteria)} criteria to {path} (backup {backup.name})")


CLASSES = (
    PCG_OT_assign_role,
    PCG_OT_remove_draft_item,
    PCG_OT_add_criterion,
    PCG_OT_add_counterfactual_criterion,
    PCG_OT_validate_rubric,
    PCG_OT_save_rubric,
)
