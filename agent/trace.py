"""The run trace: one JSON line per event, appended and flushed as it happens.

A killed run loses at most the line being written; `read_trace` skips a torn last line, so
`--resume` can rebuild the conversation from what was recorded.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from physcodegym.agent.run_document import AgentRunDocument, read_score_field
from physcodegym.core import atomic

# The agent's run document in a run folder (status running | finalized | budget_exhausted | stopped |
# provider_error ..., budget, launches, score). Not the sandbox's `run.json`, which records one program run.
AGENT_RUN_FILE = "agent_run.json"


class Trace:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        rec = {"t": round(time.time(), 3), **record}
        line = json.dumps(rec, default=str, ensure_ascii=False)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        return rec


def read_trace(path: Path) -> list[dict[str, Any]]:
    """All complete records; a torn final line (killed mid-write) is dropped."""
    p = Path(path)
    if not p.is_file():
        return []
    out: list[dict[str, Any]] = []
    lines = p.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                break
            raise
    return out


def write_json_atomic(path: Path, doc: Any) -> None:
    """Write JSON so readers never see half a file (creates the parent folder)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_json(path, doc)


def agent_run_doc(status: str, reason: str, task: str, provider: str, model: str, run_dir: Path, started: str,
                  budget: Any, state: dict, *, transport: str | None = None,
                  segments: int | None = None) -> AgentRunDocument:
    """The agent run document (`AGENT_RUN_FILE`) of a run in progress or ended, from its budget
    (`agent.budget.Budget`) and its toolbox state; the agent loop and the MCP session write the same one
    (the MCP session adds its `transport` and its connection `segments`)."""
    return AgentRunDocument(
        status=status,
        reason=reason,
        task=task,
        provider=provider,
        model=model,
        transport=transport,
        run_dir=str(run_dir),
        started=started,
        updated=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        steps=budget.steps,
        segments=segments,
        # remaining() first, then the counters (to_dict's cost_usd, unrounded, replaces remaining()'s in place)
        budget={**budget.remaining(), **{k: v for k, v in budget.to_dict().items() if k != "limits"}},
        limits=asdict(budget.limits),
        revisions=len(state["revisions"]),
        launches=[{k: e.get(k) for k in ("launch", "tool", "mode", "status", "revision", "seconds")}
                  for e in state["launches"]],
        finalized=state.get("finalized"),
        submission="submission" if state.get("finalized") else None,
        trace="trace.jsonl",
    )


def write_agent_run(path: Path, doc: AgentRunDocument) -> AgentRunDocument:
    """Write the agent run document, keeping the valid `score` a previous one was given (`physcodegym agent` adds
    it; a rewrite by a resumed run must not lose it)."""
    if doc.score is None and path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, OSError):
            old = {}
        if isinstance(old, dict) and "score" in old:
            doc.score = read_score_field(old["score"])
    write_json_atomic(path, doc.to_json())
    return doc
