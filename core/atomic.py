"""Atomic file writes: a result is either absent or complete, never half-written (a killed batch resumes cleanly).

One temp-name scheme for the whole package: a hidden sibling `.<name>.<pid>.<random>.tmp` created with
`O_EXCL | O_NOFOLLOW` (so a link planted at the temp name is never followed), flushed, fsynced and renamed
over the target. Bytes, text and JSON go through `write_bytes` / `write_text` / `write_json`; a writer that
wants a path of its own (matplotlib's savefig, numpy's savez, OpenCV's VideoWriter, a shutil copy) writes into
`replacing(path, suffix)`, which hands it such a temp file (with the suffix the writer reads the format from)
and renames it over `path` only when the block ends without an exception. This is the only module that renames
a written file into place.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def temp_sibling(path: Path, suffix: str = "") -> Path:
    """A fresh hidden name next to `path` for writing before the rename (`suffix` kept last, for writers that
    choose the format by extension)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp{suffix}")


def _discard(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


@contextlib.contextmanager
def replacing(path: str | Path, suffix: str = "") -> Iterator[Path]:
    """A temp file beside `path` (created empty, exclusively) for a writer that opens files by name; renamed over
    `path` after it is synced when the block ends cleanly, removed when it raises. `suffix`: e.g. ".png",
    ".npz", ".mp4", when the writer reads the format from the name (numpy's savez also appends ".npz" to a name
    without it, which would leave the rename nothing to find)."""
    path = Path(path)
    tmp = temp_sibling(path, suffix)
    os.close(os.open(tmp, _CREATE, 0o644))
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write `data` to `path` atomically (temp file in the same folder, fsync, rename)."""
    path = Path(path)
    tmp = temp_sibling(path)
    fd = os.open(tmp, _CREATE, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, doc: Any, indent: int | None = 2) -> Path:
    """Write `doc` as JSON to `path` atomically."""
    return write_text(path, json.dumps(doc, indent=indent, default=str) + "\n")


def write(path: str | Path, data: str | bytes) -> Path:
    """Write text or bytes to `path` atomically."""
    return write_bytes(path, data if isinstance(data, bytes) else data.encode("utf-8"))
