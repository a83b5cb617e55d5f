"""A counterfactual worker that crashes does not lose the branches queued behind the crash.

Blender really segfaults now and then after a branch that left its scene inconsistent (the self-test's
keyframed pendulum: a body removed under a hinge, since fixed at its cause, test_jointed_removal). Crashes
nobody has found yet stay possible, and cannot be made to happen on demand, so here the worker kills itself
with a real SIGSEGV at a chosen point: a `sitecustomize` on the child's PYTHONPATH installs an audit hook that
fires when the worker starts writing the record of a chosen branch. Everything else is real: the worker, bpy,
the scene, the samples.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SITECUSTOMIZE = '''
import os, signal, sys

_spec = os.environ.get("PCG_TEST_CRASH")
if _spec:
    _how, _name = _spec.split(":", 1)
    _marker = os.environ["PCG_TEST_CRASH_MARKER"]

    def _hook(event, args):
        if event != "open" or not args or not isinstance(args[0], (str, os.PathLike)):
            return
        base = os.path.basename(os.fspath(args[0]))  # core.atomic's temp name: .<name>.json.<pid>.<hex>.tmp
        if not (base.startswith("." + _name + ".json.") and base.endswith(".tmp")):
            return
        n = int(open(_marker).read() or 0) if os.path.exists(_marker) else 0
        if _how == "always" or n == 0:
            with open(_marker, "w") as f:
                f.write(str(n + 1))
            with open(_marker + ".layouts", "a") as f:  # the padding of the worker that crashes
                f.write(str(len(os.environ.get("PHYSCODEGYM_WORKER_LAYOUT", ""))) + "\\n")
            os.kill(os.getpid(), signal.SIGSEGV)

    sys.addaudithook(_hook)
'''


@pytest.fixture(scope="module")
def small_blend(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import bpy
    from physcodegym.testing import demo_scenes as D

    out = tmp_path_factory.mktemp("cf_resume") / "ball.blend"
    D.bouncing_ball(frames=12)
    bpy.ops.wm.save_as_mainfile(filepath=str(out), copy=True)
    return out


def _crash_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setenv("PCG_TEST_CRASH", spec)
    marker = tmp_path / "crashes"
    monkeypatch.setenv("PCG_TEST_CRASH_MARKER", str(marker))
    return marker


def _jobs(tmp_path: Path, names: list[str]) -> list[dict]:
    return [{"out": tmp_path / f"{n}.npz", "frames": (1, 12)} for n in names]


def test_a_crash_between_branches_resumes_the_rest_in_a_fresh_worker(
        small_blend: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from physcodegym.probes.branches.counterfactual import run_branches

    marker = _crash_env(tmp_path, monkeypatch, "once:b")
    res = run_branches(small_blend, _jobs(tmp_path, ["a", "b", "c"]), {})
    assert marker.read_text() == "1"  # the worker really crashed once, at branch b
    assert [rec["ok"] for _, rec in res] == [True, True, True], [rec.get("errors") for _, rec in res]
    assert all(s is not None and len(s.frames) == 12 for s, _ in res)
    # the crash is on the records of the branches that ran in the second worker, not hidden
    assert "worker_crashes" not in res[0][1]
    assert all("signal 11" in res[i][1]["worker_crashes"][0] for i in (1, 2))


def test_a_branch_that_always_crashes_fails_alone_and_the_loop_ends(
        small_blend: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from physcodegym.probes.branches.counterfactual import run_branches

    marker = _crash_env(tmp_path, monkeypatch, "always:b")
    res = run_branches(small_blend, _jobs(tmp_path, ["a", "b", "c"]), {})
    # b crashed the first worker, then three fresh workers as their first branch: then it is given up
    assert marker.read_text() == "4"
    pads = [int(x) for x in Path(f"{marker}.layouts").read_text().split()]
    assert pads[0] == 0 and len(set(pads)) == 4, pads  # every restart ran in another memory layout
    oks = [rec["ok"] for _, rec in res]
    assert oks == [True, False, True], [rec.get("errors") for _, rec in res]
    assert res[1][0] is None
    assert "signal 11" in res[1][1]["errors"][0] and "three times" in res[1][1]["errors"][0]
    assert res[2][1]["worker_layout"] == 4  # c ran in the fourth restart, each in another memory layout


def test_a_stale_record_is_not_taken_for_this_runs(small_blend: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A record left in the folder by an earlier run must not stand in for a branch that crashed now."""
    from physcodegym.probes.branches.counterfactual import run_branches

    (tmp_path / "b.json").write_text('{"ok": true, "errors": []}')
    _crash_env(tmp_path, monkeypatch, "always:b")
    res = run_branches(small_blend, _jobs(tmp_path, ["b"]), {})
    assert res[0][1]["ok"] is False and res[0][0] is None
