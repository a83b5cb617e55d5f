"""Units of a batch: one (configuration, task, attempt) submission, run in isolation and scored.

Submissions layout: `SUBMISSIONS/<config>/<task_id>/scene.py` (attempt "1"), optionally further attempts as
`SUBMISSIONS/<config>/<task_id>/attempts/<n>/scene.py`, and `SUBMISSIONS/<config>/config.json` (model,
harness, cost_usd_per_task, tokens_per_task, timeout_s, timeout_s_by_task, memory_mb, ...). `execute_unit` is a plain
top-level function of JSON-able input and output, so a process pool and a Ray cluster run the same code.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import time
import traceback
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from physcodegym.core import atomic
from physcodegym.core.errors import InputError
from physcodegym.core.hashing import sha256_file

if TYPE_CHECKING:
    from physcodegym.evaluator.score_document import ScoreDocument

CONFIG_KEYS = {"model", "harness", "label", "cost_usd_per_task", "tokens_per_task", "timeout_s", "timeout_s_by_task",
               "memory_mb", "notes",
               "effort", "provider"}


@dataclass
class UnitSpec:
    config: str
    task_id: str
    attempt: str
    program: str
    task_folder: str
    unit_dir: str
    program_sha256: str
    task_sha256: str
    timeout_s: float = 1800.0
    memory_mb: int | None = 8192
    expected_frames: int = 240
    metrics: list[str] | None = None
    judge: dict | None = None
    extra: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.config, self.task_id, self.attempt)

    def to_dict(self) -> dict:
        return asdict(self)


def task_hash(lt: Any) -> str:
    """Hash of what scoring depends on: task.json and the reference video (if present)."""
    h = hashlib.sha256()
    h.update((lt.folder / "task.json").read_bytes())
    vp = lt.video_path
    if vp.is_file():
        h.update(sha256_file(vp).encode())
    return h.hexdigest()


def load_config(cfg_dir: Path) -> dict:
    p = cfg_dir / "config.json"
    if not p.is_file():
        return {}
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON at line {e.lineno}: {e.msg}", file=str(p)) from e
    if not isinstance(doc, dict):
        raise InputError("must be a JSON object", file=str(p))
    for k in ("timeout_s", "cost_usd_per_task", "tokens_per_task"):
        if k in doc and doc[k] is not None and not isinstance(doc[k], int | float):
            raise InputError("must be a number", file=str(p), field=k)
    if "timeout_s" in doc and doc["timeout_s"] is not None and doc["timeout_s"] <= 0:
        raise InputError("must be positive", file=str(p), field="timeout_s")
    by_task = doc.get("timeout_s_by_task")
    if by_task is not None and (not isinstance(by_task, dict)
                                or not all(isinstance(v, int | float) and v > 0 for v in by_task.values())):
        raise InputError("must map task ids to positive seconds", file=str(p), field="timeout_s_by_task")
    if "memory_mb" in doc and doc["memory_mb"] is not None and not isinstance(doc["memory_mb"], int):
        raise InputError("must be an integer (MiB)", file=str(p), field="memory_mb")
    return doc


def read_task_selection(path: Path) -> list[str]:
    """Task ids from a selection file: one id per line (`#` comments, blank lines ignored), or a task-set
    manifest JSON (`{"tasks": [{"id": ...}, ...]}`), so a subset is a file that can be reviewed and versioned."""
    path = Path(path)
    if not path.is_file():
        raise InputError("task selection file not found", file=str(path), field="--tasks-from")
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON at line {e.lineno}: {e.msg}", file=str(path), field="--tasks-from") from e
        entries = doc.get("tasks") if isinstance(doc, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(t, dict) and isinstance(t.get("id"), str) for t in entries):
            raise InputError("a manifest needs a 'tasks' list of objects with an 'id'", file=str(path), field="tasks")
        ids = [t["id"] for t in entries]
    else:
        ids = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
        ids = [i for i in ids if i]
    if not ids:
        raise InputError("selects no task", file=str(path), field="--tasks-from")
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InputError(f"task id(s) listed twice: {', '.join(dup)}", file=str(path), field="--tasks-from")
    return ids


def task_set(tasks_dir: Path) -> dict[str, Any]:
    """The task set and version these results are on (SPEC §8: a score is only comparable on the same set).

    The shipped folder (tasks/packs, tasks/library) is named by the versioned manifest; `stale` lists packs whose
    content no longer matches it. Any other folder is a custom set named by its folder, its version the hash of
    all its tasks' hashes (a changed task changes it; a selection of its tasks does not).
    """
    from physcodegym.tasks import manifest
    from physcodegym.tasks.loader import LIBRARY_DIR, PACKS_DIR, list_tasks

    root = Path(tasks_dir).resolve()
    if root in (PACKS_DIR.resolve(), LIBRARY_DIR.resolve(), manifest.TASKS_DIR):
        doc = dict(manifest.current())
        doc["stale"] = manifest.check() if doc.get("version") else ["no manifest"]
        doc["source"] = "manifest"
        return doc
    loaded = sorted(list_tasks([root]), key=lambda lt: lt.id)
    h = hashlib.sha256("".join(f"{lt.id}:{task_hash(lt)}\n" for lt in loaded).encode())
    return {"set": f"custom:{root.name}", "version": h.hexdigest()[:12], "sha256": h.hexdigest(),
            "n_tasks": len(loaded),
            "stale": [], "source": str(root)}


def discover(tasks_dir: Path, submissions_dir: Path, results_dir: Path, *, timeout_s: float | None = None,
             memory_mb: int | None = 8192, expected_frames: int = 240, metrics: list[str] | None = None,
             judge: dict | None = None, configs: list[str] | None = None,
             task_ids: list[str] | None = None) -> tuple[list[UnitSpec], list[dict], dict]:
    """All units, the batch's task list (the accounting denominator) and per-config metadata.

    `task_ids` selects a subset of the folder's tasks (in the folder's order); an id the folder lacks is bad input,
    not a silently smaller denominator.
    """
    from physcodegym.tasks.loader import list_tasks

    if not tasks_dir.is_dir():
        raise InputError("tasks folder not found", file=str(tasks_dir), field="--tasks")
    if not submissions_dir.is_dir():
        raise InputError("submissions folder not found", file=str(submissions_dir), field="--submissions")
    loaded = list_tasks([tasks_dir])
    if not loaded:
        raise InputError("no tasks (no */task.json) in this folder", file=str(tasks_dir), field="--tasks")
    if task_ids is not None:
        unknown = sorted(set(task_ids) - {lt.id for lt in loaded})
        if unknown:
            raise InputError(f"selected task(s) not in {tasks_dir}: {', '.join(unknown)}", field="--tasks-from")
        loaded = [lt for lt in loaded if lt.id in set(task_ids)]
    tasks = []
    by_id = {}
    for lt in loaded:
        th = task_hash(lt)
        by_id[lt.id] = (lt, th)
        tasks.append({"id": lt.id, "category": lt.task.category.value,
                      "subcategory": lt.task.subcategory.value if lt.task.subcategory else None,
                      "title": lt.task.title, "folder": str(lt.folder), "video": str(lt.video_path), "sha256": th})
    units: list[UnitSpec] = []
    cfg_meta: dict[str, dict] = {}
    for cfg_dir in sorted(p for p in submissions_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if configs and cfg_dir.name not in configs:
            continue
        cfg = load_config(cfg_dir)
        cfg_meta[cfg_dir.name] = cfg
        for task_dir in sorted(p for p in cfg_dir.iterdir() if p.is_dir()):
            if task_dir.name not in by_id:
                continue  # a submission for a task outside this batch's task set
            lt, th = by_id[task_dir.name]
            attempts: list[tuple[str, Path]] = []
            if (task_dir / "scene.py").is_file():
                attempts.append(("1", task_dir / "scene.py"))
            adir = task_dir / "attempts"
            if adir.is_dir():
                for a in sorted(adir.iterdir(), key=lambda p: (len(p.name), p.name)):
                    if (a / "scene.py").is_file():
                        attempts.append((a.name, a / "scene.py"))
            for att, prog in attempts:
                units.append(UnitSpec(
                    config=cfg_dir.name, task_id=lt.id, attempt=att, program=str(prog.resolve()),
                    task_folder=str(lt.folder),
                    unit_dir=str((results_dir / "units" / cfg_dir.name / lt.id / att).resolve()),
                    program_sha256=sha256_file(prog), task_sha256=th,
                    # a harness may budget single tasks differently (timeout_s_by_task); --timeout applies otherwise
                    timeout_s=float((cfg.get("timeout_s_by_task") or {}).get(lt.id) or cfg.get("timeout_s") or timeout_s
                                    or 1800.0),
                    memory_mb=cfg.get("memory_mb", memory_mb), expected_frames=expected_frames, metrics=metrics,
                    judge=judge,
                ))
    return units, tasks, cfg_meta


def _score(task_folder: str, run_dir: Path, metrics: list[str] | None, judge: dict | None) -> ScoreDocument:
    from physcodegym.tasks.loader import load_task

    try:
        from physcodegym.evaluator.scoring import score_run
    except ImportError as e:
        raise RuntimeError(f"physcodegym.evaluator.scoring.score_run is not available: {e}") from e
    return score_run(load_task(task_folder), run_dir, metrics=metrics, judge=judge)


def execute_unit(spec_d: dict) -> dict:
    """Run one unit from scratch and return its results row; never raises (faults become the row's reason)."""
    from physcodegym.sandbox.runner import run_program

    spec = UnitSpec(**spec_d)
    unit_dir = Path(spec.unit_dir)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    row: dict[str, Any] = {"config": spec.config, "task_id": spec.task_id, "attempt": spec.attempt,
                           "program_sha256": spec.program_sha256, "task_sha256": spec.task_sha256,
                           "started_at": started,
                           "worker": f"{socket.gethostname()}:{os.getpid()}"}
    ts = spec.extra.get("task_set")
    if ts:  # each row names the task set and version it was scored on
        row["task_set"] = f"{ts.get('set')}@{ts.get('version')}"
    try:
        shutil.rmtree(unit_dir, ignore_errors=True)  # a unit that was running when a batch died is redone from scratch
        unit_dir.mkdir(parents=True, exist_ok=True)
        run_dir = unit_dir / "run"
        rec = run_program(Path(spec.program), run_dir, timeout_s=spec.timeout_s, memory_mb=spec.memory_mb,
                          expected_frames=spec.expected_frames)
        row.update(run_status=rec.status, seconds_run=rec.seconds, peak_memory_mb=rec.peak_memory_mb,
                   blender_version=rec.blender_version)
        # one verdict vocabulary (SPEC §3): only an `ok` run has a valid artifact; anything else scores 0 where counted
        artifact = rec.status == "ok"
        row["artifact"] = artifact
        evidence = {"run_dir": str(run_dir), "run_json": str(run_dir / "run.json"), "log": str(run_dir / "run.log"),
                    "frames_dir": rec.outputs.get("frames_dir"), "video": rec.outputs.get("video"),
                    "blend": rec.outputs.get("blend")}
        if not artifact:
            from physcodegym.sandbox.artifacts import invalid_reason

            if rec.status == "invalid":  # the same reason string as run.json, score and audit --task
                row.update(status="invalid", reason=invalid_reason(rec.status, rec.reason), metrics=None, score=None)
            else:
                row.update(status="failed", reason=f"{rec.status}: {rec.reason}", metrics=None, score=None)
        else:
            t1 = time.monotonic()
            try:
                doc = _score(spec.task_folder, run_dir, spec.metrics, spec.judge)
                row["seconds_score"] = round(time.monotonic() - t1, 3)
                atomic.write_json(unit_dir / "score.json", doc.to_json())
                evidence["score_json"] = str(unit_dir / "score.json")
                if doc.invalid:  # the accepted files no longer match the record
                    row.update(status="invalid", artifact=False, metrics=None, score=None,
                               reason=doc.invalid_reason)
                else:  # the row is a JSON document (it crosses to the store, maybe through Ray): the plain dict
                    row.update(status="done", metrics=dict(doc.metrics), score=doc.to_json(), reason=None)
            except Exception as e:
                row["seconds_score"] = round(time.monotonic() - t1, 3)
                (unit_dir / "score_error.txt").write_text(traceback.format_exc())
                evidence["score_error"] = str(unit_dir / "score_error.txt")
                row.update(status="error", reason=f"scoring failed: {type(e).__name__}: {e}", metrics=None, score=None)
        row["evidence"] = evidence
    except Exception as e:  # the unit's own machinery failed: record it, the batch goes on
        row.update(status="error", reason=f"unit failed: {type(e).__name__}: {e}", artifact=False)
        row.setdefault("evidence", {"traceback": traceback.format_exc()[-4000:]})
    row["seconds_total"] = round(time.monotonic() - t0, 3)
    row["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        atomic.write_json(unit_dir / "unit.json", {k: v for k, v in row.items() if k != "score"})
    except OSError:
        pass
    return row
