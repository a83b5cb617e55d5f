"""Both sides of a pixel comparison through the same codec.

A task's reference is a lossy video: built tasks are H.264 from Blender's ffmpeg ("perceptually lossless",
`authoring.media`), imported ones say which encoder made them (`source.encoder`). A run hands in lossless PNG
frames. Lossy coding moves low-contrast pixels (shadows, a dark table) across the motion threshold, so an exact
re-run of a truth program scored S_mot 0.83 against its own reference (block_stack, measured) and 1.000 once its
frames had gone through the reference's encoder (S_ssim 0.990 -> 1.000). So before S_ssim, S_lpips and S_mot the
candidate's frames are coded the way the reference was, when the task says how; a candidate handed in as a video
was coded by its author and is compared as it is. The H.264 encoder needs `bpy`, so it runs in a child started by
module name (`core.launch`), like the S_val audit; the parent never imports bpy.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ENCODE_TIMEOUT_S = 300.0
H264 = "h264"
MP4V = "mp4v"


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


def through_codec(frames: np.ndarray, encoder: str, timeout_s: float = ENCODE_TIMEOUT_S) -> tuple[np.ndarray, dict]:
    """`frames` (F, H, W, 3) uint8 RGB encoded with `encoder` and decoded again; (frames, record)."""
    import cv2
    from physcodegym.core import launch
    from physcodegym.core.limits import run_limited
    from physcodegym.metrics.video import load_video

    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pcg_codec_") as td:
        out = Path(td) / "candidate.mp4"
        if encoder == MP4V:
            h, w = frames.shape[1:3]
            wr = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"mp4v"), 30.0, (w, h))
            for f in frames:
                wr.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
            wr.release()
        elif encoder == H264:
            fd = Path(td) / "frames"
            fd.mkdir()
            for i, f in enumerate(frames, 1):
                png = cv2.cvtColor(f, cv2.COLOR_RGB2BGR)
                cv2.imwrite(str(fd / f"{i:04d}.png"), png, [cv2.IMWRITE_PNG_COMPRESSION, 1])
            res = run_limited(launch.module_argv("physcodegym.authoring.media", [str(fd), str(out)]),
                              timeout_s=timeout_s, env=launch.child_env())
            if res.returncode != 0 or not out.is_file():
                raise RuntimeError(f"the reference encoder failed (rc {res.returncode}, timed out {res.timed_out}): "
                                   f"{(res.stdout + res.stderr)[-800:]}")
        else:
            raise ValueError(f"unknown encoder {encoder!r}")
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
