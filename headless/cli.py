"""The `physcodegym` command line.

Sub-commands are discovered from `headless/commands/*.py` so each capability lives in its own module.
A command module defines:

    NAME = "check"                 # sub-command name (default: module name with '_' -> '-')
    HELP = "one line"
    def add_arguments(parser): ...  # argparse sub-parser; `--json` is added for every command
    def run(args) -> CommandResult | dict

With `--json` the command's document is the only thing on stdout: while the command runs, file
descriptor 1 is pointed at stderr (Blender's C code prints bake progress straight to fd 1).
Exit codes: 0 success, 2 bad input (InputError), 1 internal failure.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pkgutil
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from physcodegym.core.errors import InputError


@dataclass
class CommandResult:
    doc: Any
    exit_code: int = 0
    human: str | None = None  # text for the terminal when --json is not given


def _command_modules() -> list[Any]:
    from physcodegym.headless import commands

    mods = []
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mods.append(importlib.import_module(f"physcodegym.headless.commands.{info.name}"))
    return mods


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="physcodegym", description="Physically verifiable 4D reconstruction toolkit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules():
        name = getattr(mod, "NAME", mod.__name__.rsplit(".", 1)[-1].replace("_", "-"))
        p = sub.add_parser(name, help=getattr(mod, "HELP", None), description=getattr(mod, "HELP", None))
        p.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[int]:
    """Point fd 1 at fd 2 for the duration; yields a dup of the real stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield saved
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _default_human(doc: Any) -> str:
    return json.dumps(doc, indent=2, default=str)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    as_json = bool(getattr(args, "json", False))
    ctx = stdout_to_stderr() if as_json else contextlib.nullcontext()
    code = 0
    doc: Any
    human: str | None = None
    with ctx:
        try:
            res = args._run(args)
            if not isinstance(res, CommandResult):
                res = CommandResult(doc=res)
            doc, code, human = res.doc, res.exit_code, res.human
        except InputError as e:
            doc, code = {"error": e.to_dict()}, 2
            human = f"error: {e}"
        except KeyboardInterrupt:
            doc, code = {"error": {"type": "interrupted", "message": "interrupted"}}, 130
            human = "interrupted"
        except Exception as e:  # internal failure: exit 1 with the traceback on stderr
            traceback.print_exc(file=sys.stderr)
            doc, code = {"error": {"type": "internal", "message": f"{type(e).__name__}: {e}"}}, 1
            human = f"internal error: {type(e).__name__}: {e}"
    if as_json:
        sys.stdout.write(json.dumps(doc, default=str) + "\n")
    else:
        out = human if human is not None else _default_human(doc)
        (sys.stderr if code else sys.stdout).write(out.rstrip("\n") + "\n")
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    # Run through the module's own name: as __main__ this file is a second copy whose CommandResult is not the class
    # the commands return, and every result was printed as its repr in a JSON string.
    from physcodegym.core.exit import exit_child
    from physcodegym.headless.cli import main as _main

    exit_child(_main())
