"""`physcodegym audit DIR_OR_BLEND [--program scene.py] [--task TASK] [--plot DIR] --json`.

Runs the task-independent audit (SPEC §5) and, with --task, the task rubric (S_val). Prints
{"findings": [...], "criteria": [...], "S_val": ...}.

The input is checked here first, without bpy (SPEC §3, validated artifacts): a run folder is read only through its
validated
artifact set (`sandbox.artifacts.validated_run`: the runner's record, status ok, every accepted file matching
its hash); a run that is not is `invalid` with the reason, no findings and no S_val (exit 0). A plain folder or
a .blend must hold a regular `scene.blend` whose header and block list check out (no linked library, movie
clip or sound; a frame range within the task's bound). The bpy work then runs in a child of this process
with a wall-clock and an address-space limit (`--timeout`, `--memory-mb`), Auto Run off.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from pathlib import Path
from typing import Any

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult
from physcodegym.headless.commands._wall_args import wall_mode

NAME = "audit"
HELP = "audit a run folder or .blend for physics violations (findings with evidence); --task adds S_val"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="run folder (scene.blend [+ scene.py, frames/]) or a .blend file")
    p.add_argument("--program", help="the scene program (default: scene.py in the run folder)")
    p.add_argument("--task", help="task id or folder: also evaluate its physical rubric (S_val)")
    p.add_argument("--plot", help="write PNG witnesses (one per curve-backed finding) to this folder")
    p.add_argument("--no-evidence", action="store_true", help="omit the evidence records from the output")
    p.add_argument("--save", help="also write the full report JSON here (atomic)")
    p.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="wall-clock limit of the audit's bpy child in seconds (default 900)",
    )
    p.add_argument(
        "--memory-mb",
        type=int,
        default=6144,
        help="address-space limit of the audit's bpy child and its counterfactual workers in MiB (default 6144)",
    )
    p.add_argument("--unsafe-no-isolation", action="store_true",
                   help="run the audit's bpy child without the bubblewrap wall (scene code could then reach the host)")
    p.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)  # the limited child itself


def _invalid_doc(reason: str, task_id: str | None) -> dict:
    doc = {
        "findings": [],
        "criteria": [],
        "S_val": None,
        "status": "invalid",
        "invalid_reason": reason,
        "S_val_reason": f"invalid run: {reason}",
    }
    if task_id:
        doc["task"] = task_id
    return doc


def _check_input(path: Path, task_id: str | None) -> dict | None:
    """None when the input may be opened; an `invalid` document for a run folder that is not valid.

    Raises InputError for a path that is not a run folder, a folder with a scene.blend, or a .blend we accept."""
    from physcodegym.sandbox import artifacts
    from physcodegym.tasks.schema import FRAMES

    if path.is_dir():
        if artifacts.is_run_folder(path):  # a run folder without a readable record is invalid, never plain
            vr = artifacts.validated_run(path)
            if not vr.valid:
                return _invalid_doc(vr.reason or "invalid run", task_id)
            if vr.blend is None:
                return _invalid_doc("the run has no accepted scene.blend", task_id)
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


def _human(doc: dict, path: Path) -> str:
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


SAMPLES = "audit_samples.npz"
MAX_SAMPLES_BYTES = 1 << 30  # decoded size of the samples a walled audit hands back (arrays of known shape)
MAX_PLOT_BYTES = 16 << 20
MAX_PLOTS = 200


def _supervise(args: argparse.Namespace, path: Path, loaded_task: Any = None) -> CommandResult:
    """Run the audit's bpy work in a walled, limited child (`sandbox.wall`) and relay its document.

    The child sees the run folder (or the .blend) and the program read-only, the task only as its `task.json`
    copied into the child's scratch folder (never the pack: no truth, no reference), and writes only to that
    scratch folder. What it hands back is checked here: the JSON document, the samples (an .npz of arrays read
    without pickles, re-saved into the run folder), the plots (PNG files copied by size cap)."""
    from physcodegym.core import launch
    from physcodegym.sandbox import wall

    if args.timeout <= 0:
        raise InputError("must be positive", field="--timeout")
    mode = wall_mode(args)
    src = path.resolve()
    with wall.scratch_folder("pcg_audit_") as scratch:
        fwd = ["audit", str(src), "--json", "--in-process"]
        readonly = [src]
        if args.program:
            fwd += ["--program", str(Path(args.program).resolve())]
            readonly.append(Path(args.program).resolve())
        if loaded_task is not None:
            tdir = scratch / "task"
            tdir.mkdir()
            (tdir / "task.json").write_bytes((loaded_task.folder / "task.json").read_bytes())  # the rubric only
            fwd += ["--task", str(tdir)]
        if args.plot:
            fwd += ["--plot", str(scratch / "plots")]
        if args.save:
            fwd += ["--save", str(scratch / "report.json")]
        if args.no_evidence:
            fwd.append("--no-evidence")
        res = wall.run_walled(launch.cli_argv(fwd), scratch=scratch, readonly=readonly, isolation_mode=mode,
                              timeout_s=args.timeout, memory_mb=args.memory_mb or None)
        doc = launch.last_json(res.stdout)
        if isinstance(doc, dict) and not res.killed_reason and res.returncode == 0:
            _take_back(doc, scratch, path, args)
    if isinstance(doc, dict):
        doc["isolation"] = wall.describe(mode)
    mem = _past_memory_limit(res, doc)
    if mem:  # the scene is too big for the audit: a recorded verdict on the run, never a retry or a hang
        doc = _invalid_doc(f"the scene took the audit past its memory limit ({args.memory_mb} MiB): {mem}",
                           loaded_task.id if loaded_task is not None else None)
        doc["limit"] = "memory"
        return CommandResult(doc, human=_human(doc, path))
    if res.killed_reason or not isinstance(doc, dict):
        why = res.killed_reason or f"exited {res.returncode} without a result: {res.stderr.strip()[-400:]}"
        doc = {
            "findings": [],
            "criteria": [],
            "S_val": None,
            "status": "error",
            "S_val_reason": f"audit stopped: {why}",
        }
        return CommandResult(doc, human=_human(doc, path))
    err = doc.get("error")
    if res.returncode == 2 and isinstance(err, dict):
        raise InputError(err.get("message") or "bad input", file=err.get("file"), field=err.get("field"))
    if res.returncode != 0:
        raise RuntimeError(
            f"audit child exited {res.returncode}: {(err or {}).get('message') if isinstance(err, dict) else doc}"
        )
    doc.setdefault("status", "ok")
    doc.setdefault("limits", {"timeout_s": args.timeout, "memory_mb": args.memory_mb})
    return CommandResult(doc, human=_human(doc, path))


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


def _take_back(doc: dict, scratch: Path, path: Path, args: argparse.Namespace) -> None:
    """Bring what the walled child wrote into its scratch folder where the caller asked for it, validated:
    nothing is trusted by its name. Problems are recorded in the document, never raised."""
    import shutil
    import zipfile

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
    if args.plot:
        out, kept = Path(args.plot), []
        for f in sorted((scratch / "plots").glob("*.png"))[:MAX_PLOTS] if (scratch / "plots").is_dir() else []:
            st = f.lstat()
            if f.is_symlink() or not f.is_file() or st.st_size > MAX_PLOT_BYTES:
                continue
            out.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, out / f.name)
            kept.append(str(out / f.name))
        doc["plots"] = kept
    if args.save:
        rep = scratch / "report.json"
        try:
            if rep.is_symlink() or rep.stat().st_size > 256 << 20:
                raise ValueError("not a regular file within 256 MiB")
            import json

            atomic.write_json(Path(args.save), json.loads(rep.read_text(encoding="utf-8")), indent=1)
            doc["report_path"] = str(args.save)
        except (OSError, ValueError) as e:
            problems.append(f"report not saved: {e}")
    if problems:
        doc["wall_problems"] = problems


def run(args: argparse.Namespace) -> CommandResult:
    path = Path(args.path)
    if not os.path.lexists(path):
        raise InputError("no such run folder or .blend", file=str(path))
    loaded_task = None
    if args.task:
        from physcodegym.tasks.loader import load_task

        loaded_task = load_task(args.task)
    invalid = _check_input(path, loaded_task.id if loaded_task is not None else None)
    if invalid is not None:
        return CommandResult(invalid, human=_human(invalid, path))
    if not getattr(args, "in_process", False):
        return _supervise(args, path, loaded_task)
    early_resim = _start_resimulation(path)  # before Blender's import: the audit's longest worker
    try:
        return _audit_in_process(args, path, loaded_task, early_resim)
    finally:
        if early_resim is not None:
            early_resim.close()


def _start_resimulation(path: Path) -> Any:
    """The re-simulation of a validated run's bake, started at once (`probes.audit.EarlyResimulation`), or None
    where the run's record cannot say whether the scene holds particle settings (a bare .blend, an older record):
    the audit then starts it itself after sampling."""
    from physcodegym.sandbox import artifacts

    if not path.is_dir():
        return None
    try:
        rec = artifacts.read_record(path)
        n = rec["validation"]["headers"]["scene.blend"]["particle_settings"]
    except (artifacts.ArtifactError, OSError, KeyError, TypeError):
        return None
    if not isinstance(n, int) or isinstance(n, bool):
        return None
    from physcodegym.probes.audit import EarlyResimulation

    return EarlyResimulation(path / "scene.blend", may_hold_particles=n > 0)


def _audit_in_process(args: argparse.Namespace, path: Path, loaded_task: Any, early_resim: Any) -> CommandResult:
    """The audit's bpy work (the limited child of `_supervise`)."""
    import bpy

    bpy.context.preferences.filepaths.use_scripts_auto_execute = False  # Auto Run off for every file opened here
    from physcodegym.probes.render_safety import install_load_guard

    install_load_guard(str(Path.cwd()))  # stored code and paths off in every file opened here (docs/THREAT_MODEL.md)
    from physcodegym.probes.audit import audit_path_full

    run_dir = path if path.is_dir() else None
    early: list[Any] = []  # the rubric's counterfactuals, started while the audit works (verifier.rubric_eval)

    def start_counterfactuals(samples: Any, blend: Path) -> None:
        from physcodegym.verifier.rubric_eval import prefetch_counterfactuals

        early.append(prefetch_counterfactuals(loaded_task, bpy.context.scene, samples, blend, run_dir))

    try:
        report, samples, scene = audit_path_full(path, Path(args.program) if args.program else None,
                                                 save_samples=False,
                                                 on_started=start_counterfactuals if loaded_task else None,
                                                 early_resim=early_resim)
    except BaseException:
        for p in early:
            p.close()
        raise
    from physcodegym.probes.render_safety import NEUTRALISED

    if NEUTRALISED:  # stored code or paths the load guard switched off (such a run is refused at validation)
        report.meta["neutralised"] = list(NEUTRALISED)
    if run_dir is not None:  # the run folder is read-only here: the samples go to the scratch folder (cwd)
        try:
            samples.save_npz(Path.cwd() / SAMPLES)
        except OSError as e:
            report.meta["samples_error"] = str(e)
    doc = {
        "findings": [f.public(with_evidence=not args.no_evidence) for f in report.findings],
        "criteria": [],
        "S_val": None,
        "scene": report.scene,
        "timings": report.timings,
        "samples_path": report.samples_path,
        "neutralised": report.meta.get("neutralised", []),
    }
    if loaded_task is not None:
        try:
            from physcodegym.verifier.rubric_eval import evaluate_rubric
        except ImportError as e:  # pragma: no cover - the module ships with the package
            doc["S_val_reason"] = f"rubric evaluation unavailable: {e}"
        else:
            t = time.perf_counter()
            try:
                rub = evaluate_rubric(loaded_task, scene, samples, report, run_dir,
                                      prefetched=early[0] if early else None)
            finally:
                for p in early:
                    p.close()
            doc["timings"] = {**report.timings, "rubric": round(time.perf_counter() - t, 4)}
            doc.update({k: v for k, v in rub.items() if k not in ("findings",)})
        doc["task"] = loaded_task.id
    else:
        doc["S_val_reason"] = "no --task given: S_val needs a task rubric"
    if args.plot:
        from physcodegym.probes.plots import write_plots

        doc["plots"] = write_plots(report, Path(args.plot))
    if args.save:
        report.save(Path(args.save))
        doc["report_path"] = str(args.save)
    lines = [f"{len(report.findings)} finding(s) in {path}"]
    for f in report.findings:
        fr = f"frames {f.frames[0]}-{f.frames[-1]}" if f.frames else "no frames"
        val = f" {f.value:.4g} {f.unit or ''}" if f.value is not None else ""
        lines.append(f"  {f.kind:<24} {','.join(f.objects):<28} {fr:<16}{val}  {f.message}")
    if doc.get("S_val") is not None:
        lines.append(f"S_val = {doc['S_val']:.3f}")
    return CommandResult(doc, human="\n".join(lines))
