"""The versioned task set: one content hash per task pack, recorded in `tasks/manifest.json`.

Why: a score is only comparable with another score on the same tasks. Batch results and reports name the set and
version from `current()`; `check()` tells whether the packs on disk are still the ones the manifest describes
(a rebuilt or hand-edited pack changes its hash, so the manifest must be regenerated and its version bumped).

Layer `tasks`: pure Python, no bpy.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from physcodegym.core import atomic
from physcodegym.tasks.loader import LIBRARY_DIR, PACKS_DIR, TASK_FILE

SET_NAME = "physcodegym-tasks"
TASKS_DIR = Path(__file__).resolve().parent
MANIFEST = TASKS_DIR / "manifest.json"
FIRST_VERSION = "1.0.0"
# files that are not part of a pack's content (interpreter caches, editor leftovers)
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".blend1", ".tmp", "~")
_ENGINE_RE = re.compile(r"""render\.engine\s*=\s*["']([A-Z_]+)["']""")


def _pack_files(folder: Path) -> list[Path]:
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if not p.is_file() or any(part in _SKIP_DIRS or part.startswith(".") for part in rel.parts):
            continue
        if p.name.endswith(_SKIP_SUFFIXES):
            continue
        out.append(p)
    return out


def task_hash(folder: Path) -> str:
    """sha256 over the pack's files: each relative path (sorted, '/'-separated) with its length and bytes."""
    folder = Path(folder)
    h = hashlib.sha256()
    for p in _pack_files(folder):
        data = p.read_bytes()
        h.update(p.relative_to(folder).as_posix().encode() + b"\0")
        h.update(str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


def pack_folders() -> list[Path]:
    """Every task folder of the set: the shipped packs, then the generated library (sorted by folder name)."""
    folders: list[Path] = []
    for root in (PACKS_DIR, LIBRARY_DIR):
        if root.is_dir():
            folders.extend(sorted(p.parent for p in root.glob(f"*/{TASK_FILE}")))
    return folders


def _entry(folder: Path) -> dict[str, Any]:
    task = json.loads((folder / TASK_FILE).read_text(encoding="utf-8"))
    fam_file = folder / "family.json"
    if fam_file.is_file():
        fam = json.loads(fam_file.read_text(encoding="utf-8"))
        family, seed = fam["family"], int(fam["seed"])
    else:  # a shipped pack is its family's seed 0 (or a one-off task without a family)
        family, seed = folder.name, 0
    build = folder / "build.json"
    build_seconds = json.loads(build.read_text(encoding="utf-8")).get("build_seconds") if build.is_file() else None
    truth = folder / "truth.py"
    m = _ENGINE_RE.search(truth.read_text(encoding="utf-8")) if truth.is_file() else None
    return {
        "id": task["id"],
        "family": family,
        "seed": seed,
        "category": task["category"],
        "subcategory": task.get("subcategory"),
        "sha256": task_hash(folder),
        "engine": m.group(1) if m else None,
        "build_seconds": build_seconds,
        "folder": folder.resolve().relative_to(TASKS_DIR).as_posix(),
    }


def load() -> dict[str, Any] | None:
    """The manifest as stored, or None when there is none yet."""
    if not MANIFEST.is_file():
        return None
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def _bump_minor(version: str) -> str:
    major, minor, _patch = (int(x) for x in version.split("."))
    return f"{major}.{minor + 1}.0"


def write_manifest(version: str | None = None) -> dict[str, Any]:
    """Regenerate the manifest from tasks/packs and tasks/library; returns it.

    The version is kept when every task and hash is unchanged (so regenerating is idempotent), else its minor
    number is bumped; `version` overrides both.
    """
    old = load()
    tasks = [_entry(f) for f in pack_folders()]
    if version is None:
        if old is None:
            version = FIRST_VERSION
        else:
            before = {t["id"]: t["sha256"] for t in old.get("tasks", [])}
            after = {t["id"]: t["sha256"] for t in tasks}
            version = old["version"] if before == after else _bump_minor(old["version"])
    elif not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ValueError(f"version must be MAJOR.MINOR.PATCH, got {version!r}")
    doc = {"set": SET_NAME, "version": version, "tasks": tasks}
    atomic.write_text(MANIFEST, json.dumps(doc, indent=1) + "\n")
    return doc


def current() -> dict[str, Any]:
    """What results should name: {"set", "version", "sha256" (of the manifest file), "n_tasks"}."""
    if not MANIFEST.is_file():
        return {"set": SET_NAME, "version": None, "sha256": None, "n_tasks": 0}
    raw = MANIFEST.read_bytes()
    doc = json.loads(raw)
    return {"set": doc["set"], "version": doc["version"], "sha256": hashlib.sha256(raw).hexdigest(),
            "n_tasks": len(doc["tasks"])}


def check() -> list[str]:
    """Problems: packs whose content differs from the manifest, packs missing from disk or from the manifest."""
    doc = load()
    if doc is None:
        return [f"no manifest at {MANIFEST} (run `physcodegym tasks manifest`)"]
    problems: list[str] = []
    listed = {t["folder"]: t for t in doc.get("tasks", [])}
    on_disk = {f.resolve().relative_to(TASKS_DIR).as_posix(): f for f in pack_folders()}
    for rel in sorted(set(listed) - set(on_disk)):
        problems.append(f"{listed[rel]['id']}: listed in the manifest but {rel} has no task")
    for rel in sorted(set(on_disk) - set(listed)):
        problems.append(f"{rel}: task folder not in the manifest")
    for rel in sorted(set(listed) & set(on_disk)):
        h = task_hash(on_disk[rel])
        if h != listed[rel]["sha256"]:
            problems.append(f"{listed[rel]['id']}: content hash {h[:12]} differs from the manifest's "
                            f"{listed[rel]['sha256'][:12]}")
    return problems
