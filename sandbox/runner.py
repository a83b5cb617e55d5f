"""Isolated execution of a scene program (SPEC §3, issue 2 items 6-7).

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
import hashlib
import json
import os
import shutil
import signal
import struct
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from physcodegym.core import atomic
from physcodegym.sandbox.policy import check_source
from pydantic import BaseModel, Field

BOOTSTRAP = Path(__file__).resolve().parent / "bootstrap.py"
WIDTH, HEIGHT = 640, 360
MODES = ("full", "bake_only", "preview")
LOG_TAIL_LINES = 40


class RunRecord(BaseModel):
    """What happened to one execution; also `run.json` in the run folder."""

    status: str  # ok | failed | timeout | policy
    mode: str = "full"
    seconds: float = 0.0
    peak_memory_mb: float | None = None
    returncode: int | None = None
    reason: str | None = None  # one line: why it is not ok
    log_tail: str = ""
    missing: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)  # present but wrong (size, extra frames)
    violations: list[dict] = Field(default_factory=list)  # static ({rule,line,message}) and run-time ({rule,detail,...})
    outputs: dict[str, Any] = Field(default_factory=dict)
    program_sha256: str | None = None
    bpy_version: str | None = None
    blender_binary: str | None = None
    timeout_s: float | None = None
    memory_mb: int | None = None
    expected_frames: int = 240
    preview_frame: int | None = None
    started_at: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def configured_blender(explicit: str | None = None) -> str | None:
    """Blender binary to use: the argument, else $PHYSCODEGYM_BLENDER, else None (the bpy module)."""
    b = explicit or os.environ.get("PHYSCODEGYM_BLENDER") or None
    return b


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


def _video_info(path: Path) -> dict | None:
    try:
        import cv2
    except ImportError:
        return None
    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            return None
        return {
            "frames": int(cap.get(cv2.CAP_PROP_FRAME_COUNT)),
            "width": int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
            "height": int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
            "fps": float(cap.get(cv2.CAP_PROP_FPS)),
        }
    finally:
        cap.release()


def verify_outputs(out_dir: Path, mode: str, expected_frames: int) -> tuple[list[str], list[str], dict]:
    """Check the contract outputs; returns (missing, problems, outputs)."""
    missing: list[str] = []
    problems: list[str] = []
    outputs: dict[str, Any] = {}
    blend = out_dir / "scene.blend"
    outputs["blend"] = str(blend) if blend.is_file() else None
    if mode in ("full", "bake_only") and not blend.is_file():
        missing.append("scene.blend")
    if mode == "preview":
        pv = out_dir / "preview.png"
        size = png_size(pv) if pv.is_file() else None
        outputs["preview"] = str(pv) if pv.is_file() else None
        if not pv.is_file():
            missing.append("preview.png")
        elif size != (WIDTH, HEIGHT):
            problems.append(f"preview.png is {size[0]}x{size[1]} (expected {WIDTH}x{HEIGHT})" if size else "preview.png is not a PNG")
    frames_dir = out_dir / "frames"
    present = sorted(p.name for p in frames_dir.glob("*.png")) if frames_dir.is_dir() else []
    outputs["frames_dir"] = str(frames_dir) if present else None
    outputs["frame_count"] = len(present)
    outputs["frames_complete"] = False
    if mode != "full":
        return missing, problems, outputs
    video = out_dir / "render.mp4"
    if not present and video.is_file():
        info = _video_info(video)
        outputs["video"] = str(video)
        outputs["video_info"] = info
        if info is None:
            problems.append("render.mp4 cannot be decoded")
        else:
            if info["frames"] != expected_frames:
                problems.append(f"render.mp4 has {info['frames']} frames (expected {expected_frames})")
            if (info["width"], info["height"]) != (WIDTH, HEIGHT):
                problems.append(f"render.mp4 is {info['width']}x{info['height']} (expected {WIDTH}x{HEIGHT})")
            outputs["frames_complete"] = not problems
        return missing, problems, outputs
    want = [f"{i:04d}.png" for i in range(1, expected_frames + 1)]
    have = set(present)
    missing.extend(f"frames/{n}" for n in want if n not in have)
    extra = sorted(have - set(want))
    if extra:
        problems.append(f"{len(extra)} frame(s) outside 0001..{expected_frames:04d}: {', '.join(extra[:5])}{' …' if len(extra) > 5 else ''}")
    bad = []
    for n in want:
        if n in have:
            size = png_size(frames_dir / n)
            if size != (WIDTH, HEIGHT):
                bad.append((n, size))
    if bad:
        n, size = bad[0]
        what = f"{size[0]}x{size[1]}" if size else "not a PNG"
        problems.append(f"{len(bad)} frame(s) not {WIDTH}x{HEIGHT} PNG (first: frames/{n} is {what})")
    outputs["frames_complete"] = not any(m.startswith("frames/") for m in missing) and not bad and not extra
    return missing, problems, outputs


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


def _preexec(memory_mb: int | None):
    libc = None
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)

    def fn() -> None:
        if memory_mb:
            import resource

            lim = int(memory_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        if libc is not None:
            with contextlib.suppress(Exception):
                libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the runner (a killed batch leaves no orphans)

    return fn


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
    """A re-run starts clean: stale frames from an earlier run must not count."""
    for name in ("frames",):
        shutil.rmtree(out_dir / name, ignore_errors=True)
    for name in ("scene.blend", "scene.blend1", "preview.png", "render.mp4", "run.json", "run.log"):
        with contextlib.suppress(FileNotFoundError):
            (out_dir / name).unlink()


def run_program(
    program: Path,
    out_dir: Path,
    timeout_s: float = 1800,
    memory_mb: int | None = 8192,
    mode: str = "full",
    preview_frame: int | None = None,
    expected_frames: int = 240,
    blender_binary: str | None = None,
) -> RunRecord:
    """Run `program` in isolation with `out_dir` as its working folder; never raises for the program's faults."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    program = Path(program)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    rec = RunRecord(status="failed", mode=mode, timeout_s=timeout_s, memory_mb=memory_mb, expected_frames=expected_frames,
                    preview_frame=preview_frame, started_at=started)
    try:
        src_bytes = program.read_bytes()
    except OSError as e:
        rec.reason = f"cannot read program {program}: {e}"
        return _finish(rec, out_dir, t0)
    rec.program_sha256 = hashlib.sha256(src_bytes).hexdigest()
    _clear_outputs(out_dir)
    copy = out_dir / "scene.py"
    if program.resolve() != copy.resolve():
        tmp = copy.with_name(".scene.py.tmp")
        tmp.write_bytes(src_bytes)
        os.replace(tmp, copy)
    src = src_bytes.decode("utf-8", "replace")
    report = check_source(src, str(program))
    if not report.ok:
        rec.status = "policy"
        rec.violations = [v.to_dict() for v in report.violations]
        first = report.violations[0]
        rec.reason = f"{len(report.violations)} policy violation(s); first: line {first.line} [{first.rule}] {first.message}"
        (out_dir / "run.log").write_text("static policy check failed; the program was not run\n" + report.to_json() + "\n")
        return _finish(rec, out_dir, t0)

    blender = configured_blender(blender_binary)
    rec.blender_binary = blender
    tmpdir = out_dir / ".tmp"
    tmpdir.mkdir(exist_ok=True)
    status_fd, status_path = tempfile.mkstemp(prefix="pcg_status_", suffix=".jsonl")
    os.close(status_fd)
    status_file = Path(status_path)
    fd = os.open(status_path, os.O_WRONLY | os.O_APPEND)
    args = ["--workdir", str(out_dir), "--program", str(copy), "--status-fd", str(fd), "--mode", mode]
    if preview_frame is not None:
        args += ["--preview-frame", str(int(preview_frame))]
    if blender:
        cmd = [blender, "-b", "--factory-startup", "--python-exit-code", "1", "--python", str(BOOTSTRAP), "--", *args]
    else:
        cmd = [sys.executable, "-I", str(BOOTSTRAP), *args]
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME", "PHYSCODEGYM_BLENDER")}
    env.update({"TMPDIR": str(tmpdir), "TEMP": str(tmpdir), "TMP": str(tmpdir), "PYTHONDONTWRITEBYTECODE": "1",
                "BLENDER_USER_RESOURCES": str(tmpdir / "blender_user"), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")})
    log_path = out_dir / "run.log"
    timed_out = False
    rusage = None
    rc: int | None = None
    import subprocess

    try:
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, cwd=str(out_dir), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True, pass_fds=(fd,), preexec_fn=_preexec(memory_mb))
            deadline = time.monotonic() + float(timeout_s)
            delay = 0.02
            while True:
                pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    rusage = ru
                    rc = os.waitstatus_to_exitcode(status)
                    proc.returncode = rc
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    _, status, ru = os.wait4(proc.pid, 0)
                    rusage = ru
                    rc = os.waitstatus_to_exitcode(status)
                    proc.returncode = rc
                    break
                time.sleep(delay)
                delay = min(0.2, delay * 1.5)
            # a program cannot leave children behind (the barrier refuses them), but make sure
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
    except Exception as e:  # the runner itself failed to launch: record, do not raise
        rec.reason = f"could not launch the sandbox: {type(e).__name__}: {e}"
    finally:
        os.close(fd)
    events = _read_status(status_file)
    with contextlib.suppress(OSError):
        status_file.unlink()
    shutil.rmtree(tmpdir, ignore_errors=True)
    rec.returncode = rc
    if rusage is not None:
        rec.peak_memory_mb = round(rusage.ru_maxrss / 1024.0, 1)
    for ev in events:
        if ev.get("event") == "start":
            rec.bpy_version = ev.get("bpy_version")
    breaches = [ev for ev in events if ev.get("event") == "breach"]
    rec.violations = [{"rule": b.get("rule"), "line": None, "message": b.get("detail"), "stage": "runtime",
                       "audit_event": b.get("audit_event")} for b in breaches]
    rec.log_tail = _log_tail(log_path)
    missing, problems, outputs = verify_outputs(out_dir, mode, expected_frames)
    rec.missing, rec.problems, rec.outputs = missing, problems, outputs
    ended = any(ev.get("event") == "end" for ev in events)
    if breaches:
        rec.status = "policy"
        rec.reason = f"run-time barrier refused {len(breaches)} action(s); first: [{breaches[0].get('rule')}] {breaches[0].get('detail')}"
    elif timed_out:
        rec.status = "timeout"
        rec.reason = f"wall-clock limit of {timeout_s:g} s reached; process group killed"
    elif rec.reason:
        rec.status = "failed"
    elif rc != 0:
        rec.status = "failed"
        if rc is not None and rc < 0:
            rec.reason = f"killed by signal {-rc}" + (" (memory limit?)" if -rc in (signal.SIGKILL, signal.SIGSEGV) else "")
        else:
            rec.reason = f"program exited with status {rc}" + ("" if ended else " before the end of the bootstrap (crash)")
    elif missing or problems:
        rec.status = "failed"
        bits = []
        if missing:
            bits.append(f"{len(missing)} missing output(s) (first: {missing[0]})")
        bits.extend(problems)
        rec.reason = "; ".join(bits)
    else:
        rec.status = "ok"
    return _finish(rec, out_dir, t0)


def _finish(rec: RunRecord, out_dir: Path, t0: float) -> RunRecord:
    rec.seconds = round(time.monotonic() - t0, 3)
    try:
        atomic.write_text(out_dir / "run.json", rec.model_dump_json(indent=2))
    except OSError:
        pass
    return rec


def load_record(run_dir: Path) -> RunRecord | None:
    p = Path(run_dir) / "run.json"
    if not p.is_file():
        return None
    try:
        return RunRecord.model_validate_json(p.read_text(encoding="utf-8"))
    except Exception:
        return None
