"""Shipped ground truths audit clean and the bundled shortcut submissions are caught (real bake_only runs).

The fast rigid truths and the small submissions always run; the slow ones (cloth, liquids, the
90-bead pile: 15-90 s of baking each) run with PHYSCODEGYM_AUDIT_ALL=1 (as `make test` sets it).
Only the CI packs (testing/ci_tasks.py) are baked here, so a new pack does not add its bakes to CI.
A truth is audited on the session's truth bake of its task (`truth_work`, the bake the self-test and the
counterfactual tests use): truth.py is baked once per session, and the audit's own re-simulation still runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from physcodegym.testing.ci_tasks import ci_tasks

ROOT = Path(__file__).resolve().parents[2]
PACKS = ROOT / "tasks" / "packs"
SUBS = ROOT / "submissions"
FAST_TRUTHS = {"ball_bounce", "ball_dominoes", "pendulum", "block_stack", "marble_ramp", "turntable"}
# cloth, SPH liquids and the bead pile bake for a minute or more each: only with PHYSCODEGYM_AUDIT_ALL=1
SLOW_SUBMISSIONS = {("faithful-agent", t) for t in ("flag_wind", "milk_pour", "cloth_drape", "hose_jet", "liquid_duck", "bead_pile")}
ALL = os.environ.get("PHYSCODEGYM_AUDIT_ALL") == "1"

truths = sorted(ci_tasks([p.parent.name for p in PACKS.glob("*/truth.py")]))
shortcuts = sorted(ci_tasks([p.parent.name for p in (SUBS / "shortcut-agent").glob("*/scene.py")]))
faithful = sorted(ci_tasks([p.parent.name for p in (SUBS / "faithful-agent").glob("*/scene.py")]))


def _audit_program(program: Path, out: Path):
    from physcodegym.probes.audit.audit import audit_path
    from physcodegym.sandbox.runner import run_program

    rec = run_program(program, out, mode="bake_only")
    assert (out / "scene.blend").is_file(), f"{program}: no scene.blend ({getattr(rec, 'status', rec)})"
    return audit_path(out)


@pytest.mark.parametrize("task_id", truths)
def test_truth_audits_clean(task_id, truth_work):
    """The truth's run folder (truth.py baked bake-only by the sandbox runner, as `selftest` bakes it) audits
    with no finding, as `physcodegym audit <run folder>` reads it (program text included)."""
    from physcodegym.probes.audit.audit import audit_path
    from physcodegym.tasks.loader import load_task
    from physcodegym.verifier.selftest import truth_blend

    task = task_id
    if task not in FAST_TRUTHS and not ALL:
        pytest.skip("slow truth (set PHYSCODEGYM_AUDIT_ALL=1)")
    rep = audit_path(truth_blend(load_task(task), truth_work / task).parent)
    assert rep.findings == [], [(f.kind, f.objects, f.message) for f in rep.findings]
    # the audit's re-simulation (a worker with another history than the sandbox child) repeats a rigid or cloth
    # bake exactly (core.determinism); a drift there means some simulating child lost that environment
    resim = rep.meta["resimulation"]
    for name, rec in resim.get("objects", {}).items():
        assert rec["max_m"] == 0.0, (task, name, rec)
    # An SPH liquid has a second discrete outcome that even a pinned worker reaches now and then (hose_jet:
    # 0.10969 m at frame 100 in two CI runs, 0 of 16 audits here; benchmarks/resim_repeat.py). The emission
    # is not chaotic: the live count repeats exactly. The bulk stays under the audit's own threshold, which is
    # what keeps the truth clean above; this says so per system rather than through the empty findings alone.
    for name, rec in resim.get("particles", {}).items():
        assert rec["count_max_rel"] == 0.0, (task, name, rec)
        assert rec["frames_over"] == 0, (task, name, rec)


@pytest.mark.parametrize("task", shortcuts)
def test_shortcut_submission_caught(task, tmp_path):
    rep = _audit_program(SUBS / "shortcut-agent" / task / "scene.py", tmp_path / task)
    kinds = rep.kinds()
    # scaled gravity + clock (block_stack) is a non-physical parameter, the other mechanisms are motion findings
    assert kinds & {"scripted_motion", "hidden_support", "not_simulated", "no_contact_response", "non_physical_parameter"}, kinds


@pytest.mark.parametrize("task", faithful)
def test_faithful_submission_clean(task, tmp_path):
    if ("faithful-agent", task) in SLOW_SUBMISSIONS and not ALL:
        pytest.skip("slow submission (set PHYSCODEGYM_AUDIT_ALL=1)")
    rep = _audit_program(SUBS / "faithful-agent" / task / "scene.py", tmp_path / task)
    assert rep.findings == [], [(f.kind, f.objects, f.message) for f in rep.findings]
