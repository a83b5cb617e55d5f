"""Verifier self-test: inject known defects into a task's truth scene and report which ones the audit and the rubric
catch.

The automatic form of manual perturbation checks (SPEC §5, self-test). All defects are injected in one
worker process, each into a fresh load of the truth `.blend` (baked and evaluated once per task),
re-baked, saved and sampled, then audited and rubric-evaluated here. A defect is caught when the audit (or the rubric
module's own task-independent scan) reports one of the expected finding kinds, or the rubric fails a criterion
that the unchanged truth scene passes; `penalised` says whether S_val dropped.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

from physcodegym.core import atomic
from physcodegym.probes.defects.defects import (  # noqa: F401  (re-exported for the CLI)
    DEFECTS,
    HONEST_TWINS,
    NOT_APPLICABLE,
    inject_defect,
)
from physcodegym.tasks.loader import LoadedTask

# ------------------------------------------------------------------ orchestration (bpy in this process)


def truth_blend(loaded_task: LoadedTask, work: Path) -> Path:
    """Bake the task's truth program without rendering and return its scene.blend (cached in `work`)."""
    from physcodegym.core.errors import InputError

    prog = loaded_task.truth_program
    if prog is None or not prog.is_file():
        raise InputError("task has no truth program", file=str(loaded_task.folder / "task.json"), field="truth.program")
    out = work / f"truth_{loaded_task.id}"
    blend = out / "scene.blend"
    if blend.is_file():
        return blend
    from physcodegym.sandbox.runner import run_program

    rec = run_program(prog, out, mode="bake_only", timeout_s=900)
    if not blend.is_file():
        raise RuntimeError(f"truth program did not produce scene.blend: {rec.status} {rec.reason}")
    return blend


def truth_mapping(loaded_task: LoadedTask) -> dict[str, str]:
    return {r.name: r.truth_object for r in loaded_task.task.roles if r.truth_object}


def _jsonable(x: Any) -> Any:
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def truth_baseline(loaded_task: LoadedTask, work: Path) -> dict[str, Any]:
    """The truth scene's full evaluation (audit + every rubric criterion, counterfactuals included), cached in `work`.

    The cache is keyed on the task.json text and the truth bake, so the self-test and the truth
    counterfactual tests share one evaluation and a changed rubric or truth is evaluated afresh.
    """
    import hashlib

    blend = truth_blend(loaded_task, work)
    key = hashlib.sha256((loaded_task.folder / "task.json").read_bytes()
                         + str(blend.stat().st_mtime_ns).encode()).hexdigest()
    cache = blend.parent / "baseline_eval.json"
    if cache.is_file():
        doc = json.loads(cache.read_text())
        if doc.get("_key") == key:
            return doc
    doc = evaluate_blend(loaded_task, blend, resimulate=TRUTH_NO_RESIM)
    doc["_key"] = key
    atomic.write_text(cache, json.dumps(doc, default=_jsonable))
    return json.loads(cache.read_text())


def _without_counterfactuals(loaded_task: LoadedTask) -> LoadedTask:
    from physcodegym.verifier.rubric_eval import CF_CHECKS

    t = loaded_task.task
    crit = [c for c in t.rubric.criteria if c.check not in CF_CHECKS]
    return dataclasses.replace(loaded_task,
                               task=t.model_copy(update={"rubric": t.rubric.model_copy(update={"criteria": crit})}))


def evaluate_blend(loaded_task: LoadedTask, blend: Path, lazy: bool = False, samples_npz: Path | None = None,
                   decided_by: tuple[str, ...] = (), resimulate: bool | str = True) -> dict[str, Any]:
    """Audit (when the audit module exists) and rubric-evaluate one saved scene in this process.

    `samples_npz`: samples the worker took right after its bake (not taken again). `decided_by`:
    finding kinds that already decide the verdict; when the audit or the rubric scan reports one of
    them (or a cheap criterion fails), the costly counterfactual criteria are not run but listed as
    undetermined with the reason. `resimulate`: passed to the audit (`probes.audit.audit.audit_scene`).
    """
    import bpy
    from physcodegym.probes.scene.sampling import SceneSamples, sample_scene
    from physcodegym.verifier.rubric_eval import CF_CHECKS, evaluate_rubric, finalize, validity_findings

    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene = bpy.context.scene
    samples = (SceneSamples.load_npz(samples_npz) if samples_npz is not None and Path(samples_npz).is_file()
               else sample_scene(scene))
    report = None
    audit_kinds: list[str] = []
    audit_error = None
    try:
        from physcodegym.probes.audit.audit import audit_scene

        core = [r.truth_object for r in loaded_task.task.roles if r.core and r.truth_object in samples.names]
        report = audit_scene(scene=scene, samples=samples, core_objects=core, blend=blend, resimulate=resimulate)
        audit_kinds = sorted({f.kind for f in report.findings})
    except ImportError:
        report = None
    except Exception as ex:  # noqa: BLE001 - an audit crash is reported, the rubric still runs
        report = None
        audit_error = f"{type(ex).__name__}: {ex}"
    roles_file = blend.parent / "roles.json"
    if not roles_file.is_file():
        roles_file.write_text(json.dumps(truth_mapping(loaded_task)))
    has_cf = any(c.check in CF_CHECKS for c in loaded_task.task.rubric.criteria)
    doc = None
    if lazy and has_cf:
        cheap = evaluate_rubric(_without_counterfactuals(loaded_task), scene, samples, report, blend.parent,
                                roles_file=roles_file)
        scan = {f["kind"] for f in cheap.get("scan_findings", [])}
        decided = sorted((set(audit_kinds) | scan) & set(decided_by))
        if decided or any(c["passed"] is False for c in cheap["criteria"]):
            why = f"skipped: verdict already decided by finding(s) {decided}" if decided else ("skipped: another "
                                                                                               "criterion already "
                                                                                               "failed (lazy self-test "
                                                                                               "mode)")
            rows = {c["id"]: c for c in cheap["criteria"]}
            full = []
            for c in loaded_task.task.rubric.criteria:
                full.append(rows.get(c.id) or {"id": c.id, "check": c.check, "passed": None, "score": 0.0,
                                               "weight": c.weight, "structural": c.structural, "cap": c.cap,
                                               "evidence": {}, "reason": why})
            s_val, expl = finalize(full, loaded_task.task.rubric,
                                   validity_findings(report, samples, loaded_task.task.rubric,
                                                     cheap.get("scan_findings")))
            doc = {**cheap, "criteria": full, "S_val": s_val, "aggregation": expl,
                   "finding_charges": expl.get("finding_charges", []), "counterfactuals_skipped": why}
    if doc is None:
        doc = evaluate_rubric(loaded_task, scene, samples, report, blend.parent, roles_file=roles_file,
                              lazy_counterfactuals=lazy)
    doc["audit_kinds"] = audit_kinds
    doc["audit_error"] = audit_error
    return doc


# defects whose whole effect is a different motion: where that motion is the truth's, there is nothing to catch
# (`pass_through` on a pendulum: the bob hangs from its hinge and never touches the pivot it can no longer meet)
MOTION_ONLY_DEFECTS = ("stale_bake", "pass_through", "field_lift")  # n/a where the truth motion is kept
# The truth's baseline is what each defect row is compared with; those rows skip the re-simulation too (NO_RESIM),
# and whether the truth re-bakes the same is its own check (`tasks verify`, and the truth audit in CI), so the
# baseline does not pay for a second bake of every truth (cloth_drape: 47 s).
TRUTH_NO_RESIM = ("skipped by the self-test's baseline: the truth program was baked in the sandbox and saved just "
                  "now; that the truth re-bakes the same is checked by `tasks verify` and by auditing its run folder")
NO_RESIM = ("skipped by the self-test: the worker baked this scene from the saved file and nothing changed since "
            "(a defect that edits the scene after its bake keeps the re-simulation)")


def changes_nothing(loaded_task: LoadedTask, defect_npz: Path) -> str | None:
    """Why the defected bake is the truth's motion (the `probes.branches.resimulation` comparison with the stored truth
    trajectories finds no departure), or None when it moves something differently or cannot be compared.

    Why: `stale_bake` bakes at half gravity; on a task where gravity moves nothing (turntable: a kinematic
    table carrying glued bodies) the bake is the truth's own motion, so the saved scene does simulate it and a
    miss would be a false alarm about the self-test, not about the audit."""
    from physcodegym.probes.branches.resimulation import compare, resim_things
    from physcodegym.samples import SceneSamples

    tt = loaded_task.truth_trajectories
    if tt is None or not Path(tt).is_file() or not Path(defect_npz).is_file():
        return None
    truth, bad = SceneSamples.load_npz(tt), SceneSamples.load_npz(defect_npz)
    objects, keys = resim_things(bad)
    doc = compare(truth, bad, objects, [k for k in keys if k in truth.particles])
    if doc["departs"] or not (doc["objects"] or doc["particles"]):
        return None
    worst = max([r["max_m"] for r in doc["objects"].values()] + [r["bulk_max_m"] for r in doc["particles"].values()])
    return (f"{NOT_APPLICABLE} the defected bake moves every simulated thing as the truth does (largest "
            f"departure {worst:.4f} m): nothing here is moved by what the defect changed")


def _twin_row(row: dict[str, Any], doc: dict[str, Any], base: dict[str, Any], failed: list[str], scan: list[str],
              resimulated: bool, twin_of: str) -> dict[str, Any]:
    """An honest twin's row: clean when the audit, the rubric scan and the charges find nothing the unchanged
    truth does not have, no criterion fails that passes on the truth, and S_val does not drop. `caught` then says
    the expectation was met (it stayed clean), so `all_caught` covers defects and twins alike."""
    new_audit = sorted(set(doc["audit_kinds"]) - set(base.get("audit_kinds") or []))
    base_charges = {(r["kind"], tuple(r.get("objects") or [])) for r in base.get("finding_charges") or []}
    new_charges = [{k: r[k] for k in ("kind", "objects", "cap")} for r in doc.get("finding_charges", [])
                   if (r["kind"], tuple(r.get("objects") or [])) not in base_charges]
    dropped = doc["S_val"] is not None and base["S_val"] is not None and doc["S_val"] < base["S_val"] - 1e-9
    clean = not (new_audit or scan or new_charges or failed or dropped)
    row.update(honest_twin=True, twin_of=twin_of, clean=clean, caught=clean, penalised=dropped,
               new_audit_kinds=new_audit, scan_kinds=scan, new_charges=new_charges, by_rubric=failed,
               S_val=doc["S_val"], resimulated=resimulated, audit_error=doc.get("audit_error"),
               reasons={c["id"]: c["reason"] for c in doc["criteria"] if c["id"] in failed})
    return row


def cell(row: dict[str, Any]) -> str:
    """One matrix cell: "+P" caught and S_val dropped, "+" caught but not penalised, "MISSED", "n/a" (the defect
    has nothing to act on in this task; the row says why) or "ERROR" (the injection itself failed). An honest twin
    (`probes.defects.defects.HONEST_TWINS`) is "clean" when it stayed clean, "FALSE ALARM" when anything was charged."""
    if row.get("not_applicable"):
        return "n/a"
    if row.get("honest_twin"):
        return "clean" if row.get("clean") else "FALSE ALARM"
    if row.get("caught") is None:
        return "ERROR"
    if not row["caught"]:
        return "MISSED"
    return "+P" if row.get("penalised") else "+"


def _defect_mapping(loaded_task: LoadedTask) -> dict[str, str]:
    """Role -> object names of the truth scene, plus what an injection needs to know of the task: its core
    roles, the colliders the rubric says the core rests on or touches (whose removal matters) and the
    actuator types the task admits."""
    mapping = truth_mapping(loaded_task)
    mapping["__core__"] = json.dumps([r.name for r in loaded_task.task.roles if r.core])
    sup = [c.params["support"] for c in loaded_task.task.rubric.criteria if c.check == "supported_by"]
    sup += [c.params["other"] for c in loaded_task.task.rubric.criteria if c.check == "contacts"]
    mapping["__supports__"] = json.dumps([mapping[r] for r in dict.fromkeys(sup) if r in mapping])
    mapping["__admits__"] = json.dumps(sorted(loaded_task.task.rubric.admitted_types()))
    return mapping


def _defect_jobs(work: Path, task_id: str, kinds: list[str]) -> list[dict[str, Any]]:
    """One injection job per defect kind, each in its own folder cleared of an earlier attempt's outputs."""
    for kind in kinds:
        if kind not in DEFECTS:
            raise ValueError(f"unknown defect {kind!r}; known: {', '.join(DEFECTS)}")
    jobs = []
    for kind in kinds:
        d = work / f"{task_id}_{kind}"
        d.mkdir(exist_ok=True)
        for stale in (d / "scene.blend", d / "samples.npz", d / "samples.json"):
            stale.unlink(missing_ok=True)
        jobs.append({"out": d / "samples.npz", "defect": kind, "save_blend": d / "scene.blend"})
    return jobs


def _defect_row(loaded_task: LoadedTask, kind: str, job: dict[str, Any], rec: dict[str, Any],
                base: dict[str, Any], base_failed: set[str]) -> dict[str, Any]:
    """One defect's row of the matrix: not applicable (with the reason), an honest twin's clean/false-alarm
    verdict, or what caught the defect (audit, static scan, finding charges, rubric) and whether S_val fell."""
    d = Path(job["save_blend"]).parent
    row: dict[str, Any] = {"injected": rec.get("defect"), "expected_kinds": list(DEFECTS[kind]),
                           "bake_s": rec.get("bake_s"),
                           **({"worker_crashes": rec["worker_crashes"]} if rec.get("worker_crashes") else {})}
    if not (d / "scene.blend").is_file() or not rec.get("ok"):
        err = "; ".join(rec.get("errors", [])) or "injection failed"
        # a scene with no collider cannot lose one: the defect kind does not apply to this task
        row.update(caught=None, not_applicable=NOT_APPLICABLE in err, error=err)
        return row
    inert = changes_nothing(loaded_task, d / "samples.npz") if kind in MOTION_ONLY_DEFECTS else None
    if inert:
        row.update(caught=None, not_applicable=True, error=inert)
        return row
    # The worker baked this scene from the saved file and nothing changed since, so its re-simulation
    # (the costliest audit step: a second bake) can only agree; a defect that edits the scene after
    # its bake (stale_bake) is exactly what the re-simulation is for, and keeps it.
    resim = True if (rec.get("defect") or {}).get("after_bake") else NO_RESIM
    doc = evaluate_blend(loaded_task, d / "scene.blend", lazy=True, samples_npz=d / "samples.npz",
                         decided_by=DEFECTS[kind], resimulate=resim)
    failed = sorted(c["id"] for c in doc["criteria"] if c["passed"] is False and c["id"] not in base_failed)
    scan = sorted({f["kind"] for f in doc.get("scan_findings", [])})
    if kind in HONEST_TWINS:
        return _twin_row(row, doc, base, failed, scan, resim is True, HONEST_TWINS[kind])
    by_audit = sorted(set(doc["audit_kinds"]) & set(DEFECTS[kind]))
    by_scan = sorted(set(scan) & set(DEFECTS[kind]))
    # rubric-level findings: the audit's measurements judged against what the task admits (joints, fields)
    by_charge = sorted({r["kind"] for r in doc.get("finding_charges", [])} & set(DEFECTS[kind]) - set(by_audit))
    row.update(
        caught=bool(by_audit or by_scan or by_charge or failed),
        penalised=bool(doc["S_val"] is not None and base["S_val"] is not None and doc["S_val"] < base["S_val"]),
        by_audit=by_audit,
        by_scan=by_scan,
        by_charge=by_charge,
        by_rubric=failed,
        scan_kinds=scan,
        S_val=doc["S_val"],
        resimulated=resim is True,
        audit_error=doc.get("audit_error"),
        reasons={c["id"]: c["reason"] for c in doc["criteria"] if c["id"] in failed},
        charges=[{k: r[k] for k in ("kind", "objects", "cap", "cost")} for r in doc.get("finding_charges", [])],
        **({"counterfactuals_skipped": doc["counterfactuals_skipped"]} if doc.get("counterfactuals_skipped")
           else {}),
    )
    return row


def run_selftest(loaded_task: LoadedTask, defects: list[str] | None = None, work_dir: Path | None = None,
                 progress: Any = None) -> dict[str, Any]:
    """{"task", "baseline": {S_val, failed}, "defects": {kind: {caught, by_audit, by_rubric, failed_criteria, S_val}}}.

    The truth is baked and fully evaluated once (cached in the work folder); every defect is
    injected into a fresh load of the saved truth scene inside ONE worker process, re-baked, saved
    and sampled there; here each defective scene is audited and rubric-checked on those samples.
    """
    from physcodegym.probes.branches.counterfactual import run_branches

    tmp = tempfile.TemporaryDirectory(prefix="pcg_selftest_") if work_dir is None else None
    work = Path(work_dir) if work_dir else Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    try:
        blend = truth_blend(loaded_task, work)
        base = truth_baseline(loaded_task, work)
        base_failed = {c["id"] for c in base["criteria"] if c["passed"] is False}
        out: dict[str, Any] = {
            "task": loaded_task.id,
            "baseline": {"S_val": base["S_val"], "failed": sorted(base_failed),
                         **({"audit_error": base["audit_error"]} if base.get("audit_error") else {})},
            "defects": {},
        }
        kinds = list(defects or list(DEFECTS))
        jobs = _defect_jobs(work, loaded_task.id, kinds)
        branches = run_branches(blend, jobs, _defect_mapping(loaded_task))
        for kind, job, (_, rec) in zip(kinds, jobs, branches, strict=True):
            out["defects"][kind] = _defect_row(loaded_task, kind, job, rec, base, base_failed)
            if progress:
                progress(kind, out["defects"][kind])
        out["cells"] = {k: cell(r) for k, r in out["defects"].items()}
        out["all_caught"] = all(r.get("caught") for r in out["defects"].values() if not r.get("not_applicable"))
        return out
    finally:
        if tmp is not None:
            tmp.cleanup()
