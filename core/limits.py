"""Trusted child processes with a wall-clock limit, an address-space limit and bounded captured output.

Every piece of trusted work that touches something a scene program produced (the post-run media audit, the
S_val audit, counterfactual workers, the decode of a candidate video) runs through `run_limited`: its own
session (a timeout kills the whole process tree, `kill_tree`), RLIMIT_AS, no core dumps, PR_SET_PDEATHSIG (it
dies with its parent), stdout/stderr to temp files of which at most `max_output` bytes are read back. It never
raises for the child's faults: the result says what happened.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from physcodegym.core.determinism import fix_layout, pick_cpu, simulation_env

DEFAULT_MEMORY_MB = 4096
MAX_OUTPUT = 64 * 1024 * 1024


@dataclass
class Limited:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float
    peak_memory_mb: float | None
    timeout_s: float
    memory_mb: int | None

    @property
    def killed_reason(self) -> str | None:
        """One line when the child did not end by itself normally (timeout or a signal), else None."""
        if self.timed_out:
            return f"wall-clock limit of {self.timeout_s:g} s reached; process group killed"
        if self.returncode is not None and self.returncode < 0:
            sig = -self.returncode
            mem = (
                f" (memory limit {self.memory_mb} MiB?)"
                if sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT) and self.memory_mb
                else ""
            )
            return f"killed by signal {sig}{mem}"
        return None


def _preexec(memory_mb: int | None, simulation: bool = False, cpu: int | None = None,
             after_fork: Callable[[], None] | None = None):
    libc = None
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)

    def fn() -> None:
        import resource

        if memory_mb:
            lim = int(memory_mb) * 1024 * 1024
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                lim = min(lim, hard)  # a limited parent's children stay within its limit
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        with contextlib.suppress(Exception):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if simulation:
            fix_layout(libc, cpu)
        if libc is not None:
            with contextlib.suppress(Exception):
                libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if after_fork is not None:
            after_fork()

    return fn


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids of every process this user can see (Linux /proc)."""
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _tree(pid: int) -> list[int]:
    """`pid` and all its descendants, parents first."""
    kids, out = _children(), [pid]
    for p in out:
        out.extend(k for k in kids.get(p, []) if k not in out)
    return out


def kill_tree(pid: int) -> None:
    """SIGKILL `pid`, its process group, and every descendant and its group.

    Killing the group alone is not enough: each trusted child starts its own session (a counterfactual worker
    of a timed-out audit is not in the audit's group), and a descendant that is not tied to its parent by the
    parent-death signal would outlive it. The tree is stopped first (SIGSTOP, until no new process appears) so
    nothing forks while it is collected; it is collected before anything dies (orphans leave the tree).
    """
    stopped: set[int] = set()
    for _ in range(10):
        new = [p for p in _tree(pid) if p not in stopped]
        if not new:
            break
        for p in new:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGSTOP)
            stopped.add(p)
    groups = set()
    for p in stopped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            groups.add(os.getpgid(p))
    groups.add(pid)
    groups.discard(os.getpgrp())  # never our own group (a child that did not start its own session)
    for g in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(g, signal.SIGKILL)
    for p in stopped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)


def _read_part(fh, limit: int, tail: bool = False) -> str:
    size = fh.seek(0, os.SEEK_END)
    fh.seek(max(0, size - limit) if tail else 0)
    return fh.read(limit).decode("utf-8", "replace")


def run_limited(cmd: list[str], **limits: Any) -> Limited:
    """Run `cmd` to completion or to its limit (the keyword arguments of `start_limited`); stdin is /dev/null."""
    return start_limited(cmd, **limits).wait()


class Started:
    """A limited child started by `start_limited` that the caller has not waited for yet.

    Why: a costly trusted child (the audit's re-simulation) can run on the second core while the caller
    goes on with other work. Its wall-clock deadline runs from its start whether or not anyone waits: a timer
    kills the whole group there, and `wait()` reports it as timed out. (Enforced only inside `wait()`, a child
    that overran while the caller was busy, and ended before it waited, passed as finished in time.)
    """

    def __init__(self, cmd: list[str], timeout_s: float, memory_mb: int | None, env: dict | None, cwd: str | None,
                 max_output: int, pass_fds: tuple[int, ...], simulation: bool = False, pinned: bool = True,
                 after_fork: Callable[[], None] | None = None, on_exit: Callable[[], None] | None = None) -> None:
        self.t0 = time.monotonic()
        self._on_exit = on_exit
        self.timeout_s, self.memory_mb, self.max_output = timeout_s, memory_mb, max_output
        self._out, self._err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.proc: subprocess.Popen | None = None
        self.start_error: str | None = None
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=self._out,
                stderr=self._err,
                env=simulation_env(env) if simulation else env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_preexec(memory_mb, simulation, pick_cpu() if simulation and pinned else None,
                                    after_fork),
                pass_fds=pass_fds,
            )
        except OSError as e:
            self.start_error = f"cannot start {cmd[0]}: {e}"
        self._result: Limited | None = None
        self._lock = threading.Lock()
        self._reaped = self._expired = False
        self._timer: threading.Timer | None = None
        if self.proc is not None:
            self._timer = threading.Timer(max(0.0, float(timeout_s)), self._expire)
            self._timer.daemon = True
            self._timer.start()

    def _expire(self) -> None:
        """The deadline, from the timer thread: kill the group of a child not reaped yet (a zombie keeps its pid,
        so the pid cannot be someone else's)."""
        with self._lock:
            if not self._reaped and self.proc is not None:
                self._expired = True
                kill_tree(self.proc.pid)

    def wait(self) -> Limited:
        """Wait for the child (at most to its deadline, then kill its group); the result is kept."""
        if self._result is not None:
            return self._result
        if self.proc is None:
            self._close()
            self._result = Limited(None, "", self.start_error or "not started", False, 0.0, None, self.timeout_s,
                                   self.memory_mb)
            return self._result
        timed_out = False
        deadline = self.t0 + float(self.timeout_s)
        delay = 0.01
        while True:
            with self._lock:
                pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
                if pid:
                    self._reaped = True
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                    kill_tree(self.proc.pid)
                    _, status, ru = os.wait4(self.proc.pid, 0)
                    self._reaped = True
                    break
            time.sleep(delay)
            delay = min(0.1, delay * 1.5)
        if self._timer is not None:
            self._timer.cancel()
        timed_out = timed_out or self._expired
        self.proc.returncode = rc = os.waitstatus_to_exitcode(status)
        peak = round(ru.ru_maxrss / 1024.0, 1)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # nothing of the child's group outlives it
        stdout, stderr = _read_part(self._out, self.max_output), _read_part(self._err, 65536, tail=True)
        self._close()
        if self._on_exit is not None:
            with contextlib.suppress(Exception):
                self._on_exit()
        self._result = Limited(rc, stdout, stderr, timed_out, round(time.monotonic() - self.t0, 3), peak,
                               self.timeout_s, self.memory_mb)
        return self._result

    def kill(self) -> Limited:
        """Stop the child and its group now (a result nobody needs any more); gives its `Limited` like `wait()`."""
        if self._result is None and self.proc is not None:
            kill_tree(self.proc.pid)
        return self.wait()

    def _close(self) -> None:
        self._out.close()
        self._err.close()


def start_limited(
    cmd: list[str],
    *,
    timeout_s: float,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    env: dict | None = None,
    cwd: str | None = None,
    max_output: int = MAX_OUTPUT,
    pass_fds: tuple[int, ...] = (),
    simulation: bool = False,
    pinned: bool = True,
    after_fork: Callable[[], None] | None = None,
    on_exit: Callable[[], None] | None = None,
) -> Started:
    """Start `cmd` under the limits of `run_limited` and return at once; `.wait()` gives its `Limited`.

    `simulation=True` for a child that re-bakes a scene: it then runs the way the sandbox's child does
    (`core.determinism`: its environment, one CPU, address randomisation off), so its bakes repeat the sandbox's.
    `pinned=False` leaves it on every CPU (environment and layout kept): for a bake that repeats with any
    number of threads (rigid bodies and cloth, measured bit-identical on one and two; SPH does not).
    `after_fork` runs in the child between fork and exec (the wall joins its cgroup there: `sandbox.wall`);
    `on_exit` runs once the child is reaped (the wall removes that cgroup)."""
    return Started(cmd, timeout_s, memory_mb, env, cwd, max_output, pass_fds, simulation, pinned, after_fork,
                   on_exit)
