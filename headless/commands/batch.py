"""`physcodegym batch --tasks DIR --submissions DIR --out RESULTS`: resumable batch evaluation (SPEC §8)."""

from __future__ import annotations

import argparse
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAME = "batch"
HELP = "run, audit and score every (configuration, task) submission in isolation; resumable results store"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", required=True, help="folder of task folders (*/task.json)")
    p.add_argument("--submissions", required=True, help="folder SUBMISSIONS/<config>/<task_id>/scene.py")
    p.add_argument(
        "--tasks-from",
        default=None,
        metavar="FILE",
        help="only these tasks of --tasks: a file of task ids (one a line, # comments) or a task-set manifest JSON",
    )
    p.add_argument("--out", required=True, help="results folder (results.sqlite, units/)")
    p.add_argument("--workers", type=int, default=None, help="local process pool size (default: one per two cores)")
    p.add_argument(
        "--ray", default=None, metavar="ADDRESS", help="run the units on an existing Ray cluster (e.g. 127.0.0.1:6379)"
    )
    p.add_argument(
        "--resume", action="store_true", help="continue: skip units whose row is final (same program and task)"
    )
    p.add_argument("--overwrite", action="store_true", help="drop existing rows and run everything again")
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="per-unit wall-clock limit in s (default: config.json timeout_s, else 1800)",
    )
    p.add_argument("--memory-mb", type=int, default=8192, help="per-unit address-space limit (MiB)")
    p.add_argument("--metrics", default=None, help="metrics to score, e.g. ssim,lpips,motion,obj,evt,val (default all)")
    p.add_argument("--config", action="append", default=None, help="only these configurations (repeatable)")
    p.add_argument("--frames", type=int, default=240, help="expected frames per run (default 240; tests use fewer)")
    p.add_argument("--judge-provider", default=None, help="VLM judge provider for S_obj/S_evt (openai|anthropic)")
    p.add_argument("--judge-model", default=None)
    p.add_argument("--judge-base-url", default=None)
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.batch.scheduler import run_batch

    if args.workers is not None and args.workers < 1:
        raise InputError("must be at least 1", field="--workers")
    if args.resume and args.overwrite:
        raise InputError("--resume and --overwrite exclude each other", field="--overwrite")
    metrics = None
    if args.metrics:
        from physcodegym.evaluator.scoring import parse_metrics

        metrics = parse_metrics(args.metrics)
    judge = None
    if args.judge_provider:
        if not args.judge_model:
            raise InputError("needs --judge-model", field="--judge-provider")
        judge = {
            "provider": args.judge_provider,
            "model": args.judge_model,
            "base_url": args.judge_base_url,
            "cache_dir": str(Path(args.out) / "judge_cache"),
        }
    doc = run_batch(
        Path(args.tasks),
        Path(args.submissions),
        Path(args.out),
        workers=args.workers,
        ray_address=args.ray,
        resume=args.resume,
        overwrite=args.overwrite,
        timeout_s=args.timeout,
        memory_mb=args.memory_mb or None,
        expected_frames=args.frames,
        metrics=metrics,
        judge=judge,
        configs=args.config,
        progress=not args.no_progress,
        tasks_from=Path(args.tasks_from) if args.tasks_from else None,
    )
    s = doc["by_status"]
    ts = doc["task_set"]
    human = (
        f"task set {ts['set']} {ts['version']} ({ts['selected']} of {ts['n_tasks']} tasks"
        + (f", {ts['stale']} pack(s) differ from the manifest" if ts["stale"] else "")
        + "): "
        f"{doc['units']} units ({doc['ran']} run, {doc['skipped_final']} already final): "
        f"{s['done']} scored, {s['failed']} without valid artifact, {s['error']} errors -> {doc['store']}"
    )
    for f in doc["failures"]:
        human += f"\n  {f['config']}/{f['task_id']}#{f['attempt']}: {f['status']}: {f['reason']}"
    return CommandResult(doc, human=human)
