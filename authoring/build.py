"""Regenerate shipped tasks from their hidden ground-truth programs (`physcodegym tasks build ID|all`).

Per task folder `tasks/packs/<id>/`:
  truth.py          the hidden ground-truth scene program (a valid submission, real simulation only)
  annotation.py     the hand-written part: TASK (title, roles, checklist, events without intervals,
                    rubric) and measure_events(samples) -> {event_id: {start_s, end_s, evidence}}
and the build writes the measured part:
  reference.mp4            240 frames, 30 fps, H.264 (SSIM vs the PNGs recorded in build.json)
  truth_trajectories.npz   SceneSamples of the saved native scene, sampled in a fresh process
  task.json                TASK + measured event intervals, role screen positions/colours, program hash
  build.json               what the build measured (seconds, SSIM, sizes)

Why this split: the hand-written part is reviewable and stable; everything measured is re-derived
from truth.py, so rebuilding gives the same task.json (the simulations are deterministic).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from physcodegym.core import atomic, launch
from physcodegym.core.errors import InputError
from physcodegym.core.hashing import sha256_file
from physcodegym.tasks.loader import LIBRARY_DIR, PACKS_DIR, TASK_FILE
from physcodegym.tasks.schema import Task

ANNOTATION = "annotation.py"
TRUTH = "truth.py"


def shipped_ids() -> list[str]:
    return sorted(p.parent.name for p in PACKS_DIR.glob(f"*/{TRUTH}") if (p.parent / ANNOTATION).is_file())


def library_ids() -> list[str]:
    """Generated family members (`physcodegym tasks generate`) in tasks/library/."""
    return sorted(p.parent.name for p in LIBRARY_DIR.glob(f"*/{TRUTH}") if (p.parent / ANNOTATION).is_file())


def expand_ids(ids: list[str]) -> list[str]:
    """'all' = shipped packs + library, 'shipped' = tasks/packs only, 'library' = generated members only."""
    out: list[str] = []
    for i in ids:
        out.extend({"all": shipped_ids() + library_ids(), "shipped": shipped_ids(),
                    "library": library_ids()}.get(i, [i]))
    return list(dict.fromkeys(out))


def resolve_folder(id_or_path: str) -> Path:
    p = Path(id_or_path)
    folder = p if p.is_dir() else PACKS_DIR / id_or_path
    if not p.is_dir() and not (folder / TRUTH).is_file() and (LIBRARY_DIR / id_or_path / TRUTH).is_file():
        folder = LIBRARY_DIR / id_or_path
    if not (folder / TRUTH).is_file():
        raise InputError("task folder has no truth.py (only shipped tasks can be built)", file=str(folder / TRUTH))
    if not (folder / ANNOTATION).is_file():
        raise InputError("task folder has no annotation.py (the hand-written part of the task)",
                         file=str(folder / ANNOTATION))
    return folder.resolve()


def load_annotation(folder: Path) -> ModuleType:
    path = folder / ANNOTATION
    spec = importlib.util.spec_from_file_location(f"pcg_annotation_{folder.name}", path)
    if spec is None or spec.loader is None:
        raise InputError("cannot import annotation", file=str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for attr in ("TASK", "measure_events"):
        if not hasattr(mod, attr):
            raise InputError(f"annotation defines no {attr}", file=str(path), field=attr)
    return mod


def run_truth(program: Path, out_dir: Path, mode: str) -> dict[str, Any]:
    """Run truth.py isolated (sandbox runner); returns status and seconds. Raises if the run failed."""
    from physcodegym.sandbox.runner import run_program

    rec = run_program(program, out_dir, timeout_s=1800, mode=mode)
    if rec.status != "ok":
        raise RuntimeError(f"{program} ({mode}) {rec.status}: {rec.reason} missing={rec.missing[:3]}\n"
                           f"{rec.log_tail[-1500:]}")
    return {"status": rec.status, "seconds": round(rec.seconds, 2), "peak_memory_mb": rec.peak_memory_mb}


def _py(*args: str, cwd: Path | None = None) -> None:
    """`_py("-m", MODULE, *args)`: one of our modules in a child started by core.launch (module or Blender binary)."""
    r = subprocess.run(launch.module_argv(args[1], args[2:]), cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} failed (rc {r.returncode}):\n{(r.stdout + r.stderr)[-2000:]}")


def sample_blend(blend: Path, out_npz: Path, objects: list[str]) -> dict[str, Any]:
    """Sample a native scene in a fresh bpy process; returns the role samples (screen xy, colour per object)."""
    roles_json = out_npz.with_name(out_npz.stem + "_roles.json")
    _py("-m", "physcodegym.authoring.sample_worker", str(blend), str(out_npz), str(roles_json), *objects)
    return json.loads(roles_json.read_text())


def trajectories_digest(npz: Path, decimals: int = 5) -> str:
    """Hash of the deterministic part of a sampling: rounded matrices, vertices and particle alive masks.

    Particle positions are left out: an SPH bake can depend on the process's memory layout (liquid_duck: not
    reproducible even on one CPU) and the flow is chaotic, so they are compared as a flow by tasks.verify instead
    (see the measurements in verify.py and verify.compare_particles).
    """
    import numpy as np

    h = hashlib.sha256()
    with np.load(npz) as z:
        for k in sorted(z.files):
            if k == "meta_json" or k.startswith("particles::"):
                continue
            a = z[k]
            a = np.round(np.nan_to_num(a.astype(np.float64)), decimals) if a.dtype.kind == "f" else a
            h.update(k.encode())
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def merge(folder: Path, ann: ModuleType, samples: Any, role_samples: dict[str, Any]) -> Task:
    """TASK (hand-written) + measured intervals, role positions/colours and program hash -> Task."""
    raw = json.loads(json.dumps(ann.TASK))
    measured = ann.measure_events(samples)
    for ev in raw["events"]:
        m = measured.get(ev["id"])
        if m is None:
            raise InputError("measure_events gives no interval for this event", file=str(folder / ANNOTATION),
                             field=f"events.{ev['id']}")
        ev["interval"] = {"start_s": m["start_s"], "end_s": m["end_s"]}
        ev["evidence"] = m["evidence"]
        if "persists_until_s" in m:
            ev["persists_until_s"] = m["persists_until_s"]
    for role in raw.get("roles", []):
        obj = role.get("truth_object")
        p = role_samples.get(obj) if obj else None
        if p and "error" not in p:
            role["screen_xy"] = p["screen_xy"]
            if p.get("color_rgb"):
                role["color_rgb"] = p["color_rgb"]
    raw["truth"] = {
        "program": TRUTH,
        "trajectories": "truth_trajectories.npz",
        "counterfactuals": "truth_counterfactuals.json",
        "program_sha256": sha256_file(folder / TRUTH),
    }
    return Task.model_validate(raw)


def reannotate_task(id_or_path: str) -> dict[str, Any]:
    """Re-merge annotation.py without re-rendering: only when truth.py is unchanged since the last build.

    truth.py is re-run bake-only and sampled afresh; the sampling must hash like the stored
    trajectories (else the program or Blender changed and a full build is needed).
    """
    from physcodegym.samples import SceneSamples

    folder = resolve_folder(id_or_path)
    ann = load_annotation(folder)
    rec_path = folder / "build.json"
    if not rec_path.is_file() or not (folder / "reference.mp4").is_file():
        raise InputError("no previous build to re-annotate; run a full build", file=str(rec_path))
    record = json.loads(rec_path.read_text())
    if record.get("program_sha256") != sha256_file(folder / TRUTH):
        raise InputError("truth.py changed since the last build; run a full build", file=str(folder / TRUTH),
                         field="program_sha256")
    with tempfile.TemporaryDirectory(prefix=f"pcg_reannotate_{folder.name}_") as td:
        scratch = Path(td)
        run_truth(folder / TRUTH, scratch / "bake", mode="bake_only")
        objects = sorted({r["truth_object"] for r in ann.TASK.get("roles", []) if r.get("truth_object")})
        npz = scratch / "truth_trajectories.npz"
        role_samples = sample_blend(scratch / "bake" / "scene.blend", npz, objects)
        from physcodegym.authoring.verify import compare_samples

        stored_npz = folder / "truth_trajectories.npz"
        stored = SceneSamples.load_npz(stored_npz)
        cmp = compare_samples(stored, SceneSamples.load_npz(npz))
        if not cmp["ok"]:
            raise RuntimeError(f"{folder.name}: re-run differs from the stored truth trajectories: "
                               f"{cmp['problems'][:3]}")
        task = merge(folder, ann, stored, role_samples)  # intervals are always measured on the stored truth
        record["trajectories_sha256"] = trajectories_digest(stored_npz)
    atomic.write_text(folder / TASK_FILE, json.dumps(task.model_dump(mode="json"), indent=2) + "\n")
    record["events"] = {e.id: [e.interval.start_s, e.interval.end_s] for e in task.events}
    record["sizes_bytes"] = {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()}
    record["total_bytes"] = sum(record["sizes_bytes"].values())
    atomic.write_text(rec_path, json.dumps(record, indent=2) + "\n")
    return record


def build_task(id_or_path: str, keep_scratch: Path | None = None) -> dict[str, Any]:
    """Rebuild one shipped task: run truth.py, encode the video, sample, measure events, write task.json."""
    from physcodegym.authoring.media import ssim_against_frames
    from physcodegym.samples import SceneSamples

    folder = resolve_folder(id_or_path)
    ann = load_annotation(folder)
    scratch = Path(keep_scratch) if keep_scratch else Path(tempfile.mkdtemp(prefix=f"pcg_build_{folder.name}_"))
    try:
        t0 = time.monotonic()
        bake = run_truth(folder / TRUTH, scratch / "bake", mode="bake_only")
        full = run_truth(folder / TRUTH, scratch / "full", mode="full")
        run_dir = scratch / "full"
        tmp_mp4 = scratch / "reference.mp4"
        _py("-m", "physcodegym.authoring.media", str(run_dir / "frames"), str(tmp_mp4))
        ssim = ssim_against_frames(tmp_mp4, run_dir / "frames")
        objects = sorted({r["truth_object"] for r in ann.TASK.get("roles", []) if r.get("truth_object")})
        tmp_npz = scratch / "truth_trajectories.npz"
        role_samples = sample_blend(run_dir / "scene.blend", tmp_npz, objects)
        missing = [o for o, p in role_samples.items() if "error" in p]
        if missing:
            raise InputError(f"roles name objects that truth.py does not create: {missing}",
                             file=str(folder / ANNOTATION), field="roles")
        samples = SceneSamples.load_npz(tmp_npz)
        task = merge(folder, ann, samples, role_samples)
        os.replace(tmp_mp4, folder / "reference.mp4")
        shutil.copyfile(tmp_npz, folder / "truth_trajectories.npz.tmp")
        os.replace(folder / "truth_trajectories.npz.tmp", folder / "truth_trajectories.npz")
        atomic.write_text(folder / TASK_FILE, json.dumps(task.model_dump(mode="json"), indent=2) + "\n")
        sizes = {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()}
        record = {
            "id": task.id,
            "category": task.category.value,
            "subcategory": task.subcategory.value if task.subcategory else None,
            "bake_seconds": bake["seconds"],
            "full_run_seconds": full["seconds"],
            "render_seconds": round(full["seconds"] - bake["seconds"], 2),
            "peak_memory_mb": full["peak_memory_mb"],
            "reference_ssim": ssim,
            "trajectories_sha256": trajectories_digest(folder / "truth_trajectories.npz"),
            "program_sha256": task.truth.program_sha256 if task.truth else None,
            "sizes_bytes": sizes,
            "total_bytes": sum(sizes.values()),
            "events": {e.id: [e.interval.start_s, e.interval.end_s] for e in task.events},
            "build_seconds": round(time.monotonic() - t0, 2),
        }
        atomic.write_text(folder / "build.json", json.dumps(record, indent=2) + "\n")
        return record
    finally:
        if keep_scratch is None:
            shutil.rmtree(scratch, ignore_errors=True)


def build_tasks(ids: list[str], annotations_only: bool = False, workers: int = 1) -> dict[str, Any]:
    """Build several tasks ('all', 'shipped', 'library' or ids) on `workers` threads; failures are recorded, not
    fatal."""
    from physcodegym.authoring.families import run_parallel

    todo = expand_ids(ids)
    for i in todo:
        resolve_folder(i)  # fail fast on bad ids (exit 2) before spending minutes on the others
    jobs = [(i, (lambda i=i: reannotate_task(i) if annotations_only else build_task(i))) for i in todo]
    built, failed = run_parallel(jobs, workers, "building")
    return {"ok": not failed, "built": built, "failed": failed}
