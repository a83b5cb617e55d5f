"""`physcodegym check SCENE.py`: static policy check of a scene program (SPEC §3, §7)."""

from __future__ import annotations

import argparse

from physcodegym.headless.cli import CommandResult

NAME = "check"
HELP = "check a scene program against the sandbox policy (every violation with rule id and line)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("program", help="the scene program (scene.py)")


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.sandbox.policy import check_file

    rep = check_file(args.program)
    doc = rep.to_dict()
    human = (
        "ok: no policy violations"
        if rep.ok
        else "\n".join(f"{args.program}:{v.line}: [{v.rule}] {v.message}" for v in rep.violations)
    )
    # violations are the command's finding, not a failure of the command (SPEC §7: 1 = internal failure);
    # scripts gate on the JSON `ok`
    return CommandResult(doc, human=human)
