"""S_obj: a vision-language judge checks the candidate video against the task's object checklist.

One question per checklist item (category, count, appearance attributes, initial layout), asked on frames
sampled from the candidate (the first frame is labelled as the initial layout). The judge answers with a
strict JSON verdict whose per-aspect checks must agree with the overall verdict; the score is the pass rate
over the items that received a valid verdict. Items left without one are listed as unjudged, and the reason
says the value covers only the judged items; with no judged item the metric is an error, never 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
from physcodegym.judges.judge_common import (
    Asker,
    JudgeAnswerError,
    JudgeCache,
    JudgeUnusable,
    check_frames,
    image_part,
    parse_model,
    sample_indices,
    t_of,
    unjudged_reason,
)
from physcodegym.llm.base import Message, Provider, TextPart
from physcodegym.metrics.results import MetricResult, MetricState
from physcodegym.tasks.loader import LoadedTask
from physcodegym.tasks.schema import ChecklistItem
from pydantic import BaseModel, ConfigDict, Field, model_validator

PROMPT_VERSION = "obj-v1"
NAME = "S_obj"
N_FRAMES = 6

SYSTEM = (
    "You are a strict visual judge for a 3D-reconstruction benchmark. You see frames of a rendered video "
    "(the candidate) and one checklist item describing objects that must be present. Judge only what is visible "
    "in the frames. Check each aspect separately: category (the object kind), count (exactly the number asked), "
    "attributes (every listed appearance attribute), layout (the initial spatial arrangement, judged on the first "
    "frame). If an aspect cannot be confirmed from the frames, it fails. "
    "Answer with exactly one JSON object and nothing else: "
    '{"item_id": "<id>", "checks": {"category": true|false, "count": true|false, "attributes": true|false, '
    '"layout": true|false|null}, "observed_count": <int>, "verdict": "pass"|"fail", "reason": "<one sentence>"}. '
    'Use "layout": null only when the item gives no layout. The verdict is "pass" only if every check is true.'
)


class ObjectChecks(BaseModel):
    model_config = ConfigDict(extra="forbid")
    category: bool
    count: bool
    attributes: bool
    layout: bool | None


class ObjectVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: str
    checks: ObjectChecks
    observed_count: int | None = Field(default=None, ge=0)
    verdict: Literal["pass", "fail"]
    reason: str = Field(default="", max_length=2000)

    @model_validator(mode="after")
    def _consistent(self) -> ObjectVerdict:
        c = self.checks
        all_ok = c.category and c.count and c.attributes and c.layout is not False
        if (self.verdict == "pass") != all_ok:
            raise ValueError(f"verdict {self.verdict!r} contradicts the checks {c.model_dump()}")
        return self


def item_prompt(item: ChecklistItem) -> str:
    lines = [f"Checklist item id: {item.id}", f"Category: {item.category}", f"Count: exactly {item.count}"]
    lines.append("Attributes: " + ("; ".join(item.attributes) if item.attributes else "(none listed: answer true)"))
    lines.append("Initial layout: " + (item.layout or "(none given: answer null)"))
    return "\n".join(lines)


def _validator(item: ChecklistItem):
    def validate(text: str) -> ObjectVerdict:
        v = parse_model(text, ObjectVerdict)
        if v.item_id != item.id:
            raise JudgeAnswerError(f"item_id is {v.item_id!r}, expected {item.id!r}")
        if not item.layout and v.checks.layout is not None:
            raise JudgeAnswerError("checks.layout must be null: this item gives no layout")
        if item.layout and v.checks.layout is None:
            raise JudgeAnswerError("checks.layout must be true or false: this item gives a layout")
        return v

    return validate


def judge_objects(
    loaded_task: LoadedTask,
    cand_frames: np.ndarray,
    provider: Provider | None,
    cache_dir: Path | None = None,
    *,
    n_frames: int = N_FRAMES,
    max_attempts: int = 3,
) -> MetricResult:
    """S_obj = passed / judged checklist items; details hold every verdict and the unjudged items."""
    if provider is None:
        return MetricResult.missing(
            NAME, MetricState.uncomputable, "no judge configured (give --judge-provider and --judge-model)"
        )
    frames = check_frames(cand_frames, "cand_frames")
    task = loaded_task.task
    idx = sample_indices(frames.shape[0], n_frames)
    content: list = []
    for k, i in enumerate(idx):
        label = "initial layout" if k == 0 else "later"
        content += [TextPart(text=f"Candidate frame {i + 1} (t={t_of(i):.2f} s, {label}):"), image_part(frames[i])]
    ask = Asker(NAME, provider, PROMPT_VERSION, JudgeCache(cache_dir), max_attempts)
    items, unjudged = [], []
    for item in task.checklist:
        msgs = [
            Message(role="system", content=[TextPart(text=SYSTEM)]),
            Message(role="user", content=[*content, TextPart(text=item_prompt(item))]),
        ]
        try:
            asked = ask(msgs, _validator(item))
        except JudgeUnusable as e:
            return e.result
        row = {"id": item.id, "verdict": None, "attempts": asked.attempts, "cached": asked.cached}
        if asked.verdict is None:
            row["reason"] = unjudged_reason(asked)
            unjudged.append({"id": item.id, "reason": row["reason"]})
        else:
            row.update(
                verdict=asked.verdict["verdict"],
                checks=asked.verdict["checks"],
                observed_count=asked.verdict.get("observed_count"),
                reason=asked.verdict.get("reason", ""),
            )
        items.append(row)
    judged = [r for r in items if r["verdict"] is not None]
    passed = sum(1 for r in judged if r["verdict"] == "pass")
    details = {
        "prompt_version": PROMPT_VERSION,
        "provider": provider.name,
        "model": provider.model,
        "frames": idx,
        "items": items,
        "unjudged": unjudged,
        "judged": len(judged),
        "passed": passed,
        "total": len(items),
        "usage": ask.tally.as_dict(),
    }
    if not judged:
        return MetricResult.missing(
            NAME, MetricState.error, f"no checklist item could be judged ({len(items)} unjudged)", details=details
        )
    reason = None
    if unjudged:
        reason = f"partial: {len(unjudged)} of {len(items)} items unjudged; pass rate over the {len(judged)} judged"
    return MetricResult.ok(NAME, passed / len(judged), reason=reason, details=details)
