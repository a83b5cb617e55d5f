"""One MCP session folder: the agent's Toolbox behind a persisted budget, a trace and agent_run.json.

The folder is laid out like a `physcodegym agent --out DIR` run folder, so `score`, `batch` and the report
read it the same way: `workspace/` (the only files the tools can read or write), `trace.jsonl`, `agent_run.json`,
`state.json` (the Toolbox's revisions / launches / finalize), `revisions/`, `launches/`, `images/`,
`submission/` (after finalize). Three files make the session survive reconnects and restarts:

- `session.json`: the task and the limits fixed by the first start, and the wall-clock start time. The clock
  runs in real time from the first start (a client that disconnects does not pause it), and a later start
  cannot change the limits.
- `budget.json`: the launch counters, written the moment a launch is spent (before Blender starts), so a
  server killed mid-launch still counts it.
- `pending_call.json`: the call being executed. Calls hold an exclusive lock on the folder, so whoever takes
  the lock and finds this file knows its writer died mid-call and records that call as interrupted.

Nothing here imports the MCP SDK: `mcp_server.server` maps these calls onto the protocol.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from physcodegym.agent import prompts
from physcodegym.agent.budget import DEFAULT_MAX_LAUNCHES, DEFAULT_WALL_CLOCK_S, Budget, BudgetLimits
from physcodegym.agent.run_document import AgentRunDocument
from physcodegym.agent.tools import (
    LAUNCH_TOOLS,
    TOOL_DEFS,
    Toolbox,
    ToolInputError,
    ToolOutcome,
    WriteFileArgs,
    outcome_parts,
)
from physcodegym.agent.trace import AGENT_RUN_FILE, Trace, agent_run_doc, read_trace, write_agent_run, write_json_atomic
from physcodegym.core.errors import InputError
from physcodegym.llm.base import ImagePart, TextPart
from physcodegym.tasks.loader import LoadedTask
from physcodegym.tasks.schema import FPS, FRAMES, SCORE_HEIGHT, SCORE_WIDTH

PROVIDER = "mcp"
SESSION_FILE = "session.json"
BUDGET_FILE = "budget.json"
PENDING_FILE = "pending_call.json"
LOCK_FILE = ".session.lock"
MAX_CALLS = 1_000_000  # the client's model loop is its own; the step guard of the LLM harness does not apply
# tools whose result depends on which scene.py is current: a scene.py edited with the client's own file tools
# is recorded as a revision before they run
_SCENE_TOOLS = set(LAUNCH_TOOLS) | {"check_submission", "finalize"}


class WorkspaceBusy(Exception):
    """Another process holds this session folder's lock (a call of another connection is still running)."""


class _PersistedBudget(Budget):
    """A Budget that saves itself the moment a launch is spent (before the Blender child starts)."""

    def use_launch(self, tool: str) -> int:
        n = super().use_launch(tool)
        hook = self.__dict__.get("_persist")
        if hook is not None:
            hook()
        return n


@dataclass
class CallResult:
    outcome: ToolOutcome
    parts: list[TextPart | ImagePart]  # what the client receives: the JSON result + budget line, then the images

    @property
    def text(self) -> str:
        return self.parts[0].text  # type: ignore[union-attr]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _short_args(args: dict | None, limit: int = 2000) -> str:
    s = json.dumps(args or {}, default=str)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _inside(a: Path, b: Path) -> bool:
    try:
        a.relative_to(b)
        return True
    except ValueError:
        return False


def check_separation(loaded_task: LoadedTask, run_dir: Path) -> None:
    """Refuse a session folder that overlaps the task folder, the reference video or the truth files.

    Paths are compared after resolving symbolic links, in both directions: a workspace inside the task folder,
    a task folder inside the workspace, or a `workspace/` that is a link elsewhere would put the hidden files
    one relative path away from read_file.
    """
    rd = Path(run_dir).absolute()
    if rd.is_symlink():
        raise InputError("the session folder may not be a symbolic link", file=str(rd), field="--workspace")
    ws = rd / "workspace"
    if ws.is_symlink() or (ws.exists() and not ws.is_dir()):
        raise InputError("workspace/ must be a real folder, not a link or a file", file=str(ws), field="--workspace")
    rr = rd.resolve()
    secrets = [loaded_task.folder, loaded_task.video_path] + [
        p for p in (loaded_task.truth_program, loaded_task.truth_trajectories, loaded_task.truth_counterfactuals) if p
    ]
    for s in secrets:
        sr = Path(s).resolve()
        if _inside(rr, sr) or _inside(sr, rr):
            raise InputError(
                "the session folder overlaps the task folder (reference video / truth files); choose a folder outside "
                "it",
                file=str(rd),
                field="--workspace",
            )


class McpSession:
    """The tools of one task on one session folder, shared by every connection to it (see the module doc)."""

    def __init__(
        self,
        loaded_task: LoadedTask,
        run_dir: Path,
        *,
        max_launches: int | None = None,
        time_limit_s: float | None = None,
        run_timeout_s: float = 1800.0,
        memory_mb: int = 8192,
        transport: str = "stdio",
        lock_wait_s: float = 30.0,
        runner: Callable[..., Any] | None = None,
    ) -> None:
        if not loaded_task.video_path.is_file():
            raise InputError("the task has no reference video", file=str(loaded_task.video_path), field="video.file")
        check_separation(loaded_task, run_dir)
        self.loaded_task = loaded_task
        self.run_dir = Path(run_dir).absolute().resolve()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.transport = transport
        self.lock_wait_s = lock_wait_s
        self.client = "unknown"
        self.trace = Trace(self.run_dir / "trace.jsonl")
        self._tlock = threading.Lock()
        self.meta = self._open_session(max_launches, time_limit_s)
        self.limits = BudgetLimits(**self.meta["limits"])
        self.budget = self._load_budget()
        self.toolbox = Toolbox(
            self.run_dir,
            loaded_task.video_path,
            self.budget,
            run_timeout_s=run_timeout_s,
            memory_mb=memory_mb,
            runner=runner,
        )
        records = read_trace(self.trace.path)
        self.segment = sum(1 for r in records if r.get("type") == "start") + 1
        self.trace.append(
            {
                "type": "start",
                "segment": self.segment,
                "resumed": self.segment > 1,
                "started": self.meta["started"],
                "task": loaded_task.id,
                "provider": PROVIDER,
                "model": self.client,
                "transport": transport,
                "pid": os.getpid(),
                "prompt_version": prompts.PROMPT_VERSION,
                "tools": [t.name for t in TOOL_DEFS],
                "limits": asdict(self.limits),
                "budget": self.budget.to_dict(),
            }
        )
        self._closed_status: str | None = None
        self.write_run_json()

    # -- files ------------------------------------------------------------------------------
    def _p(self, name: str) -> Path:
        return self.run_dir / name

    def _open_session(self, max_launches: int | None, time_limit_s: float | None) -> dict:
        p = self._p(SESSION_FILE)
        if not p.is_file():
            with self._locked("create the session", wait_s=self.lock_wait_s):
                if not p.is_file():
                    if self.trace.path.is_file() and self.trace.path.stat().st_size:
                        raise InputError(
                            "this folder holds the trace of a run that is not an MCP session; choose a new --workspace",
                            file=str(self.trace.path),
                            field="--workspace",
                        )
                    if max_launches is not None and max_launches < 0:
                        raise InputError("must be >= 0", field="--max-launches")
                    if time_limit_s is not None and time_limit_s <= 0:
                        raise InputError("must be > 0 seconds", field="--time-limit")
                    limits = BudgetLimits(
                        max_launches=DEFAULT_MAX_LAUNCHES if max_launches is None else int(max_launches),
                        wall_clock_s=DEFAULT_WALL_CLOCK_S if time_limit_s is None else float(time_limit_s),
                        max_steps=MAX_CALLS,
                    )
                    write_json_atomic(
                        p,
                        {
                            "kind": "physcodegym-mcp-session",
                            "task": self.loaded_task.id,
                            "task_folder": str(self.loaded_task.folder),
                            "limits": asdict(limits),
                            "started": _now(),
                            "started_epoch": time.time(),
                        },
                    )
        meta = json.loads(p.read_text(encoding="utf-8"))
        if meta.get("task") != self.loaded_task.id:
            raise InputError(
                f"this session folder belongs to task {meta.get('task')!r}, not {self.loaded_task.id!r}",
                file=str(p),
                field="--task",
            )
        stored = meta["limits"]
        for flag, key, given in (
            ("--max-launches", "max_launches", max_launches),
            ("--time-limit", "wall_clock_s", time_limit_s),
        ):
            if given is not None and float(given) != float(stored[key]):
                raise InputError(
                    f"the session was started with {key}={stored[key]}; the limits of a session cannot change "
                    "(omit the flag to continue it, or choose a new --workspace)",
                    file=str(p),
                    field=flag,
                )
        return meta

    def _load_budget(self) -> _PersistedBudget:
        bp = self._p(BUDGET_FILE)
        d = json.loads(bp.read_text(encoding="utf-8")) if bp.is_file() else None
        b = _PersistedBudget.from_dict(d, self.limits) if d else _PersistedBudget(limits=self.limits)
        assert isinstance(b, _PersistedBudget)
        b.elapsed_before_s = max(
            0.0, time.time() - float(self.meta["started_epoch"])
        )  # real time since the first start
        b.__dict__["_persist"] = lambda: self._save_budget(b)
        return b

    def _save_budget(self, b: Budget | None = None) -> None:
        write_json_atomic(self._p(BUDGET_FILE), (b or self.budget).to_dict())

    def _reload(self) -> None:
        """Counters and tool state as on disk (another connection or an earlier process may have moved them)."""
        self.budget = self._load_budget()
        self.toolbox.budget = self.budget
        sp = self.toolbox.state_path
        if sp.is_file():
            self.toolbox.state = json.loads(sp.read_text(encoding="utf-8"))

    @contextmanager
    def _locked(self, what: str, wait_s: float | None = None) -> Iterator[None]:
        wait = self.lock_wait_s if wait_s is None else wait_s
        fd = os.open(self._p(LOCK_FILE), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        holder = os.pread(fd, 400, 0).decode("utf-8", "replace").strip()
                        raise WorkspaceBusy(
                            f"another connection to this session is busy ({holder or 'unknown call'}); retry when it "
                            "has finished"
                        ) from None
                    time.sleep(0.2)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{what} since {_now()} (pid {os.getpid()})".encode(), 0)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # -- calls ------------------------------------------------------------------------------
    def _reconcile_pending(self) -> None:
        """A pending call found under the lock was cut off (its process died): trace it as interrupted."""
        pp = self._p(PENDING_FILE)
        if not pp.is_file():
            return
        try:
            pend = json.loads(pp.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, OSError):
            pend = {}
        spent = self.budget.launches_used > int(pend.get("launches_used_before", self.budget.launches_used))
        msg = (
            "interrupted: the MCP server stopped during this call (the client disconnected or the server was killed)"
            + ("; the Blender launch it started is counted" if spent else "")
        )
        self.trace.append(
            {
                "type": "tool",
                "step": pend.get("step"),
                "tool_call_id": pend.get("tool_call_id"),
                "name": pend.get("name"),
                "arguments": pend.get("arguments", ""),
                "is_error": True,
                "interrupted": True,
                "summary": json.dumps({"error": msg}),
                "note": f"step {pend.get('step')}: {pend.get('name')} interrupted",
                "result_text": json.dumps({"error": msg}) + "\n" + self.budget.line(),
                "images": [],
                "launch": spent,
                "seconds": None,
                "segment": pend.get("segment"),
                "budget": self.budget.to_dict(),
            }
        )
        pp.unlink(missing_ok=True)

    def _note_native_edit(self, name: str) -> None:
        """Record a scene.py written with the client's own file tools as a revision (as write_file would)."""
        if name not in _SCENE_TOOLS or not self.toolbox.scene_path.is_file() or self.toolbox.state.get("finalized"):
            return
        raw = self.toolbox.scene_path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return
        import hashlib

        revs = self.toolbox.state["revisions"]
        if revs and revs[-1]["sha256"] == hashlib.sha256(raw).hexdigest():
            return
        try:
            self.toolbox.tool_write_file(WriteFileArgs(path="scene.py", text=text))
        except ToolInputError:
            pass

    def _scene_refusal(self, name: str) -> str | None:
        """A scene.py that is not a plain file of the workspace (a link, or a hard link to a file elsewhere, planted
        with the client's own tools) is never run, checked or submitted: its bytes may be the truth program's."""
        if name not in _SCENE_TOOLS:
            return None
        p = self.toolbox.scene_path
        if p.is_symlink():
            return "workspace/scene.py is a symbolic link; write the program itself with write_file"
        if p.exists():
            st = p.lstat()
            if not stat.S_ISREG(st.st_mode):
                return "workspace/scene.py is not a regular file; write the program with write_file"
            if st.st_nlink > 1:
                return "workspace/scene.py is a hard link to another file; write the program itself with write_file"
        return None

    def stop_reason(self) -> str | None:
        """Why no tool may run any more (the wall clock), or None."""
        why = self.budget.exhausted()
        return f"{why}; the session is over, no tool can run" if why else None

    def call(self, name: str, arguments: dict[str, Any] | None) -> CallResult:
        """Run one tool call under the session lock; every call is traced and leaves agent_run.json current."""
        with self._tlock, self._locked(f"tool {name}"):
            self._reload()
            self._reconcile_pending()
            b = self.budget
            b.steps += 1
            step = b.steps
            call_id = f"mcp-{self.segment}-{step}"
            before = b.launches_used
            t1 = time.monotonic()
            stop = self.stop_reason()
            refusal = None if stop else self._scene_refusal(name)
            if stop or refusal:
                out = ToolOutcome({"error": stop or refusal}, is_error=True)
            else:
                write_json_atomic(
                    self._p(PENDING_FILE),
                    {
                        "tool_call_id": call_id,
                        "step": step,
                        "segment": self.segment,
                        "name": name,
                        "arguments": _short_args(arguments),
                        "launches_used_before": before,
                        "started": _now(),
                        "pid": os.getpid(),
                    },
                )
                self._save_budget(b)
                try:
                    self._note_native_edit(name)
                    out = self.toolbox.call(name, arguments)
                except Exception as e:  # a harness bug is reported to the client and traced, never lost
                    out = ToolOutcome({"error": f"internal tool error: {type(e).__name__}: {e}"}, is_error=True)
                    self.toolbox.save_state()
            parts = outcome_parts(out, b.line())
            refs = self._save_images(step, out.images)
            note = (
                f"step {step}: {name}({_short_args(arguments, 120)}) -> "
                f"{'ERROR ' if out.is_error else ''}{out.summary(200)}"
            )
            self.trace.append(
                {
                    "type": "tool",
                    "step": step,
                    "tool_call_id": call_id,
                    "name": name,
                    "arguments": _short_args(arguments),
                    "is_error": out.is_error,
                    "summary": out.summary(),
                    "note": note,
                    "result_text": parts[0].text,  # type: ignore[union-attr]
                    "images": refs,
                    "launch": b.launches_used > before,
                    "seconds": round(time.monotonic() - t1, 3),
                    "segment": self.segment,
                    "budget": b.to_dict(),
                }
            )
            self._save_budget(b)
            self._p(PENDING_FILE).unlink(missing_ok=True)
            if out.finalized:
                self._end("finalized", "the agent finalized its submission")
            elif stop:
                self._end("budget_exhausted", stop)
            self.write_run_json()
            return CallResult(out, parts)

    def _save_images(self, step: int, images: list[bytes]) -> list[str]:
        refs = []
        for k, data in enumerate(images):
            d = self._p("images")
            d.mkdir(parents=True, exist_ok=True)
            p = d / f"step{step:04d}_call0_{k}.png"
            p.write_bytes(data)
            refs.append(str(p.relative_to(self.run_dir)))
        return refs

    def _end(self, status: str, reason: str) -> None:
        """The one `end` record of the session (written once, whichever connection gets there)."""
        if any(r.get("type") == "end" for r in read_trace(self.trace.path)):
            return
        self.trace.append({"type": "end", "status": status, "reason": reason, "budget": self.budget.to_dict()})

    # -- status -----------------------------------------------------------------------------
    def status(self) -> tuple[str, str]:
        st = self.toolbox.state
        if st.get("finalized"):
            return "finalized", "the agent finalized its submission"
        why = self.budget.exhausted()
        if why:
            return "budget_exhausted", why
        if self._closed_status:
            return (
                self._closed_status,
                "the MCP client disconnected; start the server on the same --workspace to continue",
            )
        return "running", ""

    def run_doc(self) -> AgentRunDocument:
        status, reason = self.status()
        return agent_run_doc(status, reason, self.loaded_task.id, PROVIDER, self.client, self.run_dir,
                             self.meta["started"], self.budget, self.toolbox.state, transport=self.transport,
                             segments=self.segment)

    def write_run_json(self) -> AgentRunDocument:
        return write_agent_run(self._p(AGENT_RUN_FILE), self.run_doc())

    def set_client(self, name: str | None) -> None:
        if name and name != self.client:
            self.client = name

    def close(self) -> None:
        """The connection ended cleanly: trace it; agent_run.json says `stopped` until a client reconnects."""
        with self._tlock:
            try:
                self._reload()
            except (OSError, json.JSONDecodeError):
                pass
            self.trace.append(
                {"type": "disconnect", "segment": self.segment, "model": self.client, "budget": self.budget.to_dict()}
            )
            self._closed_status = "stopped"
            self.write_run_json()

    def mark_stopped(self) -> None:
        """Best effort from a signal handler (a call may hold the locks): trace the stop, mark agent_run.json."""
        self._closed_status = "stopped"
        self.trace.append(
            {
                "type": "disconnect",
                "segment": self.segment,
                "model": self.client,
                "signal": True,
                "budget": self.budget.to_dict(),
            }
        )
        self.write_run_json()

    # -- prompt and resources ---------------------------------------------------------------
    def prompt_text(self) -> str:
        return prompts.SYSTEM_PROMPT + "\n\n" + prompts.task_prompt(self.loaded_task.task, self.limits)

    def public_description(self) -> dict:
        """What the agent may know about the task: exactly what its prompt states, as data."""
        t = self.loaded_task.task
        r = t.rubric
        return {
            "id": t.id,
            "title": t.title,
            "category": t.category.value,
            "subcategory": t.subcategory.value if t.subcategory else None,
            "video": {
                "duration_s": FRAMES / FPS,
                "fps": FPS,
                "frames": FRAMES,
                "served_resolution": [SCORE_WIDTH, SCORE_HEIGHT],
            },
            "permitted_initial_conditions": list(r.initial_conditions),
            "permitted_actuation": list(r.actuation),
            "accepted_equivalent_representations": list(r.equivalent_representations),
            "deliverable": "scene.py in the workspace; a full run of it must save scene.blend and render "
            "frames/0001.png ... "
            "frames/0240.png at 640x360, 30 fps; then call finalize",
            "tools": [t.name for t in TOOL_DEFS],
            "limits": {"max_launches": self.limits.max_launches, "wall_clock_s": self.limits.wall_clock_s},
        }

    def budget_doc(self) -> dict:
        b = self._load_budget()
        st = self.toolbox.state
        sp = self.toolbox.state_path
        if sp.is_file():
            try:
                st = json.loads(sp.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                pass
        return {
            **b.remaining(),
            "launches_by_tool": dict(b.launches_by_tool),
            "elapsed_s": round(b.elapsed_s, 1),
            "wall_clock_s": b.limits.wall_clock_s,
            "tool_calls": b.steps,
            "finalized": bool(st.get("finalized")),
            "line": b.line(),
        }
