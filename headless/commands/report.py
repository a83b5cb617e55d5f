"""`physcodegym report RESULTS --out DIR [--no-videos]`: leaderboard (md/csv/json) and an HTML report that opens from
disk (index.html, one page per task with synchronised videos, plots and readable evidence)."""

from __future__ import annotations

import argparse
from pathlib import Path

from physcodegym.headless.cli import CommandResult

NAME = "report"
HELP = "write the leaderboard (markdown, CSV, JSON) and an HTML report (opens from disk) from a batch's results"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results folder of `physcodegym batch` (holds results.sqlite)")
    p.add_argument("--out", required=True, help="report folder")
    p.add_argument("--no-videos", action="store_true", help="skip encoding the reference and candidate videos")


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.report.build import build_report

    doc = build_report(Path(args.results), Path(args.out), videos=not args.no_videos)
    lines = [
        f"report: {doc['report']}  ({len(doc['pages'])} task pages, {doc['videos']['clips']} videos, "
        f"{doc['bytes'] / 1e6:.1f} MB, built in {doc['seconds']:.0f} s)"
    ]
    from physcodegym.report.build import task_set_line

    lines.append(f"  {task_set_line(doc['task_set'])}")
    lines += [
        f"  {b['config']:<24} S_tot {_st(b['S_tot'])}  ({b['artifacts']}/{b['tasks']} artifacts)"
        for b in doc["leaderboard"]
    ]
    if doc["videos"]["errors"]:
        lines.append(f"  {len(doc['videos']['errors'])} video(s) could not be prepared: see the task pages")
    return CommandResult(doc, human="\n".join(lines))


def _st(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"
