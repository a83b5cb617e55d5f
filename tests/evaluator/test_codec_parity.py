"""Codec parity: lossless candidate frames go through the reference's encoder before the pixel metrics.

An exact reconstruction must score 1.0: the frames the reference was coded from, handed in as PNGs, score below 1
when compared raw against the lossy reference, and exactly 1.0 once coded the same way. Shown with an imported-style
task whose reference is cv2's mp4v (in-process, fast) and with a shipped task's H.264 reference (Blender's ffmpeg
in a child, as `authoring.media` built it).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from physcodegym.evaluator.codec_parity import H264, MP4V, reference_encoder
from physcodegym.evaluator.scoring import score_run
from physcodegym.tasks.loader import load_task

from tests.evaluator.conftest import disk_clip, minimal_task, seal_run, write_mp4, write_pngs


def _imported_task(root: Path, encoder: str) -> Path:
    d = root / f"task_{encoder.split()[0]}"
    d.mkdir()
    t = minimal_task()
    t["source"] = {"file": "clip.mp4", "sha256": "0" * 64, "fps": 30.0, "frames": 240, "width": 640, "height": 360,
                   "duration_s": 8.0, "trim_end_s": 8.0, "letterbox": {"x": 0, "y": 0, "width": 640, "height": 360},
                   "encoder": encoder}
    (d / "task.json").write_text(json.dumps(t))
    write_mp4(d / "reference.mp4", disk_clip())  # cv2 mp4v, like `tasks import` without a Blender encoder
    return d


def test_exact_frames_score_one_only_through_the_reference_codec(tmp_path):
    lt = load_task(_imported_task(tmp_path, "mpeg4 (cv2 mp4v)"))
    assert reference_encoder(lt) == MP4V
    run = tmp_path / "run"
    write_pngs(run / "sandbox" / "frames", disk_clip())  # the frames the reference was coded from
    seal_run(run)
    raw = score_run(lt, run, metrics=["ssim", "motion"], codec_parity=False)
    coded = score_run(lt, run, metrics=["ssim", "motion"])
    assert raw.codec_parity["applied"] is False and raw.metrics["S_ssim"] < 0.999, raw.metrics
    assert coded.codec_parity["applied"] is True and coded.codec_parity["encoder"] == MP4V
    assert coded.metrics["S_ssim"] == pytest.approx(1.0, abs=1e-6) and coded.metrics["S_mot"] == 1.0


def test_parity_is_not_applied_to_a_video_or_an_unknown_reference(tmp_path, clips):
    lt = load_task(_imported_task(tmp_path, "mpeg4 (cv2 mp4v)"))
    video = score_run(lt, lt.video_path, metrics=["ssim"])
    assert video.codec_parity["applied"] is False and "video" in video.codec_parity["reason"]
    plain = score_run(load_task(clips.task_dir), clips.run_dir("parity_plain", clips.ref), metrics=["ssim"])
    assert plain.codec_parity == {"applied": False, "reason": "the task does not say how its reference was encoded"}


def test_shipped_reference_frames_score_one_through_blenders_h264(tmp_path):
    """The decoded shipped reference re-coded as a 'candidate' loses a little more raw, and a built task's encoder
    (H.264, perceptually lossless) is what parity uses; the round trip stays within the codec's own loss."""
    from physcodegym.metrics.video import load_video

    lt = load_task("ball_bounce")
    assert reference_encoder(lt) == H264
    task_copy = tmp_path / "ball_bounce"
    shutil.copytree(lt.folder, task_copy)
    lt2 = load_task(task_copy)
    run = tmp_path / "run"
    write_pngs(run / "sandbox" / "frames", load_video(lt.video_path))
    seal_run(run)
    doc = score_run(lt2, run, metrics=["ssim", "motion"])
    assert doc.codec_parity["applied"] is True and doc.codec_parity["encoder"] == H264, doc.codec_parity
    assert doc.metrics["S_ssim"] > 0.99 and doc.metrics["S_mot"] > 0.9, doc.metrics
