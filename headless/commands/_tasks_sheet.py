"""`physcodegym tasks sheet` (a sub-command of tasks.py): a contact sheet of every task's reference and how far
apart the scenes are (`authoring.sheet`).

    physcodegym tasks sheet --out docs/images/task-sheet.png [--at 3.0] [--columns 8] [--root R] [--json]
    physcodegym tasks sheet --per-template --out docs/images/templates.jpg   # first/middle/last frame per template
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAMES: tuple[str, ...] = ("sheet",)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the sub-command on `physcodegym tasks`."""
    p = sub.add_parser("sheet", help="contact sheet of every task's reference (PNG) and how distinct the scenes are")
    p.add_argument("--out", required=True, help="image file to write (.png, or .jpg for a smaller file)")
    p.add_argument("--at", type=float, default=3.0, help="second of each reference to show (default 3.0)")
    p.add_argument("--columns", type=int, default=8, help="tiles per row (default 8)")
    p.add_argument("--per-template", action="store_true",
                   help="one row per template: the first, middle and last frame of its first task")
    p.add_argument("--root", action="append", help="task root folder (default: $PHYSCODEGYM_TASKS, shipped packs)")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.authoring.sheet import SheetTask, build_sheet
    from physcodegym.tasks.loader import list_tasks, task_roots

    if args.columns < 1:
        raise InputError("--columns must be at least 1", field="columns")
    roots = [Path(r) for r in args.root] if args.root else task_roots()
    tasks = []
    for lt in list_tasks(roots):
        if not lt.video_path.is_file():
            continue
        fj = lt.folder / "family.json"
        family = json.loads(fj.read_text(encoding="utf-8")).get("family") if fj.is_file() else None
        t = lt.task
        tasks.append(SheetTask(t.id, family or t.id, t.subcategory.value if t.subcategory else t.category.value,
                               lt.video_path))

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty() or done == total or done % 10 == 0:
            print(f"sheet: {done}/{total} references decoded", file=sys.stderr, flush=True)

    doc = build_sheet(tasks, Path(args.out), at_s=args.at, columns=args.columns, progress=progress,
                      per_template=args.per_template)
    closest = doc["closest_across"]
    human = (f"{doc['sheet']}: {doc['tasks']} tasks, {doc['templates']} templates at {doc['at_s']} s\n"
             f"median distance within a template {doc['median_within_template']}, across templates "
             f"{doc['median_across_templates']} ({doc['measure']})"
             + (f"\nclosest pair of different templates: {' / '.join(closest['tasks'])} ({closest['distance']})"
                if closest else "")
             + "".join(f"\n{g}: {v['templates']} templates, first frames "
                       f"{v['first_frame']['within_template']} within / {v['first_frame']['across_templates']} across, "
                       "motion masks "
                       f"{v['motion_mask']['within_template']} / {v['motion_mask']['across_templates']}"
                       for g, v in doc["by_group"].items()))
    return CommandResult(doc, human=human)
