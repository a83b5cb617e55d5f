"""Isolated execution of a scene program (SPEC §3).

`run_program` checks the program statically (status `policy` on a violation), then runs it in a
fresh process (its own session, so a timeout kills the whole group) with the working directory set
to the output folder, an address-space limit, stdout/stderr captured to `run.log`, and the
run-time barrier of `sandbox.barrier` installed by `sandbox/bootstrap.py`. It then verifies the
contract outputs (`scene.blend`, `frames/0001.png … 0240.png` at 640x360, or `render.mp4`) and
writes `run.json` atomically. Nothing raises out of it for a crash, hang or breach: the record says
what happened.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import signal
import struct
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from physcodegym.core import atomic
from physcodegym.core.determinism import fix_layout, pick_cpu
from physcodegym.sandbox import artifacts
from physcodegym.sandbox import isolation as wall
from physcodegym.sandbox.policy import check_source
from pydantic import BaseModel, Field

BOOTSTRAP = Path(__file__).resolve().parent / "bootstrap.py"
WIDTH, HEIGHT = 640, 360
MODES = ("full", "bake_only", "preview")
MODE_CODES = {"full": "full", "bake_only": "bake", "preview": "prev"}  # equal length on the child's command line
LOG_TAIL_LINES = 40


class RunRecord(BaseModel):
    """What happened to one execution; also `run.json` in the run folder."""

    status: str  # ok | failed | timeout | policy | invalid (the program ended, its outputs break the contract)
    mode: str = "full"
    seconds: float = 0.0
    peak_memory_mb: float | None = None
    returncode: int | None = None
    reason: str | None = None  # one line: why it is not ok
    log_tail: str = ""
    missing: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)  # present but wrong (size, extra frames)
    violations: list[dict] = Field(
        default_factory=list
    )  # static ({rule,line,message}) and run-time ({rule,detail,...})
    outputs: dict[str, Any] = Field(default_factory=dict)
    program_sha256: str | None = None
    bpy_version: str | None = None
    # the Blender that ran (or would have run) the program: `bpy.app.version_string` as the child reported it before
    # the program started, else the installed bpy package's version when no child ran (a static policy refusal)
    blender_version: str | None = None
    blender_version_source: str | None = None  # "child" | "bpy package" | None (unknown: a Blender binary not run)
    blender_binary: str | None = None
    timeout_s: float | None = None
    memory_mb: int | None = None
    expected_frames: int = 240
    preview_frame: int | None = None
    started_at: str | None = None
    isolation: str | None = None  # which wall the child ran behind (sandbox.isolation.describe)
    # the one validated artifact set (sandbox.artifacts), written by the runner, never by the child
    record_version: int = artifacts.RECORD_VERSION
    artifacts: dict[str, dict[str, Any]] = Field(default_factory=dict)  # accepted path -> {sha256, size}
    ignored: list[str] = Field(
        default_factory=list
    )  # names the program left that are not contract outputs (never read)
    validation: dict[str, Any] = Field(default_factory=dict)  # seconds, limits, header facts, media audit

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def configured_blender(explicit: str | None = None) -> str | None:
    """Blender binary to use: the argument, else $PHYSCODEGYM_BLENDER, else the Blender this process runs inside
    (a panel job in a real Blender, whose `sys.executable` cannot import bpy), else None (the bpy module)."""
    from physcodegym.core import launch

    return explicit or os.environ.get("PHYSCODEGYM_BLENDER") or launch.blender_binary() or None


def png_size(path: Path) -> tuple[int, int] | None:
    """Width/height from a PNG header (no decode); None if not a PNG."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    w, h = struct.unpack(">II", head[16:24])
    return int(w), int(h)


def verify_outputs(
    scratch: Path, out_dir: Path, mode: str, expected_frames: int
) -> tuple[list[str], list[str], dict, artifacts.Acceptance]:
    """Validate the child's outputs in `scratch` and move the accepted ones into `out_dir` (sandbox.artifacts).

    Returns (missing, problems, outputs, acceptance); `outputs` keeps the record's summary keys (paths in OUT/)."""
    acc = artifacts.accept_outputs(scratch, out_dir, mode, expected_frames)
    arts = acc.artifacts
    frames = sorted(k for k in arts if k.startswith("frames/"))
    outputs: dict[str, Any] = {
        "blend": str(out_dir / "scene.blend") if "scene.blend" in arts else None,
        "frames_dir": str(out_dir / "frames") if frames else None,
        "frame_count": len(frames),
    }
    if mode == "preview":
        outputs["preview"] = str(out_dir / "preview.png") if "preview.png" in arts else None
    if "render.mp4" in arts:
        outputs["video"] = str(out_dir / "render.mp4")
        outputs["video_info"] = acc.info.get("render.mp4")
    render_ok = len(frames) == expected_frames or "render.mp4" in arts
    outputs["frames_complete"] = mode == "full" and render_ok and not acc.missing and not acc.problems
    return list(acc.missing), list(acc.problems), outputs, acc


def _log_tail(log: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(log, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 16384))
            data = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    keep = [ln for ln in data.splitlines() if "EGL Error" not in ln]
    return "\n".join(keep[-lines:])


FILE_CAP_MB = 2048  # RLIMIT_FSIZE of the child: no single file above this
FOLDER_CAP_MB = 6144  # the scratch folder (+ run.log) as a whole; the runner kills the child beyond it
FOLDER_CAP_ENTRIES = 20000  # files + folders in the scratch folder (an inode bomb is a size bomb too)
NOFILE = 4096
# Reproducible runs (SPEC §3). Blender's SPH particle solver depends on thread scheduling and on the memory layout
# (measured on liquid_duck: with both CPUs, 1 in 3 runs baked differently even with address randomisation off; on
# one CPU with randomisation off, every run in the same layout baked the same). So the child starts on one CPU
# (TBB sizes its pool then: one thread for every simulation), and the bootstrap gives it back the others once
# rendering starts (measured: a full liquid_duck run 48 s vs 42 s, the bake on one thread). The CPU choice and the
# layout live in core.determinism (`pick_cpu`, `fix_layout`), shared with the audit's re-baking workers.


def _site_dirs() -> list[str]:
    """This interpreter's package folders (a venv's own when it runs in one), in sys.path order."""
    import site

    try:
        dirs = site.getsitepackages()
    except AttributeError:  # an old virtualenv's site module
        import sysconfig

        dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def _fixed_width(n: int) -> str:
    """A descriptor number as five digits: the child's argv has the same length whichever numbers it got."""
    return f"{int(n):05d}"


def _preexec(
    memory_mb: int | None,
    timeout_s: float | None = None,
    file_cap_mb: int | None = FILE_CAP_MB,
    cgroups: list[Path] = (),
    cpu: int | None = None,
):
    libc = None
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)

    def fn() -> None:
        import resource

        wall.join_cgroups(list(cgroups))
        if memory_mb:
            lim = int(memory_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        if file_cap_mb:
            lim = int(file_cap_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_FSIZE, (lim, lim))
        if timeout_s:
            # CPU seconds of any one process: the wall clock limit times the cores Blender may use, plus slack
            cpu_s = int(float(timeout_s) * max(2, os.cpu_count() or 2)) + 60
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))
        fix_layout(libc, cpu)  # kept through exec (bwrap is not set-uid here)
        if libc is not None:
            with contextlib.suppress(Exception):
                libc.prctl(
                    1, signal.SIGKILL
                )  # PR_SET_PDEATHSIG: die with the runner (a killed batch leaves no orphans)

    return fn


def _folder_usage(root: Path, limit_entries: int) -> tuple[int, int]:
    """(apparent bytes, entries) under `root`, links not followed; stops counting past `limit_entries`.
    Apparent size (st_size), not blocks: a sparse file occupies nothing on disk yet decodes to its full length."""
    total, n = 0, 0
    stack = [str(root)]
    while stack and n <= limit_entries:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                for e in it:
                    n += 1
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += max(st.st_size, 0)
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
        except OSError:
            continue
    return total, n


def _spawn(
    cmd: list[str],
    *,
    cwd: Path,
    env: dict,
    log_path: Path,
    fd: int | tuple[int, ...],
    timeout_s: float,
    memory_mb: int | None,
    watch: list[Path],
    folder_cap_mb: int | None,
    cgroups: list[Path] = (),
    drain=None,
) -> tuple[int | None, Any, bool, str | None]:
    """Start the child (own session), wait for it within the limits; returns (rc, rusage, timed_out, cap_reason).

    Nothing of the child outlives this call: its process group is killed, and behind bwrap its PID namespace
    ends with it. The folder cap is enforced by polling the scratch folder (and the log) while it runs.
    """
    import subprocess

    timed_out = False
    cap_reason: str | None = None
    rusage = None
    rc: int | None = None
    cap = int(folder_cap_mb) * 1024 * 1024 if folder_cap_mb else None
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=str(cwd),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            pass_fds=fd if isinstance(fd, tuple) else (fd,),
            preexec_fn=_preexec(memory_mb, timeout_s, FILE_CAP_MB, cgroups, pick_cpu()),
        )
        deadline = time.monotonic() + float(timeout_s)
        next_check = time.monotonic() + 0.5
        delay = 0.02
        while True:
            if drain is not None:
                drain()
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                rusage = ru
                rc = os.waitstatus_to_exitcode(status)
                break
            now = time.monotonic()
            if cap is not None and now >= next_check:
                next_check = now + 1.0
                used, entries = 0, 0
                for w in watch:
                    if w.is_dir() and not w.is_symlink():
                        u, n = _folder_usage(w, FOLDER_CAP_ENTRIES)
                        used, entries = used + u, entries + n
                    elif w.is_file():
                        used += w.stat().st_size
                if used > cap or entries > FOLDER_CAP_ENTRIES:
                    cap_reason = (
                        f"the run folder exceeded its cap ({used / 2**20:.0f} MiB, {entries} entries; "
                        f"limits {folder_cap_mb} MiB, {FOLDER_CAP_ENTRIES} entries); process group killed"
                    )
            if now >= deadline or cap_reason:
                timed_out = cap_reason is None
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                _, status, ru = os.wait4(proc.pid, 0)
                rusage = ru
                rc = os.waitstatus_to_exitcode(status)
                break
            time.sleep(delay)
            delay = min(0.2, delay * 1.5)
        proc.returncode = rc
        # behind bwrap the PID namespace is gone with its init; without it, kill what is left of the group and
        # of the run's cgroups (a child that left the group with setsid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        wall.kill_cgroup_members(list(cgroups))
    return rc, rusage, timed_out, cap_reason


STATUS_MAX_BYTES = 16 << 20  # the status channel is read up to this much (a flood of events is not our problem)
TAMPER_EXIT = 86  # sandbox.barrier: the program closed or replaced the status channel, then broke a rule


def _parse_status(data: bytes) -> list[dict]:
    out = []
    for ln in data.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            d = json.loads(ln)
            if isinstance(d, dict):
                out.append(d)
    return out


def _read_status(path: Path) -> list[dict]:
    out = []
    try:
        for ln in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                d = json.loads(ln)
                if isinstance(d, dict):
                    out.append(d)
    except OSError:
        pass
    return out


def _clear_outputs(out_dir: Path) -> None:
    """A re-run starts clean: stale outputs (and any link planted at their names) are removed, never followed."""
    for name in (
        "frames",
        "sandbox",
        "scene.blend",
        "scene.blend1",
        "preview.png",
        "render.mp4",
        "run.json",
        "run.log",
        ".scene.py.tmp",
        "audit_samples.npz",
    ):
        p = out_dir / name
        with contextlib.suppress(FileNotFoundError):
            if p.is_symlink() or not p.is_dir():
                p.unlink()
            else:
                shutil.rmtree(p)


def _fresh_dir(d: Path) -> None:
    """An empty real folder at `d` (a planted link or file there is removed, never followed)."""
    if d.is_symlink() or d.is_file():
        d.unlink()
    elif d.is_dir():
        shutil.rmtree(d, ignore_errors=True)
    d.mkdir()


def run_program(
    program: Path,
    out_dir: Path,
    timeout_s: float = 1800,
    memory_mb: int | None = 8192,
    mode: str = "full",
    preview_frame: int | None = None,
    expected_frames: int = 240,
    blender_binary: str | None = None,
    *,
    isolation: str = "bwrap",
    barrier: bool = True,
    folder_cap_mb: int | None = FOLDER_CAP_MB,
) -> RunRecord:
    """Run `program` in isolation; never raises for the program's faults, and always leaves a record.

    The child runs behind the operating-system wall of `sandbox.isolation` (`isolation="bwrap"`, the default;
    "none" is the explicit `--unsafe-no-isolation`), with `OUT/sandbox/` as its working folder and its only
    writable place. A host where bwrap cannot run gets status `failed` with the reason, never a weaker run.
    `barrier=False` disables the in-process audit hook (tests prove the wall holds without it).

    Whatever goes wrong on the trusted side after the arguments are checked (a name the program chose that a
    serializer cannot hold, a full disk, a bug), the run ends as a recorded `failed` with the reason: a run folder
    without a record would otherwise be taken for a plain folder by the tools that read it."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    t0 = time.monotonic()
    out = Path(out_dir).resolve()
    try:
        return _run_program(
            program,
            out_dir,
            timeout_s,
            memory_mb,
            mode,
            preview_frame,
            expected_frames,
            blender_binary,
            isolation=isolation,
            barrier=barrier,
            folder_cap_mb=folder_cap_mb,
        )
    except Exception as e:  # noqa: BLE001 - the runner's own fault: recorded, never raised
        rec = RunRecord(
            status="failed",
            mode=mode,
            timeout_s=timeout_s,
            memory_mb=memory_mb,
            expected_frames=expected_frames,
            preview_frame=preview_frame,
            reason=f"the runner failed while handling this run: {type(e).__name__}: {artifacts.safe_name(str(e))}",
        )
        with contextlib.suppress(OSError):
            out.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(out / artifacts.SCRATCH, ignore_errors=True)  # nothing unvalidated is left to read
        return _finish(rec, out, t0)


def _run_program(
    program: Path,
    out_dir: Path,
    timeout_s: float = 1800,
    memory_mb: int | None = 8192,
    mode: str = "full",
    preview_frame: int | None = None,
    expected_frames: int = 240,
    blender_binary: str | None = None,
    *,
    isolation: str = "bwrap",
    barrier: bool = True,
    folder_cap_mb: int | None = FOLDER_CAP_MB,
) -> RunRecord:
    """The body of `run_program` (which catches what this raises)."""
    program = Path(program)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    rec = RunRecord(
        status="failed",
        mode=mode,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        expected_frames=expected_frames,
        preview_frame=preview_frame,
        started_at=started,
    )
    try:
        src_bytes = program.read_bytes()
    except OSError as e:
        rec.reason = f"cannot read program {program}: {e}"
        return _finish(rec, out_dir, t0)
    rec.program_sha256 = hashlib.sha256(src_bytes).hexdigest()
    _clear_outputs(out_dir)
    # a provisional record first: if this process dies before the end (killed, a crash in the trusted code), the
    # folder still says `failed` instead of looking like a folder of loose files
    _write_record(rec, out_dir, provisional=True)
    blender = configured_blender(blender_binary)
    rec.blender_binary = blender
    _package_blender_version(rec)
    copy = out_dir / "scene.py"
    if program.resolve() != copy.resolve():
        atomic.write_bytes(copy, src_bytes)  # O_EXCL | O_NOFOLLOW temp: a planted link is never written through
    if _refused_by_policy(rec, out_dir, program, src_bytes):
        return _finish(rec, out_dir, t0)

    try:
        available = wall.require(isolation)
    except (wall.IsolationUnavailable, ValueError) as e:
        rec.isolation = isolation
        rec.reason = str(e)
        (out_dir / "run.log").write_text(f"not run: {e}\n")
        return _finish(rec, out_dir, t0)
    rec.isolation = wall.describe(isolation, available)
    scratch = out_dir / "sandbox"  # the child's working folder and its only writable place
    child = _launch(rec, out_dir, scratch, copy, blender, available, mode=mode, preview_frame=preview_frame,
                    barrier=barrier, isolation=isolation, timeout_s=timeout_s, memory_mb=memory_mb,
                    folder_cap_mb=folder_cap_mb)
    # the child and its whole group are gone: validate what it left, from the trusted side (SPEC §3)
    missing, problems, outputs, acc = verify_outputs(scratch, out_dir, mode, expected_frames)
    rec.missing, rec.problems, rec.outputs = missing, problems, outputs
    rec.artifacts, rec.ignored = acc.artifacts, acc.ignored
    rec.validation = {"seconds": acc.seconds, "limits": artifacts.limits(), "headers": acc.info}
    post = [{"rule": b["rule"], "detail": b["detail"], "audit_event": "post-run"} for b in acc.breaches]
    ended = any(ev.get("event") == "end" for ev in child.events)
    if (
        not (child.breaches or post or child.cap_reason or child.timed_out or rec.reason or child.rc != 0 or missing
             or problems)
        and "scene.blend" in acc.artifacts
    ):
        post += _media_audit(rec, out_dir)
    rec.violations += [
        {"rule": b["rule"], "line": None, "message": b["detail"], "stage": "runtime", "audit_event": "post-run"}
        for b in post
    ]
    _settle(rec, child, post, bool(missing or problems), acc.reason, ended, timeout_s)
    shutil.rmtree(scratch, ignore_errors=True)  # what was not accepted is never read; the accepted files are in OUT/
    return _finish(rec, out_dir, t0)



@dataclasses.dataclass
class _Child:
    """What the runner learnt from the child while it ran (the outputs are validated after)."""

    rc: int | None
    timed_out: bool
    cap_reason: str | None
    events: list[dict]
    breaches: list[dict]


def _launch(
    rec: RunRecord,
    out_dir: Path,
    scratch: Path,
    copy: Path,
    blender: str | None,
    available: Any,
    *,
    mode: str,
    preview_frame: int | None,
    barrier: bool,
    isolation: str,
    timeout_s: float,
    memory_mb: int | None,
    folder_cap_mb: int | None,
) -> _Child:
    """Start the bootstrap behind the wall, drain its status channel while it runs, and read what it reported."""
    from physcodegym.llm.factory import freeze_config

    freeze_config()  # this process never re-reads a provider config a program might have written
    _fresh_dir(scratch)
    # status channel: a socket pair, drained while the child runs. A socket cannot be re-opened through
    # /proc/self/fd (ENXIO), so the program cannot truncate or read back what the barrier already reported.
    import socket

    status_parent, status_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    status_parent.setblocking(False)
    fd = status_child.fileno()
    status_buf = bytearray()

    def drain() -> None:
        while len(status_buf) < STATUS_MAX_BYTES:
            try:
                chunk = status_parent.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            if not chunk:
                return
            status_buf.extend(chunk)

    # lifeline: the child's watcher (a forked process) holds the read end; when this process dies, even by SIGKILL,
    # it reads EOF and ends the child, and with it its PID namespace (besides PR_SET_PDEATHSIG and bwrap's
    # --die-with-parent: a parent-death signal follows the thread that started the child, not the process)
    life_r, life_w = os.pipe()
    cmd = _child_argv(scratch, copy, blender, fd, life_r, mode, preview_frame, barrier)
    env = wall.child_env(scratch, isolation)
    log_path = out_dir / "run.log"
    rc: int | None = None
    rusage = None
    timed_out = False
    cap_reason = None
    cgroups: list[Path] = []
    try:
        if isolation == "bwrap":
            cmd = wall.bwrap_argv(
                cmd,
                scratch=scratch,
                readonly_files=[copy],
                bwrap=available.bwrap if available else None,
                blender_binary=blender,
            )
        cgroups = wall.make_cgroups(f"{os.getpid()}-{time.monotonic_ns()}", memory_mb)
        rec.isolation += "; " + wall.describe_cgroups(cgroups)
        rc, rusage, timed_out, cap_reason = _spawn(
            cmd,
            cwd=scratch,
            env=env,
            log_path=log_path,
            fd=(fd, life_r),
            timeout_s=timeout_s,
            memory_mb=memory_mb,
            watch=[scratch, log_path],
            folder_cap_mb=folder_cap_mb,
            cgroups=cgroups,
            drain=drain,
        )
    except Exception as e:  # the runner itself failed to launch: record, do not raise
        rec.reason = f"could not launch the sandbox: {type(e).__name__}: {e}"
    finally:
        status_child.close()
        for f in (life_r, life_w):
            with contextlib.suppress(OSError):
                os.close(f)
        wall.remove_cgroups(cgroups)
    drain()  # every writer is gone: what is left in the socket, then EOF
    status_parent.close()
    events = _parse_status(bytes(status_buf))
    rec.returncode = rc
    breaches = _take_events(rec, events, rusage)
    rec.log_tail = _log_tail(log_path)
    return _Child(rc, timed_out, cap_reason, events, breaches)


def _take_events(rec: RunRecord, events: list[dict], rusage: Any) -> list[dict]:
    """Fill the record from the child's status events (version, peak memory, barrier refusals); the refusals."""
    if rusage is not None:
        rec.peak_memory_mb = round(rusage.ru_maxrss / 1024.0, 1)
    for ev in events:
        if ev.get("event") == "start":
            if rec.blender_version_source != "child":  # the first start event: the bootstrap's, before the program
                rec.bpy_version = ev.get("bpy_version") if isinstance(ev.get("bpy_version"), str) else None
                rec.blender_version, rec.blender_version_source = rec.bpy_version, "child"
        elif ev.get("event") == "end" and isinstance(ev.get("peak_rss_mb"), int | float):
            # behind bwrap the waited process is bwrap itself; the child reports its own peak (informative only)
            rec.peak_memory_mb = max(rec.peak_memory_mb or 0.0, float(ev["peak_rss_mb"]))
    breaches = [ev for ev in events if ev.get("event") == "breach"]
    rec.violations = [
        {
            "rule": b.get("rule"),
            "line": None,
            "message": b.get("detail"),
            "stage": "runtime",
            "audit_event": b.get("audit_event"),
        }
        for b in breaches
    ]
    return breaches


def _child_argv(scratch: Path, copy: Path, blender: str | None, fd: int, life_r: int, mode: str,
                preview_frame: int | None, barrier: bool) -> list[str]:
    """The bootstrap's command line (before the wall wraps it)."""
    # the same argv length in every run and mode (the bootstrap maps the four-letter mode code back)
    args = [
        "--workdir",
        str(scratch),
        "--program",
        str(copy),
        "--status-fd",
        _fixed_width(fd),
        "--mode",
        MODE_CODES[mode],
        "--lifeline-fd",
        _fixed_width(life_r),
    ]
    if preview_frame is not None:
        args += ["--preview-frame", str(int(preview_frame))]
    if not barrier:
        args.append("--no-barrier")
    if blender:
        cmd = [blender, "-b", "--factory-startup", "--python-exit-code", "1", "--python", str(BOOTSTRAP), "--", *args]
    else:
        # -S: no site module, so no .pth file runs in the child (an editable install's finder holds this checkout's
        # path, which would move the child's memory layout); the bootstrap puts the package folders on sys.path
        site_args = [x for d in _site_dirs() for x in ("--site-dir", d)]
        cmd = [sys.executable, "-I", "-S", str(BOOTSTRAP), *args, *site_args]
    return cmd


def _refused_by_policy(rec: RunRecord, out_dir: Path, program: Path, src_bytes: bytes) -> bool:
    """The static policy check (SPEC §3): on a violation the record says `policy` and the program never runs."""
    src = src_bytes.decode("utf-8", "replace")
    report = check_source(src, str(program))
    if not report.ok:
        rec.status = "policy"
        rec.violations = [v.to_dict() for v in report.violations]
        first = report.violations[0]
        rec.reason = (
            f"{len(report.violations)} policy violation(s); first: line {first.line} [{first.rule}] {first.message}"
        )
        (out_dir / "run.log").write_text(
            "static policy check failed; the program was not run\n" + report.to_json() + "\n"
        )
        return True
    return False


def _settle(rec: RunRecord, child: _Child, post: list[dict], broken_outputs: bool, output_reason: str | None,
            ended: bool, timeout_s: float) -> None:
    """The run's status and reason, first cause first: a barrier refusal, a forbidden load, a cap, the clock, the
    runner's own fault, the exit code, a silenced bootstrap, outputs that break the contract; else ok."""
    breaches, cap_reason, timed_out, rc = child.breaches, child.cap_reason, child.timed_out, child.rc
    if breaches:
        rec.status = "policy"
        rec.reason = (
            f"run-time barrier refused {len(breaches)} action(s); first: [{breaches[0].get('rule')}] "
            f"{breaches[0].get('detail')}"
        )
    elif post:
        rec.status = "policy"
        rec.reason = (
            f"post-run audit of scene.blend found {len(post)} load(s) the policy forbids; first: "
            f"[{post[0]['rule']}] {post[0]['detail']}"
        )
    elif cap_reason:
        rec.status = "failed"
        rec.reason = cap_reason
    elif timed_out:
        rec.status = "timeout"
        rec.reason = f"wall-clock limit of {timeout_s:g} s reached; process group killed"
    elif rec.reason:
        rec.status = "failed"
    elif rc != 0:
        rec.status = "failed"
        if rc is not None and rc < 0:
            rec.reason = f"killed by signal {-rc}" + (
                " (memory limit?)" if -rc in (signal.SIGKILL, signal.SIGSEGV) else ""
            )
        elif rc == TAMPER_EXIT and not ended:
            rec.reason = (
                f"program exited with status {rc}: it closed or replaced the sandbox's status channel and then "
                "broke a sandbox rule (the run-time barrier ended it)"
            )
        else:
            rec.reason = f"program exited with status {rc}" + (
                "" if ended else " before the end of the bootstrap (crash)"
            )
    elif not ended:
        rec.status = "failed"
        rec.reason = (
            "the program ended the interpreter itself (os._exit?) or silenced the sandbox's status channel: "
            "the bootstrap never reported its end"
        )
    elif broken_outputs or rec.validation.get("media_audit_error"):
        rec.status = "invalid"
        rec.reason = output_reason or rec.validation["media_audit_error"]
    else:
        rec.status = "ok"



def _media_audit(rec: RunRecord, out_dir: Path) -> list[dict]:
    """The post-run media audit in a separate trusted process (Auto Run off, time and memory limit)."""
    from physcodegym.sandbox.media_audit import run_trusted

    doc = run_trusted(str(out_dir / "scene.blend"), str(out_dir),
                      isolation="none" if (rec.isolation or "").startswith("none") else "bwrap")
    rec.validation["media_audit_s"] = doc.get("seconds")
    if not doc.get("ok"):
        rec.validation["media_audit_error"] = f"scene.blend cannot be opened by the trusted audit: {doc.get('error')}"
        return []
    if doc.get("refusals"):  # code stored in the scene, or a path out of the run folder: invalid (docs/THREAT_MODEL.md)
        r = doc["refusals"][0]
        rec.validation["media_audit_error"] = (f"scene.blend refused ({len(doc['refusals'])} problem(s)); first: "
                                               f"[{r.get('rule')}] {r.get('detail')}")
    return [{"rule": b.get("rule"), "detail": b.get("detail")} for b in doc.get("breaches") or []][:50]


def _package_blender_version(rec: RunRecord) -> None:
    """Until the child reports the Blender it runs: the installed bpy package's version (no import, no Blender
    started), or nothing for a Blender binary."""
    if rec.blender_binary or rec.blender_version_source == "child":
        return
    from importlib import metadata

    with contextlib.suppress(metadata.PackageNotFoundError, ValueError):
        rec.blender_version, rec.blender_version_source = metadata.version("bpy"), "bpy package"


def _scrub(value: Any) -> Any:
    """A JSON-safe copy: strings that cannot be encoded as UTF-8 (surrogate escapes of a non-UTF-8 name) become
    their escaped repr (sandbox.artifacts.safe_name); containers are walked; other values are kept."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return repr(value.encode("utf-8", "surrogateescape"))
    if isinstance(value, dict):
        return {_scrub(str(k)): _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


def _record_json(rec: RunRecord) -> str:
    """run.json text; never fails on a value the program influenced (names, log lines, violation details)."""
    try:
        return rec.model_dump_json(indent=2)
    except Exception:  # noqa: BLE001 - e.g. PydanticSerializationError on a surrogate-escaped name
        return json.dumps(_scrub(rec.model_dump(mode="python")), indent=2, default=str)


def _write_record(rec: RunRecord, out_dir: Path, provisional: bool = False) -> None:
    """Write run.json; a provisional one says the runner did not finish (replaced by the final one)."""
    if provisional:
        doc = rec.model_copy(update={"status": "failed", "reason": "the runner did not finish this run"})
        atomic.write_text(out_dir / "run.json", _record_json(doc))
    else:
        atomic.write_text(out_dir / "run.json", _record_json(rec))


def _finish(rec: RunRecord, out_dir: Path, t0: float) -> RunRecord:
    rec.seconds = round(time.monotonic() - t0, 3)
    try:
        _write_record(rec, out_dir)
    except OSError as e:  # never silent: the caller gets the record, the folder has none (so it is never scored)
        rec.problems.append(f"run.json could not be written: {e}")
        if rec.status == "ok":
            rec.status, rec.reason = "invalid", f"run.json could not be written: {e}"
        print(f"physcodegym runner: run.json could not be written in {out_dir}: {e}", file=sys.stderr)
    return rec


def load_record(run_dir: Path) -> RunRecord | None:
    """The runner's record of a run folder, read without following links (sandbox.artifacts.read_record); None if
    unusable."""
    try:
        return RunRecord.model_validate(artifacts.read_record(Path(run_dir)))
    except Exception:
        return None
