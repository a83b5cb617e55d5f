"""Metric results that carry their state, so a missing number is never mistaken for a score (SPEC §7)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

METRIC_NAMES = ("S_ssim", "S_lpips", "S_obj", "S_evt", "S_mot", "S_val")
VISUAL = ("S_ssim", "S_lpips", "S_obj")
PHYSICAL = ("S_evt", "S_mot", "S_val")


class MetricState(str, Enum):
    ok = "ok"
    not_applicable = "not_applicable"  # the metric does not apply to this task/candidate
    error = "error"  # computing it failed (the reason says why)
    uncomputable = "uncomputable"  # a prerequisite is absent (no judge configured, no LPIPS weights)


class MetricResult(BaseModel):
    name: str
    value: float | None = None  # in [0, 1] when state == ok, else None
    state: MetricState = MetricState.ok
    reason: str | None = None
    per_frame: list[float] | None = None  # curves kept for plots and the report
    details: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def ok(cls, name: str, value: float, **kw: Any) -> MetricResult:
        return cls(name=name, value=float(min(1.0, max(0.0, value))), state=MetricState.ok, **kw)

    @classmethod
    def missing(cls, name: str, state: MetricState, reason: str, **kw: Any) -> MetricResult:
        return cls(name=name, value=None, state=state, reason=reason, **kw)
