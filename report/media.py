"""Videos for the HTML report: every clip a browser can play from disk, encoded once and cached next to the report.

Measured on this project's Debian Chromium (156): H.264 in MP4 plays from file:// (canPlayType 'probably',
duration 8 s), MPEG-4 Part 2 (OpenCV's `mp4v`) does not. So:
- a video that is already H.264 (`avc1`/`h264` FourCC, e.g. a shipped reference.mp4) is copied as is;
- PNG frames (a run's `frames/0001.png…`) are encoded with Blender's built-in ffmpeg (H.264, CRF "HIGH") in
  a child process (`python -m physcodegym.authoring.media`), so this process never imports bpy;
- any other video is decoded with OpenCV into PNG frames and then encoded the same way.
A cache record (`<clip>.json`: source path, size and mtime) makes a second report build skip the work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from physcodegym.core import atomic, launch

H264_FOURCC = {"avc1", "h264", "H264", "AVC1", "x264", "X264"}
CRF = "HIGH"


def _fourcc(path: Path) -> str:
    import cv2

    cap = cv2.VideoCapture(str(path))
    try:
        code = int(cap.get(cv2.CAP_PROP_FOURCC))
    finally:
        cap.release()
    return "".join(chr((code >> (8 * i)) & 0xFF) for i in range(4)).strip("\x00")


def _source_key(src: Path) -> dict:
    if src.is_dir():
        files = sorted(src.glob("[0-9][0-9][0-9][0-9].png"))
        newest = max((f.stat().st_mtime_ns for f in files), default=0)
        return {"source": str(src.resolve()), "frames": len(files), "mtime_ns": newest}
    st = src.stat()
    return {"source": str(src.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _encode_frames(frames_dir: Path, out: Path, timeout_s: float) -> None:
    cmd = launch.module_argv("physcodegym.authoring.media", [str(frames_dir), str(out), CRF])  # needs bpy
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if p.returncode != 0 or not out.is_file():
        raise RuntimeError(f"encoding {frames_dir} failed (exit {p.returncode}): "
                           f"{(p.stderr or p.stdout).strip()[-400:]}")


def prepare_clip(src: Path, out: Path, timeout_s: float = 300) -> dict:
    """Make `out` (an .mp4 a browser plays) from a frames folder or a video file. Returns a record
    {"path", "bytes", "how": copied|encoded|transcoded|cached} or raises on failure."""
    src, out = Path(src), Path(out)
    key = _source_key(src)
    rec_path = out.with_suffix(".json")
    if out.is_file() and rec_path.is_file():
        try:
            if json.loads(rec_path.read_text())["key"] == key:
                return {"path": str(out), "bytes": out.stat().st_size, "how": "cached"}
        except (OSError, ValueError, KeyError):
            pass
    out.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        _encode_frames(src, out, timeout_s)
        how = "encoded"
    elif _fourcc(src) in H264_FOURCC:
        with atomic.replacing(out, out.suffix) as tmp:
            shutil.copyfile(src, tmp)
        how = "copied"
    else:
        import cv2

        with tempfile.TemporaryDirectory(prefix="pcg-report-") as td:
            cap = cv2.VideoCapture(str(src))
            n = 0
            try:
                while True:
                    ok, fr = cap.read()
                    if not ok:
                        break
                    n += 1
                    cv2.imwrite(os.path.join(td, f"{n:04d}.png"), fr)
            finally:
                cap.release()
            if n == 0:
                raise RuntimeError(f"{src}: no frame could be decoded")
            _encode_frames(Path(td), out, timeout_s)
        how = "transcoded"
    rec_path.write_text(json.dumps({"key": key, "how": how}))
    return {"path": str(out), "bytes": out.stat().st_size, "how": how}
