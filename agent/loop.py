"""The agent loop: prompt, tool calls, budgets, context management, trace, resume (README "Running coding agents").

One run folder holds everything: `trace.jsonl` (one record per event), `workspace/` (the model's files),
`revisions/` (every scene.py), `launches/` (runner outputs), `images/` (every image shown to the model,
referenced from the trace), `submission/` (after finalize) and `agent_run.json` (`trace.AGENT_RUN_FILE`,
rewritten atomically after each step, so an interrupted run is visible as `running` and can be continued
with `resume=True`).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from physcodegym.agent import prompts
from physcodegym.agent.budget import Budget, BudgetLimits
from physcodegym.agent.run_document import AgentRunDocument
from physcodegym.agent.tools import LAUNCH_TOOLS, Toolbox, ToolOutcome, outcome_parts, tool_specs
from physcodegym.agent.trace import AGENT_RUN_FILE, Trace, agent_run_doc, read_trace, write_agent_run
from physcodegym.llm.base import ChatResponse, ImagePart, Message, Provider, TextPart, ToolCall, ToolResult
from physcodegym.llm.errors import ProviderError
from physcodegym.tasks.loader import LoadedTask

if TYPE_CHECKING:
    from physcodegym.evaluator.score_document import ScoreDocument

IMAGE_CHARS = 1500  # rough context cost of one image, in characters of text, for the budget of the view


@dataclass
class LoopConfig:
    max_tokens_per_call: int = 8192
    temperature: float | None = None
    run_timeout_s: float = 1800
    memory_mb: int = 8192
    keep_images: int = 8  # most recent images kept in the context; older ones are replaced by a note
    context_chars: int = 300_000  # above this, the oldest turns are folded into the running summary
    min_recent_turns: int = 4
    provider_retries: int = 2  # loop-level retries of a retryable provider error (after the transport's own)
    retry_backoff_s: float = 2.0
    steps_after_launches_exhausted: int = 6
    max_nudges: int = 3


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ------------------------------------------------------------------------------------------------
# context management
def _msg_chars(m: Message) -> int:
    n = 0
    for p in m.content:
        n += len(p.text) if isinstance(p, TextPart) else IMAGE_CHARS
    for tc in m.tool_calls:
        n += len(json.dumps(tc.arguments)) + len(tc.name)
    for tr in m.tool_results:
        for p in tr.content:
            n += len(p.text) if isinstance(p, TextPart) else IMAGE_CHARS
    return n


def _groups(history: list[Message]) -> list[list[Message]]:
    """Turns after the prompt: each starts with an assistant message and holds what answered it."""
    groups: list[list[Message]] = []
    for m in history:
        if m.role == "assistant" or not groups:
            groups.append([m])
        else:
            groups[-1].append(m)
    return groups


def build_view(history: list[Message], step_notes: list[str], cfg: LoopConfig) -> tuple[list[Message], dict[str, int]]:
    """The messages sent to the model: old images dropped first, then the oldest turns folded into a summary.

    `history[0:2]` is the system and task prompt; `step_notes[i]` is a one-line summary of turn i.
    Tool calls and their results stay paired (both wire formats require it).
    """
    head, turns = history[:2], _groups(history[2:])
    # 1. images: keep only the newest `keep_images`
    kept = 0
    new_turns: list[list[Message]] = []
    dropped_images = 0
    for g in reversed(turns):
        ng = []
        for m in reversed(g):
            if m.role == "tool":
                trs = []
                for tr in m.tool_results:
                    parts = []
                    for p in reversed(tr.content):
                        if isinstance(p, ImagePart):
                            if kept < cfg.keep_images:
                                kept += 1
                                parts.append(p)
                            else:
                                dropped_images += 1
                                parts.append(
                                    TextPart(text="[older image omitted to save context; request it again if needed]")
                                )
                        else:
                            parts.append(p)
                    trs.append(tr.model_copy(update={"content": list(reversed(parts))}))
                m = m.model_copy(update={"tool_results": trs})
            ng.append(m)
        new_turns.append(list(reversed(ng)))
    turns = list(reversed(new_turns))
    # 2. fold the oldest turns into the running summary while the view is too large
    size = sum(_msg_chars(m) for m in head) + sum(_msg_chars(m) for g in turns for m in g)
    folded = 0
    while size > cfg.context_chars and len(turns) - folded > cfg.min_recent_turns:
        size -= sum(_msg_chars(m) for m in turns[folded])
        folded += 1
    view = list(head)
    if folded:
        notes = step_notes[:folded]
        summary = "Running summary of earlier steps (removed from the context to save space):\n" + "\n".join(notes)
        task_msg = head[1].model_copy(update={"content": list(head[1].content) + [TextPart(text=summary)]})
        view = [head[0], task_msg]
    for g in turns[folded:]:
        view.extend(g)
    return view, {"dropped_images": dropped_images, "folded_turns": folded, "chars": size}


# ------------------------------------------------------------------------------------------------
class AgentRun:
    """One agent run on one task in one run folder."""

    def __init__(
        self,
        loaded_task: LoadedTask,
        provider: Provider,
        run_dir: Path,
        *,
        limits: BudgetLimits | None = None,
        cfg: LoopConfig | None = None,
        resume: bool = False,
        runner: Callable[..., Any] | None = None,
        policy_check: Callable[[str], list[dict]] | None = None,
        progress: Callable[[dict], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.loaded_task = loaded_task
        self.provider = provider
        self.run_dir = Path(run_dir).resolve()
        self.cfg = cfg or LoopConfig()
        self.progress = progress
        self.sleep = sleep
        self.trace = Trace(self.run_dir / "trace.jsonl")
        self.images_dir = self.run_dir / "images"
        self.history: list[Message] = []
        self.step_notes: list[str] = []
        self.status = "running"
        self.reason = ""
        self.started = _now()
        records = read_trace(self.trace.path) if resume else []
        if not resume and self.trace.path.exists() and self.trace.path.stat().st_size:
            from physcodegym.core.errors import InputError

            raise InputError(
                "run folder already holds a trace; pass --resume to continue it or choose a new --out",
                file=str(self.trace.path),
            )
        if resume and not records:
            from physcodegym.core.errors import InputError

            raise InputError("nothing to resume: no trace records", file=str(self.trace.path))
        snap = next((r["budget"] for r in reversed(records) if "budget" in r), None)
        self.budget = Budget.from_dict(snap, limits) if snap else Budget(limits=limits or BudgetLimits())
        self.toolbox = Toolbox(
            self.run_dir,
            loaded_task.video_path,
            self.budget,
            run_timeout_s=self.cfg.run_timeout_s,
            memory_mb=self.cfg.memory_mb,
            runner=runner,
            policy_check=policy_check,
        )
        self._init_history(records)

    # -- history / resume -------------------------------------------------------------------
    def _prompt(self) -> list[Message]:
        return [
            Message(role="system", content=[TextPart(text=prompts.SYSTEM_PROMPT)]),
            Message(
                role="user", content=[TextPart(text=prompts.task_prompt(self.loaded_task.task, self.budget.limits))]
            ),
        ]

    def _init_history(self, records: list[dict]) -> None:
        self.history = self._prompt()
        seg = sum(1 for r in records if r.get("type") == "start")
        if records:
            self.started = next(
                (r.get("started", self.started) for r in records if r.get("type") == "start"), self.started
            )
        pending: dict[str, ToolCall] = {}
        results: list[ToolResult] = []

        def close_turn() -> None:
            nonlocal results
            # calls that never got a result were interrupted (the harness was killed during them)
            for tc in pending.values():
                if tc.name in LAUNCH_TOOLS and self.budget.can_launch():
                    self.budget.use_launch(tc.name)  # the Blender process may have run: count it
                results.append(
                    ToolResult(
                        tool_call_id=tc.id,
                        content=[
                            TextPart(
                                text=json.dumps(
                                    {
                                        "error": "interrupted: the harness stopped during this call and was resumed; "
                                        "check the workspace and repeat the call if needed"
                                    }
                                )
                            )
                        ],
                        is_error=True,
                    )
                )
                self.step_notes.append(f"step {len(self.step_notes) + 1}: {tc.name} interrupted")
            pending.clear()
            if results:
                self.history.append(Message(role="tool", tool_results=results))
            results = []

        for r in records:
            t = r.get("type")
            if t == "model":
                close_turn()
                calls = [ToolCall(**c) for c in r.get("tool_calls", [])]
                self.history.append(
                    Message(
                        role="assistant", content=[TextPart(text=r["text"])] if r.get("text") else [], tool_calls=calls
                    )
                )
                pending = {c.id: c for c in calls}
            elif t == "tool":
                tc = pending.pop(r["tool_call_id"], None)
                if tc is None:
                    continue
                parts: list[TextPart | ImagePart] = [TextPart(text=r["result_text"])]
                for ref in r.get("images", []):
                    p = self.run_dir / ref
                    if p.is_file():
                        parts.append(ImagePart(png_base64=base64.b64encode(p.read_bytes()).decode("ascii")))
                results.append(ToolResult(tool_call_id=tc.id, content=parts, is_error=bool(r.get("is_error"))))
                self.step_notes.append(r.get("note", ""))
            elif t == "nudge":
                close_turn()
                self.history.append(Message(role="user", content=[TextPart(text=r["text"])]))
        close_turn()
        self.trace.append(
            {
                "type": "start",
                "segment": seg + 1,
                "resumed": bool(records),
                "started": self.started,
                "task": self.loaded_task.id,
                "provider": getattr(self.provider, "name", "?"),
                "model": getattr(self.provider, "model", "?"),
                "prompt_version": prompts.PROMPT_VERSION,
                "tools": [t.name for t in tool_specs()],
                "limits": self.budget.limits.__dict__,
                "budget": self.budget.to_dict(),
            }
        )

    # -- bookkeeping ------------------------------------------------------------------------
    def run_doc(self) -> AgentRunDocument:
        return agent_run_doc(self.status, self.reason, self.loaded_task.id, getattr(self.provider, "name", "?"),
                             getattr(self.provider, "model", "?"), self.run_dir, self.started, self.budget,
                             self.toolbox.state)

    def _write_run_json(self) -> AgentRunDocument:
        return write_agent_run(self.run_dir / AGENT_RUN_FILE, self.run_doc())

    def _emit(self, last: str) -> None:
        if self.progress:
            self.progress(
                {
                    "step": self.budget.steps,
                    "launches_used": self.budget.launches_used,
                    "max_launches": self.budget.limits.max_launches,
                    "tokens": self.budget.tokens,
                    "cost_usd": self.budget.cost_usd,
                    "elapsed_s": self.budget.elapsed_s,
                    "last": last,
                    "status": self.status,
                }
            )

    def _save_images(self, step: int, call_idx: int, images: list[bytes]) -> list[str]:
        refs = []
        for k, b in enumerate(images):
            self.images_dir.mkdir(parents=True, exist_ok=True)
            p = self.images_dir / f"step{step:04d}_call{call_idx}_{k}.png"
            p.write_bytes(b)
            refs.append(str(p.relative_to(self.run_dir)))
        return refs

    def _end(self, status: str, reason: str) -> AgentRunDocument:
        self.status, self.reason = status, reason
        self.trace.append({"type": "end", "status": status, "reason": reason, "budget": self.budget.to_dict()})
        self._emit(f"end: {status}")
        return self._write_run_json()

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> dict:
        """Run to the end; the agent run document as its JSON dict (what `agent_run.json` holds)."""
        return self.run_to_end().to_json()

    def run_to_end(self) -> AgentRunDocument:
        """Run to the end (finalized, a budget exhausted, stopped, a provider error); the last agent run document
        written, typed, so `physcodegym agent` can add its score."""
        if self.toolbox.state.get("finalized"):
            return self._end("finalized", "already finalized before resume")
        specs = tool_specs()
        provider_failures = 0
        nudges = 0
        after_exhaust = 0
        self._write_run_json()
        while True:
            why = self.budget.exhausted()
            if why:
                return self._end("budget_exhausted", why)
            if not self.budget.can_launch():
                after_exhaust += 1
                if after_exhaust > self.cfg.steps_after_launches_exhausted:
                    return self._end(
                        "budget_exhausted",
                        f"launch budget exhausted ({self.budget.limits.max_launches}) and not finalized",
                    )
            view, ctx = build_view(self.history, self.step_notes, self.cfg)
            t0 = time.monotonic()
            try:
                resp: ChatResponse = self.provider.chat(
                    view, tools=specs, max_tokens=self.cfg.max_tokens_per_call, temperature=self.cfg.temperature
                )
            except ProviderError as e:
                provider_failures += 1
                err = e.to_dict() if hasattr(e, "to_dict") else {"type": type(e).__name__, "message": str(e)}
                self.trace.append(
                    {
                        "type": "error",
                        "step": self.budget.steps,
                        "error": err,
                        "seconds": round(time.monotonic() - t0, 3),
                        "budget": self.budget.to_dict(),
                    }
                )
                if getattr(e, "retryable", False) and provider_failures <= self.cfg.provider_retries:
                    self.sleep(self.cfg.retry_backoff_s * provider_failures)
                    continue
                return self._end("provider_error", str(e))
            provider_failures = 0
            dt = time.monotonic() - t0
            self.budget.steps += 1
            step = self.budget.steps
            u = resp.usage
            self.budget.add_usage(u.input_tokens, u.output_tokens, u.cost_usd)
            self.history.append(
                Message(
                    role="assistant",
                    content=[TextPart(text=resp.text)] if resp.text else [],
                    tool_calls=resp.tool_calls,
                )
            )
            self._trace_model(step, resp, dt, ctx)
            if not resp.tool_calls:
                nudges += 1
                if nudges > self.cfg.max_nudges:
                    return self._end("stopped", "the model stopped calling tools without finalizing")
                self.history.append(Message(role="user", content=[TextPart(text=prompts.NO_TOOL_NUDGE)]))
                self.trace.append({"type": "nudge", "step": step, "text": prompts.NO_TOOL_NUDGE})
                self._emit("(no tool call)")
                self._write_run_json()
                continue
            nudges = 0
            results, finalized = self._call_tools(step, resp.tool_calls)
            self.history.append(Message(role="tool", tool_results=results))
            self._write_run_json()
            if finalized:
                return self._end("finalized", "the agent finalized its submission")

    def _call_tools(self, step: int, tool_calls: list) -> tuple[list[ToolResult], bool]:
        """Run one model turn's tool calls in order, tracing each; their results and whether one finalized."""
        results: list[ToolResult] = []
        finalized = False
        for ci, tc in enumerate(tool_calls):
            t1 = time.monotonic()
            before = self.budget.launches_used
            try:
                out = self.toolbox.call(tc.name, tc.arguments)
            except Exception as e:  # a harness bug must not lose the run: report it to the model and trace it
                out = ToolOutcome({"error": f"internal tool error: {type(e).__name__}: {e}"}, is_error=True)
                self.toolbox.save_state()
            parts = outcome_parts(out, self.budget.line())
            refs = self._save_images(step, ci, out.images)
            results.append(ToolResult(tool_call_id=tc.id, content=parts, is_error=out.is_error))
            note = (
                f"step {step}: {tc.name}({_short_args(tc.arguments)}) -> "
                f"{'ERROR ' if out.is_error else ''}{out.summary(200)}"
            )
            self.step_notes.append(note)
            self.trace.append(
                {
                    "type": "tool",
                    "step": step,
                    "tool_call_id": tc.id,
                    "name": tc.name,
                    "arguments": _short_args(tc.arguments, 2000),
                    "is_error": out.is_error,
                    "summary": out.summary(),
                    "note": note,
                    "result_text": parts[0].text,
                    "images": refs,
                    "launch": self.budget.launches_used > before,
                    "seconds": round(time.monotonic() - t1, 3),
                    "budget": self.budget.to_dict(),
                }
            )
            finalized = finalized or out.finalized
            self._emit(tc.name)
        return results, finalized

    def _trace_model(self, step: int, resp: ChatResponse, dt: float, ctx: Any) -> None:
        """One model reply in the trace, with the usage and budget after it."""
        u = resp.usage
        self.trace.append(
            {
                "type": "model",
                "step": step,
                "text": resp.text,
                "tool_calls": [tc.model_dump() for tc in resp.tool_calls],
                "stop_reason": resp.stop_reason,
                "usage": u.model_dump(),
                "seconds": round(dt, 3),
                "context": ctx,
                "budget": self.budget.to_dict(),
            }
        )


def _short_args(args: dict | None, limit: int = 120) -> str:
    s = json.dumps(args or {}, default=str)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def score_submission(
    loaded_task: LoadedTask, run_dir: Path, metrics: list[str] | None = None, judge: Any = None
) -> ScoreDocument:
    """Score the finalized submission with the evaluator (the same path as `physcodegym score`)."""
    from physcodegym.evaluator.scoring import score_run

    sub = Path(run_dir) / "submission"
    return score_run(loaded_task, sub, metrics=metrics, judge=judge)
