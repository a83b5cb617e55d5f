"""Batch evaluation: faults are recorded and good units scored; SIGKILL + --resume equals an uninterrupted run;
Ray gives the same results as the process pool; the report files exist, parse and name every config and task."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mini import METRICS, store_rows
from physcodegym.batch.accounting import leaderboard
from physcodegym.batch.store import ResultsStore


def _comparable(r: dict) -> tuple:
    return (r["status"], r["run_status"], r["artifact"], json.dumps(r["metrics"], sort_keys=True), r["program_sha256"], r["task_sha256"])


def test_faulty_submissions_are_recorded_and_good_ones_scored(baseline: Path) -> None:
    rows = store_rows(baseline)
    assert len(rows) == 7
    good = [r for k, r in rows.items() if k[0] == "good"]
    assert all(r["status"] == "done" and r["run_status"] == "ok" and r["artifact"] for r in good)
    assert all(isinstance(r["metrics"]["S_mot"], float) for r in good)
    by_attempt = {(k[1], k[2]): r for k, r in rows.items() if k[0] == "broken"}
    assert by_attempt[("mini_a", "1")]["run_status"] == "failed" and "exited" in by_attempt[("mini_a", "1")]["reason"]
    assert by_attempt[("mini_b", "2")]["run_status"] == "timeout"
    assert by_attempt[("mini_a", "3")]["run_status"] == "policy"
    assert all(r["blender_version"] for r in rows.values())  # each row names the Blender that ran it
    partial = rows[("partial", "mini_b", "1")]
    assert partial["status"] == "invalid" and partial["run_status"] == "invalid" and "frames/0238.png" in partial["reason"]
    for r in rows.values():
        unit = Path(r["evidence"]["run_dir"]).parent
        assert (unit / "unit.json").is_file() and (Path(r["evidence"]["run_dir"]) / "run.json").is_file()


def test_accounting_latest_rendered_run_and_zeros(baseline: Path) -> None:
    st = ResultsStore(baseline, readonly=True)
    rows, tasks, cfgs = st.rows(), st.get_meta("tasks"), st.get_meta("configs")
    st.close()
    lb = leaderboard(rows, tasks, cfgs)
    assert lb["covered_metrics"] == ["S_mot"]
    assert set(lb["missing_metrics"]) == {"S_ssim", "S_lpips", "S_obj", "S_evt", "S_val"}
    per = lb["per_task"]
    assert per["good"]["mini_a"]["attempt"] == "2"  # the latest rendered run counts, not the best
    a1 = next(r for r in rows if (r["config"], r["task_id"], r["attempt"]) == ("good", "mini_a", "1"))
    a2 = next(r for r in rows if (r["config"], r["task_id"], r["attempt"]) == ("good", "mini_a", "2"))
    assert a1["metrics"]["S_mot"] > a2["metrics"]["S_mot"]
    board = {b["config"]: b for b in lb["leaderboard"]}
    good_all = board["good"]["sets"]["all_tasks"]
    expect = (a2["metrics"]["S_mot"] + per["good"]["mini_b"]["values"]["S_mot"]) / 2
    assert good_all["S_mot"]["mean"] == pytest.approx(expect) and good_all["S_mot"]["n"] == 2
    broken = board["broken"]["sets"]
    assert broken["all_tasks"]["S_mot"] == {"mean": 0.0, "n": 2}  # no artifact: 0, in the denominator
    assert broken["produced_artifacts"]["tasks"] == 0 and broken["produced_artifacts"]["S_tot"]["mean"] is None
    partial = board["partial"]["sets"]["all_tasks"]
    assert partial["S_mot"] == {"mean": 0.0, "n": 2}  # one failed run, one task never submitted: both zero
    assert lb["shared_tasks"] == []  # broken has no artifact anywhere
    assert board["good"]["sets"]["all_tasks"]["S_tot"]["covers"] == ["S_mot"]


def test_report_files(baseline: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    p = subprocess.run([sys.executable, "-m", "physcodegym", "report", str(baseline), "--out", str(out), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert Path(doc["report"]).is_file()
    lb = json.loads((out / "leaderboard.json").read_text())
    assert {b["config"] for b in lb["leaderboard"]} == {"good", "broken", "partial"}
    with open(out / "leaderboard.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 * 3 and {r["averaging_set"] for r in rows} == {"all_tasks", "produced_artifacts", "physical_subset", "shared_subset"}
    md = (out / "leaderboard.md").read_text()
    assert "| Harness | Model |" in md and "Good-Model" in md
    html = (out / "index.html").read_text()
    for name in ("good", "broken", "partial", "mini_a", "mini_b", "Good-Model", "data:image/png;base64,"):
        assert name in html
    assert "<img alt='strip mini_a'" in html and "src='http" not in html  # self-contained


def _wait_rows(db: Path, n: int, timeout: float) -> int:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if db.is_file():
            try:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
                k = con.execute("SELECT COUNT(*) FROM units").fetchone()[0]
                con.close()
                if k >= n:
                    return k
            except sqlite3.OperationalError:
                pass
        time.sleep(0.3)
    return -1


def test_sigkill_then_resume_equals_uninterrupted(bench: tuple[Path, Path], baseline: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "physcodegym", "batch", "--tasks", str(bench[0]), "--submissions", str(bench[1]), "--out", str(out),
           "--workers", "1", "--metrics", ",".join(m.split("_")[1] for m in METRICS), "--no-progress", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        got = _wait_rows(out / "results.sqlite", 2, 240)
        assert got >= 2, "batch made no progress"
        os.killpg(proc.pid, signal.SIGKILL)  # the whole process group, mid-run
    finally:
        proc.wait(timeout=60)
    before = store_rows(out)
    assert 2 <= len(before) < 7
    p = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["skipped_final"] == len(before) and doc["ran"] == 7 - len(before)
    after, base = store_rows(out), store_rows(baseline)
    assert set(after) == set(base)
    for k in base:
        assert _comparable(after[k]) == _comparable(base[k]), k
    for k, r in before.items():  # finished units were not redone
        assert after[k]["finished_at"] == r["finished_at"] and after[k]["worker"] == r["worker"]
    # a second resume has nothing to do
    p = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=600)
    assert json.loads(p.stdout)["ran"] == 0


RAY_HEAD = """
import sys, ray
ctx = ray.init(num_cpus=2, include_dashboard=False, _temp_dir=sys.argv[1], configure_logging=False)
print(ctx.address_info["gcs_address"], flush=True)
sys.stdin.read()
ray.shutdown()
"""


def test_ray_gives_the_pool_results(bench: tuple[Path, Path], baseline: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    from physcodegym.batch.scheduler import run_batch

    # a throw-away loopback cluster: no token auth (Ray >= 2.5x enables it by default for local clusters)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    tmp = Path("/tmp") / f"pcgray{os.getpid()}"  # ray's socket paths must stay short
    head = subprocess.Popen([sys.executable, "-c", RAY_HEAD, str(tmp)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "RAY_AUTH_MODE": "disabled"})
    try:
        address = head.stdout.readline().strip()
        assert address, "local Ray head did not start"
        out = tmp_path / "ray"
        doc = run_batch(bench[0], bench[1], out, ray_address=address, metrics=METRICS, configs=["good", "partial"], progress=False)
        assert doc["executor"].startswith("ray:") and doc["ran"] == 4
    finally:
        head.stdin.close()
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    got, base = store_rows(out), store_rows(baseline)
    assert set(got) == {k for k in base if k[0] in ("good", "partial")}
    for k in got:
        assert _comparable(got[k]) == _comparable(base[k]), k


def test_bad_input_is_named(bench: tuple[Path, Path], tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "physcodegym", "batch", "--tasks", str(tmp_path / "nope"), "--submissions", str(bench[1]),
                        "--out", str(tmp_path / "o"), "--json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["field"] == "--tasks"
    bad = tmp_path / "subs" / "cfg"
    bad.mkdir(parents=True)
    (bad / "config.json").write_text('{"timeout_s": "soon"}')
    p = subprocess.run([sys.executable, "-m", "physcodegym", "batch", "--tasks", str(bench[0]), "--submissions", str(tmp_path / "subs"),
                        "--out", str(tmp_path / "o2"), "--json"], capture_output=True, text=True, timeout=120)
    err = json.loads(p.stdout)["error"]
    assert p.returncode == 2 and err["field"] == "timeout_s" and err["file"].endswith("config.json")
