"""score_run and `physcodegym score`: identical / shifted / blank / failed candidates, missing metrics, CLI contract."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from physcodegym.core.errors import InputError
from physcodegym.evaluator.scoring import parse_metrics, score_run
from physcodegym.tasks.loader import load_task

FAST = ["ssim", "motion", "obj", "evt", "val"]  # LPIPS has its own tests


@pytest.fixture(scope="module")
def task(clips):
    return load_task(clips.task_dir)


@pytest.fixture(scope="module")
def faithful(clips):
    return clips.run_dir("faithful", clips.ref)


def test_identical_candidate_scores_one_and_reports_missing_metrics(task, faithful):
    doc = score_run(task, faithful, metrics=FAST)
    m = doc.metrics
    assert m["S_ssim"] == pytest.approx(1.0, abs=1e-6) and m["S_mot"] == 1.0
    assert m["S_obj"] is None and doc.states["S_obj"].state == "uncomputable" and "no judge" in doc.missing["S_obj"]
    assert m["S_evt"] is None and "no judge" in doc.missing["S_evt"]
    assert doc.states["S_val"].state == "not_applicable" and "scene.blend" in doc.missing["S_val"]
    assert doc.states["S_lpips"].state == "not_applicable" and "not requested" in doc.missing["S_lpips"]
    assert doc.coverage.model_dump() == {"S_vis": ["S_ssim"], "S_phys": ["S_mot"], "S_tot": ["S_ssim", "S_mot"]}
    assert doc.S_vis == pytest.approx(1.0, abs=1e-6) and doc.S_tot == pytest.approx(1.0, abs=1e-6)
    assert len(doc.per_frame["S_ssim"]) == 240 and len(doc.per_frame["motion_iou"]) == 240
    assert doc.complete is False
    json.dumps(doc.to_json())  # scriptable JSON


def test_shifted_and_blank_candidates_score_lower(task, clips, faithful, tools, tmp_path):
    base = score_run(task, faithful, metrics=["ssim", "motion"])
    late = tools.write_mp4(tmp_path / "late.mp4", tools.disk_clip(start=60))  # the same disk, released 2 s late
    other_path = tools.write_mp4(tmp_path / "other.mp4", tools.disk_clip(y=110))
    blank = tools.write_mp4(tmp_path / "blank.mp4", np.zeros_like(clips.ref))
    d_late = score_run(task, late, metrics=["ssim", "motion"])
    d_path = score_run(task, other_path, metrics=["ssim", "motion"])
    d_blank = score_run(task, blank, metrics=["ssim", "motion"])
    for d in (d_late, d_path, d_blank):
        assert d.metrics["S_ssim"] < base.metrics["S_ssim"]
        assert d.metrics["S_mot"] < base.metrics["S_mot"]
    assert d_blank.metrics["S_mot"] == 0.0  # nothing moves in a blank video
    assert d_blank.metrics["S_ssim"] < d_path.metrics["S_ssim"]


def test_failed_run_scores_zero_on_every_metric_with_reason(task, clips):
    d = clips.run_dir("failed", None, status="timeout")
    doc = score_run(task, d)
    assert all(v == 0.0 for v in doc.metrics.values())
    assert "timeout" in doc.no_artifact and doc.S_tot == 0.0 and doc.missing == {}
    assert all("no valid artifact" in s.reason for s in doc.states.values())
    assert doc.coverage.S_tot == ["S_ssim", "S_lpips", "S_obj", "S_evt", "S_mot", "S_val"]


KEYS = ["task", "candidate", "candidate_kind", "metrics", "states", "missing", "S_vis", "S_phys", "S_tot", "coverage",
        "complete", "truth", "status"]


def test_document_json_keeps_its_keys_and_reads_back(task, clips, faithful):
    """The typed document serialises to the public JSON (keys in their order, optional ones absent, not null) and a
    copy read back from disk validates into the same document; a dict that is no score document is refused."""
    from physcodegym.evaluator.score_document import read_score

    scored = score_run(task, faithful, metrics=["motion"]).to_json()
    assert list(scored) == [*KEYS, "per_frame", "details", "codec_parity", "timings"]
    assert scored["states"]["S_mot"] == {"state": "ok", "reason": None} and scored["S_vis"] is None
    invalid = score_run(task, clips.run_dir("failed_doc", None, status="timeout")).to_json()
    assert list(invalid) == [*KEYS, "no_artifact", "invalid_reason", "per_frame", "details", "codec_parity", "timings"]
    for doc in (scored, invalid):
        text = json.dumps(doc, indent=2)
        assert json.dumps(read_score(json.loads(text)).to_json(), indent=2) == text
    with pytest.raises(ValueError, match="score.json is not a valid score document: S_tot"):
        read_score({**scored, "S_tot": "high"}, "score.json")


def test_incomplete_render_is_no_valid_artifact(task, clips):
    d = clips.run_dir("short", clips.ref[:100])
    doc = score_run(task, d, metrics=["ssim"])
    assert doc.metrics["S_ssim"] == 0.0 and "accepted 100 frame" in doc.no_artifact and doc.status == "invalid"


def test_bare_video_candidate_has_no_native_scene(task, clips, tmp_path, tools):
    mp4 = tools.write_mp4(tmp_path / "cand.mp4", clips.ref)
    doc = score_run(task, mp4, metrics=["ssim", "val"])
    assert doc.candidate_kind == "video"
    assert doc.states["S_val"].state == "not_applicable" and "bare video" in doc.missing["S_val"]
    assert 0.9 < doc.metrics["S_ssim"] < 1.0  # re-encoded once more: close, not identical


def test_bad_inputs_raise_input_error(task, tmp_path, tools):
    with pytest.raises(InputError, match="candidate not found"):
        score_run(task, tmp_path / "nope")
    short = tools.write_mp4(tmp_path / "short.mp4", tools.disk_clip(n=30))
    with pytest.raises(InputError, match="30 frames") as e:
        score_run(task, short)
    assert e.value.file == str(short)
    with pytest.raises(InputError, match="unknown metric"):
        parse_metrics("ssim,psnr")
    assert parse_metrics("motion,ssim,S_val") == ["S_mot", "S_ssim", "S_val"]


def test_plot_is_written(task, clips, tmp_path, tools):
    cand = clips.run_dir("plotted", tools.disk_clip(y=150))
    png = tmp_path / "plots" / "score.png"
    doc = score_run(task, cand, metrics=["ssim", "motion"], plot=png)
    assert doc.plot == str(png) and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "physcodegym", "score", *args], capture_output=True, text=True, timeout=300)


def test_cli_json_contract_and_exit_codes(clips, faithful, tmp_path):
    p = _cli("--task", str(clips.task_dir), "--candidate", str(faithful), "--metrics", "ssim,motion", "--json")
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    for k in ("metrics", "missing", "S_vis", "S_phys", "S_tot", "states", "coverage"):
        assert k in doc
    assert doc["metrics"]["S_mot"] == 1.0
    bad = _cli("--task", str(clips.task_dir), "--candidate", str(tmp_path / "missing.mp4"), "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["file"] == str(tmp_path / "missing.mp4")
    bad = _cli("--task", str(clips.task_dir), "--candidate", str(faithful), "--metrics", "ssim,psnr", "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["field"] == "--metrics"
    human = _cli("--task", str(clips.task_dir), "--candidate", str(faithful), "--metrics", "motion")
    assert human.returncode == 0 and "S_mot " in human.stdout and "covers S_mot" in human.stdout
