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
import pprint
import shutil
import tempfile
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


def write_member(fam: str, seed: int, folder: Path) -> Path:
    """Write truth.py, annotation.py (PARAMS substituted) and family.json of one member into `folder`."""
    params = member_params(fam, seed)
    folder.mkdir(parents=True, exist_ok=True)
    src = PACKS_DIR / fam
    for name in SOURCES:
        p = dict(params)
        if name == "annotation.py":
            p["task_id"] = member_id(fam, seed)
        text = (src / name).read_text(encoding="utf-8")
        atomic.write_text(folder / name, substitute_params(text, p, file=str(src / name)))
    atomic.write_json(folder / FAMILY_JSON, {"family": fam, "seed": int(seed), "params": params}, indent=1)
    return folder


def generate_member(fam: str, seed: int, out_root: Path = LIBRARY_DIR) -> dict[str, Any]:
    """Build one member in a scratch folder; move it to `out_root/<fam>_s<seed>` once everything succeeded.

    Raises on any failure (the scratch folder is kept for inspection and its path is in the message).
    """
    from physcodegym.authoring.build import build_task
    from physcodegym.verifier import truth_counterfactuals

    mid = member_id(fam, seed)
    t0 = time.monotonic()
    stage_root = Path(tempfile.mkdtemp(prefix=f"pcg_gen_{mid}_"))
    stage = stage_root / mid
    try:
        write_member(fam, seed, stage)
        record = build_task(str(stage))
        if record["id"] != mid:
            raise InputError(f"annotation TASK id is {record['id']!r}, expected {mid!r} (use PARAMS['task_id'])",
                             file=str(PACKS_DIR / fam / "annotation.py"), field="id")
        cf = truth_counterfactuals.measure(stage)
        bad = {k: v.get("reason") for k, v in cf["criteria"].items() if not v.get("passed")}
        if bad:
            raise RuntimeError(f"counterfactual criteria fail on the truth scene: {bad}")
        # build.json's build_seconds covers the scene build; the family record adds the counterfactual re-runs
        total = round(time.monotonic() - t0, 2)
        rec = json.loads((stage / "build.json").read_text())
        rec["generate_seconds"] = total
        atomic.write_json(stage / "build.json", rec, indent=2)
    except BaseException as e:
        raise RuntimeError(f"{mid}: {type(e).__name__}: {e} (scratch kept at {stage})") from e
    dest = Path(out_root) / mid
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.move(str(stage), str(dest))
    shutil.rmtree(stage_root, ignore_errors=True)
    return {"id": mid, "family": fam, "seed": int(seed), "folder": str(dest), "build_seconds": record["build_seconds"],
            "generate_seconds": total, "bake_seconds": record["bake_seconds"], "total_bytes": record["total_bytes"],
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


def run_parallel(jobs: list[tuple[str, Callable[[], dict[str, Any]]]], workers: int,
                 label: str) -> tuple[list[dict], list[dict]]:
    """Run named jobs on `workers` threads (each job mostly waits on Blender children) with a rich progress bar.

    Returns (done records, failures {"id", "error"}): a failed job is recorded and the others go on.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    done: list[dict] = []
    failed: list[dict] = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=True) as prog:
        bar = prog.add_task(f"{label} ({len(jobs)})", total=len(jobs))
        with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
            futs = {pool.submit(fn): name for name, fn in jobs}
            for fut in as_completed(futs):
                name = futs[fut]
                try:
                    done.append(fut.result())
                except InputError:
                    raise
                except Exception as e:  # one failed job must not lose the others
                    failed.append({"id": name, "error": f"{type(e).__name__}: {e}"[:3000]})
                prog.update(bar, advance=1,
                            description=(f"{label}: {name} "
                                         f"{'ok' if not failed or failed[-1]['id'] != name else 'FAILED'}"))
    done.sort(key=lambda r: r["id"])
    failed.sort(key=lambda r: r["id"])
    return done, failed


def generate(families: list[str], seeds: list[int], workers: int = 1, out_root: Path | None = None) -> dict[str, Any]:
    """Generate every (family, seed) member; rewrite the manifest when the output is the library."""
    from physcodegym.tasks import manifest

    fams = family_ids() if families == ["all"] else families
    for f in fams:
        load_family(f)  # bad family names fail before any build starts
        for s in seeds:
            member_params(f, s)
    root = Path(out_root) if out_root else LIBRARY_DIR
    jobs = [(member_id(f, s), (lambda f=f, s=s: generate_member(f, s, root))) for f in fams for s in seeds]
    done, failed = run_parallel(jobs, workers, "generating")
    doc: dict[str, Any] = {"ok": not failed, "generated": done, "failed": failed, "out": str(root)}
    if root.resolve() == LIBRARY_DIR.resolve():
        doc["manifest"] = {k: v for k, v in manifest.write_manifest().items() if k != "tasks"}
    return doc
