"""Helpers the operators share: feature gating, work folders, saving an independent copy of the scene."""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path
from typing import Any

import bpy
from physcodegym.physcodegym_addon import features, preferences


def gate(cls: Any, context: Any, feature: str) -> bool:
    """poll() helper: False with the reason shown as the disabled button's tooltip."""
    ok, why = features.status(feature)
    if not ok:
        cls.poll_message_set(why)
    return ok


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
