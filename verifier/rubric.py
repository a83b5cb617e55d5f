"""Rubric aggregation (pure Python): criterion scores -> S_val by the rubric's rule.

The rule of SPEC §5: a weighted mean of criterion scores, capped when a structural criterion fails
(0.5 in its examples). Criteria whose verdict could not be established (`passed` is None) are left
out of the mean and listed, so an unknown is never counted as a pass or a fail.
"""

from __future__ import annotations

from typing import Any

from physcodegym.probes.audit.findings import FINDING_KINDS
from physcodegym.tasks.schema import Aggregation


def aggregate(criteria_results: list[dict[str, Any]],
              aggregation: Aggregation | None = None) -> tuple[float | None, dict[str, Any]]:
    """Return (S_val, explanation). S_val is None when no criterion has a verdict."""
    agg = aggregation or Aggregation()
    known = [c for c in criteria_results if c.get("passed") is not None]
    unknown = [c["id"] for c in criteria_results if c.get("passed") is None]
    unknown_why = {c["id"]: c.get("reason") or "no reason given" for c in criteria_results if c.get("passed") is None}
    if not known:
        return None, {"rule": agg.rule, "reason": "no criterion could be evaluated", "undetermined": unknown,
                      "undetermined_reasons": unknown_why}
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
        "undetermined_reasons": unknown_why,
    }


VALIDITY_KINDS = FINDING_KINDS  # every audit finding kind is a validity finding


def charge_findings(
    s_val: float | None, expl: dict[str, Any], findings: list[dict[str, Any]], criteria_results: list[dict[str, Any]],
    aggregation: Aggregation | None = None
) -> tuple[float | None, dict[str, Any]]:
    """Charge every validity finding against S_val, whether or not a criterion names it.

    Each finding caps S_val at its kind's cap (`Aggregation.finding_cap`); caps do not compound, so one
    defect found by two detectors costs once. Every finding gets a row saying its cap, what it alone would
    cost (`cost`: the drop from the criteria-only S_val to its cap) and the failed criteria that also cite it.
    With no criterion evaluated but findings present, S_val is the lowest cap (the findings are the verdict).
    """
    agg = aggregation or Aggregation()
    rows = []
    before = s_val
    failed = [c for c in criteria_results if c.get("passed") is False]
    for f in findings:
        kind = f.get("kind")
        if kind not in VALIDITY_KINDS:
            continue
        cap = agg.finding_cap(kind)
        objs = set(f.get("objects") or [])
        cited = [
            c["id"] for c in failed if kind in str(c.get("evidence", "")) or (
                objs and any(o in str(c.get("reason", "")) for o in objs))]
        base = 1.0 if before is None else before
        rows.append({"kind": kind, "objects": sorted(objs), "message": f.get("message", ""), "cap": cap,
                     "cost": round(max(0.0, base - cap), 6), "also_failed": cited})
    if not rows:
        return s_val, {**expl, "finding_charges": [], "S_val_before_findings": s_val}
    low = min(r["cap"] for r in rows)
    s = low if s_val is None else min(s_val, low)
    for r in rows:
        r["binding"] = r["cap"] == low and (s_val is None or low < s_val)
    return float(s), {**expl, "finding_charges": rows, "S_val_before_findings": s_val}
