"""SIGTERM to a running batch ends its pool workers and the running units' process trees; `--resume` then
keeps the finished unit, redoes the units that were running and completes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mini import store_rows

SLEEPER = "import bpy\nimport time\ntime.sleep(300)\n"
CRASH = "import bpy\nraise RuntimeError('deliberate crash')\n"


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(ppid, state, start time) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(f[1]), f[0], int(f[19])


def _descendants(root: int) -> dict[int, tuple[int, int]]:
    """pid -> (depth below `root`, start time) of every living descendant of `root`."""
    kids: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (st := _stat(int(name))) is not None and st[1] not in "ZX":
            kids.setdefault(st[0], []).append((int(name), st[2]))
    out: dict[int, tuple[int, int]] = {}
    level, depth = [root], 1
    while level:
        nxt = []
        for p in level:
            for k, start in kids.get(p, []):
                if k not in out:
                    out[k] = (depth, start)
                    nxt.append(k)
        level, depth = nxt, depth + 1
    return out


def _alive(pids: dict[int, tuple[int, int]]) -> list[int]:
    """The processes of `pids` still running (same start time, not a zombie)."""
    return [p for p, (_, start) in pids.items() if (st := _stat(p)) is not None and st[2] == start and st[1] not in "ZX"]


def test_sigterm_ends_the_pool_workers_and_resume_completes(bench: tuple[Path, Path], tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    # units run in config order: the quick one ends first (a final row), then both workers sleep
    for cfg, tid, prog in (("a_quick", "mini_a", CRASH), ("sleepy", "mini_a", SLEEPER), ("sleepy", "mini_b", SLEEPER)):
        (subs / cfg / tid).mkdir(parents=True)
        (subs / cfg / tid / "scene.py").write_text(prog)
        (subs / cfg / "config.json").write_text(json.dumps({"model": f"{cfg}-model", "harness": "test"}))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "physcodegym", "batch", "--tasks", str(bench[0]), "--submissions", str(subs),
           "--out", str(out), "--workers", "2", "--metrics", "mot", "--no-progress", "--json"]
    log = tmp_path / "batch.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([*cmd, "--timeout", "120"], stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
    seen: dict[int, tuple[int, int]] = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            seen.update(_descendants(proc.pid))
            running = sum(1 for d, _ in _descendants(proc.pid).values() if d >= 2)  # a worker's unit children
            if running >= 2 and (out / "results.sqlite").is_file() and store_rows(out):
                break
            time.sleep(0.2)
        assert proc.poll() is None and seen, f"the batch's units did not start: {log.read_text()[-2000:]}"
        time.sleep(1.0)
        seen.update(_descendants(proc.pid))
        proc.send_signal(signal.SIGTERM)  # the batch's parent only, as a supervisor stops it
        assert proc.wait(timeout=60) == -signal.SIGTERM
        deadline = time.monotonic() + 15
        while _alive(seen) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _alive(seen)
        assert not left, f"processes of the batch outlived SIGTERM: {left}"
    finally:
        for p in _alive(seen):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    before = store_rows(out)
    assert list(before) == [("a_quick", "mini_a", "1")]  # the finished unit only: the running ones have no row
    # resumed with a short limit, the sleeping units are redone and end as timed out: the batch completes
    p = subprocess.run([*cmd, "--timeout", "3", "--resume"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["units"] == 3 and doc["ran"] == 2 and doc["skipped_final"] == 1
    after = store_rows(out)
    assert after[("a_quick", "mini_a", "1")]["finished_at"] == before[("a_quick", "mini_a", "1")]["finished_at"]
    assert {(k, r["status"], r["run_status"]) for k, r in after.items() if k[0] == "sleepy"} == {
        (("sleepy", t, "1"), "failed", "timeout") for t in ("mini_a", "mini_b")}
