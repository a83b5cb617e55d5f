"""Regenerate shipped tasks from their hidden ground-truth programs (`physcodegym tasks build ID|all`).

Per task folder `tasks/packs/<id>/`:
  truth.py          the hidden ground-truth scene program (a valid submission, real simulation only)
  annotation.py     the hand-written part: TASK (title, roles, checklist, events without intervals,
                    rubric) and measure_events(samples) -> {event_id: {start_s, end_s, evidence}}
and the build writes the measured part:
  reference.mp4            240 frames, 30 fps, H.264 (SSIM vs the PNGs recorded in build.json)
  truth_trajectories.npz   SceneSamples of the saved native scene, sampled in a fresh process
  task.json                TASK + measured event intervals, role screen positions/colours, program hash
  build.json               what the build measured (seconds, SSIM, sizes) and the reference's provenance
                           (program hash, engine, samples, Blender version; tasks.schema.BuildRecord)

Why this split: the hand-written part is reviewable and stable; everything measured is re-derived
from truth.py, so rebuilding gives the same task.json (the simulations are deterministic). A build resumes:
the bake and each rendered frame stay in the task's scratch folder (`scratch_for`) until the task is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from physcodegym.authoring import media
from physcodegym.core import atomic, launch
from physcodegym.core.errors import InputError
from physcodegym.core.hashing import sha256_file
from physcodegym.tasks.loader import LIBRARY_DIR, PACKS_DIR, TASK_FILE
from physcodegym.tasks.schema import Task

ANNOTATION = "annotation.py"
TRUTH = "truth.py"
BUILD_CACHE_ENV = "PHYSCODEGYM_BUILD_CACHE"
RENDER_TIMEOUT_S = 12 * 3600  # 240 Cycles frames on one busy core
PROGRESS_EVERY_S = 15.0


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
    record["inputs_sha256"] = inputs_digest(folder)  # the outputs now follow these sources (no rebuild due)
    record["sizes_bytes"] = {p.name: p.stat().st_size for p in sorted(folder.iterdir())
                             if p.is_file() and p.name != "build.json"}
    record["total_bytes"] = sum(record["sizes_bytes"].values())
    atomic.write_text(rec_path, json.dumps(record, indent=2) + "\n")
    return record


def scratch_root() -> Path:
    """Where builds keep their resumable work: $PHYSCODEGYM_BUILD_CACHE, else <tmp>/physcodegym-build."""
    env = os.environ.get(BUILD_CACHE_ENV)
    return Path(env) if env else Path(tempfile.gettempdir()) / "physcodegym-build"


def _bpy_version() -> str | None:
    """The installed bpy package's version, without importing it (a bake from another Blender is not reused)."""
    from importlib import metadata

    try:
        return metadata.version("bpy")
    except metadata.PackageNotFoundError:
        return None


def scratch_for(folder: Path, program_sha: str) -> Path:
    """The task's scratch folder, emptied when it belongs to another truth.py or another Blender.

    Why one fixed folder per task folder (not a fresh temp folder): a killed build finds its bake and every
    frame it rendered there, and starts again at the first missing frame."""
    key = hashlib.sha256(str(folder).encode()).hexdigest()[:10]
    d = scratch_root() / f"{folder.name}-{key}"
    want = {"folder": str(folder), "program_sha256": program_sha, "bpy": _bpy_version()}
    stamp = d / "stamp.json"
    try:
        have = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        have = None
    if have != want:
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True, exist_ok=True)
        atomic.write_json(stamp, want, indent=1)
    return d


def _reused_bake(bake_dir: Path, program_sha: str) -> dict[str, Any] | None:
    """The bake of an earlier session of this build, when it finished and baked this truth.py."""
    try:
        rec = json.loads((bake_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (rec.get("status") != "ok" or rec.get("mode") != "bake_only" or rec.get("program_sha256") != program_sha
            or not (bake_dir / "scene.blend").is_file()):
        return None
    return {"status": "ok", "seconds": round(float(rec.get("seconds") or 0.0), 2),
            "peak_memory_mb": rec.get("peak_memory_mb"), "reused": True}


def _log(say: Callable[[str], None] | None, text: str) -> None:
    (say or (lambda m: print(m, file=sys.stderr, flush=True)))(text)


def render_reference(blend: Path, frames_dir: Path, log: Path, threads: int, label: str,
                     say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Render the missing frames of `blend` in a child (authoring.media render); progress lines with an ETA.

    The child gets `threads` render threads; with one thread it is pinned to one CPU (core.determinism.pick_cpu),
    so parallel builds' render children land on different CPUs."""
    from physcodegym.core.limits import start_limited

    argv = launch.module_argv("physcodegym.authoring.media",
                              ["render", str(blend), str(frames_dir), str(log), "--threads", str(threads)])
    log.with_name(media.PLAN_FILE).unlink(missing_ok=True)
    child = start_limited(argv, timeout_s=RENDER_TIMEOUT_S, memory_mb=None, simulation=True, pinned=threads == 1)
    stop = threading.Event()

    def progress() -> None:
        t0, last = time.monotonic(), -1
        while not stop.wait(PROGRESS_EVERY_S):
            try:
                plan = json.loads(log.with_name(media.PLAN_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # the child has not opened the scene yet
            n = len(media.frame_files(frames_dir))
            done_now, total = n - plan["frames_reused"], plan["frames_total"]
            if n != last and done_now > 0:
                per = (time.monotonic() - t0) / done_now
                _log(say, f"{label}: frame {n}/{total}, {per:.1f} s a frame, ETA {(total - n) * per / 60:.1f} min")
            last = n

    watcher = threading.Thread(target=progress, daemon=True)
    watcher.start()
    try:
        res = child.wait()
    finally:
        stop.set()
    done = [ln for ln in res.stdout.splitlines() if ln.startswith("DONE ")]
    if res.returncode != 0 or not done:
        why = res.killed_reason or f"rc {res.returncode}"
        raise RuntimeError(f"{label}: rendering {blend} failed ({why}):\n{(res.stdout + res.stderr)[-2000:]}")
    doc = json.loads(done[-1][5:])
    rows = [json.loads(ln) for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip()]
    by_frame = {r["frame"]: r for r in rows}  # the last row of a frame wins (a frame is rendered once)
    doc["seconds"] = round(sum(r["wall_s"] for r in by_frame.values()), 2)
    doc["cpu_seconds"] = round(sum(r["cpu_s"] for r in by_frame.values()), 2)
    doc["seconds_per_frame"] = round(doc["seconds"] / max(1, len(by_frame)), 3)
    doc["session_wall_seconds"] = round(res.seconds, 2)
    n = len(media.frame_files(frames_dir))
    if n != doc["frames_total"]:
        raise RuntimeError(f"{label}: {n} frames on disk after the render, expected {doc['frames_total']}")
    return doc


def inputs_digest(folder: Path) -> dict[str, str]:
    """sha256 of the hand-written inputs of a build: a build whose inputs are unchanged is up to date."""
    return {name: sha256_file(folder / name) for name in (TRUTH, ANNOTATION)}


def up_to_date(folder: Path) -> bool:
    """build.json records these very inputs and every output is there (a killed `build all` skips these).

    A build.json written before the inputs were recorded (no `inputs_sha256`) counts as up to date when it and
    task.json name the current truth.py: its annotation.py was not recorded, so an edited annotation is merged
    with `--annotations-only` (or the task rebuilt with `--force`). Why not rebuild those: a rebuild re-renders
    the reference, and a shipped reference must stay the file it is unless its program changes."""
    try:
        rec = json.loads((folder / "build.json").read_text(encoding="utf-8"))
        task = json.loads((folder / TASK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    outputs = ("reference.mp4", "truth_trajectories.npz", TASK_FILE)
    if not all((folder / o).is_file() for o in outputs):
        return False
    if "inputs_sha256" in rec:
        return rec["inputs_sha256"] == inputs_digest(folder)
    program = sha256_file(folder / TRUTH)
    return rec.get("program_sha256") == program and (task.get("truth") or {}).get("program_sha256") == program


@contextlib.contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """Hold the task folder's build lock (an flock beside its scratch folder): two builds of one task would
    share, and wipe, one scratch folder. The kernel drops the lock when its holder dies, so a killed build
    never leaves the task locked."""
    import fcntl  # POSIX only, like the rest of the build (core.limits)

    key = hashlib.sha256(str(folder).encode()).hexdigest()[:10]
    locks = scratch_root() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{folder.name}-{key}.lock", "a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(f"{folder.name}: another build of {folder} is running (lock {fh.name})") from None
        yield


def build_task(id_or_path: str, keep_scratch: Path | bool | None = None, threads: int = 0,
               say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Rebuild one shipped task: bake truth.py, render its frames, encode, sample, measure events, write task.json.

    Resumable: the bake and every rendered frame stay in the task's scratch folder (`scratch_for`) until the build
    succeeds, so a killed build re-renders only the frames it had not written. `keep_scratch`: a folder to build
    in (kept), or True to keep the scratch folder after success. `threads`: render threads (0: Blender's choice).
    One build of a task at a time (`exclusive`).
    """
    folder = resolve_folder(id_or_path)
    with exclusive(folder):
        return _build_locked(folder, keep_scratch, threads, say)


def _build_locked(folder: Path, keep_scratch: Path | bool | None, threads: int,
                  say: Callable[[str], None] | None) -> dict[str, Any]:
    from physcodegym.authoring.media import ssim_against_frames
    from physcodegym.samples import SceneSamples

    ann = load_annotation(folder)
    program_sha = sha256_file(folder / TRUTH)
    explicit = isinstance(keep_scratch, (str, Path))
    scratch = Path(keep_scratch) if explicit else scratch_for(folder, program_sha)  # type: ignore[arg-type]
    t0 = time.monotonic()
    label = folder.name
    bake = _reused_bake(scratch / "bake", program_sha)
    if bake is None:
        _log(say, f"{label}: baking truth.py")
        shutil.rmtree(scratch / "frames", ignore_errors=True)  # frames of another bake must not mix with this one
        (scratch / "render_log.jsonl").unlink(missing_ok=True)
        bake = {**run_truth(folder / TRUTH, scratch / "bake", mode="bake_only"), "reused": False}
    else:
        _log(say, f"{label}: bake of an earlier session reused ({bake['seconds']} s)")
    blend = scratch / "bake" / "scene.blend"
    render = render_reference(blend, scratch / "frames", scratch / "render_log.jsonl", threads, label, say)
    _log(say, f"{label}: {render['frames_rendered']} frames rendered, {render['frames_reused']} reused; encoding")
    t_post = time.monotonic()
    tmp_mp4 = scratch / "reference.mp4"
    _py("-m", "physcodegym.authoring.media", str(scratch / "frames"), str(tmp_mp4))
    ssim = ssim_against_frames(tmp_mp4, scratch / "frames")
    objects = sorted({r["truth_object"] for r in ann.TASK.get("roles", []) if r.get("truth_object")})
    tmp_npz = scratch / "truth_trajectories.npz"
    role_samples = sample_blend(blend, tmp_npz, objects)
    missing = [o for o, p in role_samples.items() if "error" in p]
    if missing:
        raise InputError(f"roles name objects that truth.py does not create: {missing}",
                         file=str(folder / ANNOTATION), field="roles")
    task = merge(folder, ann, SceneSamples.load_npz(tmp_npz), role_samples)
    for src, name in ((tmp_mp4, "reference.mp4"), (tmp_npz, "truth_trajectories.npz")):
        with atomic.replacing(folder / name, src.suffix) as tmp:  # a killed copy never leaves half a file
            shutil.copyfile(src, tmp)
    atomic.write_text(folder / TASK_FILE, json.dumps(task.model_dump(mode="json"), indent=2) + "\n")
    post_seconds = round(time.monotonic() - t_post, 2)
    record = _record(folder, task, bake, render, ssim, post_seconds, round(time.monotonic() - t0, 2))
    atomic.write_text(folder / "build.json", json.dumps(record, indent=2) + "\n")
    if not explicit and keep_scratch is not True:
        shutil.rmtree(scratch, ignore_errors=True)
    return record


def _record(folder: Path, task: Task, bake: dict[str, Any], render: dict[str, Any], ssim: dict[str, Any],
            post_seconds: float, session_seconds: float) -> dict[str, Any]:
    """build.json: what the build measured, and the task's provenance (tasks.schema.BuildRecord)."""
    sizes = {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file() and p.name != "build.json"}
    settings = render["render"]
    # the work the task costs, whatever sessions it took: the bake, every frame's render, the encode and sampling
    build_seconds = round(bake["seconds"] + render["seconds"] + post_seconds, 2)
    return {
        "id": task.id,
        "category": task.category.value,
        "subcategory": task.subcategory.value if task.subcategory else None,
        "bake_seconds": bake["seconds"],
        "bake_reused": bake["reused"],
        "full_run_seconds": round(bake["seconds"] + render["seconds"], 2),
        "render_seconds": render["seconds"],
        "render_cpu_seconds": render["cpu_seconds"],
        "post_seconds": post_seconds,
        "peak_memory_mb": bake["peak_memory_mb"],
        "reference_ssim": ssim,
        "trajectories_sha256": trajectories_digest(folder / "truth_trajectories.npz"),
        "program_sha256": task.truth.program_sha256 if task.truth else None,
        "inputs_sha256": inputs_digest(folder),
        "render": {**settings, "threads": render["threads"], "frames_total": render["frames_total"],
                   "frames_reused": render["frames_reused"], "frames_rendered": render["frames_rendered"],
                   "seconds_per_frame": render["seconds_per_frame"], "unbaked": render["unbaked"]},
        "provenance": {"kind": "generated", "program_sha256": task.truth.program_sha256 if task.truth else None,
                       "engine": settings["engine"], "samples": settings.get("samples"),
                       "build_seconds": build_seconds, "blender": render["blender"]},
        "sizes_bytes": sizes,
        "total_bytes": sum(sizes.values()),
        "events": {e.id: [e.interval.start_s, e.interval.end_s] for e in task.events},
        "build_seconds": build_seconds,
        "session_seconds": session_seconds,
    }


def build_tasks(ids: list[str], annotations_only: bool = False, workers: int = 1, force: bool = False,
                keep_scratch: bool = False) -> dict[str, Any]:
    """Build several tasks ('all', 'shipped', 'library' or ids), `workers` at a time; failures are recorded, not
    fatal. A task whose build.json records its current truth.py and annotation.py is skipped unless `force`, so
    a killed `build all` goes on where it stopped (and a killed task re-renders only its missing frames)."""
    from physcodegym.authoring.families import Job, run_parallel, threads_per_job

    todo = expand_ids(ids)
    folders = {i: resolve_folder(i) for i in todo}  # fail fast on bad ids (exit 2) before spending minutes
    threads = threads_per_job(workers)

    def one(i: str, say: Callable[[str], None]) -> dict[str, Any]:
        if annotations_only:
            return reannotate_task(i)
        if not force and up_to_date(folders[i]):
            rec = json.loads((folders[i] / "build.json").read_text(encoding="utf-8"))
            return {**rec, "skipped": "up to date"}
        return build_task(i, keep_scratch=True if keep_scratch else None, threads=threads, say=say)

    jobs: list[tuple[str, Job]] = [(i, (lambda say, i=i: one(i, say))) for i in todo]
    done, failed = run_parallel(jobs, workers, "building")
    return {"ok": not failed, "built": [d for d in done if not d.get("skipped")],
            "up_to_date": [d["id"] for d in done if d.get("skipped")], "failed": failed, "jobs": workers,
            "threads_per_job": threads}
