"""Atomic file writes: a result is either absent or complete, never half-written (a killed batch resumes cleanly).

One temp-name scheme for the whole package: a hidden sibling `.<name>.<pid>.<random>.tmp` created with
`O_EXCL | O_NOFOLLOW` (so a link planted at the temp name is never followed), flushed, fsynced and renamed
over the target.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any


def temp_sibling(path: Path) -> Path:
    """A fresh hidden name next to `path` for writing before the rename."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write `data` to `path` atomically (temp file in the same folder, fsync, rename)."""
    path = Path(path)
    tmp = temp_sibling(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
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
