"""Reference-video encoding for shipped tasks, and the check that it stays faithful to the PNG frames.

Why Blender's own ffmpeg (VSE image-sequence render, H.264, CRF "perceptually lossless"): it is in
the bpy wheel (no system ffmpeg here), the result decodes with cv2.VideoCapture, and the measured
SSIM of decoded frames against the source PNGs is reported by `ssim_against_frames` so the
encoder's loss is a number, not a belief.

    python -m physcodegym.authoring.media FRAMES_DIR OUT.mp4     # encode (needs bpy)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

FPS = 30


def frame_files(frames_dir: Path) -> list[Path]:
    return sorted(Path(frames_dir).glob("[0-9][0-9][0-9][0-9].png"))


def encode_frames(frames_dir: Path, out_mp4: Path, crf: str = "PERC_LOSSLESS") -> Path:
    """Encode frames_dir/0001.png... to an H.264 mp4 at 30 fps with a VSE render (runs in bpy)."""
    import bpy

    files = frame_files(frames_dir)
    if not files:
        raise FileNotFoundError(f"no NNNN.png frames in {frames_dir}")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
    sc.render.fps, sc.render.fps_base = FPS, 1.0
    sc.frame_start, sc.frame_end = 1, len(files)
    sc.view_settings.view_transform = "Standard"  # pass the PNG colours through untouched
    sc.view_settings.look = "None"
    sed = sc.sequence_editor_create()
    strip = sed.strips.new_image(name="frames", filepath=str(files[0]), channel=1, frame_start=1)
    for f in files[1:]:
        strip.elements.append(f.name)
    sc.render.use_sequencer = True
    ims = sc.render.image_settings
    ims.media_type = "VIDEO"
    ims.file_format = "FFMPEG"
    ff = sc.render.ffmpeg
    ff.format, ff.codec = "MPEG4", "H264"
    ff.constant_rate_factor = crf
    ff.ffmpeg_preset = "GOOD"
    ff.gopsize = 30
    out_mp4 = Path(out_mp4)
    tmp = out_mp4.with_name(out_mp4.stem + ".tmp.mp4")
    sc.render.filepath = str(tmp)
    sc.render.use_file_extension = False
    bpy.ops.render.render(animation=True)
    os.replace(tmp, out_mp4)
    return out_mp4


def decode_video(path: Path) -> np.ndarray:
    """(F, H, W, 3) uint8 RGB frames of a video (cv2)."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    out = []
    try:
        while True:
            ok, fr = cap.read()
            if not ok:
                break
            out.append(cv2.cvtColor(fr, cv2.COLOR_BGR2RGB))
    finally:
        cap.release()
    return np.stack(out) if out else np.zeros((0, 0, 0, 3), np.uint8)


def ssim_against_frames(mp4: Path, frames_dir: Path, step: int = 8) -> dict:
    """SSIM (grey, scikit-image) of decoded video frames vs the PNGs, every `step`-th frame."""
    import cv2
    from skimage.metrics import structural_similarity

    vid = decode_video(mp4)
    files = frame_files(frames_dir)
    vals = []
    for i in range(0, min(len(files), len(vid)), step):
        png = cv2.cvtColor(cv2.imread(str(files[i])), cv2.COLOR_BGR2GRAY)
        dec = cv2.cvtColor(vid[i], cv2.COLOR_RGB2GRAY)
        vals.append(float(structural_similarity(png, dec, data_range=255)))
    return {
        "decoded_frames": int(len(vid)),
        "png_frames": len(files),
        "ssim_mean": round(float(np.mean(vals)), 5) if vals else None,
        "ssim_min": round(float(np.min(vals)), 5) if vals else None,
        "sampled": len(vals),
    }


def main(argv: list[str] | None = None) -> int:
    a = sys.argv[1:] if argv is None else argv
    encode_frames(Path(a[0]), Path(a[1]), *(a[2:3]))
    return 0


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
