"""The run trace: one JSON line per event, appended and flushed as it happens.

A killed run loses at most the line being written; `read_trace` skips a torn last line, so
`--resume` can rebuild the conversation from what was recorded.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from physcodegym.core import atomic

# The agent's run document in a run folder (status running | finalized | budget_exhausted | stopped |
# provider_error ..., budget, launches, score). Not the sandbox's `run.json`, which records one program run.
AGENT_RUN_FILE = "agent_run.json"


class Trace:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        rec = {"t": round(time.time(), 3), **record}
        line = json.dumps(rec, default=str, ensure_ascii=False)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        return rec


def read_trace(path: Path) -> list[dict[str, Any]]:
    """All complete records; a torn final line (killed mid-write) is dropped."""
    p = Path(path)
    if not p.is_file():
        return []
    out: list[dict[str, Any]] = []
    lines = p.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                break
            raise
    return out


def write_json_atomic(path: Path, doc: Any) -> None:
    """Write JSON so readers never see half a file (creates the parent folder)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_json(path, doc)
