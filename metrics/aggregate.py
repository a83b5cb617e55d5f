"""Score aggregation (SPEC §4): S_vis, S_phys, S_tot over the metrics that were actually computed.

A metric that could not be computed is left out of its group's mean and listed as missing with its reason;
`coverage` names the metrics each aggregate is built from, so a partial S_vis is never mistaken for a full one.
A candidate with no valid artifact gets 0 on every metric (state ok, reason given), so it stays in every mean.
"""

from __future__ import annotations

from physcodegym.metrics.results import METRIC_NAMES, PHYSICAL, VISUAL, MetricResult, MetricState


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def aggregate(results: dict[str, MetricResult]) -> dict:
    """Metrics, states, missing reasons, S_vis / S_phys / S_tot and their coverage from per-metric results."""
    metrics: dict[str, float | None] = {}
    states: dict[str, dict] = {}
    missing: dict[str, str] = {}
    for name in METRIC_NAMES:
        r = results.get(name) or MetricResult.missing(name, MetricState.not_applicable, "not requested")
        ok = r.state == MetricState.ok and r.value is not None
        metrics[name] = float(r.value) if ok else None
        states[name] = {"state": r.state.value, "reason": r.reason}
        if not ok:
            missing[name] = r.reason or r.state.value
    cov_vis = [n for n in VISUAL if metrics[n] is not None]
    cov_phys = [n for n in PHYSICAL if metrics[n] is not None]
    s_vis = _mean([metrics[n] for n in cov_vis])
    s_phys = _mean([metrics[n] for n in cov_phys])
    groups = [v for v in (s_vis, s_phys) if v is not None]
    s_tot = _mean(groups)
    return {
        "metrics": metrics,
        "states": states,
        "missing": missing,
        "S_vis": s_vis,
        "S_phys": s_phys,
        "S_tot": s_tot,
        "coverage": {
            "S_vis": cov_vis,
            "S_phys": cov_phys,
            "S_tot": cov_vis + cov_phys,
        },
        "complete": not missing,
    }


def zero_results(reason: str) -> dict[str, MetricResult]:
    """Every metric scored 0 for a candidate with no valid artifact (SPEC §4: it stays in the denominator)."""
    return {
        n: MetricResult.ok(n, 0.0, reason=f"no valid artifact: {reason}", details={"no_artifact": True})
        for n in METRIC_NAMES
    }
