"""Reading an agent run folder while the run goes on (the panel polls it on every timer tick).

The run folder is written by `agent.loop.AgentRun`: `agent_run.json` (rewritten atomically after each step),
`trace.jsonl` (appended), images and launch outputs. Nothing here imports bpy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from physcodegym.agent.run_document import read_agent_run
from physcodegym.agent.trace import AGENT_RUN_FILE

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def _last_budget(trace: Path) -> dict[str, Any] | None:
    """The budget snapshot of the trace's latest record that carries one (a torn last line is skipped)."""
    for line in reversed(trace.read_text(encoding="utf-8", errors="replace").splitlines()):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("budget"), dict):
            return rec["budget"]
    return None


def read_progress(run_dir: Path) -> dict[str, Any]:
    """Launches, tokens, cost and status of a run folder (its agent_run.json, else the trace's last budget),
    the newest image and the newest saved scene (the submission's first)."""
    run_dir = Path(run_dir)
    out: dict[str, Any] = {
        "launches": 0,
        "tokens": 0,
        "cost_usd": 0.0,
        "status": "",
        "preview": None,
        "submission_blend": None,
    }
    budget: dict[str, Any] | None = None
    doc_path = run_dir / AGENT_RUN_FILE
    if doc_path.is_file():
        try:
            raw = json.loads(doc_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, OSError):
            raw = None  # being replaced right now; the next tick reads it
        try:
            doc = read_agent_run(raw, str(doc_path))
            budget, out["status"] = doc.budget.model_dump(), doc.status
        except ValueError:  # torn, or partial (another writer): take what it has, the trace the rest
            if isinstance(raw, dict):
                budget = raw.get("budget") if isinstance(raw.get("budget"), dict) else None
                out["status"] = str(raw.get("status") or "")
    trace = run_dir / "trace.jsonl"
    if budget is None and trace.is_file():
        budget = _last_budget(trace)
    if budget:
        out["launches"] = int(budget.get("launches_used", 0))
        out["tokens"] = int(budget.get("input_tokens", 0)) + int(budget.get("output_tokens", 0))
        out["cost_usd"] = float(budget.get("cost_usd", 0.0))
    imgs = [p for p in run_dir.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()]
    if imgs:
        out["preview"] = str(max(imgs, key=lambda p: p.stat().st_mtime))
    blends = [p for p in run_dir.rglob("scene.blend") if p.is_file()]
    pick = [p for p in blends if "submission" in p.relative_to(run_dir).parts] or blends
    if pick:
        out["submission_blend"] = str(max(pick, key=lambda p: p.stat().st_mtime))
    return out
