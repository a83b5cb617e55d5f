"""`physcodegym report RESULTS --out DIR`: leaderboard (md/csv/json) and a self-contained HTML report (issue 9)."""

from __future__ import annotations

import argparse
from pathlib import Path

from physcodegym.headless.cli import CommandResult

NAME = "report"
HELP = "write the leaderboard (markdown, CSV, JSON) and a self-contained HTML report from a batch's results"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results folder of `physcodegym batch` (holds results.sqlite)")
    p.add_argument("--out", required=True, help="report folder")


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.report.build import build_report

    doc = build_report(Path(args.results), Path(args.out))
    lines = [f"report: {doc['report']}"] + [f"  {b['config']:<24} S_tot {b['S_tot'] if b['S_tot'] is None else round(b['S_tot'], 3)}"
                                           f"  ({b['artifacts']}/{b['tasks']} artifacts)" for b in doc["leaderboard"]]
    return CommandResult(doc, human="\n".join(lines))
