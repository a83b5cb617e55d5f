"""Both sides of a pixel comparison through the same codec.

A task's reference is a lossy video: built tasks are H.264 from Blender's ffmpeg ("perceptually lossless",
`authoring.media`), imported ones say which encoder made them (`source.encoder`). A run hands in lossless PNG
frames. Lossy coding moves low-contrast pixels (shadows, a dark table) across the motion threshold, so an exact
re-run of a truth program scored S_mot 0.83 against its own reference (block_stack, measured) and 1.000 once its
frames had gone through the reference's encoder (S_ssim 0.990 -> 1.000). So before S_ssim, S_lpips and S_mot the
candidate's frames are coded the way the reference was, when the task says how; a candidate handed in as a video
was coded by its author and is compared as it is.

Parity means the same encoder with the same settings, not the same program: the H.264 path hands libx264 exactly
what Blender's movie writer hands it for `authoring.media`'s scene (CRF "perceptually lossless" = 17, preset GOOD =
x264 "medium", GOP 30, no B-frames, 4:2:0 BT.709 limited range from a bicubic swscale conversion, frame threads),
through PyAV, whose wheel ships FFmpeg and libx264. Every shipped reference records its x264 options in the
stream (threads=3 included, the count Blender picked on the 2-core machine that built them); the thread count is
pinned to that so the coded candidate does not depend on the scoring host's cores (x264's output does). Before
this, it ran a Blender child that re-encoded PNGs (~5 s idle); in-process it is ~1 CPU s for 240 frames and
decodes to the same pixels (measured: largest difference 0 on ball_bounce and milk_pour, `benchmarks/score_cost.py`).
The coded stream is decoded once, by the same OpenCV reader that decodes the reference (`metrics.video`), so both
sides also share the decoder's YUV->RGB conversion.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

H264 = "h264"
MP4V = "mp4v"
FPS = 30
# What `authoring.media.encode_frames` asks Blender for, as Blender's movie writer passes it to libx264.
X264_OPTIONS = {"crf": "17", "preset": "medium"}
GOP_SIZE = 30
MAX_B_FRAMES = 0
X264_THREADS = 3  # frame threads, as recorded in every shipped reference's x264 header


def reference_encoder(loaded_task: Any) -> str | None:
    """The encoder of the task's reference: built tasks (a truth program and a build record) are H.264 from
    `authoring.media`; an imported task names it in `source.encoder`; anything else is unknown (None)."""
    task = loaded_task.task
    src = getattr(task, "source", None)
    if src is not None:
        enc = (src.encoder or "").lower()
        return H264 if enc.startswith("h264") else MP4V if "mp4v" in enc else None
    folder = Path(loaded_task.folder)
    if task.truth is not None and (folder / "build.json").is_file() and loaded_task.video_path.suffix == ".mp4":
        return H264
    return None


def _import_av() -> Any:
    try:
        import av
    except ImportError as e:  # a pinned dependency: missing means a broken install, reported, never guessed around
        raise RuntimeError(f"PyAV (package 'av', pinned in pyproject.toml) is not importable: {e}") from e
    return av


def write_h264(frames: np.ndarray, out: Path) -> Path:
    """`frames` (F, H, W, 3) uint8 RGB to an H.264 mp4 at 30 fps with the reference's settings (see module doc)."""
    av = _import_av()
    try:
        return _encode_h264(av, frames, out)
    except av.FFmpegError as e:
        raise RuntimeError(f"libx264 through PyAV failed: {e}") from e


def _encode_h264(av: Any, frames: np.ndarray, out: Path) -> Path:
    h, w = frames.shape[1:3]
    with av.open(str(out), "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=FPS, options=dict(X264_OPTIONS))
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        cc = stream.codec_context
        cc.gop_size, cc.max_b_frames = GOP_SIZE, MAX_B_FRAMES
        cc.thread_type, cc.thread_count = "FRAME", X264_THREADS
        # tags as Blender writes them for a YUV output (BT.709, limited range); the pixels follow from reformat below
        cc.color_range, cc.colorspace, cc.color_primaries, cc.color_trc = 1, 1, 1, 1
        for rgb in frames:
            vf = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
            yuv = vf.reformat(format="yuv420p", dst_colorspace="ITU709", dst_color_range="MPEG",
                              interpolation="BICUBIC")
            container.mux(stream.encode(yuv))
        container.mux(stream.encode(None))
    return out


def write_mp4v(frames: np.ndarray, out: Path) -> Path:
    """`frames` to MPEG-4 part 2 with OpenCV's writer, as `tasks import` does without an H.264 encoder."""
    import cv2

    h, w = frames.shape[1:3]
    wr = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"mp4v"), float(FPS), (w, h))
    if not wr.isOpened():
        raise RuntimeError("cv2 cannot write MPEG-4 video here")
    try:
        for f in frames:
            wr.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
    finally:
        wr.release()
    return out


def through_codec(frames: np.ndarray, encoder: str) -> tuple[np.ndarray, dict]:
    """`frames` (F, H, W, 3) uint8 RGB encoded with `encoder` and decoded again; (frames, record)."""
    from physcodegym.metrics.video import load_video

    writers = {H264: write_h264, MP4V: write_mp4v}
    if encoder not in writers:
        raise ValueError(f"unknown encoder {encoder!r}")
    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pcg_codec_") as td:
        out = writers[encoder](frames, Path(td) / "candidate.mp4")
        coded = load_video(out, expected_frames=len(frames))
    return coded, {"applied": True, "encoder": encoder, "seconds": round(time.perf_counter() - t, 3)}


def candidate_for_pixels(loaded_task: Any, frames: np.ndarray, lossless: bool, enabled: bool = True
                         ) -> tuple[np.ndarray, dict[str, Any]]:
    """The candidate frames the pixel metrics compare with the reference, and a record of what was done."""
    if not enabled:
        return frames, {"applied": False, "reason": "switched off (--no-codec-parity)"}
    if not lossless:
        return frames, {"applied": False, "reason": "the candidate is a video: coded by its author, compared as it is"}
    enc = reference_encoder(loaded_task)
    if enc is None:
        return frames, {"applied": False, "reason": "the task does not say how its reference was encoded"}
    try:
        return through_codec(frames, enc)
    except (RuntimeError, OSError, ValueError) as e:
        return frames, {"applied": False, "encoder": enc, "reason": f"encoding failed, compared uncoded: {e}"}
