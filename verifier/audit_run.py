"""The audit of a submitted scene, from the trusted side: the one place S_val's audit is orchestrated.

`audit(request, loaded_task)` checks the input without bpy (SPEC §3, validated artifacts), then runs the bpy work
(`verifier.audit_worker`: the task-independent audit of SPEC §5 and, with a task, its rubric) in ONE walled,
limited child (`sandbox.wall`), and validates what comes back. `physcodegym audit` and S_val
(`verifier.validity`) both call it, so a run folder is validated once here and the audit document crosses one
process boundary.

Why the input is checked here: a run folder is read only through its validated artifact set
(`sandbox.artifacts.validated_run`: the runner's record, status ok, every accepted file matching its hash); a run
that is not is `invalid` with the reason, no findings and no S_val. A plain folder or a .blend must hold a regular
`scene.blend` whose header and block list check out (no linked library, movie clip or sound; a frame range within
the task's bound), or it is bad input.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from physcodegym.core.errors import InputError
from physcodegym.probes.audit.findings import Finding
from pydantic import BaseModel, ConfigDict, Field, ValidationError

SAMPLES = "audit_samples.npz"
MAX_SAMPLES_BYTES = 1 << 30  # decoded size of the samples a walled audit hands back (arrays of known shape)
MAX_PLOT_BYTES = 16 << 20
MAX_PLOTS = 200
MAX_REPORT_BYTES = 256 << 20
WORKER = "physcodegym.verifier.audit_worker"


class Criterion(BaseModel):
    """One rubric criterion's verdict in an audit document (its measurements ride along as extra keys)."""

    model_config = ConfigDict(extra="allow")
    id: str
    passed: bool | None = None


class AuditDocument(BaseModel):
    """The audit document (SPEC §7) as the walled child hands it back: checked here before anything of it is
    believed. Extra keys are kept (the document only grows); the ones S_val rests on are typed."""

    model_config = ConfigDict(extra="allow")
    findings: list[Finding]
    criteria: list[Criterion] = Field(default_factory=list)
    S_val: float | None = Field(default=None, ge=0.0, le=1.0)
    task: str | None = None


@dataclass(frozen=True)
class AuditRequest:
    """What to audit and under which limits. `plot` and `save` are where the caller wants the witnesses and the
    full report (the walled child writes them into its scratch folder; they are validated on the way out)."""

    path: Path
    program: Path | None = None
    plot: Path | None = None
    save: Path | None = None
    no_evidence: bool = False
    timeout_s: float = 900.0
    memory_mb: int = 6144
    unsafe_no_isolation: bool = False


def invalid_doc(reason: str, task_id: str | None) -> dict[str, Any]:
    """The audit document of a run that may not be opened: no findings, no S_val, the reason."""
    doc: dict[str, Any] = {"findings": [], "criteria": [], "S_val": None, "status": "invalid",
                           "invalid_reason": reason, "S_val_reason": f"invalid run: {reason}"}
    if task_id:
        doc["task"] = task_id
    return doc


def check_input(path: Path, task_id: str | None) -> dict[str, Any] | None:
    """None when the input may be opened; an `invalid` document for a run folder that is not valid.

    Raises InputError for a path that is not a run folder, a folder with a scene.blend, or a .blend we accept."""
    from physcodegym.sandbox import artifacts
    from physcodegym.tasks.schema import FRAMES

    if path.is_dir():
        if artifacts.is_run_folder(path):  # a run folder without a readable record is invalid, never plain
            vr = artifacts.validated_run(path)
            if not vr.valid:
                return invalid_doc(vr.reason or "invalid run", task_id)
            if vr.blend is None:
                return invalid_doc("the run has no accepted scene.blend", task_id)
            return None
        blend = path / "scene.blend"
        if not os.path.lexists(blend):
            raise InputError("run folder has no scene.blend", file=str(path), field="scene.blend")
    elif path.suffix == ".blend":
        blend = path
    else:
        raise InputError("expected a run folder or a .blend file", file=str(path))
    try:
        artifacts.check_bare_blend(blend, expected_frames=FRAMES)
    except artifacts.ArtifactError as e:
        raise InputError(str(e), file=str(blend), field="scene.blend") from e
    except OSError as e:
        raise InputError(f"cannot be read: {e.strerror}", file=str(blend), field="scene.blend") from e
    return None


def human(doc: dict[str, Any], path: Path) -> str:
    """The audit document as terminal lines: one per finding, then S_val or why there is none."""
    if doc.get("status") == "invalid":
        return f"invalid run {path}: {doc.get('invalid_reason')}"
    lines = [f"{len(doc.get('findings') or [])} finding(s) in {path}"]
    for f in doc.get("findings") or []:
        fr = f"frames {f['frames'][0]}-{f['frames'][-1]}" if f.get("frames") else "no frames"
        val = f" {f['value']:.4g} {f.get('unit') or ''}" if f.get("value") is not None else ""
        lines.append(f"  {f['kind']:<24} {','.join(f.get('objects') or []):<28} {fr:<16}{val}  {f.get('message', '')}")
    if doc.get("S_val") is not None:
        lines.append(f"S_val = {doc['S_val']:.3f}")
    elif doc.get("S_val_reason"):
        lines.append(f"S_val: {doc['S_val_reason']}")
    return "\n".join(lines)


def isolation_mode(unsafe_no_isolation: bool) -> str:
    """The wall's mode; a bad-input error naming the flag when the wall cannot run on this host."""
    from physcodegym.sandbox import wall

    mode = wall.mode_for(bool(unsafe_no_isolation))
    try:
        wall.require_wall(mode)
    except wall.IsolationUnavailable as e:
        raise InputError(str(e), field="--unsafe-no-isolation") from e
    return mode


def audit(req: AuditRequest, loaded_task: Any = None) -> dict[str, Any]:
    """The audit document of `req.path` (findings; with a task, criteria and S_val), its status `ok`, `invalid`
    (with the reason; `limit: memory` when the scene outgrew the audit) or `error` (the child stopped: time-out,
    crash). InputError for bad input; RuntimeError when the child failed in a way that is ours."""
    path = Path(req.path)
    if not os.path.lexists(path):
        raise InputError("no such run folder or .blend", file=str(path))
    task_id = loaded_task.id if loaded_task is not None else None
    invalid = check_input(path, task_id)
    if invalid is not None:
        return invalid
    if req.timeout_s <= 0:
        raise InputError("must be positive", field="--timeout")
    mode = isolation_mode(req.unsafe_no_isolation)
    res, doc = _run_worker(req, path, loaded_task, mode)
    from physcodegym.sandbox import wall

    if isinstance(doc, dict):
        doc["isolation"] = wall.describe(mode)
    mem = _past_memory_limit(res, doc)
    if mem:  # the scene is too big for the audit: a recorded verdict on the run, never a retry or a hang
        doc = invalid_doc(f"the scene took the audit past its memory limit ({req.memory_mb} MiB): {mem}", task_id)
        doc["limit"] = "memory"
        return doc
    if res.killed_reason or not isinstance(doc, dict):
        why = res.killed_reason or f"exited {res.returncode} without a result: {res.stderr.strip()[-400:]}"
        return {"findings": [], "criteria": [], "S_val": None, "status": "error",
                "S_val_reason": f"audit stopped: {why}"}
    err = doc.get("error")
    if res.returncode == 2 and isinstance(err, dict):
        raise InputError(err.get("message") or "bad input", file=err.get("file"), field=err.get("field"))
    if res.returncode != 0:
        raise RuntimeError(
            f"audit child exited {res.returncode}: {(err or {}).get('message') if isinstance(err, dict) else doc}")
    try:
        AuditDocument.model_validate(doc)
    except ValidationError as e:  # the child said something S_val cannot rest on: no verdict, the reason kept
        return {"findings": [], "criteria": [], "S_val": None, "status": "error",
                "S_val_reason": f"audit stopped: its document does not validate: {str(e)[:600]}"}
    doc.setdefault("status", "ok")
    doc.setdefault("limits", {"timeout_s": req.timeout_s, "memory_mb": req.memory_mb})
    return doc


def _run_worker(req: AuditRequest, path: Path, loaded_task: Any, mode: str) -> tuple[Any, Any]:
    """Run the audit's bpy work in a walled, limited child and relay its document.

    The child sees the run folder (or the .blend) and the program read-only, the task only as its `task.json`
    copied into the child's scratch folder (never the pack: no truth, no reference), and writes only to that
    scratch folder. What it hands back is checked here (`_take_back`)."""
    from physcodegym.core import launch
    from physcodegym.sandbox import wall

    src = path.resolve()
    with wall.scratch_folder("pcg_audit_") as scratch:
        fwd = [str(src)]
        readonly = [src]
        if req.program:
            fwd += ["--program", str(Path(req.program).resolve())]
            readonly.append(Path(req.program).resolve())
        if loaded_task is not None:
            tdir = scratch / "task"
            tdir.mkdir()
            (tdir / "task.json").write_bytes((loaded_task.folder / "task.json").read_bytes())  # the rubric only
            fwd += ["--task", str(tdir)]
        if req.plot:
            fwd += ["--plot", str(scratch / "plots")]
        if req.save:
            fwd += ["--save", str(scratch / "report.json")]
        if req.no_evidence:
            fwd.append("--no-evidence")
        res = wall.run_walled(launch.module_argv(WORKER, fwd), scratch=scratch, readonly=readonly,
                              isolation_mode=mode, timeout_s=req.timeout_s, memory_mb=req.memory_mb or None)
        doc = launch.last_json(res.stdout)
        if isinstance(doc, dict) and not res.killed_reason and res.returncode == 0:
            _take_back(doc, scratch, path, req)
    return res, doc


def _past_memory_limit(res: Any, doc: Any) -> str | None:
    """Why the audit child ended past its memory limit (killed by the kernel or the cgroup, MemoryError or a
    failed allocation under RLIMIT_AS), or None. A timeout is not this."""
    if res.timed_out or not res.memory_mb:
        return None
    err = doc.get("error") if isinstance(doc, dict) else None
    text = f"{(err or {}).get('message', '') if isinstance(err, dict) else ''}\n{res.stderr[-4000:]}"
    if any(m in text for m in ("MemoryError", "bad_alloc", "Cannot allocate memory", "failed to map segment")):
        return "an allocation failed"
    rc = res.returncode
    sig = -rc if rc is not None and rc < 0 else rc - 128 if rc is not None and 128 < rc < 160 else None  # bwrap: 128+N
    if sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT):
        return f"killed by signal {sig} (address space {res.memory_mb} MiB)"
    return None


def _take_back(doc: dict[str, Any], scratch: Path, path: Path, req: AuditRequest) -> None:
    """Bring what the walled child wrote into its scratch folder where the caller asked for it, validated:
    nothing is trusted by its name. Problems are recorded in the document, never raised."""
    from physcodegym.core import atomic

    doc.pop("report_path", None)
    doc.pop("plots", None)
    doc.pop("samples_path", None)
    problems: list[str] = []
    smp = scratch / SAMPLES
    if path.is_dir() and smp.is_file() and not smp.is_symlink():
        try:
            with zipfile.ZipFile(smp) as z:
                decoded = sum(i.file_size for i in z.infolist())
            if decoded > MAX_SAMPLES_BYTES:
                raise ValueError(f"{decoded} decoded bytes (limit {MAX_SAMPLES_BYTES})")
            from physcodegym.samples import SceneSamples

            SceneSamples.load_npz(smp).save_npz(path / SAMPLES)  # no pickles; re-written by this process
            doc["samples_path"] = str(path / SAMPLES)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            problems.append(f"samples not kept: {e}")
    if req.plot:
        out, kept = Path(req.plot), []
        for f in sorted((scratch / "plots").glob("*.png"))[:MAX_PLOTS] if (scratch / "plots").is_dir() else []:
            st = f.lstat()
            if f.is_symlink() or not f.is_file() or st.st_size > MAX_PLOT_BYTES:
                continue
            out.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, out / f.name)
            kept.append(str(out / f.name))
        doc["plots"] = kept
    if req.save:
        rep = scratch / "report.json"
        try:
            if rep.is_symlink() or rep.stat().st_size > MAX_REPORT_BYTES:
                raise ValueError("not a regular file within 256 MiB")
            atomic.write_json(Path(req.save), json.loads(rep.read_text(encoding="utf-8")), indent=1)
            doc["report_path"] = str(req.save)
        except (OSError, ValueError) as e:
            problems.append(f"report not saved: {e}")
    if problems:
        doc["wall_problems"] = problems
