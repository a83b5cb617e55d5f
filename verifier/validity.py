"""S_val for a run folder, from pure Python: the audit runs in a child process (bpy never loads here)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from physcodegym.core import launch
from physcodegym.metrics.results import MetricResult, MetricState


def s_val_for_run(loaded_task: Any, run_dir: Path, timeout_s: float = 900) -> MetricResult:
    """Run `python -m physcodegym audit RUN_DIR --task ID --json` and turn its document into MetricResult 'S_val'."""
    run_dir = Path(run_dir)
    blend = run_dir / "scene.blend" if run_dir.is_dir() else run_dir
    if not blend.is_file():
        return MetricResult.missing("S_val", MetricState.not_applicable, f"no native scene at {blend}: nothing to verify")
    cmd = launch.cli_argv(["audit", str(run_dir), "--task", str(loaded_task.folder), "--json"])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return MetricResult.missing("S_val", MetricState.error, f"audit timed out after {timeout_s:.0f} s")
    doc = launch.last_json(p.stdout)  # a Blender binary prints a banner first
    if not isinstance(doc, dict):
        return MetricResult.missing("S_val", MetricState.error, f"audit exited {p.returncode} without JSON: {p.stderr.strip()[-400:]}")
    if p.returncode != 0:
        return MetricResult.missing("S_val", MetricState.error, f"audit exited {p.returncode}: {doc.get('error') or doc}")
    return result_from_audit(doc)


def result_from_audit(doc: dict[str, Any]) -> MetricResult:
    """MetricResult from an audit JSON document (details carry the criteria and the mapping)."""
    crit = doc.get("criteria") or []
    details = {"criteria": crit, "mapping": doc.get("mapping"), "aggregation": doc.get("aggregation"), "findings": [f.get("kind") for f in doc.get("findings", [])]}
    if doc.get("S_val") is None:
        return MetricResult.missing("S_val", MetricState.uncomputable, "no rubric criterion could be evaluated", details=details)
    failed = [c["id"] for c in crit if c.get("passed") is False]
    return MetricResult.ok("S_val", float(doc["S_val"]), reason=("failed: " + ", ".join(failed)) if failed else None, details=details)
