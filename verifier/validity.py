"""S_val for a run folder, from pure Python: the audit runs in one walled child (bpy never loads here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from physcodegym.metrics.results import MetricResult, MetricState

AUDIT_MEMORY_MB = 6144  # address space of the audit child (bpy, sampling) and, inherited, its counterfactual workers


def s_val_for_run(loaded_task: Any, run_dir: Path, timeout_s: float = 900,
                  memory_mb: int = AUDIT_MEMORY_MB, unsafe_no_isolation: bool = False) -> MetricResult:
    """S_val of a run folder (or .blend): its audit with the task's rubric (`verifier.audit_run.audit`: the input
    checked here, the bpy work in one walled child limited to `timeout_s` and `memory_mb`, its whole process tree
    ended at the limit, `core.limits.kill_tree`), turned into a metric.

    An invalid run has no S_val (not applicable, with the reason); a scene the audit cannot finish or that outgrows
    it is not certified (0, `uncertified`); a host without the wall gives none unless `unsafe_no_isolation` is the
    caller's explicit choice (docs/THREAT_MODEL.md)."""
    from physcodegym.core.errors import InputError
    from physcodegym.verifier.audit_run import AuditRequest, audit

    run_dir = Path(run_dir)
    blend = run_dir / "scene.blend" if run_dir.is_dir() else run_dir
    if not blend.is_file():
        return MetricResult.missing("S_val", MetricState.not_applicable,
                                    f"no native scene at {blend}: nothing to verify")
    req = AuditRequest(path=run_dir, timeout_s=float(timeout_s), memory_mb=int(memory_mb),
                       unsafe_no_isolation=unsafe_no_isolation)
    try:
        doc = audit(req, loaded_task)
    except InputError as e:
        if e.field == "--unsafe-no-isolation":
            return MetricResult.missing("S_val", MetricState.uncomputable, f"the audit's wall is unavailable: {e}")
        return uncertified(f"the audit refused the scene: {e}")
    except RuntimeError as e:
        return uncertified(str(e))
    if doc.get("status") == "invalid" and doc.get("limit"):  # the scene outgrew the audit: not certified
        return uncertified(f"invalid run: {doc.get('invalid_reason')}")
    if doc.get("status") == "invalid":
        return MetricResult.missing("S_val", MetricState.not_applicable, f"invalid run: {doc.get('invalid_reason')}")
    if doc.get("status") == "error":
        return uncertified(doc.get("S_val_reason") or "audit failed")
    return result_from_audit(doc)


def uncertified(reason: str) -> MetricResult:
    """S_val 0 for a native scene the audit could not finish (crash, timeout, memory, no verdict).

    Why 0 and not "missing": a missing S_val leaves S_phys to the other metrics, so a scene built to crash or
    outlast the audit would score better than one the audit catches. Physics that cannot be verified is not
    credited; the reason says what stopped the audit (an audit bug shows up here too, visibly)."""
    return MetricResult.ok("S_val", 0.0, reason=f"not certified: {reason}", details={"uncertified": True})


def result_from_audit(doc: dict[str, Any]) -> MetricResult:
    """MetricResult from an audit JSON document (details carry the criteria and the mapping)."""
    crit = doc.get("criteria") or []
    details = {"criteria": crit, "mapping": doc.get("mapping"), "aggregation": doc.get("aggregation"),
               "findings": [f.get("kind") for f in doc.get("findings", [])]}
    if doc.get("S_val") is None:
        return MetricResult.missing("S_val", MetricState.uncomputable, "no rubric criterion could be evaluated",
                                    details=details)
    failed = [c["id"] for c in crit if c.get("passed") is False]
    return MetricResult.ok("S_val", float(doc["S_val"]), reason=("failed: " + ", ".join(failed)) if failed else None,
                           details=details)
