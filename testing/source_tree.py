"""The project's own files, for tests that read the whole tree (docs, layers, launch sites).

Why not `Path.rglob`: an ignored folder inside the checkout can hold a whole operating system (the real-Blender
rootfs of `make blender`, with a live `/proc` mounted while it builds), a venv or build output; walking into it is
slow and can fail on files the kernel makes up. Git already knows what is the project's: tracked files plus
untracked ones that are not ignored. Outside a git checkout, every file below `root` except hidden and build
folders.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SKIP_DIRS = {"build", "dist", "__pycache__", "results", "out"}


def project_files(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """Files below `root` whose names end with one of `suffixes`, in a stable order."""
    root = root.resolve()
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, check=True, timeout=60).stdout
        names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
        files = [root / n for n in names if n.endswith(suffixes)]
        return sorted(p for p in files if p.is_file())
    except (OSError, subprocess.SubprocessError):
        pass
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS
                             and not d.endswith(".egg-info"))
        found += [Path(dirpath) / f for f in filenames if f.endswith(suffixes)]
    return sorted(found)
