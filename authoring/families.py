"""Task families: a shipped truth program plus `family.py` (seed -> parameters) generates many tasks.

A family lives in its shipped pack folder `tasks/packs/<fam>/`: `truth.py` and `annotation.py` each hold one
top-level `PARAMS = {...}` literal that every varied quantity is read from, and `family.py` defines
`params(seed) -> dict` (seed 0 = the shipped values). A member `<fam>_s<seed>` is those two files with the literal
replaced (found with `ast`, so formatting and comments elsewhere are untouched) plus `family.json`, built exactly
like a shipped task: `build.build_task(folder)` then the truth counterfactuals.

Why staged: a member is built in a scratch folder and moved into the library only when the build, the event
detectors and every counterfactual criterion succeeded, so a failed seed never lands in the task set.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import pprint
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from types import ModuleType
from typing import Any

from physcodegym.core import atomic
from physcodegym.core.errors import InputError
from physcodegym.tasks.loader import LIBRARY_DIR, PACKS_DIR

FAMILY = "family.py"
FAMILY_JSON = "family.json"
SOURCES = ("truth.py", "annotation.py")


def family_ids() -> list[str]:
    """Shipped packs that are families (have family.py)."""
    return sorted(p.parent.name for p in PACKS_DIR.glob(f"*/{FAMILY}"))


def load_family(fam: str) -> ModuleType:
    """Import tasks/packs/<fam>/family.py (pure Python, no bpy)."""
    path = PACKS_DIR / fam / FAMILY
    if not path.is_file():
        raise InputError(f"no task family {fam!r} (families: {', '.join(family_ids()) or 'none'})", file=str(path))
    spec = importlib.util.spec_from_file_location(f"pcg_family_{fam}", path)
    if spec is None or spec.loader is None:
        raise InputError("cannot import family", file=str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "params", None)):
        raise InputError("family.py defines no params(seed)", file=str(path), field="params")
    return mod


def _params_node(source: str, file: str = "<source>") -> ast.Assign:
    tree = ast.parse(source)
    found = [
        n for n in tree.body if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "PARAMS" for t in n.targets)]
    if len(found) != 1:
        raise InputError(f"expected exactly one top-level PARAMS assignment, found {len(found)}", file=file,
                         field="PARAMS")
    return found[0]


def read_params(source: str, file: str = "<source>") -> dict[str, Any]:
    """The value of the top-level `PARAMS = {...}` literal."""
    node = _params_node(source, file)
    try:
        value = ast.literal_eval(node.value)
    except ValueError as e:
        raise InputError(f"PARAMS is not a literal: {e}", file=file, field="PARAMS") from e
    if not isinstance(value, dict):
        raise InputError("PARAMS is not a dict", file=file, field="PARAMS")
    return value


def substitute_params(source: str, params: dict[str, Any], file: str = "<source>") -> str:
    """`source` with the source span of its top-level PARAMS assignment replaced by `PARAMS = <params>`."""
    node = _params_node(source, file)
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    # ast columns are UTF-8 byte offsets; PARAMS assignments start a line, and the end column is taken on bytes
    start_line = lines[node.lineno - 1]
    start = offsets[node.lineno - 1] + len(start_line.encode("utf-8")[: node.col_offset].decode("utf-8"))
    end_line = lines[node.end_lineno - 1]  # type: ignore[operator]
    end = offsets[node.end_lineno - 1] + len(end_line.encode("utf-8")[: node.end_col_offset].decode("utf-8"))  # type: ignore[operator]
    text = "PARAMS = " + pprint.pformat(params, width=110, sort_dicts=True)
    return source[:start] + text + source[end:]


def member_id(fam: str, seed: int) -> str:
    return f"{fam}_s{seed}"


def member_params(fam: str, seed: int) -> dict[str, Any]:
    """The family's parameters for a seed, checked to be JSON-able (they are written to family.json)."""
    p = load_family(fam).params(int(seed))
    if not isinstance(p, dict):
        raise InputError(f"{fam} family.params({seed}) returned {type(p).__name__}, not a dict",
                         file=str(PACKS_DIR / fam / FAMILY))
    if json.loads(json.dumps(p)) != p:
        raise InputError(f"{fam} family.params({seed}) is not JSON-able (tuples? use lists)",
                         file=str(PACKS_DIR / fam / FAMILY))
    return p


def member_sources(fam: str, seed: int) -> dict[str, str]:
    """The text of each file of one member: truth.py and annotation.py (PARAMS substituted) and family.json."""
    params = member_params(fam, seed)
    src = PACKS_DIR / fam
    out: dict[str, str] = {}
    for name in SOURCES:
        p = dict(params)
        if name == "annotation.py":
            p["task_id"] = member_id(fam, seed)
        out[name] = substitute_params((src / name).read_text(encoding="utf-8"), p, file=str(src / name))
    out[FAMILY_JSON] = json.dumps({"family": fam, "seed": int(seed), "params": params}, indent=1)
    return out


def write_member(fam: str, seed: int, folder: Path) -> Path:
    """Write truth.py, annotation.py (PARAMS substituted) and family.json of one member into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in member_sources(fam, seed).items():
        if name == FAMILY_JSON:
            atomic.write_json(folder / name, json.loads(text), indent=1)
        else:
            atomic.write_text(folder / name, text)
    return folder


def member_up_to_date(fam: str, seed: int, dest: Path) -> bool:
    """The member in `dest` was generated from the family's current sources and its build finished."""
    from physcodegym.authoring.build import up_to_date

    try:
        srcs = member_sources(fam, seed)
        same = all((dest / n).read_text(encoding="utf-8") == t for n, t in srcs.items() if n != FAMILY_JSON)
        fam_doc = json.loads((dest / FAMILY_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (same and fam_doc == json.loads(srcs[FAMILY_JSON]) and up_to_date(dest)
            and (dest / "truth_counterfactuals.json").is_file())


def stage_folder(mid: str) -> Path:
    """Where a member is built before it is moved into the library: one fixed folder per member, so the build's
    scratch (bake and rendered frames, `build.scratch_for`) is found again after a killed run."""
    from physcodegym.authoring.build import scratch_root

    return scratch_root() / "stage" / mid / mid


def generate_member(fam: str, seed: int, out_root: Path = LIBRARY_DIR, force: bool = False, threads: int = 0,
                    say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build one member in its stage folder; move it to `out_root/<fam>_s<seed>` once everything succeeded.

    A member already generated from the current sources is skipped (unless `force`). Raises on any failure (the
    stage folder is kept for inspection, and for the next run to resume from; its path is in the message).
    """
    from physcodegym.authoring.build import build_task
    from physcodegym.verifier import truth_counterfactuals

    mid = member_id(fam, seed)
    dest = Path(out_root) / mid
    if not force and member_up_to_date(fam, seed, dest):
        rec = json.loads((dest / "build.json").read_text(encoding="utf-8"))
        return {"id": mid, "family": fam, "seed": int(seed), "folder": str(dest), "skipped": "up to date",
                "build_seconds": rec.get("build_seconds"), "generate_seconds": rec.get("generate_seconds"),
                "total_bytes": rec.get("total_bytes")}
    stage = stage_folder(mid)
    try:
        write_member(fam, seed, stage)
        record = build_task(str(stage), threads=threads, say=say)
        if record["id"] != mid:
            raise InputError(f"annotation TASK id is {record['id']!r}, expected {mid!r} (use PARAMS['task_id'])",
                             file=str(PACKS_DIR / fam / "annotation.py"), field="id")
        t_cf = time.monotonic()
        cf = truth_counterfactuals.measure(stage)
        bad = {k: v.get("reason") for k, v in cf["criteria"].items() if not v.get("passed")}
        if bad:
            raise RuntimeError(f"counterfactual criteria fail on the truth scene: {bad}")
        # the work of the member: its build (all sessions) plus the counterfactual re-runs
        total = round(record["build_seconds"] + time.monotonic() - t_cf, 2)
        rec = json.loads((stage / "build.json").read_text())
        rec["generate_seconds"] = total
        atomic.write_json(stage / "build.json", rec, indent=2)
    except InputError:
        raise
    except BaseException as e:
        raise RuntimeError(f"{mid}: {type(e).__name__}: {e} (stage kept at {stage})") from e
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.move(str(stage), str(dest))
    shutil.rmtree(stage.parent, ignore_errors=True)
    return {"id": mid, "family": fam, "seed": int(seed), "folder": str(dest), "build_seconds": record["build_seconds"],
            "generate_seconds": total, "bake_seconds": record["bake_seconds"], "total_bytes": record["total_bytes"],
            "render_seconds": record["render_seconds"], "frames_reused": record["render"]["frames_reused"],
            "counterfactuals": {k: v.get("measured") for k, v in cf["criteria"].items()}}


def parse_seeds(spec: str) -> list[int]:
    """'1..4' -> [1, 2, 3, 4]; '3' -> [3]; '1,5,7..8' -> [1, 5, 7, 8]."""
    out: list[int] = []
    try:
        for part in spec.split(","):
            part = part.strip()
            if ".." in part:
                a, b = (int(x) for x in part.split("..", 1))
                if b < a:
                    raise ValueError
                out.extend(range(a, b + 1))
            elif part:
                out.append(int(part))
    except ValueError as e:
        raise InputError(f"seeds must look like A..B or A,B,C (non-negative integers), got {spec!r}",
                         field="seeds") from e
    if not out or any(s < 0 for s in out):
        raise InputError(f"no valid seeds in {spec!r}", field="seeds")
    return sorted(set(out))


class Reporter:
    """Progress lines on stderr, one per event, safe from several job threads: `[done/total] id ... ETA`.

    Why lines, not a redrawn bar: a build of the whole set runs for hours, often with its output in a log file;
    lines keep the history (which task took how long) and read the same in a terminal and in a log."""

    def __init__(self, label: str, total: int, workers: int, stream: Any = None) -> None:
        self.label, self.total, self.workers = label, total, max(1, workers)
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = time.monotonic()
        self.done = 0
        self.work_seconds: list[float] = []  # seconds of the jobs that did work (skipped ones excluded)
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        with self._lock:
            print(f"{time.strftime('%H:%M:%S')} {text}", file=self.stream, flush=True)

    def finished(self, name: str, seconds: float, state: str, worked: bool) -> None:
        with self._lock:
            self.done += 1
            if worked:
                self.work_seconds.append(seconds)
            left = self.total - self.done
            eta = ""
            if left and self.work_seconds:
                per = sum(self.work_seconds) / len(self.work_seconds)
                eta = f", ETA {left * per / self.workers / 60:.1f} min"
            print(f"{time.strftime('%H:%M:%S')} [{self.done}/{self.total}] {self.label} {name}: {state} "
                  f"({seconds:.1f} s){eta}", file=self.stream, flush=True)


Job = Callable[[Callable[[str], None]], dict[str, Any]]


def run_parallel(jobs: list[tuple[str, Job]], workers: int, label: str) -> tuple[list[dict], list[dict]]:
    """Run named jobs on `workers` threads (each job mostly waits on Blender children), with progress lines.

    A job is called with a `say(text)` for its own progress lines. A record with `"skipped"` counts as done
    without work (it does not move the ETA). Returns (done records, failures {"id", "error"}): a failed job is
    recorded and the others go on; an InputError (bad input, exit 2) stops the whole run.
    """
    done: list[dict] = []
    failed: list[dict] = []
    rep = Reporter(label, len(jobs), workers)

    def timed(name: str, fn: Job) -> tuple[dict | None, float, Exception | None]:
        t0 = time.monotonic()
        try:
            return fn(rep.say), time.monotonic() - t0, None
        except InputError:
            raise
        except Exception as e:  # one failed job must not lose the others
            return None, time.monotonic() - t0, e

    with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
        futs = {pool.submit(timed, name, fn): name for name, fn in jobs}
        for fut in as_completed(futs):
            name = futs[fut]
            rec, secs, err = fut.result()
            if rec is None:
                failed.append({"id": name, "error": f"{type(err).__name__}: {err}"[:3000]})
                rep.finished(name, secs, "FAILED", worked=False)
                continue
            done.append(rec)
            rep.finished(name, secs, "up to date" if rec.get("skipped") else "ok", worked=not rec.get("skipped"))
    done.sort(key=lambda r: r["id"])
    failed.sort(key=lambda r: r["id"])
    return done, failed


def threads_per_job(workers: int) -> int:
    """Render threads each of `workers` parallel jobs gets: its share of the CPUs this process may use."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, cpus // max(1, workers))


def generate(families: list[str], seeds: list[int], workers: int = 1, out_root: Path | None = None,
             force: bool = False) -> dict[str, Any]:
    """Generate every (family, seed) member not generated yet; rewrite the manifest when the output is the library.

    `workers` members at a time, each render child with its share of the CPUs (`threads_per_job`)."""
    from physcodegym.tasks import manifest

    fams = family_ids() if families == ["all"] else families
    for f in fams:
        load_family(f)  # bad family names fail before any build starts
        for s in seeds:
            member_params(f, s)
    root = Path(out_root) if out_root else LIBRARY_DIR
    threads = threads_per_job(workers)
    jobs: list[tuple[str, Job]] = [
        (member_id(f, s), (lambda say, f=f, s=s: generate_member(f, s, root, force=force, threads=threads, say=say)))
        for f in fams for s in seeds]
    done, failed = run_parallel(jobs, workers, "generating")
    doc: dict[str, Any] = {"ok": not failed, "generated": [d for d in done if not d.get("skipped")],
                           "up_to_date": [d for d in done if d.get("skipped")], "failed": failed, "out": str(root),
                           "jobs": workers, "threads_per_job": threads}
    if root.resolve() == LIBRARY_DIR.resolve():
        doc["manifest"] = {k: v for k, v in manifest.write_manifest().items() if k != "tasks"}
    return doc
