"""Accounting over a batch (SPEC §8): which run counts, and over which tasks a mean is taken.

- The latest attempt that produced a rendered sequence counts for a (configuration, task), not the best one.
- A task with no valid artifact scores 0 on every metric and stays in the denominator.
- A metric that could not be computed on an existing artifact (a technical gap) is left out of that metric's
  mean, never counted as 0; each mean carries n, its averaging set.
- Averaging sets (each labelled): all tasks (the main leaderboard), produced artifacts, each configuration's
  physical-evaluation subset, and the subset shared by every configuration.
- Column aggregates: S_vis and S_phys average the displayed component columns that are covered in this batch,
  S_tot averages S_vis and S_phys; `covers` names them.
"""

from __future__ import annotations

from typing import Any

from physcodegym.metrics.results import METRIC_NAMES, PHYSICAL, VISUAL

SETS: dict[str, str] = {
    "all_tasks": "all tasks of the batch; a task without a valid artifact scores 0 on every metric",
    "produced_artifacts": "tasks for which the configuration produced a rendered sequence",
    "physical_subset": "tasks with a physical-validity judgment for the configuration, missing-artifact zeros included",
    "shared_subset": "tasks where every configuration produced an artifact with every covered metric computed",
}


def _attempt_key(a: str) -> tuple:
    return (0, int(a), "") if a.isdigit() else (1, 0, a)


def select(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """(config, task) -> the row that counts: the latest attempt with a rendered sequence, else the latest attempt."""
    by: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        by.setdefault((r["config"], r["task_id"]), []).append(r)
    out = {}
    for key, rs in by.items():
        rs = sorted(rs, key=lambda r: _attempt_key(str(r["attempt"])))
        with_art = [r for r in rs if r.get("artifact")]
        out[key] = with_art[-1] if with_art else rs[-1]
    return out


def task_values(row: dict | None) -> dict[str, Any]:
    """Per-task metric values for the accounting: None = technical gap; zeros for a missing artifact."""
    if row is None or not row.get("artifact"):
        reason = "no submission" if row is None else (row.get("reason") or row.get("status"))
        return {"artifact": False, "values": dict.fromkeys(METRIC_NAMES, 0.0), "reason": reason,
                "status": row.get("status") if row else "missing"}
    if row.get("status") != "done" or not isinstance(row.get("metrics"), dict):
        # an artifact exists but scoring failed: every metric is a technical gap, not a zero
        return {"artifact": True, "values": dict.fromkeys(METRIC_NAMES), "reason": row.get("reason"),
                "status": row.get("status")}
    m = row["metrics"]
    vals = {n: (float(m[n]) if m.get(n) is not None else None) for n in METRIC_NAMES}
    return {"artifact": True, "values": vals, "reason": None, "status": "done"}


def _s_tot(row: dict | None) -> float | None:
    """The row's S_tot from its score document (None when it has none)."""
    sc = (row or {}).get("score")
    return sc.S_tot if sc is not None else None


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _column_means(per_task: dict[str, dict], task_ids: list[str], covered: list[str]) -> dict[str, Any]:
    cols: dict[str, Any] = {}
    for n in METRIC_NAMES:
        xs = [per_task[t]["values"][n] for t in task_ids if per_task[t]["values"][n] is not None]
        cols[n] = {"mean": _mean(xs) if n in covered else None, "n": len(xs) if n in covered else 0}
    vis = [n for n in VISUAL if cols[n]["mean"] is not None]
    phys = [n for n in PHYSICAL if cols[n]["mean"] is not None]
    s_vis = _mean([cols[n]["mean"] for n in vis])
    s_phys = _mean([cols[n]["mean"] for n in phys])
    s_tot = _mean([x for x in (s_vis, s_phys) if x is not None])
    cols["S_vis"] = {"mean": s_vis, "covers": vis}
    cols["S_phys"] = {"mean": s_phys, "covers": phys}
    cols["S_tot"] = {"mean": s_tot, "covers": vis + phys}
    cols["tasks"] = len(task_ids)
    return cols


def leaderboard(rows: list[dict], tasks: list[dict], configs: dict[str, dict]) -> dict[str, Any]:
    """Everything the report needs: per-config means on every averaging set, per category, per task."""
    chosen = select(rows)
    task_ids = [t["id"] for t in tasks]
    cfg_names = sorted(set(configs) | {r["config"] for r in rows})
    per: dict[str, dict[str, dict]] = {c: {t: task_values(chosen.get((c, t))) for t in task_ids} for c in cfg_names}
    # a metric is covered if it was computed on at least one artifact in the batch (else: missing with its reason)
    covered = [n for n in METRIC_NAMES if any(per[c][t]["artifact"] and per[c][t]["values"][n] is not None
                                               for c in cfg_names for t in task_ids)]
    missing_reasons: dict[str, str] = {}
    for r in rows:  # rows of the store: `score` is a ScoreDocument or None
        sc = r.get("score")
        for n, why in (sc.missing if sc is not None else {}).items():
            if n not in covered:
                missing_reasons.setdefault(n, why)
    for n in METRIC_NAMES:
        if n not in covered:
            missing_reasons.setdefault(n, "no artifact in this batch was scored on it")
    shared = [t for t in task_ids if cfg_names and all(
        per[c][t]["artifact"] and all(per[c][t]["values"][n] is not None for n in covered) for c in cfg_names)]
    board = []
    for c in cfg_names:
        produced = [t for t in task_ids if per[c][t]["artifact"]]
        phys = [t for t in task_ids if per[c][t]["values"]["S_val"] is not None] if "S_val" in covered else []
        cfg = configs.get(c, {})
        board.append({
            "config": c,
            "model": cfg.get("model") or cfg.get("label") or c,
            "harness": cfg.get("harness") or "",
            "cost_usd_per_task": cfg.get("cost_usd_per_task"),
            "tokens_per_task": cfg.get("tokens_per_task"),
            "artifacts": len(produced),
            "tasks": len(task_ids),
            "sets": {
                "all_tasks": _column_means(per[c], task_ids, covered),
                "produced_artifacts": _column_means(per[c], produced, covered),
                "physical_subset": _column_means(per[c], phys, covered),
                "shared_subset": _column_means(per[c], shared, covered),
            },
        })
    board.sort(key=lambda b: -(b["sets"]["all_tasks"]["S_tot"]["mean"] or 0.0))
    categories = sorted({t["category"] for t in tasks})
    by_cat = {}
    for cat in categories:
        ids = [t["id"] for t in tasks if t["category"] == cat]
        by_cat[cat] = {c: _column_means(per[c], ids, covered) for c in cfg_names}
    per_task = {c: {t: {**per[c][t], "attempt": (chosen.get((c, t)) or {}).get("attempt"),
                        "S_tot": _s_tot(chosen.get((c, t))) if per[c][t]["status"] == "done"
                        else (0.0 if not per[c][t]["artifact"] else None)}
                    for t in task_ids} for c in cfg_names}
    return {
        "sets": SETS,
        "covered_metrics": covered,
        "missing_metrics": missing_reasons,
        "shared_tasks": shared,
        "leaderboard": board,
        "categories": by_cat,
        "per_task": per_task,
        "configs": cfg_names,
        "tasks": tasks,
    }
