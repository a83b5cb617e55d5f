"""Evaluate a task's rubric on a native scene: role mapping, one check per criterion, S_val.

Called in-process by `physcodegym audit --task` (bpy loaded, scene baked, samples taken once).
Counterfactual criteria re-bake copies of the saved `.blend` in fresh worker processes and reuse
the audit's samples as their baseline.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from physcodegym.probes.audit.audit_base import HANDOFF_FRAMES
from physcodegym.probes.scene.roles import map_scene_roles, simple_mapping
from physcodegym.tasks.loader import LoadedTask
from physcodegym.tasks.schema import Criterion, Rubric
from physcodegym.verifier.checks import CheckContext, run_check
from physcodegym.verifier.rubric import aggregate, charge_findings


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


def _branch_key(intervention: Any, control: Any) -> str:
    """What a branch bakes: requests with the same intervention and control differ only in what they read."""
    return json.dumps([intervention.model_dump(mode="json"), control.model_dump(mode="json") if control else None],
                      sort_keys=True)


class _Request:
    """One criterion's request served by a branch that may serve others too (`PendingCounterfactual.judge`)."""

    def __init__(self, branch: Any, expected: Any, frames: tuple[int, int]) -> None:
        self.branch, self.expected, self.frames = branch, expected, frames
        self.blend = branch.blend
        self.read = False

    def result(self) -> dict[str, Any]:
        self.read = True
        return self.branch.judge(self.expected, self.frames)

    def cancel(self) -> None:
        """Leave the branch to `CounterfactualPrefetch.close`: another request may still read it."""


def _cf_request(samples: Any, intervention: Any, control: Any,
                expected: Any) -> tuple[str, tuple[int, int]]:
    """(cache key, frames to simulate) of one counterfactual a check asks for: the branches stop just after the
    last time the expected response reads."""
    key = json.dumps([intervention.model_dump(mode="json"), control.model_dump(mode="json") if control else None,
                      expected.model_dump(mode="json") if expected else None], sort_keys=True)
    frames = (int(samples.frames[0]), int(samples.frames[-1]))
    if expected is not None:
        hi = max(x for x in (expected.at_s, expected.preserved_until_s, 0.0) if x is not None)
        if hi > 0:
            frames = (frames[0], min(frames[1], int(round(hi * samples.fps)) + 2))
    return key, frames


class CounterfactualPrefetch:
    """The rubric's counterfactual branches, started while the audit still runs (`prefetch_counterfactuals`).

    `evaluate_rubric` takes a started branch only when the role mapping it computes itself is the one the
    branch was started with, and the request (intervention, control, expected response) is the same; whatever
    it does not take is cancelled (`close`). So starting early changes when a branch bakes, never what."""

    def __init__(self, mapping: dict[str, str], pending: dict[str, Any], seconds: float,
                 error: str | None = None) -> None:
        self.mapping, self.pending, self.seconds, self.error = mapping, pending, seconds, error
        self.taken = 0
        self.requests = list(pending.values())
        self.branches = list({id(r.branch): r.branch for r in self.requests}.values())

    def take(self, key: str, mapping: dict[str, str]) -> Any | None:
        if mapping != self.mapping:
            return None
        got = self.pending.pop(key, None)
        self.taken += got is not None
        return got

    def close(self) -> int:
        """Cancel the branches nobody took (a branch shared with a taken request is kept until its readers are
        done, then its files go); returns how many requests were not taken."""
        n = len(self.pending)
        read = {id(r.branch) for r in self.requests if r.read}
        for b in self.branches:
            if id(b) in read:
                b.release()
            else:
                b.cancel()
        self.pending.clear()
        return n


class _Planned(Exception):
    """Raised by the planning hook: the check's counterfactual is started, its verdict is not wanted yet."""


def prefetch_counterfactuals(loaded_task: LoadedTask, scene: Any, samples: Any, blend: Path,
                             run_dir: Path | None = None, roles_file: Path | None = None) -> CounterfactualPrefetch:
    """Start every counterfactual the task's rubric will ask for on this scene, and return at once.

    The checks themselves say what they ask for: each counterfactual criterion is run against a context whose
    hook starts the branch and stops the check (`_Planned`), so no second copy of their logic exists here.
    Called by the audit right after sampling (`probes.audit.audit.audit_scene(on_started=...)`) on a scene whose
    caches are all baked; the role mapping moves the scene to its first frame, and the frame is put back."""
    from physcodegym.probes.branches.counterfactual import start_counterfactual

    t0 = time.perf_counter()
    pending: dict[str, Any] = {}
    requests: dict[str, tuple[str, tuple[int, int], Any, Any, Any]] = {}
    mapping: dict[str, str] = {}
    try:
        frame = int(scene.frame_current)
        try:
            mapping_doc = map_scene_roles(loaded_task.task, scene, run_dir if run_dir is not None and
                                          Path(run_dir).is_dir() else None, roles_file)
        finally:
            scene.frame_set(frame)
        mapping = {k: v for k, v in simple_mapping(mapping_doc).items() if v in samples.names}

        def plan(intervention: Any, control: Any, expected: Any) -> dict[str, Any]:
            key, frames = _cf_request(samples, intervention, control, expected)
            requests.setdefault(key, (_branch_key(intervention, control), frames, intervention, control, expected))
            raise _Planned

        ctx = CheckContext(scene=scene, samples=samples, mapping=mapping, report=None, blend=blend,
                           task=loaded_task.task, run_dir=run_dir, counterfactual=plan)
        for crit in loaded_task.task.rubric.criteria:
            if crit.check in CF_CHECKS:
                run_check(ctx, crit)  # its verdict (undetermined: _Planned) is thrown away
        # one branch per intervention (and control), baked as far as its furthest reader asks: measured on
        # flag_wind, `responds_to` and `cf_no_wind` both removed the wind and baked the cloth twice
        reach: dict[tuple[str, int], int] = {}
        for bkey, frames, *_ in requests.values():
            reach[(bkey, frames[0])] = max(reach.get((bkey, frames[0]), frames[1]), frames[1])
        branches: dict[tuple[str, int], Any] = {}
        for key, (bkey, frames, intervention, control, expected) in requests.items():
            g = (bkey, frames[0])
            if g not in branches:
                branches[g] = start_counterfactual(blend, intervention, mapping, frames=(frames[0], reach[g]),
                                                   control=control, baseline=samples)
            pending[key] = _Request(branches[g], expected, frames)
    except Exception as e:  # noqa: BLE001 - starting early is an optimisation: evaluate_rubric runs what is missing
        for b in {id(r.branch): r.branch for r in pending.values()}.values():
            b.cancel()
        return CounterfactualPrefetch({}, {}, time.perf_counter() - t0, f"{type(e).__name__}: {e}")
    return CounterfactualPrefetch(mapping, pending, time.perf_counter() - t0)


def make_context(loaded_task: LoadedTask, scene: Any, samples: Any, report: Any, run_dir: Path | None,
                 mapping: dict[str, str], work_dir: Path | None = None,
                 prefetched: CounterfactualPrefetch | None = None) -> CheckContext:
    """A CheckContext whose counterfactual hook runs branches on the saved scene, caching identical ones
    (and taking those `prefetched` started during the audit)."""
    from physcodegym.probes.branches.counterfactual import public, run_counterfactual

    blend = _blend_for(scene, run_dir)
    cache: dict[str, dict[str, Any]] = {}
    records: list[dict[str, Any]] = []

    def cf(intervention: Any, control: Any, expected: Any) -> dict[str, Any]:
        key, frames = _cf_request(samples, intervention, control, expected)
        if key in cache:
            return cache[key]
        if blend is None:
            return {"ok": False, "reason": "no saved native scene (.blend) to copy"}
        early = prefetched.take(key, mapping) if prefetched is not None and work_dir is None else None
        if early is not None and Path(early.blend) == Path(blend):
            doc = early.result()
            doc["started_during_audit"] = True
        else:
            if early is not None:
                early.cancel()
            doc = run_counterfactual(blend, intervention, mapping, frames=frames, control=control,
                                     expected=expected, baseline=samples, work_dir=work_dir)
        pub = public(doc)
        cache[key] = doc
        records.append(pub)
        return doc

    ctx = CheckContext(scene=scene, samples=samples, mapping=mapping, report=report, blend=blend, task=loaded_task.task,
                       run_dir=run_dir, counterfactual=cf if blend else None)
    ctx._cf_records = records  # type: ignore[attr-defined]
    return ctx


CF_CHECKS = ("counterfactual", "responds_to")


def validity_findings(report: Any, samples: Any, rubric: Rubric,
                      scan: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The findings S_val is charged for: the audit's (gravity re-judged at the rubric's Earth-gravity
    tolerance), or, with no audit report, the rubric module's task-independent scan."""
    if report is None:
        return list(scan or [])
    out = []
    for f in getattr(report, "findings", None) or (report.get("findings", []) if isinstance(report, dict) else []):
        d = f if isinstance(f, dict) else f.model_dump(mode="json")
        if d.get("kind") == "non_physical_parameter" and (d.get("evidence") or {}).get("param") == "gravity":
            continue
        out.append(d)
    meta = getattr(report, "meta", None) or (report.get("meta", {}) if isinstance(report, dict) else {})
    out += actuator_findings(meta, rubric, out)
    try:
        from physcodegym.probes.audit.params import parameter_problems
    except ImportError:  # pragma: no cover
        return out
    movers = set((getattr(report, "scene", None) or {}).get("moving", {}) or [])
    for pr in parameter_problems(samples, rubric.earth_gravity_tolerance):
        if pr["param"] != "gravity":
            continue
        objs = [o for o in pr["objects"] if o in movers or any(k.startswith(o + "/") for k in samples.particles)]
        if objs:
            out.append({"kind": "non_physical_parameter", "objects": objs, "message": pr["message"],
                        "value": pr["value"], "unit": "gravity",
                        "evidence": {k: v for k, v in pr.items() if k != "message"}})
    return out


def actuator_findings(meta: dict[str, Any], rubric: Rubric, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Joints and force fields whose type the task does not admit (`Rubric.admitted_types`) and that change
    the motion (the audit's `meta["actuators"]`, measured by re-baking without them): nothing in the video
    explains them. A joint holds or steers bodies (`hidden_support`; a motor whose bodies gain energy:
    `energy_gain`); a field steers them (`unexplained_force_field`), unless it is keyed off within the first
    HANDOFF_FRAMES (an initial push). A joint whose effect could not be measured counts as acting: the scene
    carries the burden of showing it does nothing. One whose settings change during the run (the audit's
    `varies`: a keyed motor target, a driven field strength) is also `scripted_motion` (`_scripted_actuator`)."""
    admitted = rubric.admitted_types()
    rises = bool((meta.get("energy") or {}).get("rises"))
    out: list[dict[str, Any]] = []
    for row in meta.get("actuators") or []:
        kind_t = row.get("type")
        if kind_t in admitted:
            continue
        acts = row.get("acts_on")
        measured = acts is not None
        if row.get("what") == "field":
            last, start = row.get("last_active_frame"), row.get("start_frame")
            if last is not None and start is not None and last < start + HANDOFF_FRAMES:
                continue  # keyed off after the first frames: an initial push, like a kinematic hand-off
        if row.get("varies"):  # a setting played by keyframes or drivers: scripted, whatever its effect
            out.append(_scripted_actuator(row, admitted))
        if row.get("what") == "field":
            if not measured:  # not re-baked: judged by what it can act on
                acts = list(row.get("targets") or []) if (row.get("strength") or kind_t in ("GUIDE", "BOID")) else []
            field = row["objects"][0]
            if not acts or any(f.get("kind") == "unexplained_force_field" and field in (f.get("objects") or [])
                               for f in found):
                continue
            bodies = sorted({a.split("/", 1)[0] for a in acts})
            out.append({"kind": "unexplained_force_field", "objects": [field, *bodies],
                        "value": row.get("max_effect_m"), "unit": "m", "message": (
                            f"{kind_t} field {field!r} is not admitted by the task (admitted types: "
                            f"{sorted(admitted) or 'none'}) and "
                            + (f"changes the motion of {acts} (up to {row.get('max_effect_m'):.3f} m without it)"
                               if measured else f"acts on {acts} (its effect was not measured)")),
                        "evidence": {"actuator": row, "admitted": sorted(admitted)}})
            continue
        if measured and not acts:
            continue
        holders = list(row.get("objects") or [])
        bodies = sorted({a.split("/", 1)[0] for a in (acts or row.get("joins") or [])})
        kind = "energy_gain" if kind_t == "MOTOR" and rises else "hidden_support"
        what = (f"changes the motion of {acts} (up to {row.get('max_effect_m'):.3f} m without it)" if measured
                else f"joins {row.get('joins')} (its effect was not measured: {row.get('unmeasured_reason')})")
        out.append({"kind": kind, "objects": sorted({*bodies, *holders}), "value": row.get("max_effect_m"), "unit": "m",
                    "message": (f"{kind_t} joint(s) {holders} not admitted by the task (admitted types: "
                                f"{sorted(admitted) or 'none'}) {what}"
                                + ("; the bodies gain energy" if kind == "energy_gain" else "")),
                    "evidence": {"actuator": row, "admitted": sorted(admitted)}})
    return out


def _scripted_actuator(row: dict[str, Any], admitted: set[str]) -> dict[str, Any]:
    """`scripted_motion` for a joint or field the task does not admit whose settings change during the run (keyed
    or driven, the audit's `varies`): an actuator played by a script is scripted motion whatever its measured
    effect (a motor whose target velocity follows the free swing changes nothing a re-bake without it sees)."""
    kind_t, what = row.get("type"), row.get("what")
    holders = list(row.get("objects") or [])
    bodies = sorted({a.split("/", 1)[0] for a in (row.get("acts_on") or row.get("joins") or row.get("targets") or [])})
    said = "; ".join(f"{v['object']}.{v['path']} {v['how']} from {v['first']:g} to {v['last']:g} (range {v['min']:g} "
                     f"to {v['max']:g}, changing on frames {v['changes'][0]}-{v['changes'][1]})"
                     for v in row["varies"][:4])
    return {"kind": "scripted_motion", "objects": sorted({*holders, *bodies}), "value": float(len(row["varies"])),
            "unit": "settings", "message": (f"{kind_t} {what}(s) {holders} not admitted by the task (admitted types: "
                                            f"{sorted(admitted) or 'none'}) change their settings during the run: "
                                            f"{said}: an actuator played by keyframes or drivers is scripted"),
            "evidence": {"actuator": row, "admitted": sorted(admitted), "varies": row["varies"]}}


def finalize(criteria: list[dict[str, Any]], rubric: Rubric,
             findings: list[dict[str, Any]]) -> tuple[float | None, dict[str, Any]]:
    """S_val from the criteria (capped weighted mean), then every validity finding charged (`charge_findings`)."""
    s_val, expl = aggregate(criteria, rubric.aggregation)
    return charge_findings(s_val, expl, findings, criteria, rubric.aggregation)


def evaluate_rubric(
    loaded_task: LoadedTask,
    scene: Any,
    samples: Any,
    report: Any,
    run_dir: Path | None = None,
    roles_file: Path | None = None,
    lazy_counterfactuals: bool = False,
    prefetched: CounterfactualPrefetch | None = None,
) -> dict[str, Any]:
    """{"criteria": [...], "S_val": float|None, "aggregation": {...}, "mapping": {...}, "counterfactuals": [...]}.

    Counterfactual criteria (the costly ones: a re-bake each) run last; with `lazy_counterfactuals`
    they are skipped (verdict None, reason given) once another criterion has already failed, which
    is what the self-test needs to know and nothing more. `prefetched`: the branches started during the
    audit (`prefetch_counterfactuals`); those not taken are cancelled before this returns.
    """
    task = loaded_task.task
    rd = Path(run_dir) if run_dir is not None else None
    mapping_doc = map_scene_roles(task, scene, rd if rd is not None and rd.is_dir() else None, roles_file)
    mapping = {k: v for k, v in simple_mapping(mapping_doc).items() if v in samples.names}
    ctx = make_context(loaded_task, scene, samples, report, rd, mapping, prefetched=prefetched)
    unmapped_required = {r.name for r in task.roles if r.required and r.name not in mapping}
    results: dict[str, dict[str, Any]] = {}
    order = [c for c in task.rubric.criteria if c.check not in CF_CHECKS] + [
        c for c in task.rubric.criteria if c.check in CF_CHECKS]
    crit: Criterion
    for crit in order:
        if lazy_counterfactuals and crit.check in CF_CHECKS and any(r["passed"] is False for r in results.values()):
            results[crit.id] = {"passed": None, "score": 0.0, "evidence": {},
                                "reason": "skipped: another criterion already failed (lazy self-test mode)"}
            continue
        res = run_check(ctx, crit)
        miss = sorted(set(crit.roles) & unmapped_required)
        if miss and res.get("passed") is not False:
            res = {"passed": False, "score": 0.0, "evidence": {"unmapped_roles": miss},
                   "reason": f"required role(s) {miss} not mapped"}
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
    early = None
    if prefetched is not None:
        early = {"started": prefetched.taken + len(prefetched.pending), "branches": len(prefetched.branches),
                 "taken": prefetched.taken,
                 "cancelled": prefetched.close(), "seconds_to_start": round(prefetched.seconds, 3)}
        if prefetched.error:
            early["error"] = prefetched.error
        elif prefetched.mapping != mapping and early["started"]:
            early["reason"] = "the role mapping changed after the branches were started: they were run again"
    if report is None and ctx._scan is None:
        ctx.findings()  # the scan backs the charges when no audit ran
    s_val, expl = finalize(out, task.rubric, validity_findings(report, samples, task.rubric, ctx._scan))
    return {
        "criteria": out,
        "S_val": s_val,
        "aggregation": expl,
        "mapping": mapping_doc,
        "counterfactuals": ctx._cf_records,  # type: ignore[attr-defined]
        "scan_findings": ctx._scan or [],
        "finding_charges": expl.get("finding_charges", []),
        **({"counterfactuals_started_during_audit": early} if early is not None else {}),
    }
