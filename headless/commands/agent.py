"""`physcodegym agent --task T --provider P --model M --out DIR`: run a coding agent on one task.

Live progress (step, launches, tokens, cost) goes to stderr; at the end the finalized submission is
scored like `physcodegym score` and the result is stored in DIR/agent_run.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAME = "agent"
HELP = "run a coding agent on a task (tools, budgets, trace, resume) and score its submission"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, help="task id or folder")
    p.add_argument("--provider", required=True, help="openai (any OpenAI-compatible endpoint) or anthropic")
    p.add_argument("--model", required=True)
    p.add_argument("--base-url", default=None, help="API base URL (default: the provider's)")
    p.add_argument("--out", required=True, help="run folder (trace, workspace, revisions, submission, agent_run.json)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from DIR/trace.jsonl")
    p.add_argument(
        "--max-launches", type=int, default=20, help="Blender launches (run_scene, inspect_scene, render_preview)"
    )
    p.add_argument("--time-limit", type=float, default=3 * 3600.0, help="wall-clock limit in seconds (default 3 h)")
    p.add_argument("--max-tokens-total", type=int, default=None, help="token cap over the run (input + output)")
    p.add_argument("--max-cost", type=float, default=None, help="cost cap in USD")
    p.add_argument("--max-steps", type=int, default=400, help="model turns")
    p.add_argument("--max-tokens", type=int, default=8192, help="max output tokens per model call")
    p.add_argument("--temperature", type=float, default=None)
    p.add_argument("--run-timeout", type=float, default=1800.0, help="timeout of one Blender launch in seconds")
    p.add_argument("--keep-images", type=int, default=8, help="most recent images kept in the model's context")
    p.add_argument("--no-score", action="store_true", help="do not score the submission at the end")
    p.add_argument("--metrics", default=None, help="metrics for the final score (as `physcodegym score --metrics`)")
    p.add_argument(
        "--judge-provider", default=None, help="provider of the S_obj/S_evt judge (default: none, reported missing)"
    )
    p.add_argument("--judge-model", default=None)
    p.add_argument("--judge-base-url", default=None)


def _limits(args: argparse.Namespace):
    from physcodegym.agent.budget import BudgetLimits

    for name in ("max_launches", "max_steps"):
        if getattr(args, name) < 0:
            raise InputError("must be >= 0", field="--" + name.replace("_", "-"))
    if args.time_limit <= 0:
        raise InputError("must be > 0 seconds", field="--time-limit")
    return BudgetLimits(
        max_launches=args.max_launches,
        wall_clock_s=args.time_limit,
        max_tokens=args.max_tokens_total,
        max_cost_usd=args.max_cost,
        max_steps=args.max_steps,
    )


class _Progress:
    """A rich live line on stderr: step, launches used, tokens, cost, last tool."""

    def __init__(self, task: str) -> None:
        from rich.console import Console
        from rich.live import Live

        self.task = task
        self.console = Console(stderr=True)
        self.live = Live(console=self.console, refresh_per_second=4, transient=False)

    def __enter__(self) -> _Progress:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(*exc)

    def __call__(self, p: dict) -> None:
        from rich.text import Text

        self.live.update(
            Text(
                f"{self.task}  step {p['step']}  launches {p['launches_used']}/{p['max_launches']}  tokens "
                f"{p['tokens']}  cost ${p['cost_usd']:.4f}  {p['elapsed_s']:.0f}s  last: {p['last']}"
            )
        )


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.agent.loop import AgentRun, LoopConfig, score_submission
    from physcodegym.agent.run_document import ScoreUnavailable
    from physcodegym.agent.trace import AGENT_RUN_FILE, write_json_atomic
    from physcodegym.llm.factory import make_provider
    from physcodegym.tasks.loader import load_task

    loaded_task = load_task(args.task)
    if not loaded_task.video_path.is_file():
        raise InputError("the task has no reference video", file=str(loaded_task.video_path), field="video.file")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError("--out must be a folder", file=str(out), field="--out")
    if args.resume and not (out / "trace.jsonl").is_file():
        raise InputError("nothing to resume: no trace.jsonl", file=str(out / "trace.jsonl"), field="--resume")
    judge = None
    if args.judge_provider:  # checked before the run, not after hours of it
        if not args.judge_model:
            raise InputError("--judge-model is required with --judge-provider", field="--judge-model")
        judge = {"provider": args.judge_provider, "model": args.judge_model, "base_url": args.judge_base_url}
    provider = make_provider(args.provider, args.model, base_url=args.base_url)
    cfg = LoopConfig(
        max_tokens_per_call=args.max_tokens,
        temperature=args.temperature,
        run_timeout_s=args.run_timeout,
        keep_images=args.keep_images,
    )
    with _Progress(loaded_task.id) as prog:
        ar = AgentRun(loaded_task, provider, out, limits=_limits(args), cfg=cfg, resume=args.resume, progress=prog)
        doc = ar.run_to_end()
    if not args.no_score:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
        if doc.finalized:
            try:
                doc.score = score_submission(loaded_task, out, metrics=metrics, judge=judge)
            except InputError:
                raise
            except Exception as e:  # scoring failure is recorded, never mistaken for a score
                doc.score = ScoreUnavailable(state="error", reason=f"{type(e).__name__}: {e}")
        else:
            doc.score = ScoreUnavailable(
                state="no_submission",
                reason=f"the run ended {doc.status!r} without a finalized submission",
                S_tot=0.0,
            )
        write_json_atomic(out / AGENT_RUN_FILE, doc.to_json())
    b = doc.budget
    human = (
        f"{loaded_task.id}: {doc.status} ({doc.reason}); steps {doc.steps}, launches "
        f"{b.launches_used}/{b.max_launches}, tokens {b.tokens_used}, cost ${b.cost_usd:.4f}\nrun folder: {out}"
        + (f"\nscore: {json.dumps(doc.to_json()['score'], default=str)[:400]}" if doc.score is not None else "")
    )
    code = 0 if doc.status in ("finalized", "budget_exhausted", "stopped") else 1
    return CommandResult(doc.to_json(), exit_code=code, human=human)
