"""Helpers the operators share: feature gating, the poll mixins (a loaded task, a background job), job callbacks
on the operator's scene, work folders, saving an independent copy of the scene."""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bpy
from physcodegym.physcodegym_addon import features, jobs, preferences


def gate(cls: Any, context: Any, feature: str) -> bool:
    """poll() helper: False with the reason shown as the disabled button's tooltip."""
    ok, why = features.status(feature)
    if not ok:
        cls.poll_message_set(why)
    return ok


def task_loaded(cls: Any, context: Any) -> bool:
    """poll() helper: a task is loaded, else "load a task first"."""
    if not context.scene.physcodegym.task_folder:
        cls.poll_message_set("load a task first")
        return False
    return True


class Gated:
    """Mixin: poll() needs the class's `feature` (`gate`; none: always) and then `ready(context)`. Mixins are not
    registered: the operators that use them are."""

    feature = ""

    @classmethod
    def poll(cls, context: Any) -> bool:
        return (not cls.feature or gate(cls, context, cls.feature)) and cls.ready(context)

    @classmethod
    def ready(cls, context: Any) -> bool:
        return True


class NeedsTask(Gated):
    """Mixin of the operators that work on the loaded task (annotation, saving the rubric): the task library and
    a loaded task."""

    feature = "tasks"
    ready = classmethod(task_loaded)


class JobOperator(Gated):
    """Mixin of an operator that starts the background job `job_name`: poll() is False with the message `busy`
    while that job runs (one at a time), else `Gated`'s."""

    job_name = ""
    busy = ""

    @classmethod
    def poll(cls, context: Any) -> bool:
        job = jobs.get(cls.job_name)
        if job is not None and job.running:
            cls.poll_message_set(cls.busy)
            return False
        return super().poll(context)


def when_set(*fields: str) -> classmethod:
    """A poll() that is True while any of the scene state's `fields` is set (a non-empty string or collection)."""
    return classmethod(lambda cls, context: any(getattr(context.scene.physcodegym, f) for f in fields))


def on_scene(context: Any, fn: Callable[[Any, jobs.Job], None]) -> Callable[[jobs.Job], None]:
    """A job callback (on_done / on_tick) that calls `fn(scene, job)` on the operator's scene, looked up by name
    when the job reports: nothing when the user has removed that scene meanwhile."""
    scene_name = context.scene.name

    def callback(job: jobs.Job) -> None:
        sc = bpy.data.scenes.get(scene_name)
        if sc is not None:
            fn(sc, job)

    return callback


def report_status(op: Any, st: Any, status: str, text: str, level: str = "INFO") -> set[str]:
    """An operator's result: `text` in the state's `status` field and reported at `level`; an ERROR cancels."""
    setattr(st, status, text)
    op.report({level}, text)
    return {"CANCELLED"} if level == "ERROR" else {"FINISHED"}


def work_dir(context: Any, kind: str) -> Path:
    """A fresh folder for one job: under the preferences' runs folder, else the temp folder."""
    prefs = preferences.get(context)
    root = (Path(bpy.path.abspath(prefs.runs_folder)) if prefs.runs_folder
            else Path(tempfile.gettempdir()) / "physcodegym-panel")
    d = root / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{int(time.time() * 1000) % 1000:03d}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def save_copy(context: Any, path: Path) -> Path:
    """Save the current file as an independent copy (the open file, its path and dirty state are unchanged)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with context.temp_override(scene=context.scene):
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, check_existing=False, compress=False)
    if not path.is_file():
        raise RuntimeError(f"saving a copy of the scene to {path} failed")
    return path


def role_name(obj_name: str) -> str:
    """A valid role name (schema pattern ^[a-z][a-z0-9_]*$) derived from an object name."""
    s = re.sub(r"[^a-z0-9_]+", "_", obj_name.lower()).strip("_")
    if not s or not s[0].isalpha():
        s = "obj_" + s
    return s


def env_for_tasks(context: Any) -> dict[str, str]:
    """Child environment extras: the preferences' task library on PHYSCODEGYM_TASKS."""
    import os

    prefs = preferences.get(context)
    lib = bpy.path.abspath(prefs.task_library) if prefs.task_library else ""
    extra = {}
    if lib:
        extra["PHYSCODEGYM_TASKS"] = os.pathsep.join(p for p in (lib, os.environ.get("PHYSCODEGYM_TASKS", "")) if p)
    return extra


def fmt_frames(frames: list[int]) -> str:
    """[12, 30] -> '12-30'; a longer list is shown as comma-separated runs."""
    if not frames:
        return ""
    if len(frames) == 2 and frames[1] >= frames[0]:
        return f"{frames[0]}-{frames[1]}" if frames[1] != frames[0] else str(frames[0])
    fr = sorted(set(int(f) for f in frames))
    runs, start, prev = [], fr[0], fr[0]
    for f in fr[1:]:
        if f == prev + 1:
            prev = f
            continue
        runs.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = f
    runs.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(runs)
