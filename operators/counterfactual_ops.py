"""Counterfactual on an independent copy: intervene on the selected objects, re-bake in child processes,
compare with the baseline; the user's scene and caches are only read (saved as a copy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import bpy
from physcodegym.core import launch
from physcodegym.operators.common import JobOperator, on_scene, role_name, save_copy, when_set, work_dir
from physcodegym.physcodegym_addon import jobs, plot, state

JOB = "counterfactual"
NO_OBJECT_KINDS = {"scale_gravity"}


def scene_mapping(st: Any, scene: Any, selected: list[Any]) -> tuple[list[str], dict[str, str]]:
    """Roles of the selected objects (draft roles when assigned, else derived names) and a {role: object}
    mapping that also tracks every simulated object for the plot."""
    by_obj = {r.object_name: r.name for r in st.draft_roles if r.object_name}
    mapping: dict[str, str] = {}
    roles: list[str] = []
    for o in selected:
        r = by_obj.get(o.name) or role_name(o.name)
        roles.append(r)
        mapping[r] = o.name
    for o in scene.objects:
        moving = o.rigid_body is not None or any(m.type in ("CLOTH", "SOFT_BODY") for m in o.modifiers)
        if moving and o.name not in mapping.values():
            r = by_obj.get(o.name) or role_name(o.name)
            if r not in mapping:
                mapping[r] = o.name
    return roles, mapping


def append_scene(blend: Path, scene_name: str, new_name: str) -> Any:
    """Append one scene from a saved file as a separate scene of this file (for inspection)."""
    with bpy.data.libraries.load(str(blend), link=False) as (src, dst):
        pick = scene_name if scene_name in src.scenes else (src.scenes[0] if src.scenes else None)
        dst.scenes = [pick] if pick else []
    if not dst.scenes or dst.scenes[0] is None:
        return None
    sc = dst.scenes[0]
    old = bpy.data.scenes.get(new_name)
    if old is not None and old != sc:
        bpy.data.scenes.remove(old)
    sc.name = new_name
    return sc


def apply_counterfactual(scene: Any, doc: dict[str, Any], d: Path) -> None:
    st = scene.physcodegym
    tracks = doc.pop("tracks", {}) if isinstance(doc, dict) else {}
    st.counterfactual_result_json = json.dumps(doc, default=str)
    state.TRAJECTORIES[scene.name] = tracks
    state.LAST_INTERVENTION[scene.name] = {"intervention": doc.get("intervention"), "mapping": doc.get("mapping")}
    rows = doc.get("trajectories") or {}
    devs = [f"{r}: {v.get('max_deviation_m', v.get('intervened', '?'))}" for r, v in rows.items()]
    st.counterfactual_verdict = ("took effect" if doc.get("took_effect") else "did NOT take effect") + (
        " | max deviation " + ", ".join(devs) if devs else "")
    img = plot.render_plot(tracks)
    im = plot.to_blender_image(img, f"PCG CF plot {scene.name}", str(d / "plot.png"))
    st.counterfactual_plot_image = im.name
    kept = doc.get("intervened_blend")
    if kept and Path(kept).is_file():
        kind = (doc.get("intervention") or {}).get("kind", "counterfactual")
        sc = append_scene(Path(kept), scene.name, f"PCG CF {kind} ({scene.name})")
        st.counterfactual_copy_scene = sc.name if sc is not None else ""
    from physcodegym.physcodegym_addon import witness

    witness.ensure_draw_handler()


class PCG_OT_run_counterfactual(JobOperator, bpy.types.Operator):
    """Run the chosen intervention on an independent copy of the scene and compare with the baseline"""

    bl_idname = "physcodegym.run_counterfactual"
    bl_label = "Run Counterfactual"
    job_name, busy, feature = JOB, "a counterfactual is running", "counterfactual"

    @classmethod
    def ready(cls, context: Any) -> bool:
        st = context.scene.physcodegym
        if st.counterfactual_kind not in NO_OBJECT_KINDS and not context.selected_objects:
            cls.poll_message_set("select the objects to intervene on")
            return False
        return True

    def execute(self, context: Any) -> set[str]:
        from physcodegym.tasks.schema import Intervention
        from pydantic import ValidationError

        scene = context.scene
        st = scene.physcodegym
        sel = [] if st.counterfactual_kind in NO_OBJECT_KINDS else sorted(
            context.selected_objects, key=lambda o: o.name)
        roles, mapping = scene_mapping(st, scene, sel)
        try:
            params = json.loads(st.counterfactual_params_json or "{}")
            iv = Intervention(kind=st.counterfactual_kind, roles=roles, params=params,
                              from_frame=st.counterfactual_from_frame or None)
        except (json.JSONDecodeError, ValidationError) as e:
            st.counterfactual_status = f"bad intervention: {e}"
            self.report({"ERROR"}, f"scene.physcodegym.counterfactual_params_json: {e}")
            return {"CANCELLED"}
        d = work_dir(context, "counterfactual")
        blend = save_copy(context, d / "scene.blend")
        st.counterfactual_objects = ",".join(o.name for o in sel)
        args = ["--blend", str(blend), "--intervention", iv.model_dump_json(), "--mapping", json.dumps(mapping),
                "--out", str(d)]

        def done(sc: Any, job: jobs.Job) -> None:
            if isinstance(job.doc, dict):
                apply_counterfactual(sc, job.doc, d)
            sc.physcodegym.counterfactual_status = (
                f"done in {job.seconds:.1f} s" if job.state == "done" else f"failed: {job.message}; "
                                                                           f"{(job.doc or {}).get('reason', '')}"
            )

        from physcodegym.sandbox import wall  # the scene may be a loaded submission: re-baked behind the wall

        try:
            argv, env = wall.job_command(
                launch.module_argv("physcodegym.physcodegym_addon.counterfactual_worker", args), d)
        except wall.IsolationUnavailable as e:
            st.counterfactual_status = str(e)
            return {"CANCELLED"}
        jobs.submit(jobs.Job(JOB, argv, on_done=on_scene(context, done), cwd=str(d), env=env))
        st.counterfactual_status = f"running {iv.kind.value} on {', '.join(roles) or 'the scene'}..."
        return {"FINISHED"}


class PCG_OT_clear_counterfactual(bpy.types.Operator):
    """Remove the kept counterfactual copy scene and its drawn trajectories"""

    bl_idname = "physcodegym.clear_counterfactual"
    bl_label = "Clear Counterfactual"
    poll = when_set("counterfactual_copy_scene", "counterfactual_result_json")

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        sc = bpy.data.scenes.get(st.counterfactual_copy_scene) if st.counterfactual_copy_scene else None
        if sc is not None and sc != context.scene:
            bpy.data.scenes.remove(sc)
        state.TRAJECTORIES.pop(context.scene.name, None)
        st.counterfactual_copy_scene = st.counterfactual_result_json = ""
        st.counterfactual_verdict = st.counterfactual_status = ""
        return {"FINISHED"}


CLASSES = (PCG_OT_run_counterfactual, PCG_OT_clear_counterfactual)
