"""Results store of a batch: SQLite in RESULTS/results.sqlite, one row per unit (config, task, attempt).

Only the batch's parent process writes, one transaction per finished unit, after the unit's files are in
place; WAL mode so a report (or a second reader) can read while a batch runs. A batch killed at any
moment loses at most the units that were running: they have no row and are redone on `--resume`.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from physcodegym.evaluator.score_document import ScoreDocument, read_score

DB_NAME = "results.sqlite"
FINAL = ("done", "failed", "invalid", "error")  # a row with one of these is never redone on resume (same hashes)

SCHEMA = """
CREATE TABLE IF NOT EXISTS units (
    config TEXT NOT NULL,
    task_id TEXT NOT NULL,
    attempt TEXT NOT NULL,
    status TEXT NOT NULL,            -- done (scored) | failed (no valid artifact) | error (scoring failed)
    run_status TEXT,                 -- ok | failed | timeout | policy (run.json)
    artifact INTEGER NOT NULL DEFAULT 0,  -- 1 if the run produced a complete rendered sequence
    reason TEXT,
    metrics TEXT,                    -- JSON: {"S_ssim": float|null, ...}
    score TEXT,                      -- JSON: the score document (SPEC §7) or null
    evidence TEXT,                   -- JSON: paths (run dir, run.json, score.json, frames, blend, log)
    seconds_run REAL,
    seconds_score REAL,
    seconds_total REAL,
    peak_memory_mb REAL,
    program_sha256 TEXT,
    task_sha256 TEXT,
    started_at TEXT,
    finished_at TEXT,
    worker TEXT,
    task_set TEXT,                   -- "<set>@<version>" the unit was scored on (tasks/manifest.py)
    blender_version TEXT,            -- the Blender that ran the program (run.json blender_version)
    PRIMARY KEY (config, task_id, attempt)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

COLUMNS = ("config", "task_id", "attempt", "status", "run_status", "artifact", "reason", "metrics", "score", "evidence",
           "seconds_run", "seconds_score", "seconds_total", "peak_memory_mb", "program_sha256", "task_sha256",
           "started_at", "finished_at", "worker", "task_set", "blender_version")
JSON_COLUMNS = ("metrics", "score", "evidence")


class ResultsStore:
    def __init__(self, results_dir: Path, readonly: bool = False) -> None:
        self.dir = Path(results_dir)
        self.path = self.dir / DB_NAME
        if readonly:
            if not self.path.is_file():
                from physcodegym.core.errors import InputError

                raise InputError("no results store here (run `physcodegym batch` first)", file=str(self.path))
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30)
        else:
            self.dir.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(self.path), timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(SCHEMA)
            have = {r[1] for r in self.db.execute("PRAGMA table_info(units)")}
            if "task_set" not in have:  # a store written before rows named their task set
                self.db.execute("ALTER TABLE units ADD COLUMN task_set TEXT")
            if "blender_version" not in have:  # a store written before rows named their Blender
                self.db.execute("ALTER TABLE units ADD COLUMN blender_version TEXT")
            self.db.commit()
        self.db.row_factory = sqlite3.Row

    def close(self) -> None:
        self.db.close()

    # -- rows ------------------------------------------------------------------------------------
    def put(self, row: dict[str, Any]) -> None:
        """Insert or replace one unit's row in one transaction."""
        vals = []
        for c in COLUMNS:
            v = row.get(c)
            if isinstance(v, ScoreDocument):
                v = v.to_json()
            if c in JSON_COLUMNS and v is not None:
                v = json.dumps(v, default=str)
            if c == "artifact":
                v = int(bool(v))
            vals.append(v)
        with self.db:
            self.db.execute(f"INSERT OR REPLACE INTO units ({','.join(COLUMNS)}) VALUES "
                            f"({','.join('?' * len(COLUMNS))})", vals)

    def rows(self) -> list[dict[str, Any]]:
        """Every unit's row; its `score` (the score document) validated into a `ScoreDocument`, or None.

        Raises InputError naming the store and the unit when a stored score is not a score document."""
        out = []
        for r in self.db.execute("SELECT * FROM units ORDER BY config, task_id, attempt"):
            d = dict(r)
            for c in JSON_COLUMNS:
                if d.get(c):
                    d[c] = json.loads(d[c])
            d["artifact"] = bool(d["artifact"])
            if d.get("score") is not None:
                d["score"] = self._score(d)
            out.append(d)
        return out

    def _score(self, row: dict[str, Any]) -> ScoreDocument:
        unit = f"{row['config']}/{row['task_id']}/{row['attempt']}"
        try:
            return read_score(row["score"], f"the score of unit {unit}")
        except ValueError as e:
            from physcodegym.core.errors import InputError

            raise InputError(str(e), file=str(self.path), field=f"units[{unit}].score") from e

    def final_keys(self) -> dict[tuple[str, str, str], tuple[str | None, str | None]]:
        """(config, task, attempt) -> (program hash, task hash) for finished units."""
        q = ("SELECT config, task_id, attempt, program_sha256, task_sha256 FROM units WHERE status IN "
             f"({','.join('?' * len(FINAL))})")
        return {(r[0], r[1], r[2]): (r[3], r[4]) for r in self.db.execute(q, FINAL)}

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM units").fetchone()[0])

    def clear_units(self) -> None:
        with self.db:
            self.db.execute("DELETE FROM units")

    # -- meta ------------------------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                            (key, json.dumps(value, default=str)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        r = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(r[0]) if r else default
