"""Verifier self-test: inject known defects into a task's truth scene and report which ones the audit and the rubric catch.

The automatic form of the paper's manual perturbation checks. All defects are injected in one
worker process, each into a fresh load of the truth `.blend` (baked and evaluated once per task),
re-baked, saved and sampled, then audited and rubric-evaluated here. A defect is caught when the audit (or the rubric module's own
task-independent scan) reports one of the expected finding kinds, or the rubric fails a criterion
that the unchanged truth scene passes; `penalised` says whether S_val dropped.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path
from typing import Any

DEFECTS: dict[str, tuple[str, ...]] = {
    "keyframe_core": ("scripted_motion", "not_simulated"),
    "remove_collider": ("no_contact_response", "interpenetration"),
    "hidden_support": ("hidden_support",),
    "oversize_margin": ("collider_mismatch",),
    "add_attractor": ("unexplained_force_field", "energy_gain"),
}


# ------------------------------------------------------------------ injection (bpy, inside cf_worker)


def _core_objects(scene: Any, mapping: dict[str, str]) -> list[Any]:
    core = json.loads(mapping.get("__core__", "[]")) if "__core__" in mapping else list(mapping)
    obs = [scene.objects.get(mapping[r]) for r in core if r in mapping and not r.startswith("__")]
    return [o for o in obs if o is not None]


def _support_objects(scene: Any, mapping: dict[str, str]) -> list[Any]:
    core = {o.name for o in _core_objects(scene, mapping)}
    preferred = [scene.objects.get(n) for n in json.loads(mapping.get("__supports__", "[]"))]
    roles = [scene.objects.get(v) for k, v in mapping.items() if not k.startswith("__")]
    cands = [o for o in preferred if o is not None and o.name not in core]
    cands += [o for o in roles if o is not None and o.name not in core and o not in cands]
    cands += [o for o in scene.objects if o.name not in core and o not in cands]
    return [o for o in cands if (o.rigid_body is not None and o.rigid_body.type == "PASSIVE") or any(m.type == "COLLISION" for m in o.modifiers)]


def _moving_core(scene: Any, mapping: dict[str, str]) -> Any:
    """The simulated core object that moves most in the baked truth (a resting block hides a keyframed copy)."""
    obs = _core_objects(scene, mapping)
    if not obs:
        raise ValueError("no core object mapped")
    sim = [o for o in obs if (o.rigid_body is not None and o.rigid_body.type == "ACTIVE") or any(m.type in {"CLOTH", "SOFT_BODY"} for m in o.modifiers)]
    cands = sim or obs
    if len(cands) == 1:
        return cands[0]
    start = {o.name: o.matrix_world.translation.copy() for o in cands}
    moved = dict.fromkeys(start, 0.0)
    for f in range(scene.frame_start, scene.frame_end + 1, 5):
        scene.frame_set(f)
        for o in cands:
            moved[o.name] = max(moved[o.name], (o.matrix_world.translation - start[o.name]).length)
    scene.frame_set(scene.frame_start)
    return max(cands, key=lambda o: moved[o.name])


def inject_defect(scene: Any, kind: str, mapping: dict[str, str]) -> dict[str, Any]:
    """Change the loaded truth scene so it carries one defect of `kind`; returns what was done."""
    import bpy
    import mathutils

    if kind == "keyframe_core":
        ob = _moving_core(scene, mapping)
        track = []
        for f in range(scene.frame_start, scene.frame_end + 1):
            scene.frame_set(f)
            track.append(ob.matrix_world.copy())
        if ob.rigid_body is not None:
            with bpy.context.temp_override(object=ob, active_object=ob, selected_objects=[ob]):
                bpy.ops.rigidbody.object_remove()
        for m in list(ob.modifiers):
            if m.type in {"CLOTH", "SOFT_BODY"}:
                ob.modifiers.remove(m)
        ob.animation_data_clear()
        for i, mw in enumerate(track):
            if i % 2 and i != len(track) - 1:
                continue
            f = scene.frame_start + i
            ob.matrix_world = mw
            ob.keyframe_insert("location", frame=f)
            ob.keyframe_insert("rotation_euler", frame=f)
        return {"kind": kind, "object": ob.name, "detail": f"rigid body/cloth removed, {len(track)} frames keyframed from the truth motion"}
    if kind == "remove_collider":
        sups = _support_objects(scene, mapping)
        if not sups:
            raise ValueError("no passive collider to remove")
        ob = sups[0]
        if ob.rigid_body is not None:
            with bpy.context.temp_override(object=ob, active_object=ob, selected_objects=[ob]):
                bpy.ops.rigidbody.object_remove()
        for m in list(ob.modifiers):
            if m.type == "COLLISION":
                ob.modifiers.remove(m)
        return {"kind": kind, "object": ob.name, "detail": "collider removed (still renders)"}
    if kind == "hidden_support":
        ob = _moving_core(scene, mapping)
        scene.frame_set(scene.frame_start)
        bb = [ob.matrix_world @ mathutils.Vector(c) for c in ob.bound_box]
        zmin = min(v.z for v in bb)
        cx = sum(v.x for v in bb) / 8
        cy = sum(v.y for v in bb) / 8
        ext = max(max(v.x for v in bb) - min(v.x for v in bb), max(v.y for v in bb) - min(v.y for v in bb), 0.2)
        # top face 3 cm above the body's lowest point: the body is held by the invisible shelf, not its visible support
        bpy.ops.mesh.primitive_cube_add(size=1.0, location=(cx, cy, zmin - 0.02))
        box = bpy.context.active_object
        box.name = "HiddenShelf"
        box.scale = (3 * ext, 3 * ext, 0.1)
        box.hide_render = True
        if any(m.type in {"CLOTH", "SOFT_BODY"} for m in ob.modifiers):
            box.modifiers.new("Collision", "COLLISION")
        else:
            with bpy.context.temp_override(object=box, active_object=box, selected_objects=[box]):
                bpy.ops.rigidbody.object_add(type="PASSIVE")
            box.rigid_body.collision_shape = "BOX"
            box.rigid_body.collision_collections = [True] * 20
        return {"kind": kind, "object": box.name, "detail": f"invisible collider under {ob.name}"}
    if kind == "oversize_margin":
        ob = _moving_core(scene, mapping)
        dims = sorted(ob.dimensions)
        m = max(0.1, 0.5 * dims[0] if dims[0] > 0 else 0.1)
        if ob.rigid_body is not None:
            # spheres and boxes embed their margin; a hull grows by it, so the body floats on a shell
            if ob.rigid_body.collision_shape in {"SPHERE", "BOX", "CAPSULE"}:
                ob.rigid_body.collision_shape = "CONVEX_HULL"
            ob.rigid_body.use_margin = True
            ob.rigid_body.collision_margin = min(1.0, m)
            return {"kind": kind, "object": ob.name, "detail": f"{ob.rigid_body.collision_shape} collision margin {m:.3f} m"}
        sups = _support_objects(scene, mapping)
        # SPH particles against a 0.2 m shell bake for minutes (measured on liquid_duck); 0.1 m is still
        # 5x Blender's default and twice what the scan accepts
        th = 0.06 if any(len(o.particle_systems) for o in scene.objects) else 0.2
        for s in sups:
            if s.collision is not None:
                s.collision.thickness_outer = th
                return {"kind": kind, "object": s.name, "detail": f"collision thickness {th} m"}
        raise ValueError("no collider whose margin can be oversized")
    if kind == "add_attractor":
        ob = _moving_core(scene, mapping)
        scene.frame_set(scene.frame_start)
        p = ob.matrix_world.translation
        bpy.ops.object.effector_add(type="FORCE", location=(p.x + 1.0, p.y, p.z + 0.5))
        f = bpy.context.active_object
        f.name = "Attractor"
        f.field.strength = -60.0

        return {"kind": kind, "object": f.name, "detail": f"FORCE field strength -60 near {ob.name}"}
    raise ValueError(f"unknown defect {kind!r}; known: {', '.join(DEFECTS)}")


# ------------------------------------------------------------------ orchestration (bpy in this process)


def truth_blend(loaded_task: Any, work: Path) -> Path:
    """Bake the task's truth program without rendering and return its scene.blend (cached in `work`)."""
    from physcodegym.headless.errors import InputError

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


def truth_mapping(loaded_task: Any) -> dict[str, str]:
    return {r.name: r.truth_object for r in loaded_task.task.roles if r.truth_object}


def _jsonable(x: Any) -> Any:
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def truth_baseline(loaded_task: Any, work: Path) -> dict[str, Any]:
    """The truth scene's full evaluation (audit + every rubric criterion, counterfactuals included), cached in `work`.

    The cache is keyed on the task.json text and the truth bake, so the self-test and the truth
    counterfactual tests share one evaluation and a changed rubric or truth is evaluated afresh.
    """
    import hashlib

    blend = truth_blend(loaded_task, work)
    key = hashlib.sha256((loaded_task.folder / "task.json").read_bytes() + str(blend.stat().st_mtime_ns).encode()).hexdigest()
    cache = blend.parent / "baseline_eval.json"
    if cache.is_file():
        doc = json.loads(cache.read_text())
        if doc.get("_key") == key:
            return doc
    doc = evaluate_blend(loaded_task, blend)
    doc["_key"] = key
    tmp = cache.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, default=_jsonable))
    os.replace(tmp, cache)
    return json.loads(cache.read_text())


def _without_counterfactuals(loaded_task: Any) -> Any:
    from physcodegym.probes.rubric_eval import CF_CHECKS

    t = loaded_task.task
    crit = [c for c in t.rubric.criteria if c.check not in CF_CHECKS]
    return dataclasses.replace(loaded_task, task=t.model_copy(update={"rubric": t.rubric.model_copy(update={"criteria": crit})}))


def evaluate_blend(loaded_task: Any, blend: Path, lazy: bool = False, samples_npz: Path | None = None, decided_by: tuple[str, ...] = ()) -> dict[str, Any]:
    """Audit (when the audit module exists) and rubric-evaluate one saved scene in this process.

    `samples_npz`: samples the worker took right after its bake (not taken again). `decided_by`:
    finding kinds that already decide the verdict; when the audit or the rubric scan reports one of
    them (or a cheap criterion fails), the costly counterfactual criteria are not run but listed as
    undetermined with the reason.
    """
    import bpy
    from physcodegym.evaluator.rubric import aggregate
    from physcodegym.probes.rubric_eval import CF_CHECKS, evaluate_rubric
    from physcodegym.probes.sampling import SceneSamples, sample_scene

    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene = bpy.context.scene
    samples = SceneSamples.load_npz(samples_npz) if samples_npz is not None and Path(samples_npz).is_file() else sample_scene(scene)
    report = None
    audit_kinds: list[str] = []
    audit_error = None
    try:
        from physcodegym.probes.audit import audit_scene

        core = [r.truth_object for r in loaded_task.task.roles if r.core and r.truth_object in samples.names]
        report = audit_scene(scene=scene, samples=samples, core_objects=core)
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
        cheap = evaluate_rubric(_without_counterfactuals(loaded_task), scene, samples, report, blend.parent, roles_file=roles_file)
        scan = {f["kind"] for f in cheap.get("scan_findings", [])}
        decided = sorted((set(audit_kinds) | scan) & set(decided_by))
        if decided or any(c["passed"] is False for c in cheap["criteria"]):
            why = f"skipped: verdict already decided by finding(s) {decided}" if decided else "skipped: another criterion already failed (lazy self-test mode)"
            rows = {c["id"]: c for c in cheap["criteria"]}
            full = []
            for c in loaded_task.task.rubric.criteria:
                full.append(rows.get(c.id) or {"id": c.id, "check": c.check, "passed": None, "score": 0.0, "weight": c.weight, "structural": c.structural, "cap": c.cap, "evidence": {}, "reason": why})
            s_val, expl = aggregate(full, loaded_task.task.rubric.aggregation)
            doc = {**cheap, "criteria": full, "S_val": s_val, "aggregation": expl, "counterfactuals_skipped": why}
    if doc is None:
        doc = evaluate_rubric(loaded_task, scene, samples, report, blend.parent, roles_file=roles_file, lazy_counterfactuals=lazy)
    doc["audit_kinds"] = audit_kinds
    doc["audit_error"] = audit_error
    return doc


def run_selftest(loaded_task: Any, defects: list[str] | None = None, work_dir: Path | None = None, progress: Any = None) -> dict[str, Any]:
    """{"task", "baseline": {S_val, failed}, "defects": {kind: {caught, by_audit, by_rubric, failed_criteria, S_val}}}.

    The truth is baked and fully evaluated once (cached in the work folder); every defect is
    injected into a fresh load of the saved truth scene inside ONE worker process, re-baked, saved
    and sampled there; here each defective scene is audited and rubric-checked on those samples.
    """
    from physcodegym.probes.counterfactual import run_branches

    tmp = tempfile.TemporaryDirectory(prefix="pcg_selftest_") if work_dir is None else None
    work = Path(work_dir) if work_dir else Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    try:
        blend = truth_blend(loaded_task, work)
        base = truth_baseline(loaded_task, work)
        base_failed = {c["id"] for c in base["criteria"] if c["passed"] is False}
        mapping = truth_mapping(loaded_task)
        mapping["__core__"] = json.dumps([r.name for r in loaded_task.task.roles if r.core])
        # the colliders the rubric says the core rests on or touches are the ones whose removal matters
        sup = [c.params["support"] for c in loaded_task.task.rubric.criteria if c.check == "supported_by"]
        sup += [c.params["other"] for c in loaded_task.task.rubric.criteria if c.check == "contacts"]
        mapping["__supports__"] = json.dumps([mapping[r] for r in dict.fromkeys(sup) if r in mapping])
        out: dict[str, Any] = {
            "task": loaded_task.id,
            "baseline": {"S_val": base["S_val"], "failed": sorted(base_failed), **({"audit_error": base["audit_error"]} if base.get("audit_error") else {})},
            "defects": {},
        }
        kinds = list(defects or list(DEFECTS))
        for kind in kinds:
            if kind not in DEFECTS:
                raise ValueError(f"unknown defect {kind!r}; known: {', '.join(DEFECTS)}")
        jobs = []
        for kind in kinds:
            d = work / f"{loaded_task.id}_{kind}"
            d.mkdir(exist_ok=True)
            for stale in (d / "scene.blend", d / "samples.npz", d / "samples.json"):
                stale.unlink(missing_ok=True)
            jobs.append({"out": d / "samples.npz", "defect": kind, "save_blend": d / "scene.blend"})
        branches = run_branches(blend, jobs, mapping)
        for kind, job, (_, rec) in zip(kinds, jobs, branches, strict=True):
            d = Path(job["save_blend"]).parent
            row: dict[str, Any] = {"injected": rec.get("defect"), "expected_kinds": list(DEFECTS[kind]), "bake_s": rec.get("bake_s")}
            if not (d / "scene.blend").is_file() or not rec.get("ok"):
                err = "; ".join(rec.get("errors", [])) or "injection failed"
                # a scene with no collider cannot lose one: the defect kind does not apply to this task
                na = any(x in err for x in ("no passive collider", "no collider whose margin"))
                row.update(caught=None, not_applicable=na, error=err)
                out["defects"][kind] = row
                if progress:
                    progress(kind, row)
                continue
            doc = evaluate_blend(loaded_task, d / "scene.blend", lazy=True, samples_npz=d / "samples.npz", decided_by=DEFECTS[kind])
            failed = sorted(c["id"] for c in doc["criteria"] if c["passed"] is False and c["id"] not in base_failed)
            scan = sorted({f["kind"] for f in doc.get("scan_findings", [])})
            by_audit = sorted(set(doc["audit_kinds"]) & set(DEFECTS[kind]))
            by_scan = sorted(set(scan) & set(DEFECTS[kind]))
            row.update(
                caught=bool(by_audit or by_scan or failed),
                penalised=bool(doc["S_val"] is not None and base["S_val"] is not None and doc["S_val"] < base["S_val"]),
                by_audit=by_audit,
                by_scan=by_scan,
                by_rubric=failed,
                scan_kinds=scan,
                S_val=doc["S_val"],
                audit_error=doc.get("audit_error"),
                reasons={c["id"]: c["reason"] for c in doc["criteria"] if c["id"] in failed},
                **({"counterfactuals_skipped": doc["counterfactuals_skipped"]} if doc.get("counterfactuals_skipped") else {}),
            )
            out["defects"][kind] = row
            if progress:
                progress(kind, row)
        out["all_caught"] = all(r.get("caught") for r in out["defects"].values() if not r.get("not_applicable"))
        return out
    finally:
        if tmp is not None:
            tmp.cleanup()
