"""`physcodegym audit DIR_OR_BLEND [--program scene.py] [--task TASK] [--plot DIR] --json`.

Opens the run folder or .blend in this process (bpy), runs the task-independent audit (SPEC §5) and,
with --task, the task rubric (S_val). Prints {"findings": [...], "criteria": [...], "S_val": ...}.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAME = "audit"
HELP = "audit a run folder or .blend for physics violations (findings with evidence); --task adds S_val"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="run folder (scene.blend [+ scene.py, frames/]) or a .blend file")
    p.add_argument("--program", help="the scene program (default: scene.py in the run folder)")
    p.add_argument("--task", help="task id or folder: also evaluate its physical rubric (S_val)")
    p.add_argument("--plot", help="write PNG witnesses (one per curve-backed finding) to this folder")
    p.add_argument("--no-evidence", action="store_true", help="omit the evidence records from the output")
    p.add_argument("--save", help="also write the full report JSON here (atomic)")


def run(args: argparse.Namespace) -> CommandResult:
    path = Path(args.path)
    if not path.exists():
        raise InputError("no such run folder or .blend", file=str(path))
    loaded = None
    if args.task:
        from physcodegym.tasks.loader import load_task

        loaded = load_task(args.task)
    from physcodegym.probes.audit import audit_path_full

    report, samples, scene = audit_path_full(path, Path(args.program) if args.program else None)
    doc = {
        "findings": [f.public(with_evidence=not args.no_evidence) for f in report.findings],
        "criteria": [],
        "S_val": None,
        "scene": report.scene,
        "timings": report.timings,
        "samples_path": report.samples_path,
    }
    if loaded is not None:
        try:
            from physcodegym.verifier.rubric_eval import evaluate_rubric
        except ImportError as e:
            doc["S_val_reason"] = f"rubric evaluation unavailable: {e}"
        else:
            run_dir = path if path.is_dir() else None
            rub = evaluate_rubric(loaded, scene, samples, report, run_dir)
            doc.update({k: v for k, v in rub.items() if k not in ("findings",)})
        doc["task"] = loaded.id
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
