"""Evaluate a task's rubric on a native scene: role mapping, one check per criterion, S_val.

Called in-process by `physcodegym audit --task` (bpy loaded, scene baked, samples taken once).
Counterfactual criteria re-bake copies of the saved `.blend` in fresh worker processes and reuse
the audit's samples as their baseline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from physcodegym.probes.checks import CheckContext, run_check
from physcodegym.probes.roles import map_scene_roles, simple_mapping
from physcodegym.verifier.rubric import aggregate


def _blend_for(scene: Any, run_dir: Path | None) -> Path | None:
    if run_dir is not None:
        p = Path(run_dir)
        if p.suffix == ".blend" and p.is_file():
            return p
        if (p / "scene.blend").is_file():
            return p / "scene.blend"
    try:
        import bpy

        fp = bpy.data.filepath
        return Path(fp) if fp else None
    except ImportError:  # pragma: no cover
        return None


def make_context(loaded_task: Any, scene: Any, samples: Any, report: Any, run_dir: Path | None, mapping: dict[str, str], work_dir: Path | None = None) -> CheckContext:
    """A CheckContext whose counterfactual hook runs branches on the saved scene, caching identical ones."""
    from physcodegym.probes.counterfactual import public, run_counterfactual

    blend = _blend_for(scene, run_dir)
    cache: dict[str, dict[str, Any]] = {}
    records: list[dict[str, Any]] = []

    def cf(intervention: Any, control: Any, expected: Any) -> dict[str, Any]:
        key = json.dumps([intervention.model_dump(mode="json"), control.model_dump(mode="json") if control else None, expected.model_dump(mode="json") if expected else None], sort_keys=True)
        if key in cache:
            return cache[key]
        if blend is None:
            return {"ok": False, "reason": "no saved native scene (.blend) to copy"}
        frames = (int(samples.frames[0]), int(samples.frames[-1]))
        if expected is not None:
            hi = max(x for x in (expected.at_s, expected.preserved_until_s, 0.0) if x is not None)
            if hi > 0:
                frames = (frames[0], min(frames[1], int(round(hi * samples.fps)) + 2))
        doc = run_counterfactual(blend, intervention, mapping, frames=frames, control=control, expected=expected, baseline=samples, work_dir=work_dir)
        pub = public(doc)
        cache[key] = doc
        records.append(pub)
        return doc

    ctx = CheckContext(scene=scene, samples=samples, mapping=mapping, report=report, blend=blend, task=loaded_task.task, run_dir=run_dir, counterfactual=cf if blend else None)
    ctx._cf_records = records  # type: ignore[attr-defined]
    return ctx


CF_CHECKS = ("counterfactual", "responds_to")


def evaluate_rubric(
    loaded_task: Any,
    scene: Any,
    samples: Any,
    report: Any,
    run_dir: Path | None = None,
    roles_file: Path | None = None,
    lazy_counterfactuals: bool = False,
) -> dict[str, Any]:
    """{"criteria": [...], "S_val": float|None, "aggregation": {...}, "mapping": {...}, "counterfactuals": [...]}.

    Counterfactual criteria (the costly ones: a re-bake each) run last; with `lazy_counterfactuals`
    they are skipped (verdict None, reason given) once another criterion has already failed, which
    is what the self-test needs to know and nothing more.
    """
    task = loaded_task.task
    rd = Path(run_dir) if run_dir is not None else None
    mapping_doc = map_scene_roles(task, scene, rd if rd is not None and rd.is_dir() else None, roles_file)
    mapping = {k: v for k, v in simple_mapping(mapping_doc).items() if v in samples.names}
    ctx = make_context(loaded_task, scene, samples, report, rd, mapping)
    unmapped_required = {r.name for r in task.roles if r.required and r.name not in mapping}
    results: dict[str, dict[str, Any]] = {}
    order = [c for c in task.rubric.criteria if c.check not in CF_CHECKS] + [c for c in task.rubric.criteria if c.check in CF_CHECKS]
    for crit in order:
        if lazy_counterfactuals and crit.check in CF_CHECKS and any(r["passed"] is False for r in results.values()):
            results[crit.id] = {"passed": None, "score": 0.0, "evidence": {}, "reason": "skipped: another criterion already failed (lazy self-test mode)"}
            continue
        res = run_check(ctx, crit)
        miss = sorted(set(crit.roles) & unmapped_required)
        if miss and res.get("passed") is not False:
            res = {"passed": False, "score": 0.0, "evidence": {"unmapped_roles": miss}, "reason": f"required role(s) {miss} not mapped"}
        results[crit.id] = res
    out = []
    for crit in task.rubric.criteria:
        res = results[crit.id]
        out.append(
            {
                "id": crit.id,
                "check": crit.check,
                "passed": res["passed"],
                "score": float(res["score"]),
                "weight": crit.weight,
                "structural": crit.structural,
                "cap": crit.cap,
                "evidence": res["evidence"],
                "reason": res.get("reason", ""),
            }
        )
    s_val, expl = aggregate(out, task.rubric.aggregation)
    return {
        "criteria": out,
        "S_val": s_val,
        "aggregation": expl,
        "mapping": mapping_doc,
        "counterfactuals": ctx._cf_records,  # type: ignore[attr-defined]
        "scan_findings": ctx._scan or [],
    }
