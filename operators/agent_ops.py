"""Agent runs and scoring from the panel: `physcodegym agent` / `physcodegym score` in child processes.

Progress (launches, tokens, cost, the latest preview image) is read from the run folder
(`agent.run_files.read_progress`) on every timer tick, so the UI stays responsive and a run can be stopped
at any time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import bpy
from physcodegym.agent import run_files
from physcodegym.core import launch
from physcodegym.operators.common import JobOperator, env_for_tasks, on_scene, task_loaded, when_set, work_dir
from physcodegym.physcodegym_addon import features, jobs, preferences

AGENT_JOB = "agent"
SCORE_JOB = "score"
PREVIEW_JOB = "preview"
PROVIDER_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def apply_progress(scene: Any, run_dir: Path) -> None:
    st = scene.physcodegym
    pr = run_files.read_progress(run_dir)
    st.agent_launches, st.agent_tokens, st.agent_cost = pr["launches"], pr["tokens"], pr["cost_usd"]
    if pr["submission_blend"]:
        st.submission_blend = pr["submission_blend"]
    if pr["preview"] and pr["preview"] != st.agent_preview:
        st.agent_preview = pr["preview"]
        name = "PCG Preview"
        im = bpy.data.images.get(name)
        if im is None:
            im = bpy.data.images.load(pr["preview"])
            im.name = name
        else:
            im.filepath = pr["preview"]
            im.reload()


class PCG_OT_start_agent(JobOperator, bpy.types.Operator):
    """Start an agent run on the loaded task in a background process (the UI stays responsive)"""

    bl_idname = "physcodegym.start_agent"
    bl_label = "Start Agent"
    job_name, busy, feature = AGENT_JOB, "an agent run is in progress", "agent"
    ready = classmethod(task_loaded)

    def execute(self, context: Any) -> set[str]:
        prefs = preferences.get(context)
        st = context.scene.physcodegym
        key_env = preferences.api_key_env(prefs)
        if key_env and not os.environ.get(key_env):
            self.report({"WARNING"}, f"environment variable {key_env} is not set; the provider may refuse the run")
        run_dir = Path(bpy.path.abspath(st.run_dir)) if st.run_dir else work_dir(context, f"agent-{st.task_id}")
        run_dir.mkdir(parents=True, exist_ok=True)
        st.run_dir = str(run_dir)
        args = ["agent", "--task", st.task_folder, "--provider", prefs.provider, "--model", prefs.model, "--out",
                str(run_dir)]
        if prefs.base_url:
            args += ["--base-url", prefs.base_url]

        def on_tick(sc: Any, job: jobs.Job) -> None:
            apply_progress(sc, run_dir)
            last = job.log[-1].strip()[-80:] if job.log else ""
            sc.physcodegym.agent_status = f"running ({job.seconds:.0f} s) {last}"

        def done(sc: Any, job: jobs.Job) -> None:
            apply_progress(sc, run_dir)
            status = run_files.read_progress(run_dir)["status"]
            sc.physcodegym.agent_status = f"{job.state}: {status or job.message}"

        extra = env_for_tasks(context)
        default_env = PROVIDER_KEY_ENV.get(prefs.provider)
        if key_env and default_env and key_env != default_env and os.environ.get(key_env):
            extra[default_env] = os.environ[key_env]  # the provider reads its default variable; passed, never stored
        jobs.submit(jobs.Job(AGENT_JOB, launch.cli_argv(args), on_done=on_scene(context, done),
                             on_tick=on_scene(context, on_tick), cwd=str(run_dir), env=launch.child_env(extra)))
        st.agent_status = "starting..."
        return {"FINISHED"}


class PCG_OT_refresh_agent(bpy.types.Operator):
    """Re-read the run folder's progress (launches, tokens, cost, latest preview)"""

    bl_idname = "physcodegym.refresh_agent"
    bl_label = "Refresh Run"
    poll = when_set("run_dir")

    def execute(self, context: Any) -> set[str]:
        apply_progress(context.scene, Path(bpy.path.abspath(context.scene.physcodegym.run_dir)))
        return {"FINISHED"}


class PCG_OT_load_submission(bpy.types.Operator):
    """Append the submission's native scene (scene.blend) as a separate scene and make it current, for audit"""

    bl_idname = "physcodegym.load_submission"
    bl_label = "Load Submission Scene"

    filepath: bpy.props.StringProperty(subtype="FILE_PATH", options={"SKIP_SAVE"})

    def execute(self, context: Any) -> set[str]:
        from physcodegym.operators.counterfactual_ops import append_scene

        st = context.scene.physcodegym
        path = Path(bpy.path.abspath(self.filepath or st.submission_blend))
        if not path.is_file():
            self.report({"ERROR"}, f"no native scene at {path}")
            return {"CANCELLED"}
        with bpy.data.libraries.load(str(path)) as (src, _dst):
            first = src.scenes[0] if src.scenes else None
        if first is None:
            self.report({"ERROR"}, f"{path} holds no scene")
            return {"CANCELLED"}
        src_state = {k: getattr(st, k) for k in ("task_ref", "task_folder", "run_dir")}
        sc = append_scene(path, first, f"PCG Submission ({path.parent.name})")
        if sc is None:
            self.report({"ERROR"}, f"could not append a scene from {path}")
            return {"CANCELLED"}
        for k, v in src_state.items():
            setattr(sc.physcodegym, k, v)
        sc.physcodegym.submission_blend = str(path)
        if st.task_folder:
            from physcodegym.operators.task_ops import fill_task, resolve_task

            fill_task(sc.physcodegym, resolve_task(context, st.task_folder), sc)
        context.window.scene = sc
        st.submission_scene = sc.name
        return {"FINISHED"}


def apply_scores(scene: Any, doc: Any) -> None:
    """Show a score document (`evaluator.score_document.ScoreDocument`, validated by the caller) in the Scores
    panel: each metric's value, or its state and the reason it has none, and the aggregates with their coverage."""
    st = scene.physcodegym
    st.scores.clear()
    for name in ("S_ssim", "S_lpips", "S_obj", "S_evt", "S_mot", "S_val"):
        m = st.scores.add()
        m.name = name
        v = doc.metrics.get(name)
        status = doc.states.get(name)
        m.has_value = v is not None
        m.value = float(v) if v is not None else 0.0
        m.state = str(status.state) if status is not None else ("ok" if v is not None else "missing")
        m.reason = str(doc.missing.get(name) or (status.reason if status is not None else "") or "")
    agg = {"S_vis": doc.S_vis, "S_phys": doc.S_phys, "S_tot": doc.S_tot, "coverage": doc.coverage.model_dump()}
    st.aggregates_json = json.dumps(agg, default=str)


class PCG_OT_run_score(JobOperator, bpy.types.Operator):
    """Score a candidate (run folder or video) against the loaded task: six metrics and the aggregates"""

    bl_idname = "physcodegym.run_score"
    bl_label = "Score"
    job_name, busy, feature = SCORE_JOB, "scoring is running", "score"

    @classmethod
    def ready(cls, context: Any) -> bool:
        if not task_loaded(cls, context):
            return False
        st = context.scene.physcodegym
        if not (st.score_candidate or st.run_dir):
            cls.poll_message_set("set a candidate run folder")
            return False
        return True

    def execute(self, context: Any) -> set[str]:
        st = context.scene.physcodegym
        cand = bpy.path.abspath(st.score_candidate or st.run_dir)
        metrics = ["ssim", "motion", "obj", "evt", "val"]
        if st.score_with_lpips and features.available("lpips"):
            metrics.insert(1, "lpips")
        args = ["score", "--task", st.task_folder, "--candidate", cand, "--metrics", ",".join(metrics), "--json"]

        def done(sc: Any, job: jobs.Job) -> None:
            if job.state != "done":
                sc.physcodegym.score_status = f"score failed: {job.message}"
                return
            from physcodegym.evaluator.score_document import read_score

            try:  # the child's JSON is believed only as a valid score document
                doc = read_score(job.doc, "the score job's output")
            except ValueError as e:
                sc.physcodegym.score_status = f"score failed: {e}"
                return
            apply_scores(sc, doc)
            sc.physcodegym.score_status = f"scored in {job.seconds:.1f} s"

        jobs.submit(jobs.Job(SCORE_JOB, launch.cli_argv(args), on_done=on_scene(context, done),
                             env=launch.child_env(env_for_tasks(context))))
        st.score_status = "scoring..."
        return {"FINISHED"}


class PCG_OT_render_preview(JobOperator, bpy.types.Operator):
    """Render the current frame at 640x360 with the preview engine of the preferences (in a background process)"""

    bl_idname = "physcodegym.render_preview"
    bl_label = "Render Preview Frame"
    job_name, busy = PREVIEW_JOB, "a preview is rendering"

    @classmethod
    def ready(cls, context: Any) -> bool:
        if context.scene.camera is None:
            cls.poll_message_set("the scene has no camera")
            return False
        return True

    def execute(self, context: Any) -> set[str]:
        from physcodegym.operators.common import save_copy

        prefs = preferences.get(context)
        d = work_dir(context, "preview")
        blend = save_copy(context, d / "scene.blend")
        png = d / f"frame_{context.scene.frame_current:04d}.png"

        def done(sc: Any, job: jobs.Job) -> None:
            if job.state == "done" and png.is_file():
                im = bpy.data.images.get("PCG Frame Preview")
                if im is not None:
                    bpy.data.images.remove(im)
                im = bpy.data.images.load(str(png))
                im.name = "PCG Frame Preview"
                sc.physcodegym.agent_preview = str(png)
            sc.physcodegym.agent_status = f"preview ({prefs.preview_engine}): {job.message}"

        args = [str(blend), str(context.scene.frame_current), prefs.preview_engine, str(png)]
        from physcodegym.sandbox import wall  # the scene may be a loaded submission: rendered behind the wall

        try:
            argv, env = wall.job_command(launch.module_argv("physcodegym.physcodegym_addon.preview_worker", args), d)
        except wall.IsolationUnavailable as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        jobs.submit(jobs.Job(PREVIEW_JOB, argv, on_done=on_scene(context, done), cwd=str(d), env=env))
        return {"FINISHED"}


CLASSES = (PCG_OT_start_agent, PCG_OT_refresh_agent, PCG_OT_load_submission, PCG_OT_run_score, PCG_OT_render_preview)
