"""S_val from inside "a real Blender": the audit child and its counterfactual workers run through the Blender binary.

A bpy process whose `bpy.app.binary_path` is a stand-in binary (testing/blender_standin.py: `blender -b
--python-expr` with a Python that cannot import this project by itself) computes S_val of the billiard truth
scene: the audit (with the rubric's counterfactual criterion) is a child of the binary, and its counterfactual
branch workers are grandchildren started the same way. Same verdict as the module form (test_cli_validity.py).

The audit runs without its wall here (`unsafe_no_isolation`): the stand-in logs each start beside itself, and a
walled audit has no writable folder but its scratch, so its grandchildren's starts could not be seen. What this test is about is the launch path through the binary;
the wall around the audit is tested in tests/sandbox/test_wall.py and tests/rubric/test_cli_validity.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from physcodegym.testing.blender_standin import write_standin

HERE = Path(__file__).resolve().parent

PARENT = r"""
import json, sys
import bpy
bpy.app.binary_path = sys.argv[1]
from physcodegym.tasks.loader import load_task
from physcodegym.verifier.validity import s_val_for_run
r = s_val_for_run(load_task(sys.argv[2]), sys.argv[3], unsafe_no_isolation=True)
crit = (r.details or {}).get("criteria") or []
print("RESULT " + json.dumps({"state": str(r.state), "value": r.value, "reason": r.reason,
                              "passed": sorted(c["id"] for c in crit if c.get("passed"))}))
"""


def test_s_val_runs_through_the_blender_binary(tmp_path: Path, scene_dir: Callable[[str], Path]) -> None:
    standin = write_standin(tmp_path / "blender")
    log = tmp_path / "starts.jsonl"
    env = dict(os.environ, PHYSCODEGYM_STANDIN_LOG=str(log))
    p = subprocess.run(
        [sys.executable, "-c", PARENT, str(standin), str(HERE / "data" / "billiard"), str(scene_dir("truth"))],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, p.stdout[-2000:] + p.stderr[-3000:]
    res = json.loads(line[7:])
    assert res["value"] == 1.0 and res["state"].endswith("ok"), res
    assert "cf_contact" in res["passed"]  # the counterfactual criterion was evaluated, not left undetermined
    beside = Path(str(standin) + ".starts.jsonl")  # starts from children whose environment was built from nothing
    lines = (log.read_text().splitlines() if log.is_file() else []) + (
        beside.read_text().splitlines() if beside.is_file() else [])
    starts = [json.loads(ln) for ln in lines]
    modules = [s["module_line"] or "" for s in starts]
    first = starts[0]["argv"]  # the parent's one child: the audit worker with the task's rubric
    assert "'physcodegym.verifier.audit_worker'" in modules[0] and "--task" in first, (modules[0], first)
    assert all(s["argv"][:2] == ["-b", "--factory-startup"] for s in starts)
    assert any("'physcodegym.probes.rebake.cf_worker'" in m for m in modules), modules  # grandchildren through the binary too
