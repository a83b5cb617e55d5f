"""`physcodegym tasks import`: real clips (made here with cv2, short) normalised to the task format, measured on
the written reference: 240 frames at 30 fps, 640x360, the picture letterboxed (a filled circle stays round),
each reference frame the source frame nearest in time (a circle's position encodes the source frame), rotation
metadata applied, a variable-frame-rate clip resampled by its timestamps, a short clip held and recorded; then
a round trip through the command line: import -> validate (lists what is missing) -> annotate -> validate ->
score (truth-dependent parts not applicable, S_ssim / S_mot present)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from physcodegym.authoring.importer import import_video, normalise
from physcodegym.authoring.media import decode_video
from physcodegym.core.errors import InputError

STEP = 4.8  # source pixels the circle moves per source frame
X0, RADIUS = 80, 50


# ------------------------------------------------------------------ clips and mp4 box edits


def make_clip(path: Path, fps: float, size: tuple[int, int], frames: int, portrait_marker: bool = False) -> Path:
    """Grey background, a white filled circle whose x (or y, for tall clips) is X0 + STEP * frame index."""
    import cv2

    w, h = size
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    assert vw.isOpened()
    tall = h > w
    r = min(RADIUS, min(w, h) // 5)
    for i in range(frames):
        im = np.full((h, w, 3), 110, np.uint8)
        c = (w // 2, int(round(X0 + STEP * i))) if tall else (int(round(X0 + STEP * i)), h // 2)
        cv2.circle(im, c, r, (255, 255, 255), -1, lineType=cv2.LINE_AA)
        vw.write(im)
    vw.release()
    return path


def _boxes(buf: bytes | bytearray, start: int, end: int):
    i = start
    while i + 8 <= end:
        size, typ = struct.unpack(">I4s", buf[i : i + 8])
        yield typ.decode("latin1"), i, size
        i += size


def _find(buf: bytes | bytearray, path: list[str], start: int = 0, end: int | None = None) -> list[tuple[int, int]] | None:
    end = len(buf) if end is None else end
    for typ, i, size in _boxes(buf, start, end):
        if typ == path[0]:
            if len(path) == 1:
                return [(i, size)]
            rest = _find(buf, path[1:], i + 8, i + size)
            if rest:
                return [(i, size), *rest]
    return None


def set_rotation(path: Path, deg: int) -> None:
    """Write a display rotation into the track header's matrix (what a phone's portrait clip carries)."""
    b = bytearray(path.read_bytes())
    i, _ = _find(b, ["moov", "trak", "tkhd"])[-1]
    assert b[i + 8] == 0  # version 0 header
    c, s = {90: (0, 1), 180: (-1, 0), 270: (0, -1)}[deg]
    one = 1 << 16
    struct.pack_into(">9i", b, i + 8 + 4 + 20 + 8 + 8, c * one, s * one, 0, -s * one, c * one, 0, 0, 0, 1 << 30)
    path.write_bytes(b)


def set_sample_durations(path: Path, deltas: list[int]) -> None:
    """Give every sample its own duration (a variable-frame-rate clip); the moov box is after mdat here, so no
    chunk offset moves; the track, media and edit durations are made to match."""
    b = bytearray(path.read_bytes())
    chain = _find(b, ["moov", "trak", "mdia", "minf", "stbl", "stts"])
    i, size = chain[-1]
    body = struct.pack(">II", 0, len(deltas)) + b"".join(struct.pack(">II", 1, d) for d in deltas)
    new = struct.pack(">I4s", 8 + len(body), b"stts") + body
    b[i : i + size] = new
    for pi, psize in chain[:-1]:
        struct.pack_into(">I", b, pi, psize + len(new) - size)
    total = sum(deltas)
    i, _ = _find(b, ["moov", "trak", "mdia", "mdhd"])[-1]
    media_ts = struct.unpack(">I", b[i + 20 : i + 24])[0]
    struct.pack_into(">I", b, i + 24, total)
    i, _ = _find(b, ["moov", "mvhd"])[-1]
    movie = round(total * struct.unpack(">I", b[i + 20 : i + 24])[0] / media_ts)
    struct.pack_into(">I", b, i + 24, movie)
    i, _ = _find(b, ["moov", "trak", "tkhd"])[-1]
    struct.pack_into(">I", b, i + 28, movie)
    e = _find(b, ["moov", "trak", "edts", "elst"])
    if e:
        struct.pack_into(">I", b, e[-1][0] + 16, movie)
    path.write_bytes(b)


def media_timescale(path: Path) -> int:
    b = path.read_bytes()
    i, _ = _find(b, ["moov", "trak", "mdia", "mdhd"])[-1]
    return struct.unpack(">I", b[i + 20 : i + 24])[0]


# ------------------------------------------------------------------ measurements on the reference


def picture_rect(frame: np.ndarray) -> tuple[int, int, int, int]:
    """(x, y, w, h) of the non-black part (bars are black, the picture's background is grey 110)."""
    grey = frame.mean(axis=2)
    cols, rows = np.where(grey.max(axis=0) > 40)[0], np.where(grey.max(axis=1) > 40)[0]
    return int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)


def circle(frame: np.ndarray) -> tuple[float, float, float]:
    """Centroid x, y and the width / height ratio of the white disc."""
    m = frame.mean(axis=2) > 185
    ys, xs = np.nonzero(m)
    return float(xs.mean()), float(ys.mean()), float(np.ptp(xs) + 1) / float(np.ptp(ys) + 1)


def nearest(t: float, stamps: np.ndarray) -> int:
    d = np.abs(stamps - t)
    return int(np.flatnonzero(d <= d.min() + 1e-9)[0])  # ties go to the earlier frame


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("clips")
    out = {
        "hd25": make_clip(d / "hd25.mp4", 25.0, (1280, 720), 250),
        "odd": make_clip(d / "odd.mp4", 30.0, (333, 197), 60),
        "portrait": make_clip(d / "portrait.mp4", 30.0, (270, 480), 240),
        "rotated": make_clip(d / "rotated.mp4", 30.0, (480, 270), 240),
        "vfr": make_clip(d / "vfr.mp4", 25.0, (640, 360), 50),
    }
    set_rotation(out["rotated"], 90)
    ts = media_timescale(out["vfr"])
    set_sample_durations(out["vfr"], [ts // 25] * 25 + [ts // 10] * 25)  # 25 frames at 40 ms, then 25 at 100 ms
    return out


@pytest.fixture(scope="module")
def imported(clips: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], np.ndarray]]:
    """Each clip imported once (cv2 encoder: cheap) and its reference decoded."""
    root = tmp_path_factory.mktemp("imported")
    out = {}
    for name, clip in clips.items():
        doc = import_video(clip, f"imp_{name}", "rigid/falling-bouncing", root, encoder="mp4v")
        out[name] = (doc, decode_video(Path(doc["folder"]) / "reference.mp4"))
    return out


# ------------------------------------------------------------------ tests


@pytest.mark.parametrize("name", ["hd25", "odd", "portrait", "rotated", "vfr"])
def test_reference_is_240_frames_30fps_640x360(imported: dict, name: str) -> None:
    doc, vid = imported[name]
    assert doc["video"] == {"fps": 30.0, "frames": 240, "width": 640, "height": 360}
    assert vid.shape == (240, 360, 640, 3)
    src = doc["source"]
    assert len(src["sha256"]) == 64 and src["file"] == f"{name}.mp4"
    assert {m["field"] for m in doc["missing"]} == {"checklist", "events", "rubric.criteria", "roles"}
    assert src["encode_ssim_mean"] > 0.95


def test_hd_25fps_10s_is_trimmed_to_8s_and_resampled_by_time(imported: dict) -> None:
    doc, vid = imported["hd25"]
    s = doc["source"]
    assert (s["fps"], s["width"], s["height"], s["duration_s"]) == (25.0, 1280, 720, 10.0)
    assert (s["trim_start_s"], s["trim_end_s"], s["held"], s["variable_frame_rate"]) == (0.0, 8.0, None, False)
    assert s["letterbox"] == {"x": 0, "y": 0, "width": 640, "height": 360}
    stamps = np.arange(250) / 25.0
    for k in (0, 1, 2, 4, 7, 50, 119, 200, 239):
        want = (X0 + STEP * nearest(k / 30.0, stamps)) * 0.5  # source x scaled by 640/1280
        x, _, ratio = circle(vid[k])
        assert abs(x - want) < 0.8, (k, x, want)
        assert abs(ratio - 1.0) < 0.06


def displayed_size(clip: Path) -> tuple[int, int]:
    """What a player shows (cv2 applies rotation metadata by default; its mp4v writer keeps even sizes only)."""
    import cv2

    cap = cv2.VideoCapture(str(clip))
    ok, fr = cap.read()
    cap.release()
    assert ok
    return fr.shape[1], fr.shape[0]


@pytest.mark.parametrize("name", ["odd", "portrait", "rotated"])
def test_letterbox_bars_measured_and_circle_stays_round(clips: dict, imported: dict, name: str) -> None:
    doc, vid = imported[name]
    s = doc["source"]
    dw, dh = displayed_size(clips[name])
    assert (dw, dh) == {"odd": (332, 196), "portrait": (270, 480), "rotated": (270, 480)}[name]
    scale = min(640 / dw, 360 / dh)
    w, h = round(dw * scale), round(dh * scale)
    box = s["letterbox"]
    assert (box["width"], box["height"]) == (w, h) and box["x"] == (640 - w) // 2 and box["y"] == (360 - h) // 2
    x, y, mw, mh = picture_rect(vid[10])
    assert abs(x - box["x"]) <= 1 and abs(y - box["y"]) <= 1 and abs(mw - w) <= 2 and abs(mh - h) <= 2
    bars = np.concatenate([vid[10][:, : box["x"] - 1].reshape(-1, 3), vid[10][:, box["x"] + w + 1 :].reshape(-1, 3)])
    if bars.size:
        assert bars.mean() < 6  # black bars, not stretched picture
    _, _, ratio = circle(vid[10])
    assert abs(ratio - 1.0) < 0.08, ratio  # a stretched picture would make it an ellipse (odd: x1.02, portrait: x3.2)


def test_rotation_metadata_is_applied_and_recorded(imported: dict) -> None:
    doc, vid = imported["rotated"]
    s = doc["source"]
    assert s["rotation_deg"] == 90 and (s["width"], s["height"]) == (480, 270)  # coded landscape, shown portrait
    assert s["letterbox"]["height"] == 360 and s["letterbox"]["width"] < 360
    # the circle moved along the coded x axis; shown rotated it moves vertically
    (x0, y0, _), (x1, y1, _) = circle(vid[0]), circle(vid[60])
    assert abs(x1 - x0) < 2 and abs(y1 - y0) > 50


def test_variable_frame_rate_is_resampled_by_timestamps_and_short_clip_held(imported: dict) -> None:
    doc, vid = imported["vfr"]
    s = doc["source"]
    assert s["variable_frame_rate"] is True and s["frames"] == 50
    stamps = np.concatenate([np.arange(25) * 0.04, 1.0 + np.arange(25) * 0.1])  # 3.5 s of footage
    assert s["held"] == {"from_frame": 106, "count": 135, "source_ends_s": 3.5}
    assert s["trim_end_s"] == 3.5
    for k in (0, 10, 29, 30, 45, 60, 90, 104):
        want = X0 + STEP * nearest(k / 30.0, stamps)  # 640x360 source: scale 1
        x, _, _ = circle(vid[k])
        assert abs(x - want) < 0.8, (k, x, want)  # a nominal-fps resampling would be off by many frames after 1 s
    held = vid[105:].astype(np.int16)
    assert np.abs(held - held[0]).mean() < 1.0  # the last frame, repeated (codec noise only)
    assert abs(circle(vid[239])[0] - (X0 + STEP * 49)) < 0.8


def test_trim_window_and_bad_input(clips: dict, tmp_path: Path) -> None:
    frames, facts = normalise(clips["hd25"], start_s=2.0, end_s=5.0)
    assert len(frames) == 240 and facts["trim_start_s"] == 2.0 and facts["trim_end_s"] == 5.0
    assert facts["held"] == {"from_frame": 91, "count": 150, "source_ends_s": 3.0}
    assert abs(circle(frames[0][:, :, ::-1])[0] - (X0 + STEP * 50) * 0.5) < 0.8  # first frame is the 2 s frame
    with pytest.raises(InputError, match="at most 8"):
        normalise(clips["hd25"], start_s=0.0, end_s=9.0)
    with pytest.raises(InputError, match="needs a subcategory"):
        import_video(clips["odd"], "x", "rigid", tmp_path)
    with pytest.raises(InputError, match="no frames"):
        normalise(clips["odd"], start_s=30.0)
    with pytest.raises(InputError):
        import_video(clips["odd"], "Bad Id", "wind", tmp_path)
    assert not (tmp_path / "Bad Id").exists()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "physcodegym", *args], capture_output=True, text=True, timeout=600)


ANNOTATION = {
    "roles": [{"name": "disc", "description": "the white disc", "core": True}],
    "checklist": [{"id": "obj_disc", "category": "disc", "count": 1, "attributes": ["white"], "roles": ["disc"]}],
    "events": [{"id": "ev_slide", "description": "the disc moves right", "roles": ["disc"], "interval": {"start_s": 0.0, "end_s": 7.9},
                "weight": 1.0, "key": True}],
    "criteria": [{"id": "c_sim", "description": "the disc moves by simulation", "weight": 1.0, "roles": ["disc"],
                  "check": "moves_by_simulation"}],
}


def test_cli_round_trip_import_validate_annotate_score(clips: dict, tmp_path: Path) -> None:
    """The command line end to end, with the default encoder (H.264 through Blender's ffmpeg, like shipped tasks)."""
    r = _cli("tasks", "import", str(clips["hd25"]), "--id", "video_disc", "--category", "wind", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["source"]["encoder"].startswith("h264") and doc["video"]["frames"] == 240
    folder = Path(doc["folder"])
    assert _cli("tasks", "import", str(clips["hd25"]), "--id", "video_disc", "--category", "wind", "--out", str(tmp_path)).returncode == 2
    r = _cli("tasks", "validate", str(folder), "--json")
    assert r.returncode == 1, r.stderr[-2000:]
    v = json.loads(r.stdout)["tasks"][0]
    assert not v["ok"] and {m["field"] for m in v["missing"]} == {"checklist", "events", "rubric.criteria", "roles"}
    assert all(t["state"] == "not_applicable" and "no truth scene" in t["reason"] for t in v["truth"].values())
    # a draft in a task root does not break listing
    assert _cli("tasks", "list", "--root", str(tmp_path), "--json").returncode == 0
    task = json.loads((folder / "task.json").read_text())
    task["roles"], task["checklist"], task["events"] = ANNOTATION["roles"], ANNOTATION["checklist"], ANNOTATION["events"]
    task["rubric"]["criteria"] = ANNOTATION["criteria"]
    (folder / "task.json").write_text(json.dumps(task))
    r = _cli("tasks", "validate", str(folder), "--json")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert json.loads(r.stdout)["tasks"][0]["missing"] == []
    cand = tmp_path / "candidate.mp4"
    shutil.copy(folder / "reference.mp4", cand)
    r = _cli("score", "--task", str(folder), "--candidate", str(cand), "--metrics", "ssim,motion,val", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    s = json.loads(r.stdout)
    assert s["metrics"]["S_ssim"] > 0.99 and s["states"]["S_ssim"]["state"] == "ok"
    assert s["states"]["S_mot"]["state"] == "ok" and s["metrics"]["S_mot"] > 0.9
    assert s["metrics"]["S_val"] is None and s["states"]["S_val"]["state"] != "ok" and s["states"]["S_val"]["reason"]  # no native scene
    assert set(s["truth"]) == {"truth_trajectories", "truth_counterfactuals", "truth_criteria"}
    assert all(t["state"] == "not_applicable" and "video_disc" not in t["reason"] and "hd25.mp4" in t["reason"] for t in s["truth"].values())
