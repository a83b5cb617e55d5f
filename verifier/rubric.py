"""Rubric aggregation (pure Python): criterion scores -> S_val by the rubric's rule.

The paper's rule: a weighted mean of criterion scores, capped when a structural criterion fails
(0.5 in its examples). Criteria whose verdict could not be established (`passed` is None) are left
out of the mean and listed, so an unknown is never counted as a pass or a fail.
"""

from __future__ import annotations

from typing import Any

from physcodegym.tasks.schema import Aggregation


def aggregate(criteria_results: list[dict[str, Any]], aggregation: Aggregation | None = None) -> tuple[float | None, dict[str, Any]]:
    """Return (S_val, explanation). S_val is None when no criterion has a verdict."""
    agg = aggregation or Aggregation()
    known = [c for c in criteria_results if c.get("passed") is not None]
    unknown = [c["id"] for c in criteria_results if c.get("passed") is None]
    if not known:
        return None, {"rule": agg.rule, "reason": "no criterion could be evaluated", "undetermined": unknown}
    wsum = sum(float(c.get("weight", 1.0)) for c in known)
    mean = sum(float(c.get("weight", 1.0)) * float(c.get("score", 1.0 if c["passed"] else 0.0)) for c in known) / wsum
    caps: list[tuple[str, float]] = []
    for c in known:
        if c.get("structural") and not c["passed"]:
            cap = c.get("cap")
            caps.append((c["id"], float(agg.default_cap if cap is None else cap)))
    s = mean
    if caps:
        s = min(mean, min(v for _, v in caps))
    s = float(min(1.0, max(0.0, s)))
    return s, {
        "rule": agg.rule,
        "weighted_mean": round(mean, 6),
        "caps": [{"criterion": i, "cap": v} for i, v in caps],
        "failed": [c["id"] for c in known if not c["passed"]],
        "undetermined": unknown,
    }
