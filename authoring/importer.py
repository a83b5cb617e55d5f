"""Make a task skeleton from a real video clip (`physcodegym tasks import`).

Any clip (other frame rate, size, length, rotation metadata, variable frame rate) becomes the task format:
240 frames at 30 fps, 640x360. Why these choices:

- **decode once, by timestamp**: frames are read once with cv2 (its ffmpeg backend applies the container's
  rotation metadata); each reference frame k shows the source frame nearest in time to `start + k/30`, using
  the decoded presentation times, so a 25 fps, a 60 fps and a variable-frame-rate clip are all resampled
  on the same clock (a nominal fps would drift on a VFR clip).
- **letterbox, never stretch**: the picture is scaled by one factor (sample aspect ratio honoured) to fit
  640x360 and centred on black bars, so a round ball stays round; the rectangle is recorded.
- **short clips are held, and say so**: a window shorter than 8 s repeats its last frame up to frame 240;
  `source.held` records from which frame, so annotators (and `tasks validate`) know the rest is not footage.
- **a note of the source** in task.json (`source`): file name, sha256, fps, VFR, size, rotation, duration,
  the trim, the letterbox, the encoder and how faithful the encoded reference is (SSIM vs the frames).
- **encoded like the shipped references** (H.264 through Blender's ffmpeg in a child) when a Blender Python
  is at hand, else MPEG-4 part 2 through cv2; both decode with the loader's `video_info`.

The skeleton has no checklist, events or rubric: it loads as a `DraftTask` and `tasks validate` lists what an
annotator still has to add. It has no truth scene, so truth-dependent parts are not applicable
(`tasks.loader.truth_status`).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.core import atomic, launch
from physcodegym.core.errors import InputError, from_validation
from physcodegym.core.hashing import sha256_file
from physcodegym.tasks.loader import TASK_FILE, load_task, video_info
from physcodegym.tasks.schema import (
    FPS,
    FRAMES,
    SCORE_HEIGHT,
    SCORE_WIDTH,
    SUBCATEGORIES,
    Category,
    DraftTask,
    Letterbox,
    missing_annotations,
)
from pydantic import ValidationError

DURATION_S = FRAMES / FPS
ENCODERS = ("auto", "h264", "mp4v")


def parse_category(spec: str) -> tuple[str, str | None]:
    """'rigid/falling-bouncing' or 'wind' -> (category, subcategory); InputError names what is allowed."""
    cat, _, sub = spec.partition("/")
    try:
        c = Category(cat)
    except ValueError:
        raise InputError(f"unknown category {cat!r}; known: {', '.join(x.value for x in Category)}",
                         field="--category") from None
    allowed = [s.value for s in SUBCATEGORIES[c]]
    if allowed and sub not in allowed:
        raise InputError(f"category {c.value!r} needs a subcategory: {c.value}/<one of {', '.join(allowed)}>",
                         field="--category")
    if not allowed and sub:
        raise InputError(f"category {c.value!r} has no subcategories, got {sub!r}", field="--category")
    return c.value, sub or None


def letterbox_rect(width: float, height: float) -> Letterbox:
    """The largest centred rectangle of the source's display aspect inside 640x360."""
    scale = min(SCORE_WIDTH / width, SCORE_HEIGHT / height)
    w = max(1, min(SCORE_WIDTH, int(round(width * scale))))
    h = max(1, min(SCORE_HEIGHT, int(round(height * scale))))
    return Letterbox(x=(SCORE_WIDTH - w) // 2, y=(SCORE_HEIGHT - h) // 2, width=w, height=h)


def _place(frame: np.ndarray, box: Letterbox) -> np.ndarray:
    import cv2

    h, w = frame.shape[:2]
    interp = cv2.INTER_AREA if box.width < w or box.height < h else cv2.INTER_CUBIC
    out = np.zeros((SCORE_HEIGHT, SCORE_WIDTH, 3), np.uint8)
    out[box.y : box.y + box.height, box.x : box.x + box.width] = cv2.resize(
        frame, (box.width, box.height), interpolation=interp)
    return out


def normalise(video: Path, start_s: float = 0.0, end_s: float | None = None) -> tuple[list[np.ndarray], dict[str, Any]]:
    """Decode `video` once and resample the window [start_s, end_s) to 240 letterboxed 640x360 BGR frames.

    Returns (frames, source facts). Frames past the footage repeat the last one (recorded in `held`).
    """
    import cv2

    if start_s < 0:
        raise InputError("--start must be >= 0", field="--start")
    if end_s is not None and end_s <= start_s:
        raise InputError(f"--end ({end_s}) must be after --start ({start_s})", field="--end")
    if end_s is not None and end_s - start_s > DURATION_S + 1e-6:
        raise InputError(f"the window is {end_s - start_s:.3f} s; a reference is at most {DURATION_S:.0f} s",
                         field="--end")
    stop = start_s + DURATION_S if end_s is None else end_s
    cap = cv2.VideoCapture(str(video))
    if not cap.isOpened():
        raise InputError("video cannot be opened (missing, unreadable or no decoder)", file=str(video))
    try:
        cap.set(cv2.CAP_PROP_ORIENTATION_AUTO, 1)
        nominal_fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        rotation = int(round(cap.get(cv2.CAP_PROP_ORIENTATION_META) or 0)) % 360
        sar_num, sar_den = cap.get(cv2.CAP_PROP_SAR_NUM) or 1.0, cap.get(cv2.CAP_PROP_SAR_DEN) or 1.0
        sar = float(sar_num / sar_den) if sar_num > 0 and sar_den > 0 else 1.0
        times = [start_s + k / FPS for k in range(FRAMES)]
        out: list[np.ndarray] = []
        box: Letterbox | None = None
        shape: tuple[int, int] | None = None
        stamps: list[float] = []
        prev: tuple[float, np.ndarray] | None = None
        decoded = 0
        while len(out) < FRAMES:
            ok, fr = cap.read()
            if not ok:
                break
            decoded += 1
            ts = float(cap.get(cv2.CAP_PROP_POS_MSEC)) / 1000.0
            if stamps and ts <= stamps[-1]:  # a container without usable timestamps: fall back to the nominal clock
                ts = stamps[-1] + 1.0 / (nominal_fps or FPS)
            stamps.append(ts)
            if ts >= stop:
                break
            if box is None:
                shape = fr.shape[:2]
                box = letterbox_rect(fr.shape[1] * sar, fr.shape[0])
            nxt = prev
            # frames well before the window are skipped
            cur = (ts, _place(fr, box)) if ts + 0.5 / FPS >= start_s else None
            if cur is None:
                continue
            # emit every reference time that lies before this frame: nearest of the previous and this one
            while len(out) < FRAMES and times[len(out)] < ts:
                t = times[len(out)]
                if nxt is not None and abs(t - nxt[0]) <= abs(ts - t):
                    out.append(nxt[1])
                else:
                    out.append(cur[1])
            prev = cur
        deltas = np.diff(stamps) if len(stamps) > 1 else np.array([1.0 / (nominal_fps or FPS)])
        step = float(np.median(deltas))
        if prev is not None:
            # the last frame lasts as long as the frame period before it (on a VFR clip, not the median)
            end_of_footage = min(stop, prev[0] + float(deltas[-1]))
            while len(out) < FRAMES and times[len(out)] < end_of_footage - 1e-9:
                out.append(prev[1])
    finally:
        cap.release()
    if not out or box is None or shape is None:
        raise InputError(f"no frames in the window {start_s:.3f}-{stop:.3f} s ({decoded} decoded)", file=str(video),
                         field="--start")
    real = len(out)
    held = None
    if real < FRAMES:
        held = {"from_frame": real + 1, "count": FRAMES - real, "source_ends_s": round(real / FPS, 6)}
        out.extend([out[-1]] * (FRAMES - real))
    coded_h, coded_w = shape if rotation in (0, 180) else shape[::-1]
    vfr = len(deltas) >= 2 and float(np.ptp(deltas)) > 0.1 * step
    duration = count / nominal_fps if nominal_fps > 0 and count > 0 else stamps[-1] + step
    facts = {
        "file": Path(video).name,
        "fps": round(nominal_fps, 6),
        "variable_frame_rate": bool(vfr),
        "frames": int(count or decoded),
        "width": int(coded_w),
        "height": int(coded_h),
        "rotation_deg": rotation,
        "sample_aspect_ratio": round(sar, 6),
        "duration_s": round(float(duration), 6),
        "trim_start_s": round(float(start_s), 6),
        "trim_end_s": round(float(min(stop, start_s + real / FPS)), 6),
        "letterbox": box.model_dump(),
        "held": held,
    }
    return out, facts


def _bpy_encoder_available() -> bool:
    return launch.blender_binary() is not None or importlib.util.find_spec("bpy") is not None


def encode(frames: list[np.ndarray], out_mp4: Path, encoder: str = "auto") -> str:
    """Write the 240 frames to `out_mp4`; returns the encoder used (see the module docstring for why)."""
    import cv2

    if encoder not in ENCODERS:
        raise InputError(f"unknown encoder {encoder!r}; known: {', '.join(ENCODERS)}", field="--encoder")
    if encoder == "auto":
        encoder = "h264" if _bpy_encoder_available() else "mp4v"
    tmp = out_mp4.with_name(f".{out_mp4.stem}.tmp.mp4")
    if encoder == "mp4v":
        w = cv2.VideoWriter(str(tmp), cv2.VideoWriter_fourcc(*"mp4v"), float(FPS), (SCORE_WIDTH, SCORE_HEIGHT))
        if not w.isOpened():
            raise RuntimeError("cv2 cannot write MPEG-4 video here")
        for f in frames:
            w.write(f)
        w.release()
        tmp.replace(out_mp4)
        return "mpeg4 (cv2 mp4v)"
    with tempfile.TemporaryDirectory(prefix="pcg_import_") as d:
        for i, f in enumerate(frames, 1):
            cv2.imwrite(str(Path(d) / f"{i:04d}.png"), f, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        r = subprocess.run(launch.module_argv("physcodegym.authoring.media", [d, str(tmp)]), capture_output=True,
                           text=True,
                           env=launch.child_env())
        if r.returncode != 0 or not tmp.is_file():
            raise RuntimeError(f"H.264 encode child failed (rc {r.returncode}): {(r.stdout + r.stderr)[-1500:]}")
    tmp.replace(out_mp4)
    return "h264 (Blender ffmpeg, perceptually lossless)"


def _ssim_mean(mp4: Path, frames: list[np.ndarray], step: int = 16) -> float | None:
    import cv2
    from physcodegym.authoring.media import decode_video
    from skimage.metrics import structural_similarity

    vid = decode_video(mp4)
    vals = [float(structural_similarity(cv2.cvtColor(frames[i], cv2.COLOR_BGR2GRAY),
                                        cv2.cvtColor(vid[i], cv2.COLOR_RGB2GRAY), data_range=255))
            for i in range(0, min(len(frames), len(vid)), step)]
    return round(float(np.mean(vals)), 5) if vals else None


def import_video(video: Path, task_id: str, category: str, out_root: Path, start_s: float = 0.0,
                 end_s: float | None = None,
                 title: str | None = None, encoder: str = "auto", force: bool = False, url: str | None = None,
                 licence: str | None = None) -> dict[str, Any]:
    """Normalise `video` into `out_root/task_id/` (reference.mp4 + a skeleton task.json); returns the report.

    `url` and `licence` are the clip's provenance as the user states it (recorded in task.json `source`, not
    checked against anything): a benchmark of real clips must say where each came from and under what terms."""
    video = Path(video)
    if not video.is_file():
        raise InputError("video not found", file=str(video))
    if url is not None and not re.fullmatch(r"https?://\S+", url):
        raise InputError(f"--url must be an http(s) address without spaces, got {url!r}", field="url")
    if licence is not None and not licence.strip():
        raise InputError("--licence must not be empty", field="licence")
    cat, sub = parse_category(category)
    folder = Path(out_root) / task_id
    doc: dict[str, Any] = {"id": task_id, "title": title or video.stem.replace("_", " "), "category": cat,
                           "subcategory": sub,
                           "summary": f"imported from {video.name}"}
    try:
        DraftTask.model_validate(doc)  # a bad id or title fails before any decoding
    except ValidationError as e:
        raise from_validation(e, file=str(folder / TASK_FILE)) from e
    if (folder / TASK_FILE).exists() and not force:
        raise InputError("a task already exists here (give --force to replace it)", file=str(folder / TASK_FILE))
    frames, facts = normalise(video, start_s, end_s)
    facts["sha256"] = sha256_file(video)
    folder.mkdir(parents=True, exist_ok=True)
    mp4 = folder / "reference.mp4"
    facts["encoder"] = encode(frames, mp4, encoder)
    facts["encode_ssim_mean"] = _ssim_mean(mp4, frames)
    facts["url"], facts["licence"] = url, licence.strip() if licence else None
    doc["source"] = facts
    task = DraftTask.model_validate(doc)
    atomic.write_json(folder / TASK_FILE, task.model_dump(mode="json"))
    loaded = load_task(folder, draft=True)
    return {
        "ok": True,
        "id": task_id,
        "folder": str(loaded.folder),
        "source": facts,
        "video": video_info(mp4),
        "missing": missing_annotations(loaded.task),
    }

