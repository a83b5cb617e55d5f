"""Audit the live scene: an independent copy is saved and audited by the headless `physcodegym audit` in a
child process (bakes there if needed), so the UI never blocks and the user's caches are never touched."""

from __future__ import annotations

import json
from typing import Any

import bpy
from physcodegym.core import launch
from physcodegym.operators.common import JobOperator, env_for_tasks, fmt_frames, on_scene, save_copy, when_set, work_dir
from physcodegym.physcodegym_addon import features, jobs, state

JOB = "audit"


def apply_audit(scene: Any, doc: dict[str, Any]) -> None:
    """Findings, criteria and S_val of an audit JSON document into the scene state."""
    st = scene.physcodegym
    st.findings.clear()
    for f in doc.get("findings", []):
        it = st.findings.add()
        it.name = f.get("kind", "?")
        it.kind = f.get("kind", "?")
        it.objects = ",".join(f.get("objects") or [])
        fr = [int(x) for x in f.get("frames") or []]
        it.frames = fmt_frames(fr)
        it.first_frame = min(fr) if fr else -1
        v = f.get("value")
        it.has_value = v is not None
        it.value = float(v) if v is not None else 0.0
        it.unit = f.get("unit") or ""
        it.message = f.get("message", "")
        it.evidence_json = json.dumps(f.get("evidence") or {}, default=str)
    st.criteria.clear()
    for c in doc.get("criteria") or []:
        it = st.criteria.add()
        it.name = str(c.get("id", "?"))
        sc = c.get("score")
        it.has_score = sc is not None
        it.score = float(sc) if sc is not None else 0.0
        it.passed = bool(c.get("passed"))
        it.state = str(c.get("state", ""))
        it.message = str(c.get("reason") or c.get("message") or "")
    sv = doc.get("S_val")
    st.s_val_set = sv is not None
    st.s_val = float(sv) if sv is not None else 0.0
    state.WITNESS.pop(scene.name, None)


class PCG_OT_run_audit(JobOperator, bpy.types.Operator):
    """Audit the current scene for physical-validity findings (in a background process on a copy)"""

    bl_idname = "physcodegym.run_audit"
    bl_label = "Run Audit"
    job_name, busy, feature = JOB, "an audit is running", "audit"

    def execute(self, context: Any) -> set[str]:
        scene = context.scene
        st = scene.physcodegym
        d = work_dir(context, "audit")
        blend = save_copy(context, d / "scene.blend")
        args = ["audit", str(blend), "--json"]
        if st.audit_with_rubric and st.task_folder and features.available("rubric_eval"):
            args += ["--task", st.task_folder]

        def done(sc: Any, job: jobs.Job) -> None:
            s = sc.physcodegym
            if job.state == "done" and isinstance(job.doc, dict):
                apply_audit(sc, job.doc)
                (d / "audit.json").write_text(json.dumps(job.doc, default=str))
                s.audit_status = f"{len(s.findings)} findings ({job.seconds:.1f} s)"
                if job.doc.get("status") not in (None, "ok"):  # an audit that stopped is not a clean one
                    why = job.doc.get("S_val_reason") or job.doc.get("reason") or ""
                    s.audit_status = f"audit {job.doc['status']}: {why}"[:400]
            else:
                s.audit_status = f"audit failed: {job.message}"

        job = jobs.Job(JOB, launch.cli_argv(args), on_done=on_scene(context, done), cwd=str(d),
                       env=launch.child_env(env_for_tasks(context)))
        job.total = scene.frame_end - scene.frame_start + 1
        jobs.submit(job)
        st.audit_status = "auditing..."
        return {"FINISHED"}


class PCG_OT_cancel_job(bpy.types.Operator):
    """Stop a running background job (audit, counterfactual, agent, score)"""

    bl_idname = "physcodegym.cancel_job"
    bl_label = "Stop"

    job: bpy.props.StringProperty()

    @classmethod
    def poll(cls, context: Any) -> bool:
        return any(j.running for j in jobs.JOBS.values())

    def execute(self, context: Any) -> set[str]:
        if not jobs.cancel(self.job):
            self.report({"WARNING"}, f"no running job {self.job!r}")
            return {"CANCELLED"}
        return {"FINISHED"}


class PCG_OT_select_finding(bpy.types.Operator):
    """Select a finding: its objects, its first frame and its witness in the viewport"""

    bl_idname = "physcodegym.select_finding"
    bl_label = "Select Finding"

    index: bpy.props.IntProperty(default=0)
    poll = when_set("findings")

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        if not (0 <= self.index < len(st.findings)):
            self.report({"ERROR"}, f"no finding {self.index}")
            return {"CANCELLED"}
        st.findings_index = self.index  # its update callback selects, jumps and sets the witness
        return {"FINISHED"}


CLASSES = (PCG_OT_run_audit, PCG_OT_cancel_job, PCG_OT_select_finding)
