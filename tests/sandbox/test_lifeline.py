"""A sandbox child never outlives its runner (real bpy child, real bwrap).

Why: a batch or a scorer that is killed (SIGKILL: no `finally`, no clean-up) must not leave a Blender process
behind baking on a CPU that the next run then shares. The runner hands the child a pipe whose write end only the
runner holds; the child's watcher (sandbox.bootstrap) ends the child when it reads EOF. Without isolation the child
runs in its own session, so nothing else would end it; behind bwrap `--die-with-parent` does it as well.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SLEEPER = """
import time
print("PCGSTARTED", flush=True)
time.sleep(90)
print("PCGSURVIVED", flush=True)
"""

HOST = """
import sys
from pathlib import Path
from physcodegym.sandbox.runner import run_program
run_program(Path(sys.argv[1]), Path(sys.argv[2]), timeout_s=120, mode="bake_only", isolation=sys.argv[3])
"""


def _processes_naming(text: str) -> list[int]:
    """PIDs whose command line contains `text` (this test's unique run folder)."""
    out = []
    for e in os.scandir("/proc"):
        if not e.name.isdigit():
            continue
        try:
            with open(f"/proc/{e.name}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    out.append(int(e.name))
        except OSError:
            pass
    return out


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_a_child_ends_when_its_runner_is_killed(tmp_path: Path, isolation: str) -> None:
    prog = tmp_path / "sleeper.py"
    prog.write_text(SLEEPER)
    out = tmp_path / f"run_{isolation}_{os.getpid()}"
    host = subprocess.Popen([sys.executable, "-c", HOST, str(prog), str(out), isolation])
    try:
        log = out / "run.log"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if log.is_file() and "PCGSTARTED" in log.read_text(errors="replace"):
                break
            assert host.poll() is None, "the runner ended before the program started"
            time.sleep(0.2)
        else:
            pytest.fail(f"the program never started: {log.read_text(errors='replace') if log.is_file() else 'no log'}")
        alive = _processes_naming(str(out))
        assert alive, "the child should be running while its runner is"
        host.send_signal(signal.SIGKILL)
        host.wait()
        deadline = time.monotonic() + 20
        while _processes_naming(str(out)) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _processes_naming(str(out))
        assert not left, f"processes outlived their killed runner: {left}"
        assert "PCGSURVIVED" not in log.read_text(errors="replace")
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
        for pid in _processes_naming(str(out)):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
