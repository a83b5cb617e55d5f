"""Video IO: decode once to 640x360 RGB, clear errors for wrong length / fps / unreadable input."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from physcodegym.core.errors import InputError
from physcodegym.metrics.video import NoArtifact, encode_png, load_video, sample_frames


def test_png_sequence_and_mp4_decode_to_rgb(tmp_path, tools):
    v = tools.disk_clip(n=12)
    tools.write_pngs(tmp_path / "frames", v)
    got = load_video(tmp_path / "frames", expected_frames=12)
    assert got.shape == (12, 360, 640, 3) and got.dtype == np.uint8 and np.array_equal(got, v)
    mp4 = load_video(tools.write_mp4(tmp_path / "v.mp4", v), expected_frames=12)
    assert mp4.shape == v.shape and np.abs(mp4.astype(int) - v).mean() < 6  # lossy but the same picture, RGB order
    assert mp4[0, 180, 80, 0] > 150 and mp4[0, 180, 80, 2] < 100  # the red disk stays red


def test_large_frames_are_area_downscaled(tmp_path, tools):
    big = np.stack([cv2.resize(f, (1280, 720), interpolation=cv2.INTER_NEAREST) for f in tools.disk_clip(n=3)])
    tools.write_pngs(tmp_path / "big", big)
    got = load_video(tmp_path / "big", expected_frames=3)
    want = cv2.resize(big[1], (640, 360), interpolation=cv2.INTER_AREA)
    assert got.shape == (3, 360, 640, 3) and np.array_equal(got[1], want)


def test_errors_name_file_and_field(tmp_path, tools):
    with pytest.raises(InputError, match="not found"):
        load_video(tmp_path / "missing.mp4")
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video at all" * 10)
    with pytest.raises(InputError) as e:
        load_video(junk)
    assert e.value.file == str(junk)
    slow = tools.write_mp4(tmp_path / "slow.mp4", tools.disk_clip(n=10), fps=24)
    with pytest.raises(InputError, match="30 fps") as e:
        load_video(slow, expected_frames=10)
    assert e.value.field == "fps"
    short = tools.write_mp4(tmp_path / "short.mp4", tools.disk_clip(n=10))
    with pytest.raises(InputError, match="expected 240 frames") as e:
        load_video(short)
    assert e.value.field == "frames"
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no numbered"):
        load_video(tmp_path / "empty")


def test_run_folder_without_valid_artifact(tmp_path, tools):
    from physcodegym.evaluator.scoring import load_candidate

    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"status": "ok"}))  # a record the runner did not write
    with pytest.raises(NoArtifact, match="not written by this runner"):
        load_candidate(run)
    tools.seal_run(run, "failed")
    with pytest.raises(NoArtifact, match="failed"):
        load_candidate(run)
    tools.seal_run(run, "ok")
    with pytest.raises(NoArtifact, match="no accepted frames"):
        load_candidate(run)
    tools.write_pngs(run / "sandbox" / "frames", tools.disk_clip(n=5))
    tools.seal_run(run, "ok", n_frames=5)
    with pytest.raises(NoArtifact, match="accepted 5 frame"):
        load_candidate(run)
    frames, vr = load_candidate(run, expected_frames=5)
    assert frames.shape == (5, 360, 640, 3) and vr.valid and len(vr.frame_names()) == 5
    (run / "frames" / "0003.png").write_bytes((run / "frames" / "0002.png").read_bytes())  # changed after the run
    with pytest.raises(NoArtifact, match="0003.png does not match"):
        load_candidate(run, expected_frames=5)
    (run / "run.json").write_text("[1, 2]")
    with pytest.raises(NoArtifact, match="run.json"):
        load_candidate(run)


def test_sample_frames_and_png_encoding(tools):
    v = tools.disk_clip(n=240, speed=1.0)
    got = sample_frames(v, [0.0, 1.0, 7.99, 100.0])
    assert np.array_equal(got[0], v[0]) and np.array_equal(got[1], v[30]) and np.array_equal(got[3], v[239])
    png = encode_png(v[30])
    back = cv2.cvtColor(cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    assert png[:4] == b"\x89PNG" and np.array_equal(back, v[30])
