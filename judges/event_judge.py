"""S_evt: a vision-language judge decides each annotated event item from the candidate video alone.

What the judge is shown, and why (SPEC §4): for each event item it receives
  * role stills from the REFERENCE: its first frame with each participating role marked, plus a zoomed crop,
    so it can confirm which candidate object plays which role (identity only; nothing of the action);
  * the CANDIDATE video: evenly spaced full frames with their times, and supplementary temporal frames
    (contact sheets of dense time-stamped thumbnails over the whole candidate);
  * the item itself as the criterion to check: its description, its kind (action / order / final state /
    persistence), the roles it names, and for order items the descriptions of the items it must follow.
It is NOT shown the reference video's frames of the action, the reference's annotated interval, its
persistence time or its evidence notes: the reference's "action text" (how and when it happened there)
stays hidden, so the judge must find the event in the candidate and cite candidate time intervals.

Each item is judged `n_judgments` (3) times independently (separate calls, separate cache entries); the
majority verdict needs more than half of the judgments (2 of 3); without a majority the item is unjudged.
S_evt is the weighted fraction of passed items among the judged ones; a key item whose majority is "fail"
caps S_evt at 0; a key item without a majority makes the metric an error (the cap cannot be decided).
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
    contact_sheet,
    image_part,
    parse_model,
    role_still,
    sample_indices,
    t_of,
    unjudged_reason,
)
from physcodegym.llm.base import Message, Provider, TextPart
from physcodegym.metrics.results import MetricResult, MetricState
from physcodegym.tasks.loader import LoadedTask
from physcodegym.tasks.schema import FPS, EventItem, EventKind, Task
from pydantic import BaseModel, ConfigDict, Field, model_validator

PROMPT_VERSION = "evt-v1"
NAME = "S_evt"
N_MAIN = 8
SHEET_FPS = 3.0
SHEET_COLS, SHEET_ROWS = 4, 3

SYSTEM = (
    "You are a strict judge of physical events in a rendered video (the candidate). Reference stills show which "
    "object plays each role; they show only the starting state. Decide from the candidate frames alone whether "
    "the event item happens in the candidate, with the objects matching the roles. Failure and uncertainty "
    "rules: if the event is not clearly visible, happens with the wrong objects, in the wrong order, or its final "
    'state is not reached or not kept, the verdict is "fail"; when in doubt, "fail". For "pass" cite the '
    "candidate time interval(s) in seconds where the event can be seen. "
    "Answer with exactly one JSON object and nothing else: "
    '{"item_id": "<id>", "verdict": "pass"|"fail", "evidence": [{"start_s": <float>, "end_s": <float>}], '
    '"reason": "<one or two sentences>"}.'
)

KIND_HINT = {
    EventKind.action: "an action that must happen",
    EventKind.order: "an ordering: this must happen after the listed items",
    EventKind.final_state: "a final state that must be reached",
    EventKind.persistence: "a state that, once reached, must persist to the end of the video",
}


class Interval(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start_s: float = Field(ge=0.0)
    end_s: float = Field(ge=0.0)

    @model_validator(mode="after")
    def _ordered(self) -> Interval:
        if self.end_s < self.start_s:
            raise ValueError(f"end_s {self.end_s} is before start_s {self.start_s}")
        return self


class EventVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: str
    verdict: Literal["pass", "fail"]
    evidence: list[Interval] = Field(default_factory=list)
    reason: str = Field(default="", max_length=2000)


def item_prompt(task: Task, item: EventItem) -> str:
    """The criterion text: description, kind and roles (no reference timing, no reference evidence)."""
    lines = [
        f"Event item id: {item.id}",
        f"Kind: {item.kind.value} ({KIND_HINT[item.kind]})",
        f"Criterion: {item.description}",
    ]
    for r in item.roles:
        role = task.role(r)
        lines.append(f"Role {r}: {role.description} (see the reference still labelled {r})")
    if item.after:
        before = {e.id: e.description for e in task.events}
        lines.append("Must happen after: " + "; ".join(f"{a}: {before[a]}" for a in item.after))
    return "\n".join(lines)


def _validator(item: EventItem, duration_s: float):
    def validate(text: str) -> EventVerdict:
        v = parse_model(text, EventVerdict)
        if v.item_id != item.id:
            raise JudgeAnswerError(f"item_id is {v.item_id!r}, expected {item.id!r}")
        if v.verdict == "pass" and not v.evidence:
            raise JudgeAnswerError("a pass must cite at least one candidate time interval in evidence")
        late = [iv for iv in v.evidence if iv.end_s > duration_s + 1e-6]
        if late:
            raise JudgeAnswerError(f"evidence interval ends after the candidate's end ({duration_s:.2f} s)")
        return v

    return validate


def majority(verdicts: list[str | None], n: int) -> str | None:
    """'pass'/'fail' when more than half of the n judgments agree, else None (no majority: unjudged)."""
    need = n // 2 + 1
    if verdicts.count("pass") >= need:
        return "pass"
    if verdicts.count("fail") >= need:
        return "fail"
    return None


def _candidate_content(frames: np.ndarray) -> list:
    n = frames.shape[0]
    content: list = [TextPart(text=f"Candidate video: {n} frames at {FPS} fps ({n / FPS:.2f} s). Main frames:")]
    for i in sample_indices(n, N_MAIN):
        content += [TextPart(text=f"Candidate t={t_of(i):.2f} s (frame {i + 1}):"), image_part(frames[i])]
    dense = sample_indices(n, max(2, int(round(n / FPS * SHEET_FPS))))
    per = SHEET_COLS * SHEET_ROWS
    for s in range(0, len(dense), per):
        chunk = dense[s : s + per]
        content += [
            TextPart(
                text=f"Supplementary temporal frames, candidate t={t_of(chunk[0]):.2f}-"
                f"{t_of(chunk[-1]):.2f} s (time stamped, left to right, top to bottom):"
            ),
            image_part(contact_sheet(frames, chunk, cols=SHEET_COLS)),
        ]
    return content


def _judge_item(ask: Asker, msgs: list[Message], item: EventItem, duration: float, n_judgments: int) -> dict:
    """One event item's `n_judgments` independent verdicts and their majority (JudgeUnusable ends the metric)."""
    judgments = []
    for s in range(n_judgments):
        asked = ask(msgs, _validator(item, duration), sample=s)
        j = {"sample": s, "cached": asked.cached, "attempts": asked.attempts}
        if asked.verdict is None:
            j.update(verdict=None, reason=unjudged_reason(asked), evidence=[])
        else:
            j.update(
                verdict=asked.verdict["verdict"],
                evidence=asked.verdict["evidence"],
                reason=asked.verdict.get("reason", ""),
            )
        judgments.append(j)
    maj = majority([j["verdict"] for j in judgments], n_judgments)
    return {
        "id": item.id,
        "kind": item.kind.value,
        "weight": item.weight,
        "key": item.key,
        "judgments": judgments,
        "verdicts": [j["verdict"] for j in judgments],
        "majority": maj,
        "evidence": [iv for j in judgments if maj and j["verdict"] == maj for iv in j["evidence"]],
    }


def _aggregate(rows: list[dict], provider: Provider, n_judgments: int, ask: Asker) -> MetricResult:
    """S_evt from the items' majorities: the weighted pass share, capped at 0 by a failed key item, missing when a
    key item has no majority."""
    judged = [r for r in rows if r["majority"] is not None]
    unjudged = [{"id": r["id"], "key": r["key"], "verdicts": r["verdicts"]} for r in rows if r["majority"] is None]
    failed_keys = [r["id"] for r in judged if r["key"] and r["majority"] == "fail"]
    w_judged = sum(r["weight"] for r in judged)
    w_pass = sum(r["weight"] for r in judged if r["majority"] == "pass")
    raw = w_pass / w_judged if w_judged > 0 else None
    details = {
        "prompt_version": PROMPT_VERSION,
        "provider": provider.name,
        "model": provider.model,
        "n_judgments": n_judgments,
        "items": rows,
        "unjudged": unjudged,
        "weighted_pass": raw,
        "key_cap_applied": bool(failed_keys),
        "failed_key_items": failed_keys,
        "usage": ask.tally.as_dict(),
        "shown": {
            "role_stills": "reference first frame, roles marked",
            "candidate_main_frames": N_MAIN,
            "supplementary_sheets_fps": SHEET_FPS,
            "reference_action_frames": False,
            "reference_timestamps": False,
        },
    }
    if failed_keys:
        return MetricResult.ok(
            NAME, 0.0, reason=f"key item(s) failed: {', '.join(failed_keys)} (S_evt capped at 0)", details=details
        )
    unjudged_keys = [u["id"] for u in unjudged if u["key"]]
    if unjudged_keys:
        return MetricResult.missing(
            NAME,
            MetricState.error,
            f"key item(s) {', '.join(unjudged_keys)} have no majority verdict: the key cap cannot be decided",
            details=details,
        )
    if raw is None:
        return MetricResult.missing(
            NAME, MetricState.error, f"no event item could be judged ({len(rows)} unjudged)", details=details
        )
    reason = None
    if unjudged:
        reason = f"partial: {len(unjudged)} of {len(rows)} items unjudged; weighted over the {len(judged)} judged"
    return MetricResult.ok(NAME, raw, reason=reason, details=details)


def judge_events(
    loaded_task: LoadedTask,
    ref_frames: np.ndarray,
    cand_frames: np.ndarray,
    provider: Provider | None,
    n_judgments: int = 3,
    cache_dir: Path | None = None,
    *,
    max_attempts: int = 3,
) -> MetricResult:
    """S_evt with three (n_judgments) independent verdicts per item, majority vote and the key-item cap."""
    if provider is None:
        return MetricResult.missing(
            NAME, MetricState.uncomputable, "no judge configured (give --judge-provider and --judge-model)"
        )
    if n_judgments < 1:
        raise ValueError("n_judgments must be >= 1")
    ref = check_frames(ref_frames, "ref_frames")
    cand = check_frames(cand_frames, "cand_frames")
    task = loaded_task.task
    duration = cand.shape[0] / FPS
    cand_content = _candidate_content(cand)
    stills: dict[str, list] = {}
    for r in task.roles:
        stills[r.name] = [
            TextPart(
                text=f"Reference still for role {r.name} ({r.description}), start of the "
                "reference video, identity only:"
            ),
            image_part(role_still(ref[0], r.name, r.screen_xy)),
        ]
    ask = Asker(NAME, provider, PROMPT_VERSION, JudgeCache(cache_dir), max_attempts)
    rows = []
    for item in task.events:
        user = [p for r in item.roles for p in stills[r]] + cand_content + [TextPart(text=item_prompt(task, item))]
        msgs = [Message(role="system", content=[TextPart(text=SYSTEM)]), Message(role="user", content=user)]
        try:
            rows.append(_judge_item(ask, msgs, item, duration, n_judgments))
        except JudgeUnusable as e:
            return e.result
    return _aggregate(rows, provider, n_judgments, ask)
