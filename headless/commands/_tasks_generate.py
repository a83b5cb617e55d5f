"""`physcodegym tasks generate|manifest` (sub-commands of tasks.py; the leading underscore keeps the CLI from listing it
as a command).

    physcodegym tasks generate FAMILY|all --seeds A..B [--jobs N] [--force] [--out ROOT] [--json]
    physcodegym tasks manifest [--check] [--version X.Y.Z] [--json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAMES: tuple[str, ...] = ("generate", "manifest")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the sub-command(s) on `physcodegym tasks`."""
    g = sub.add_parser("generate", help="build members of task families (seed -> parameters) into the task library")
    g.add_argument("family", nargs="+", help="family names (shipped packs with family.py) or 'all'")
    g.add_argument("--seeds", required=True, help="seeds as A..B or A,B,C (seed 0 is the shipped pack itself)")
    g.add_argument("--jobs", "--workers", dest="workers", metavar="N", type=int, default=1,
                   help="members built at the same time, each render with its share of the CPUs (default 1)")
    g.add_argument("--force", action="store_true", help="rebuild members already generated from the current sources")
    g.add_argument("--out", help="output root (default tasks/library; the manifest is rewritten only for the default)")
    g.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    m = sub.add_parser("manifest", help="rewrite tasks/manifest.json (content hash per task) or check it")
    m.add_argument("--check", action="store_true",
                   help="only report packs that differ from the manifest (exit 1 if any)")
    m.add_argument("--version", dest="set_version",
                   help="set the version (default: keep it, or bump the minor number when a hash changed)")
    m.add_argument("--json", action="store_true", default=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> CommandResult:
    if args.tasks_cmd == "generate":
        from physcodegym.authoring.families import generate, parse_seeds

        if args.workers < 1:
            raise InputError("--jobs must be at least 1", field="jobs")
        doc = generate(args.family, parse_seeds(args.seeds), workers=args.workers,
                       out_root=Path(args.out) if args.out else None, force=args.force)
        human = "\n".join(f"ok     {r['id']:<22} build {r['build_seconds']:>6.1f}s total "
                          f"{r['generate_seconds']:>6.1f}s {r['total_bytes'] / 1e6:.2f} MB" for r in doc["generated"])
        human += "".join(f"\nup to date {r['id']} (--force rebuilds it)" for r in doc["up_to_date"])
        human += "".join(f"\nFAILED {f['id']}: {f['error'][:400]}" for f in doc["failed"])
        if doc.get("manifest"):
            human += f"\nmanifest {doc['manifest']['set']} {doc['manifest']['version']}"
        return CommandResult(doc, exit_code=0 if doc["ok"] else 1, human=human.strip() or "nothing generated")
    if args.tasks_cmd == "manifest":
        from physcodegym.tasks import manifest

        if args.check:
            problems = manifest.check()
            doc = {"ok": not problems, "problems": problems, **manifest.current()}
            human = f"{doc['set']} {doc['version']}: {doc['n_tasks']} tasks, " + (
                "up to date" if not problems else "\n".join(problems))
            return CommandResult(doc, exit_code=0 if not problems else 1, human=human)
        written = manifest.write_manifest(args.set_version)
        doc = {**manifest.current(), "written": str(manifest.MANIFEST)}
        return CommandResult(doc,
                             human=(f"{doc['set']} {doc['version']}: {len(written['tasks'])} tasks -> "
                                    f"{manifest.MANIFEST}"))
    raise InputError(f"unknown tasks sub-command {args.tasks_cmd!r}")
