"""Find, load and validate task folders.

A task folder holds `task.json` (see schema.py), the reference video and, for shipped tasks, the
hidden ground truth (`truth.py`, trajectories). Errors name the file and the field path.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from physcodegym.core.errors import InputError, from_validation
from physcodegym.tasks.schema import FPS, FRAMES, BuildRecord, DraftTask, ImportedProvenance, Task
from pydantic import ValidationError

PACKS_DIR = Path(__file__).resolve().parent / "packs"
# generated members of the task families (`physcodegym tasks generate`); the hand-built packs stay in PACKS_DIR
LIBRARY_DIR = Path(__file__).resolve().parent / "library"
TASK_FILE = "task.json"
BUILD_FILE = "build.json"  # what a generated task's build measured, with its provenance (schema.BuildRecord)
FAMILY_FILE = "family.json"  # a generated family member: its family and seed


@dataclass(frozen=True)
class LoadedTask:
    task: Task
    folder: Path

    @property
    def id(self) -> str:
        return self.task.id

    @property
    def video_path(self) -> Path:
        return self.folder / self.task.video.file

    @property
    def truth_program(self) -> Path | None:
        return self.folder / self.task.truth.program if self.task.truth else None

    @property
    def truth_trajectories(self) -> Path | None:
        return self.folder / self.task.truth.trajectories if self.task.truth else None

    @property
    def truth_counterfactuals(self) -> Path | None:
        t = self.task.truth
        return self.folder / t.counterfactuals if t and t.counterfactuals else None


def task_roots() -> list[Path]:
    """Where task ids are looked up: $PHYSCODEGYM_TASKS (os.pathsep-separated), the shipped packs, the generated
    library."""
    roots = [Path(p) for p in os.environ.get("PHYSCODEGYM_TASKS", "").split(os.pathsep) if p]
    roots.extend([PACKS_DIR, LIBRARY_DIR])
    return roots


def parse_task(path: Path, draft: bool = False) -> Task:
    """Parse and validate `task.json`; raises InputError naming the file and the field. With draft, a
    skeleton whose checklist, events or criteria are still empty is accepted (as a DraftTask)."""
    if not path.is_file():
        raise InputError("task file not found", file=str(path))
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", file=str(path)) from e
    try:
        return (DraftTask if draft else Task).model_validate(raw)
    except ValidationError as e:
        raise from_validation(e, file=str(path)) from e


def video_info(path: Path) -> dict:
    """Measured fps / frame count / size of a video file (OpenCV; no bpy)."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            raise InputError("video cannot be opened (missing or unreadable)", file=str(path))
        return {
            "fps": float(cap.get(cv2.CAP_PROP_FPS)),
            "frames": int(cap.get(cv2.CAP_PROP_FRAME_COUNT)),
            "width": int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
            "height": int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        }
    finally:
        cap.release()


def validate_reference_video(loaded_task: LoadedTask) -> dict:
    vp = loaded_task.video_path
    if not vp.is_file():
        raise InputError("reference video is missing", file=str(vp), field="video.file")
    meta = video_info(vp)
    if abs(meta["fps"] - FPS) > 0.01 or meta["frames"] != FRAMES:
        raise InputError(
            f"reference video must be {FRAMES} frames at {FPS} fps; measured {meta['frames']} frames at "
            f"{meta['fps']:.3f} fps",
            file=str(vp),
            field="video",
            measured=meta,
        )
    return meta


def load_task(path_or_id: str | Path, check_media: bool = False, draft: bool = False) -> LoadedTask:
    """Load a task from a folder, a task.json path, or a task id found under task_roots() (draft: see parse_task)."""
    p = Path(path_or_id)
    if p.is_file() and p.name == TASK_FILE:
        folder = p.parent
    elif p.is_dir():
        folder = p
    else:
        folder = None
        for root in task_roots():
            cand = root / str(path_or_id)
            if (cand / TASK_FILE).is_file():
                folder = cand
                break
        if folder is None:
            raise InputError(f"no task folder or task id {str(path_or_id)!r} (searched "
                             f"{[str(r) for r in task_roots()]})", file=str(path_or_id))
    task = parse_task(folder / TASK_FILE, draft=draft)
    loaded_task = LoadedTask(task=task, folder=folder.resolve())
    if check_media:
        validate_reference_video(loaded_task)
    return loaded_task


def list_tasks(roots: list[Path] | None = None, drafts: bool = False) -> list[LoadedTask]:
    """All valid tasks under the roots (first root wins on duplicate ids); invalid ones raise. A skeleton
    still being annotated (an imported video) is not a task yet: left out, or with drafts, loaded as a draft."""
    seen: dict[str, LoadedTask] = {}
    for root in roots or task_roots():
        if not root.is_dir():
            continue
        for tf in sorted(root.glob(f"*/{TASK_FILE}")):
            try:
                loaded_task = load_task(tf.parent)
            except InputError:
                draft = load_task(tf.parent, draft=True)  # still invalid as a draft: raises like before
                if not drafts:
                    continue
                loaded_task = draft
            seen.setdefault(loaded_task.id, loaded_task)
    return sorted(seen.values(), key=lambda t: t.id)


NO_TRUTH = "the task has no truth scene (made from a real video: {file})"


def truth_status(loaded_task: LoadedTask) -> dict[str, dict]:
    """Each truth-dependent part of a task, `ok` with its file or `not_applicable` with the reason: a task
    imported from a real video has no truth.py, so no truth trajectories, no measured truth counterfactual
    responses and no criterion calibrated on them; its S_val rests on the task-independent audit and the rubric."""
    t = loaded_task.task
    if t.truth is None:
        why = NO_TRUTH.format(file=t.source.file if t.source else "no truth block")
        return {
            "truth_trajectories": {"state": "not_applicable", "reason": why + "; trajectory comparisons are not made"},
            "truth_counterfactuals": {"state": "not_applicable",
                                      "reason": why + "; no measured intervention responses"},
            "truth_criteria": {"state": "not_applicable",
                               "reason": why + "; criteria are judged on the candidate alone (audit + rubric checks)"},
        }
    out: dict[str, dict] = {}
    for key, p in (("truth_trajectories", loaded_task.truth_trajectories),
                   ("truth_counterfactuals", loaded_task.truth_counterfactuals)):
        out[key] = ({"state": "ok", "file": p.name} if p is not None and p.is_file()
                    else {"state": "not_applicable", "reason": f"{key}: file not shipped with this task"})
    out["truth_criteria"] = {"state": "ok", "reason": "shipped task: thresholds measured on its truth scene"}
    return out


def read_build_record(folder: Path) -> BuildRecord | None:
    """The folder's build.json validated (None when there is none); InputError naming the file and field."""
    path = Path(folder) / BUILD_FILE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", file=str(path)) from e
    try:
        return BuildRecord.model_validate(raw)
    except ValidationError as e:
        raise from_validation(e, file=str(path)) from e


def provenance(loaded_task: LoadedTask) -> dict:
    """Where the task's reference came from (SPEC §8), one document for every kind of task:

    generated: build.json's provenance (program hash, engine, samples, build seconds); a build.json written before
    provenance was recorded gives the program hash and seconds it has and says what is missing and why;
    imported: the original file, its URL and licence as the user stated them (task.json `source`);
    neither: kind `unknown` with the reason."""
    t = loaded_task.task
    if t.source is not None:
        s = t.source
        doc = ImportedProvenance(file=s.file, sha256=s.sha256, url=s.url, licence=s.licence).model_dump()
        missing = {k: f"not given when the clip was imported (tasks import --{k})"
                   for k in ("url", "licence") if doc[k] is None}
        if missing:
            doc["missing"] = missing
        return doc
    rec = read_build_record(loaded_task.folder)
    if rec is not None and rec.provenance is not None:
        return rec.provenance.model_dump()
    if rec is not None:
        sha = rec.program_sha256 or (t.truth.program_sha256 if t.truth else None)
        why = "built before build.json recorded the render (a rebuild records it)"
        return {"kind": "generated", "program_sha256": sha,
                "engine": None, "samples": None, "build_seconds": rec.build_seconds, "blender": None,
                "missing": {"engine": why, "samples": why, "blender": why}}
    return {"kind": "unknown", "reason": f"no {BUILD_FILE} and no imported source in {TASK_FILE}"}
