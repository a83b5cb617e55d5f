"""`physcodegym score --task TASK --candidate RUN_DIR_OR_VIDEO [--metrics ...] [--plot PNG]` (SPEC §7)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from physcodegym.core import atomic
from physcodegym.headless.cli import CommandResult

NAME = "score"
HELP = "score a run folder or a video against a task (SSIM, LPIPS, motion, judges, validity)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, help="task id or folder")
    p.add_argument("--candidate", required=True, help="run folder (frames/ or render.mp4, run.json) or a video file")
    p.add_argument(
        "--metrics", default=None, help="comma-separated subset of ssim,lpips,motion,obj,evt,val (default: all)"
    )
    p.add_argument("--judge-provider", default=None, help="openai | anthropic: enables S_obj / S_evt")
    p.add_argument("--judge-model", default=None)
    p.add_argument("--judge-base-url", default=None)
    p.add_argument("--judge-cache", default=None, help="folder caching judge calls (by prompt version and input hash)")
    p.add_argument("--val-timeout", type=float, default=900, help="seconds for the S_val audit child process")
    p.add_argument("--plot", default=None, help="write a PNG with per-frame curves and the motion masks")
    p.add_argument("--out", default=None, help="also write the JSON document to this file (atomically)")
    p.add_argument("--unsafe-no-isolation", action="store_true",
                   help="run the S_val audit's bpy child without the bubblewrap wall (hosts without bwrap only)")
    p.add_argument("--no-codec-parity", action="store_true",
                   help="compare lossless candidate frames as they are, not coded like the reference first")


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.evaluator.scoring import human_summary, parse_metrics, score_run
    from physcodegym.tasks.loader import load_task

    metrics = parse_metrics(args.metrics)  # bad --metrics fails before any decoding
    loaded_task = load_task(args.task)
    judge = None
    if args.judge_provider:
        judge = {
            "provider": args.judge_provider,
            "model": args.judge_model,
            "base_url": args.judge_base_url,
            "cache_dir": args.judge_cache,
        }
    doc = score_run(
        loaded_task,
        Path(args.candidate),
        metrics=metrics,
        judge=judge,
        plot=Path(args.plot) if args.plot else None,
        progress=not getattr(args, "json", False),
        val_timeout_s=args.val_timeout,
        codec_parity=not args.no_codec_parity,
        unsafe_no_isolation=bool(getattr(args, "unsafe_no_isolation", False)),
    )
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(out, json.dumps(doc.to_json(), indent=2))
    return CommandResult(doc.to_json(), human=human_summary(doc))
