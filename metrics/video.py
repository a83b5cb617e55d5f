"""Video IO for scoring (no bpy): decode a reference or a candidate once, to 640x360 RGB uint8.

Every metric works on the same decoded arrays, so a video is read exactly once per scoring run.
Downscaling uses area interpolation (the right filter for shrinking; bilinear aliases).

`load_video` decodes trusted inputs (a task's reference). A candidate is never decoded here from a path the
program left: `evaluator.scoring` reads the run's validated artifact set (sandbox.artifacts) and hands over
PNG bytes already checked against their recorded hash and header (`decode_png_blobs`), or a verified copy
of the video whose header was checked (`decode_video_limited`, in a child with a time and memory limit).
Every decode loop is bounded by the task's frame count, never by a count read from the file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np
from physcodegym.core.errors import InputError
from physcodegym.tasks.schema import FPS, FRAMES, SCORE_HEIGHT, SCORE_WIDTH

VIDEO_SUFFIXES = {".mp4", ".mov", ".mkv", ".avi", ".webm", ".m4v"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg"}
FPS_TOLERANCE = 0.01
MAX_DECODE_FRAMES = 10 * FRAMES  # a trusted video of unknown length is still read only this far
DECODE_TIMEOUT_S = 300.0
DECODE_MEMORY_MB = 3072


class NoArtifact(Exception):
    """A run folder holds no valid artifact (failed run, missing or incomplete frames): it scores 0."""


def to_score_size(frame: np.ndarray) -> np.ndarray:
    """Resize one RGB frame to 640x360 (area when shrinking, bilinear when enlarging)."""
    h, w = frame.shape[:2]
    if (w, h) == (SCORE_WIDTH, SCORE_HEIGHT):
        return frame
    interp = cv2.INTER_AREA if w >= SCORE_WIDTH and h >= SCORE_HEIGHT else cv2.INTER_LINEAR
    return cv2.resize(frame, (SCORE_WIDTH, SCORE_HEIGHT), interpolation=interp)


def _check_count(n: int, expected: int | None, path: Path) -> None:
    if expected is not None and n != expected:
        raise InputError(
            f"expected {expected} frames ({expected / FPS:g} s at {FPS} fps), decoded {n}",
            file=str(path),
            field="frames",
        )


def _read_video_file(path: Path, expected_frames: int | None) -> np.ndarray:
    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            raise InputError("video cannot be opened (unreadable or not a video)", file=str(path))
        fps = float(cap.get(cv2.CAP_PROP_FPS))
        if abs(fps - FPS) > FPS_TOLERANCE:
            raise InputError(f"video must be {FPS} fps, measured {fps:.3f} fps", file=str(path), field="fps")
        bound = expected_frames if expected_frames is not None else MAX_DECODE_FRAMES
        out = np.empty((max(bound, 1), SCORE_HEIGHT, SCORE_WIDTH, 3), np.uint8)
        n = 0
        while n <= bound:  # one past the bound tells "too long" without reading the rest
            ok, bgr = cap.read()
            if not ok:
                break
            if n >= out.shape[0]:
                n += 1
                break
            out[n] = to_score_size(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
            n += 1
    finally:
        cap.release()
    if n == 0:
        raise InputError("video has no decodable frames", file=str(path))
    if n > bound:
        raise InputError(
            f"video holds more than {bound} frames" + (f" (expected {expected_frames})" if expected_frames else ""),
            file=str(path),
            field="frames",
        )
    _check_count(n, expected_frames, path)
    return out[:n]


def _frame_files(folder: Path) -> list[Path]:
    files = [p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and re.fullmatch(r"\D*\d+", p.stem)]
    return sorted(files, key=lambda p: int(re.search(r"(\d+)$", p.stem).group(1)))


def _read_image_sequence(folder: Path, expected_frames: int | None) -> np.ndarray:
    files = _frame_files(folder)
    if not files:
        raise InputError("folder holds no numbered PNG/JPEG frames", file=str(folder))
    _check_count(len(files), expected_frames, folder)
    out = np.empty((len(files), SCORE_HEIGHT, SCORE_WIDTH, 3), np.uint8)

    def read(i: int) -> None:
        bgr = cv2.imread(str(files[i]), cv2.IMREAD_COLOR)
        if bgr is None:
            raise InputError("frame image cannot be read", file=str(files[i]))
        out[i] = to_score_size(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))

    # PNG decoding releases the GIL: a small thread pool roughly halves the wall time on two cores
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        for fut in [pool.submit(read, i) for i in range(len(files))]:
            fut.result()
    return out


def load_video(path: Path, expected_frames: int = FRAMES) -> np.ndarray:
    """Decode a video file or a folder of numbered frames to (F, 360, 640, 3) uint8 RGB.

    Raises InputError naming the file when it is missing, unreadable, not 30 fps or not `expected_frames` long
    (pass expected_frames=None to accept any length).
    """
    path = Path(path)
    if not path.exists():
        raise InputError("video not found", file=str(path))
    if path.is_dir():
        return _read_image_sequence(path, expected_frames)
    if path.suffix.lower() in IMAGE_SUFFIXES:
        raise InputError("a single image is not a video; pass its folder of numbered frames", file=str(path))
    return _read_video_file(path, expected_frames)


def is_run_dir(path: Path) -> bool:
    """A run folder (SPEC §3) as opposed to a bare folder of frames (links are not followed to decide)."""
    return any(
        os.path.lexists(path / n)
        for n in ("run.json", "run.log", "frames", "render.mp4", "scene.blend", "scene.py", "sandbox")
    )


def decode_png_blobs(blobs: Sequence[bytes], names: Sequence[str] | None = None) -> np.ndarray:
    """(F, 360, 640, 3) RGB from PNG bytes whose IHDR was checked to be 640x360; ValueError naming a bad frame."""
    out = np.empty((len(blobs), SCORE_HEIGHT, SCORE_WIDTH, 3), np.uint8)

    def dec(i: int) -> None:
        bgr = cv2.imdecode(np.frombuffer(blobs[i], np.uint8), cv2.IMREAD_COLOR)
        name = names[i] if names else f"frame {i + 1}"
        if bgr is None:
            raise ValueError(f"{name} cannot be decoded as a PNG")
        if bgr.shape[:2] != (SCORE_HEIGHT, SCORE_WIDTH):
            raise ValueError(f"{name} decodes to {bgr.shape[1]}x{bgr.shape[0]} (expected {SCORE_WIDTH}x{SCORE_HEIGHT})")
        cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB, dst=out[i])

    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        for fut in [pool.submit(dec, i) for i in range(len(blobs))]:
            fut.result()
    return out


def decode_video_limited(
    path: Path, expected_frames: int, timeout_s: float = DECODE_TIMEOUT_S, memory_mb: int = DECODE_MEMORY_MB
) -> np.ndarray:
    """Decode a header-checked video in a child with a time and memory limit; ValueError with the reason."""
    import tempfile

    from physcodegym.core import launch
    from physcodegym.core.limits import run_limited

    with tempfile.TemporaryDirectory(prefix="pcg_decode_") as tmp:
        out = Path(tmp) / "frames.npy"
        cmd = launch.python_argv(
            "physcodegym.metrics.decode_worker", [str(path), str(out), "--frames", str(int(expected_frames))]
        )
        res = run_limited(cmd, timeout_s=timeout_s, memory_mb=memory_mb, cwd=tmp)
        if res.killed_reason:
            raise ValueError(f"video decode stopped: {res.killed_reason}")
        if res.returncode != 0:
            msg = None
            for ln in res.stdout.splitlines()[::-1]:
                try:
                    msg = json.loads(ln).get("error")
                    break
                except (ValueError, AttributeError):
                    continue
            raise ValueError(msg or f"video decode exited {res.returncode}: {res.stderr.strip()[-300:]}")
        arr = np.load(out, mmap_mode=None, allow_pickle=False)
    if arr.shape != (expected_frames, SCORE_HEIGHT, SCORE_WIDTH, 3) or arr.dtype != np.uint8:
        raise ValueError(
            f"decoded video has shape {arr.shape} (expected {expected_frames}x{SCORE_HEIGHT}x{SCORE_WIDTH}x3)"
        )
    return arr


def frame_index(t_s: float, n_frames: int, fps: int = FPS) -> int:
    """0-based index of the frame shown at time t (frame i covers [i/fps, (i+1)/fps))."""
    return int(min(n_frames - 1, max(0, round(t_s * fps))))


def sample_frames(frames: np.ndarray, times_s: Sequence[float]) -> list[np.ndarray]:
    """Frames at the given times in seconds (clamped to the video)."""
    return [frames[frame_index(t, len(frames))] for t in times_s]


def encode_png(frame: np.ndarray) -> bytes:
    """PNG bytes of one RGB uint8 frame (what judges and reports send/store)."""
    ok, buf = cv2.imencode(".png", cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2BGR))
    if not ok:
        raise ValueError("PNG encoding failed")
    return buf.tobytes()
