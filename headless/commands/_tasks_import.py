"""`physcodegym tasks import` (a sub-command of tasks.py; the leading underscore keeps the CLI from listing it as a command)."""

from __future__ import annotations

import argparse

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAMES: tuple[str, ...] = ()  # the sub-command names this module serves; empty until it is built


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the sub-command(s) on `physcodegym tasks`."""


def run(args: argparse.Namespace) -> CommandResult:
    raise InputError(f"unknown tasks sub-command {args.tasks_cmd!r}")
