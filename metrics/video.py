"""Video IO for scoring (no bpy): decode a reference or a candidate once, to 640x360 RGB uint8.

Every metric works on the same decoded arrays, so a video is read exactly once per scoring run.
Downscaling uses area interpolation (the right filter for shrinking; bilinear aliases).
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
            f"expected {expected} frames ({expected / FPS:g} s at {FPS} fps), decoded {n}", file=str(path), field="frames"
        )


def _read_video_file(path: Path, expected_frames: int | None) -> np.ndarray:
    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            raise InputError("video cannot be opened (unreadable or not a video)", file=str(path))
        fps = float(cap.get(cv2.CAP_PROP_FPS))
        if abs(fps - FPS) > FPS_TOLERANCE:
            raise InputError(f"video must be {FPS} fps, measured {fps:.3f} fps", file=str(path), field="fps")
        n_hint = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
        cap_n = max(expected_frames or 0, n_hint, 1)
        out = np.empty((cap_n, SCORE_HEIGHT, SCORE_WIDTH, 3), np.uint8)
        n = 0
        while True:
            ok, bgr = cap.read()
            if not ok:
                break
            if n >= out.shape[0]:  # container under-reported its length: grow
                out = np.concatenate([out, np.empty_like(out)], axis=0)
            out[n] = to_score_size(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
            n += 1
    finally:
        cap.release()
    if n == 0:
        raise InputError("video has no decodable frames", file=str(path))
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


def load_candidate(path: Path, expected_frames: int = FRAMES) -> np.ndarray:
    """Decode a candidate: a run folder (frames/0001.png... or render.mp4) or a video file / frame folder.

    A run folder that holds no valid artifact (run.json status != ok, no frames, wrong frame count, unreadable
    frames) raises NoArtifact with the reason: it is scored 0, not refused. A bad bare video raises InputError.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("candidate not found", file=str(path))
    if path.is_dir() and is_run_dir(path):
        rj = path / "run.json"
        if rj.is_file():
            try:
                status = json.loads(rj.read_text(encoding="utf-8")).get("status")
            except (json.JSONDecodeError, AttributeError) as e:
                raise InputError(f"run.json is not a JSON object: {e}", file=str(rj)) from e
            if status != "ok":
                raise NoArtifact(f"run status is {status!r} (run.json), not 'ok'")
        src = run_video_source(path)
        if src is None:
            raise NoArtifact("run folder has no frames/ and no render.mp4")
        try:
            return load_video(src, expected_frames)
        except InputError as e:
            raise NoArtifact(f"rendered output is not a valid {expected_frames}-frame video: {e}") from e
    return load_video(path, expected_frames)


def is_run_dir(path: Path) -> bool:
    """A run folder (SPEC §3) as opposed to a bare folder of frames."""
    return any((path / n).exists() for n in ("run.json", "frames", "render.mp4", "scene.blend", "scene.py"))


def run_video_source(run_dir: Path) -> Path | None:
    """The rendered output of a run folder: frames/ if it holds images, else render.mp4."""
    fr = run_dir / "frames"
    if fr.is_dir() and _frame_files(fr):
        return fr
    mp4 = run_dir / "render.mp4"
    return mp4 if mp4.is_file() else None


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
