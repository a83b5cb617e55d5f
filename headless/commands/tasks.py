"""`physcodegym tasks list|validate|show|build|verify`: the task library (build/verify: tasks with a truth.py, shipped
or generated)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult
from physcodegym.headless.commands import _tasks_generate, _tasks_import, _tasks_sheet
from physcodegym.tasks.loader import TASK_FILE, LoadedTask, list_tasks, load_task, task_roots, validate_reference_video

NAME = "tasks"
HELP = "list, validate and show tasks"


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="tasks_cmd", required=True)
    ls = sub.add_parser("list", help="list tasks with their categories")
    ls.add_argument("--root", action="append", help="task root folder (default: $PHYSCODEGYM_TASKS, shipped packs)")
    ls.add_argument("--summary", action="store_true",
                    help="counts per subcategory against the benchmark's target, event items, templates, bytes")
    ls.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    v = sub.add_parser("validate", help="validate a task folder (or every task under a root)")
    v.add_argument("path")
    v.add_argument("--no-media", action="store_true", help="skip the reference video check")
    v.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    s = sub.add_parser("show", help="show one task")
    s.add_argument("id")
    s.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    b = sub.add_parser("build", help="regenerate a shipped task's reference data from its truth.py")
    b.add_argument("id", nargs="+", help="task ids or folders ('all' = shipped + library, 'shipped', 'library')")
    b.add_argument("--annotations-only", action="store_true",
                   help=("re-merge annotation.py only (keeps the video; truth.py must be unchanged since the last "
                         "build)"))
    b.add_argument("--jobs", "--workers", dest="workers", metavar="N", type=int, default=1,
                   help="tasks built at the same time, each render with its share of the CPUs (default 1)")
    b.add_argument("--force", action="store_true",
                   help="rebuild tasks whose build.json already records their current truth.py and annotation.py")
    b.add_argument("--keep-scratch", action="store_true",
                   help="keep the build's scratch folder (bake, frames, render log) after a successful build")
    b.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    r = sub.add_parser("verify", help="re-run truth.py (bake only) and compare with the stored truth trajectories")
    r.add_argument("id", nargs="+", help="task ids or folders ('all' = shipped + library, 'shipped', 'library')")
    r.add_argument("--tol", type=float, default=1e-4, help="largest allowed difference in metres (default 1e-4)")
    r.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    for extra in EXTRA:
        extra.add_parser(sub)


# sub-commands that live in their own modules: each has add_parser(sub) and NAMES -> run(args)
EXTRA = (_tasks_generate, _tasks_import, _tasks_sheet)


def _family(loaded_task: LoadedTask) -> tuple[str | None, int | None]:
    """(family, seed): a generated member names both in family.json; a shipped pack with family.py is seed 0."""
    fj = loaded_task.folder / "family.json"
    if fj.is_file():
        doc = json.loads(fj.read_text(encoding="utf-8"))
        return doc.get("family"), doc.get("seed")
    if (loaded_task.folder / "family.py").is_file():
        return loaded_task.folder.name, 0
    return None, None


def _row(loaded_task: LoadedTask) -> dict:
    from physcodegym.tasks.loader import provenance

    t = loaded_task.task
    family, seed = _family(loaded_task)
    return {
        "id": t.id,
        "template": family or t.id,  # its scene template: the family it is a seed of, else the task is its own
        "family": family,
        "seed": seed,
        "provenance": provenance(loaded_task),
        "bytes": _folder_bytes(loaded_task.folder),
        "title": t.title,
        "category": t.category.value,
        "subcategory": t.subcategory.value if t.subcategory else None,
        "folder": str(loaded_task.folder),
        "events": len(t.events),
        "criteria": len(t.rubric.criteria),
        "counterfactual_criteria": sum(1 for c in t.rubric.criteria if c.counterfactual),
    }


def _folder_bytes(folder: Path) -> int:
    """Bytes the task adds to the repository: its files, without caches (__pycache__, dot files)."""
    return sum(p.stat().st_size for p in folder.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith("."))


def summary(rows: list[dict]) -> dict:
    """The set against the benchmark's size and spread (tasks.schema.TARGET_COUNTS): tasks and templates per
    subcategory (per category where there is none), event items, repository bytes."""
    from physcodegym.tasks.schema import TARGET_COUNTS, TARGET_EVENT_ITEMS

    groups: dict[str, dict] = {}
    for key, target in TARGET_COUNTS.items():
        mine = [r for r in rows if (r["subcategory"] or r["category"]) == key]
        groups[key] = {"tasks": len(mine), "target": target, "short": max(0, target - len(mine)),
                       "templates": len({r["template"] for r in mine}), "event_items": sum(r["events"] for r in mine)}
    events = sum(r["events"] for r in rows)
    return {"tasks": len(rows), "target_tasks": sum(TARGET_COUNTS.values()),
            "templates": len({r["template"] for r in rows}), "event_items": events,
            "target_event_items": TARGET_EVENT_ITEMS, "groups": groups,
            "meets_target": events >= TARGET_EVENT_ITEMS and all(g["short"] == 0 for g in groups.values()),
            "repository_bytes": sum(r["bytes"] for r in rows),
            "provenance": {k: sum(1 for r in rows if r["provenance"]["kind"] == k)
                           for k in ("generated", "imported", "unknown")}}


def _summary_text(s: dict) -> str:
    lines = [f"{'group':<22} {'tasks':>5} {'target':>6} {'templates':>9} {'events':>6}"]
    lines += [f"{k:<22} {g['tasks']:>5} {g['target']:>6} {g['templates']:>9} {g['event_items']:>6}"
              + (f"  short {g['short']}" if g["short"] else "") for k, g in s["groups"].items()]
    lines.append(f"{'all':<22} {s['tasks']:>5} {s['target_tasks']:>6} {s['templates']:>9} {s['event_items']:>6} "
                 f"(target {s['target_event_items']} event items) {s['repository_bytes'] / 1e6:.1f} MB")
    return "\n".join(lines)


def _validate_one(folder: Path, media: bool) -> dict:
    """One task folder: a complete task is ok; a skeleton (an imported video) lists what an annotator still has
    to add instead of failing; anything malformed raises InputError (exit 2) naming file and field."""
    from physcodegym.tasks.loader import truth_status
    from physcodegym.tasks.schema import FPS, FRAMES, missing_annotations

    try:
        loaded_task = load_task(folder)
    except InputError:
        loaded_task = load_task(folder, draft=True)  # malformed even as a skeleton: that error is the answer
    t = loaded_task.task
    missing = missing_annotations(t)
    notes = []
    if t.source is not None:
        s = t.source
        notes.append(f"imported from {s.file} (sha256 {s.sha256[:12]}...), {s.trim_start_s:g}-{s.trim_end_s:g} s of "
                     "the clip")
        if s.held is not None:
            notes.append(f"frames {s.held.from_frame}-{FRAMES} repeat the last frame: the footage ends at "
                         f"{s.held.source_ends_s:g} s")
            for e in t.events:
                if e.interval.end_s > s.held.source_ends_s + 1.0 / FPS:
                    notes.append(f"event {e.id!r} ends at {e.interval.end_s:g} s, after the footage ends (held frames)")
    truth = truth_status(loaded_task)
    notes += [f"{k} not applicable: {v['reason']}" for k, v in truth.items() if v["state"] == "not_applicable"]
    video = None if not media else validate_reference_video(loaded_task)
    return {"id": t.id, "ok": not missing, "complete": not missing, "folder": str(loaded_task.folder), "video": video,
            "missing": missing, "notes": notes, "truth": truth}


def run(args: argparse.Namespace) -> CommandResult:
    for extra in EXTRA:
        if args.tasks_cmd in extra.NAMES:
            return extra.run(args)
    if args.tasks_cmd == "list":
        roots = [Path(r) for r in args.root] if args.root else task_roots()
        rows = [_row(loaded_task) for loaded_task in list_tasks(roots)]
        human = "\n".join(f"{r['id']:<32} {r['category']:<11} {r['subcategory'] or '-':<22} {r['title']}" for r in rows)
        from physcodegym.tasks import manifest

        cur = manifest.current()
        set_doc = {"name": cur["set"], "version": cur["version"], "sha256": cur["sha256"], "n_tasks": cur["n_tasks"]}
        summ = summary(rows)
        human = (human or "no tasks") + f"\n{len(rows)} tasks; set {cur['set']} {cur['version']}"
        if args.summary:
            human += "\n" + _summary_text(summ)
        return CommandResult({"set": set_doc, "tasks": rows, "summary": summ}, human=human)
    if args.tasks_cmd == "validate":
        p = Path(args.path)
        folders = [p] if (p / TASK_FILE).is_file() or p.name == TASK_FILE else sorted(
            x.parent for x in p.glob(f"*/{TASK_FILE}"))
        if not folders:
            raise InputError("no task.json here or in sub-folders", file=str(p))
        results = [_validate_one(f, media=not args.no_media) for f in folders]
        ok = all(r["ok"] for r in results)
        human = "\n".join(
            f"{'ok ' if r['ok'] else 'TODO'} {r['id']}"
            + "".join(f"\n     missing {m['field']}: {m['need']}" for m in r["missing"])
            + "".join(f"\n     note: {n}" for n in r["notes"])
            for r in results
        )
        return CommandResult({"ok": ok, "tasks": results}, exit_code=0 if ok else 1, human=human)
    if args.tasks_cmd == "show":
        loaded_task = load_task(args.id)
        from physcodegym.tasks.loader import provenance

        doc = {"folder": str(loaded_task.folder), "task": json.loads(loaded_task.task.model_dump_json()),
               "provenance": provenance(loaded_task)}
        return CommandResult(doc)
    if args.tasks_cmd == "build":
        from physcodegym.authoring.build import build_tasks

        if args.workers < 1:
            raise InputError("--jobs must be at least 1", field="jobs")
        doc = build_tasks(args.id, annotations_only=args.annotations_only, workers=args.workers, force=args.force,
                          keep_scratch=args.keep_scratch)
        human = "\n".join(
            f"{b['id']:<16} {b['category']:<10} bake {b['bake_seconds']:>6.1f}s render {b['render_seconds']:>6.1f}s "
            f"ssim {b['reference_ssim']['ssim_mean']} {b['total_bytes'] / 1e6:.2f} MB"
            for b in doc["built"]
        ) + "".join(f"\nup to date {i} (--force rebuilds it)" for i in doc["up_to_date"]) + "".join(
            f"\nFAILED {f['id']}: {f['error'][:300]}" for f in doc["failed"])
        # A build renders the reference; the rubric's counterfactuals are measured by another command (`tasks
        # generate` runs both for a library member). Authors of new packs kept missing that step, so say it.
        doc["next"] = [f"physcodegym counterfactual --truth {f}" for f in _stale_counterfactuals(args.id, doc["built"])]
        human += "".join(f"\nnext: {c}  (truth_counterfactuals.json is missing or older than the truth)"
                         for c in doc["next"])
        return CommandResult(doc, exit_code=0 if doc["ok"] else 1, human=human)
    if args.tasks_cmd == "verify":
        from physcodegym.authoring.build import expand_ids
        from physcodegym.authoring.verify import verify_task

        ids = expand_ids(args.id)
        rows = [verify_task(i, tol=args.tol) for i in ids]
        ok = all(r["ok"] for r in rows)
        human = "\n".join(f"{'ok ' if r['ok'] else 'BAD'} {r['id']:<16} matrices "
                          f"{r.get('max_matrix_diff', float('nan')):.2g} verts "
                          f"{r.get('max_vertex_diff', float('nan')):.2g} "
                          + "".join(f"particles {k}: identical {p['identical_frames']} frames, centroid "
                                    f"{p['max_centroid_diff_m']} m "
                                    for k, p in r.get("particles", {}).items())
                          + "; ".join(r["problems"]) for r in rows)
        return CommandResult({"ok": ok, "tasks": rows}, exit_code=0 if ok else 1, human=human)
    raise InputError(f"unknown tasks sub-command {args.tasks_cmd!r}")


def _stale_counterfactuals(requested: list[str], built: list[dict]) -> list[str]:
    """Of the tasks just built, those whose rubric has counterfactual criteria and whose truth_counterfactuals.json
    is missing or older than truth.py or annotation.py (as the ids or paths the user typed)."""
    from physcodegym.authoring.build import expand_ids, resolve_folder

    done = {b["id"] for b in built}
    out = []
    for name in expand_ids(requested):
        folder = resolve_folder(name)
        try:
            lt = load_task(str(folder))
        except (InputError, OSError, ValueError):
            continue
        if lt.task.id not in done or not any(c.counterfactual for c in lt.task.rubric.criteria):
            continue
        cf = folder / "truth_counterfactuals.json"
        newest = max((folder / n).stat().st_mtime for n in ("truth.py", "annotation.py") if (folder / n).is_file())
        if not cf.is_file() or cf.stat().st_mtime < newest:
            out.append(name)
    return out
