"""Ground-truth counterfactual responses: every counterfactual criterion of a task measured on its truth scene.

`measure(loaded_task)` re-simulates the truth scene (`truth.py` run isolated, once) under each criterion's
intervention (and control) and writes `truth_counterfactuals.json` next to the task, atomically. The rubric's
expected responses are checked against this file by the truth counterfactual tests; `physcodegym
counterfactual --truth TASK` is the command line for it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from physcodegym.core import atomic
from physcodegym.tasks.loader import LoadedTask, load_task

FILE = "truth_counterfactuals.json"


def measure(loaded_task: LoadedTask | str | Path, work_dir: Path | None = None) -> dict[str, Any]:
    """Measure each counterfactual criterion on the task's truth scene; write the result file atomically.

    Returns `{"task", "criteria": {criterion id: {intervention, expected, took_effect, measured, ratio,
    preserved, control, passed, reason, trajectories}}, "written": path}`.
    """
    from physcodegym.probes.branches.counterfactual import public, run_counterfactual
    from physcodegym.verifier.selftest import truth_blend, truth_mapping

    lt = loaded_task if isinstance(loaded_task, LoadedTask) else load_task(loaded_task)
    tmp = tempfile.TemporaryDirectory(prefix="pcg_truthcf_") if work_dir is None else None
    wd = Path(work_dir) if work_dir else Path(tmp.name)
    try:
        blend = truth_blend(lt, wd)
        mapping = truth_mapping(lt)
        out: dict[str, Any] = {"task": lt.id, "criteria": {}}
        for c in lt.task.rubric.criteria:
            if c.counterfactual is None:
                continue
            cf = c.counterfactual
            doc = run_counterfactual(
                blend,
                cf.intervention,
                mapping,
                control=cf.control,
                expected=cf.expected,
                work_dir=wd / f"counterfactual_{c.id}",
            )
            v = doc.get("verdict", {})
            out["criteria"][c.id] = {
                "intervention": cf.intervention.model_dump(mode="json"),
                "expected": cf.expected.model_dump(mode="json"),
                "took_effect": doc.get("took_effect"),
                "measured": (v.get("intervened") or {}).get("value"),
                "ratio": v.get("ratio"),
                "preserved": v.get("preserved"),
                "control": (v.get("control") or {}).get("value") if v.get("control") else None,
                "passed": v.get("passed"),
                "reason": v.get("reason") or doc.get("reason"),
                "trajectories": public(doc).get("trajectories"),
            }
        target = lt.truth_counterfactuals or (lt.folder / FILE)
        atomic.write_json(target, out, indent=1)
        out["written"] = str(target)
        return out
    finally:
        if tmp is not None:
            tmp.cleanup()
