"""`physcodegym audit DIR_OR_BLEND [--program scene.py] [--task TASK] [--plot DIR] --json`.

Runs the task-independent audit (SPEC §5) and, with --task, the task rubric (S_val). Prints
{"findings": [...], "criteria": [...], "S_val": ...}. The work is `verifier.audit_run.audit`: the input checked
without bpy (a run that is not valid is `invalid` with the reason, exit 0), then one walled child with a
wall-clock and an address-space limit (`--timeout`, `--memory-mb`), Auto Run off.
"""

from __future__ import annotations

import argparse
from pathlib import Path

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
    p.add_argument("--timeout", type=float, default=900.0,
                   help="wall-clock limit of the audit's bpy child in seconds (default 900)")
    p.add_argument("--memory-mb", type=int, default=6144,
                   help="address-space limit of the audit's bpy child and its workers in MiB (default 6144)")
    p.add_argument("--unsafe-no-isolation", action="store_true",
                   help="run the audit's bpy child without the bubblewrap wall (scene code could then reach the host)")


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.verifier.audit_run import AuditRequest, audit, human

    loaded_task = None
    if args.task:
        from physcodegym.tasks.loader import load_task

        loaded_task = load_task(args.task)
    req = AuditRequest(path=Path(args.path), program=Path(args.program) if args.program else None,
                       plot=Path(args.plot) if args.plot else None, save=Path(args.save) if args.save else None,
                       no_evidence=args.no_evidence, timeout_s=args.timeout, memory_mb=args.memory_mb,
                       unsafe_no_isolation=args.unsafe_no_isolation)
    doc = audit(req, loaded_task)
    return CommandResult(doc, human=human(doc, req.path))
