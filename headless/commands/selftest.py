"""`physcodegym selftest --task TASK | --all`: inject known defects into the truth scene; report what the audit and
rubric catch.

The table marks a cell "+P" when the defect was caught and S_val dropped, "+" when caught but not penalised,
"MISSED" when not caught, "n/a" when the defect cannot apply to the task (no collider to remove, a
core that never moves) and "ERROR" when the injection failed (`verifier.selftest.cell`; the JSON has `cells`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from physcodegym.core.errors import InputError

NAME = "selftest"
HELP = "inject known defects into a task's truth scene and report which the audit and the rubric catch"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", action="append", help="task id or folder (repeatable)")
    p.add_argument("--all", action="store_true", help="every shipped task (the full self-test matrix)")
    p.add_argument(
        "--defects",
        help="comma-separated subset of the defect kinds (default: all; see probes/defects/defects.py DEFECTS)",
    )
    p.add_argument("--work-dir", help="keep truth bakes and defected scenes here (and each task's result, "
                                      "<work-dir>/<task>/selftest.json, written as soon as the task is done)")
    p.add_argument("--resume", action="store_true",
                   help="with --work-dir: re-use a task's saved result when it covers the same defects")


def run(args: argparse.Namespace) -> Any:
    from physcodegym.core.atomic import write_json
    from physcodegym.headless.cli import CommandResult
    from physcodegym.tasks.loader import load_task
    from physcodegym.verifier.selftest import DEFECTS, run_selftest
    from rich.progress import Progress

    defects = [d.strip() for d in args.defects.split(",")] if args.defects else list(DEFECTS)
    bad = [d for d in defects if d not in DEFECTS]
    if bad:
        raise InputError(f"unknown defect kind(s) {bad}; known: {', '.join(DEFECTS)}", field="--defects")
    if not args.task and not args.all:
        raise InputError("give --task TASK (repeatable) or --all", field="--task")
    tasks = [load_task(t) for t in args.task or []]
    if args.all:
        from physcodegym.tasks.loader import PACKS_DIR, list_tasks

        tasks += [t for t in list_tasks([PACKS_DIR]) if t.truth_program and t.truth_program.is_file()]
    results = []
    with Progress(transient=True) as prog:
        bar = prog.add_task("selftest", total=len(tasks) * len(defects))
        for loaded_task in tasks:
            wd = Path(args.work_dir) / loaded_task.id if args.work_dir else None
            saved = wd / "selftest.json" if wd is not None else None
            if getattr(args, "resume", False) and saved is not None and saved.is_file():
                prev = json.loads(saved.read_text())
                if sorted(prev.get("defects", {})) == sorted(defects):
                    results.append(prev)
                    prog.update(bar, advance=len(defects), description=f"{loaded_task.id}: saved")
                    continue
            res = run_selftest(
                loaded_task,
                defects,
                wd,
                progress=lambda k, r, loaded_task=loaded_task: prog.update(
                    bar, advance=1, description=f"{loaded_task.id}: {k}"
                ),
            )
            if saved is not None:  # a crash of a later task (Blender can segfault) loses nothing done so far
                write_json(saved, res)
            results.append(res)
    matrix = {r["task"]: {k: v.get("caught") for k, v in r["defects"].items()} for r in results}
    penalised = {r["task"]: {k: v.get("penalised") for k, v in r["defects"].items()} for r in results}
    cells = {r["task"]: r["cells"] for r in results}
    doc = {
        "tasks": results,
        "matrix": matrix,
        "penalised": penalised,
        "cells": cells,
        "all_caught": all(r["all_caught"] for r in results),
    }
    lines = [f"{'task':<28}" + "".join(f"{d[:14]:>16}" for d in defects)]
    for t, row in cells.items():
        lines.append(f"{t:<28}" + "".join(f"{row.get(d, ''):>16}" for d in defects))
    return CommandResult(doc=doc, exit_code=0, human="\n".join(lines))
