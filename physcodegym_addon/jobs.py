"""Long work off Blender's main thread: child processes whose output a persistent timer drains (docs/SPEC.md §7).

bpy is not thread-safe, so nothing here touches bpy from a thread: a reader thread only moves the
child's stderr lines into a queue; `tick()` (the registered `bpy.app.timers` callback, also callable
directly from scripts and tests) runs on the main thread, updates progress and hands the finished
child's JSON document to the job's `on_done` callback, which is where scene data gets written.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from physcodegym.core import launch

TICK_SECONDS = 0.25
_FRAME_RE = re.compile(r"(?:frame|Fra:)\s*:?\s*(\d+)", re.IGNORECASE)


@dataclass
class Job:
    """One child process: state, progress and the callback that applies its result on the main thread."""

    name: str
    argv: list[str]
    on_done: Callable[[Job], None] | None = None
    on_progress: Callable[[Job, str], None] | None = None  # per stderr line
    on_tick: Callable[[Job], None] | None = None  # per poll while running (e.g. read a run folder)
    tick_every: float = 1.0  # seconds between on_tick calls
    cwd: str | None = None
    env: dict[str, str] | None = None
    total: int = 0  # expected progress units (frames), 0 if unknown
    state: str = "pending"  # pending | running | done | failed | cancelled
    progress: float = 0.0
    message: str = ""
    returncode: int | None = None
    doc: Any = None
    stdout: str = ""
    log: list[str] = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0
    _proc: subprocess.Popen | None = None
    _lines: queue.Queue = field(default_factory=queue.Queue)
    _out: list[str] = field(default_factory=list)
    _threads: list[threading.Thread] = field(default_factory=list)
    _last_tick: float = 0.0

    def start(self) -> Job:
        self.started = time.time()
        self._proc = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            env=self.env or launch.child_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            **_own_group(),
        )
        self.state = "running"
        t_err = threading.Thread(target=self._pump, args=(self._proc.stderr,), daemon=True)
        t_out = threading.Thread(target=self._collect, args=(self._proc.stdout,), daemon=True)
        self._threads = [t_err, t_out]
        for t in self._threads:
            t.start()
        return self

    def _pump(self, stream: Any) -> None:
        for line in stream:
            self._lines.put(line.rstrip("\n"))

    def _collect(self, stream: Any) -> None:
        self._out.append(stream.read())

    @property
    def running(self) -> bool:
        return self.state in ("pending", "running")

    @property
    def seconds(self) -> float:
        return (self.ended or time.time()) - self.started if self.started else 0.0

    def cancel(self) -> None:
        """Stop the child and what it started (terminate its process group, then kill it); the result is discarded.

        The child leads its own process group, so an audit's counterfactual workers or a Blender binary's own
        children stop with it instead of baking on after the user pressed Stop.
        """
        if self._proc is not None and self._proc.poll() is None:
            _signal_group(self._proc, kill=False)
            try:
                self._proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(self._proc, kill=True)  # the child if it is still there, and any straggler of its group
            self._proc.wait()
        if self.running:
            self.state = "cancelled"
            self.message = "cancelled"
            self.ended = time.time()

    def poll(self) -> bool:
        """Drain queued lines and check for exit; returns True once the job has finished (main thread)."""
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                break
            self.log.append(line)
            del self.log[:-200]
            m = _FRAME_RE.search(line)
            if m and self.total:
                self.progress = min(0.99, max(self.progress, int(m.group(1)) / self.total))
            if self.on_progress:
                self.on_progress(self, line)
        if not self.running:
            return True
        if self.on_tick and time.time() - self._last_tick >= self.tick_every:
            self._last_tick = time.time()
            try:
                self.on_tick(self)
            except Exception as e:  # progress display must never kill the job
                self.message = f"progress update failed: {type(e).__name__}: {e}"
        assert self._proc is not None
        rc = self._proc.poll()
        if rc is None:
            return False
        for t in self._threads:
            t.join(timeout=5)
        self.poll_remaining()
        self.returncode = rc
        self.stdout = "".join(self._out)
        self.doc = launch.last_json(self.stdout)
        self.ended = time.time()
        self.progress = 1.0
        if rc == 0:
            self.state = "done"
            self.message = f"done in {self.seconds:.1f} s"
        else:
            self.state = "failed"
            err = self.doc.get("error") if isinstance(self.doc, dict) else None
            if isinstance(err, dict):
                where = ": ".join(str(x) for x in (err.get("file"), err.get("field")) if x)
                self.message = f"exit {rc}: {where + ': ' if where else ''}{err.get('message', '')}"
            else:
                self.message = f"exit {rc}: " + (self.log[-1] if self.log else "no output")
        if self.on_done:
            try:
                self.on_done(self)
            except Exception as e:  # a broken callback must not kill the timer
                self.state = "failed"
                self.message = f"applying the result failed: {type(e).__name__}: {e}"
        return True

    def poll_remaining(self) -> None:
        while True:
            try:
                self.log.append(self._lines.get_nowait())
            except queue.Empty:
                break
        del self.log[:-200]


def _own_group() -> dict[str, Any]:
    """Popen arguments that make the child the leader of a new process group (session on POSIX)."""
    if os.name == "posix":
        return {"start_new_session": True}
    return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}


def _signal_group(proc: subprocess.Popen, kill: bool) -> None:
    """SIGTERM (or SIGKILL) to the child's whole process group; on Windows (or without a group) the child itself."""
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
            return
        except (ProcessLookupError, PermissionError):
            pass
    if proc.poll() is None:
        proc.kill() if kill else proc.terminate()


JOBS: dict[str, Job] = {}


def submit(job: Job) -> Job:
    """Start `job` under its name (a running job of the same name is cancelled first) and ensure the timer."""
    old = JOBS.get(job.name)
    if old is not None and old.running:
        old.cancel()
    JOBS[job.name] = job
    job.start()
    ensure_timer()
    return job


def get(name: str) -> Job | None:
    return JOBS.get(name)


def cancel(name: str) -> bool:
    job = JOBS.get(name)
    if job is None or not job.running:
        return False
    job.cancel()
    return True


def tick() -> float | None:
    """Timer callback: poll every job, redraw the UI; keeps running while any job runs."""
    busy = False
    for job in list(JOBS.values()):
        if job.running:
            job.poll()
            busy = busy or job.running
    _cursor_progress(busy)
    _redraw()
    return TICK_SECONDS if busy else None


_PROGRESS_ON: list[bool] = [False]


def _window_manager() -> Any:
    """Blender's window manager; None outside Blender or while it has none."""
    try:
        import bpy
    except ImportError:
        return None
    return getattr(bpy.context, "window_manager", None)


def _cursor_progress(busy: bool) -> None:
    """Blender's own progress indicator (window manager) follows the running jobs' mean progress."""
    wm = _window_manager()
    if wm is None:
        return
    running = [j for j in JOBS.values() if j.running]
    if busy and running:
        if not _PROGRESS_ON[0]:
            wm.progress_begin(0, 100)
            _PROGRESS_ON[0] = True
        wm.progress_update(int(100 * sum(j.progress for j in running) / len(running)))
    elif _PROGRESS_ON[0]:
        wm.progress_end()
        _PROGRESS_ON[0] = False


def wait(name: str, timeout: float = 120.0) -> Job:
    """Block until the job finishes, ticking as the timer would (scripts and tests; never from the UI)."""
    job = JOBS[name]
    t_end = time.time() + timeout
    while job.running:
        if time.time() > t_end:
            job.cancel()
            raise TimeoutError(f"job {name!r} did not finish in {timeout} s; log tail: {job.log[-5:]}")
        tick()
        time.sleep(0.05)
    return job


def ensure_timer() -> None:
    try:
        import bpy
    except ImportError:
        return
    if not bpy.app.timers.is_registered(tick):
        bpy.app.timers.register(tick, first_interval=TICK_SECONDS, persistent=True)


def stop_all() -> None:
    """Cancel every running job and drop the timer (add-on unregister)."""
    for job in JOBS.values():
        if job.running:
            job.cancel()
    JOBS.clear()
    _cursor_progress(False)
    try:
        import bpy

        if bpy.app.timers.is_registered(tick):
            bpy.app.timers.unregister(tick)
    except ImportError:
        pass


def _redraw() -> None:
    wm = _window_manager()
    if wm is None:
        return
    for win in wm.windows:
        for area in win.screen.areas:
            if area.type in ("VIEW_3D", "PROPERTIES", "SEQUENCE_EDITOR"):
                area.tag_redraw()
