"""S_val for a run folder, from pure Python: the audit runs in a child process (bpy never loads here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from physcodegym.core import launch
from physcodegym.core.limits import run_limited
from physcodegym.metrics.results import MetricResult, MetricState

AUDIT_MEMORY_MB = 6144  # address space of the audit child (bpy, sampling) and, inherited, its counterfactual workers


def s_val_for_run(loaded_task: Any, run_dir: Path, timeout_s: float = 900,
                  memory_mb: int = AUDIT_MEMORY_MB, unsafe_no_isolation: bool = False) -> MetricResult:
    """Run `physcodegym audit RUN_DIR --task ID --json` in a limited child and turn its document into 'S_val'.

    The audit command reads the run only through its validated artifact set (an invalid run gets no S_val) and
    runs its own bpy work in a child with `--timeout` / `--memory-mb`; this process adds a slightly longer wall.
    At that wall the audit's whole process tree ends, its counterfactual workers (each in its own session)
    included (`core.limits.kill_tree`, tested in tests/core/test_limits.py). The audit's bpy child runs behind the
    wall of `sandbox.wall` (docs/THREAT_MODEL.md); `unsafe_no_isolation` passes the audit's
    `--unsafe-no-isolation` (only on a host without bubblewrap, by the caller's explicit choice)."""
    run_dir = Path(run_dir)
    blend = run_dir / "scene.blend" if run_dir.is_dir() else run_dir
    if not blend.is_file():
        return MetricResult.missing("S_val", MetricState.not_applicable,
                                    f"no native scene at {blend}: nothing to verify")
    cmd = launch.cli_argv(["audit", str(run_dir), "--task", str(loaded_task.folder), "--json",
                           "--timeout", f"{float(timeout_s):g}", "--memory-mb", str(int(memory_mb)),
                           *(["--unsafe-no-isolation"] if unsafe_no_isolation else [])])
    res = run_limited(cmd, timeout_s=float(timeout_s) + 30, memory_mb=None)
    if res.killed_reason:
        return uncertified(f"audit stopped: {res.killed_reason}")
    doc = launch.last_json(res.stdout)  # a Blender binary prints a banner first
    if res.returncode == 2 and isinstance(doc, dict) and "unsafe-no-isolation" in str(doc.get("error")):
        return MetricResult.missing("S_val", MetricState.uncomputable,
                                    f"the audit's wall is unavailable: {(doc.get('error') or {}).get('message')}")
    if not isinstance(doc, dict):
        return uncertified(f"audit exited {res.returncode} without JSON: {res.stderr.strip()[-400:]}")
    if doc.get("status") == "invalid" and doc.get("limit"):  # the scene outgrew the audit: not certified
        return uncertified(f"invalid run: {doc.get('invalid_reason')}")
    if doc.get("status") == "invalid":
        return MetricResult.missing("S_val", MetricState.not_applicable, f"invalid run: {doc.get('invalid_reason')}")
    if res.returncode != 0:
        return uncertified(f"audit exited {res.returncode}: {doc.get('error') or doc}")
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
