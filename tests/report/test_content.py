"""What the report says, read from the files it wrote: readable criteria, findings grouped by kind with their
witness plot and an outlined still (the shortcut has them, its simulated twin has none), the trajectory and
IoU plots, self-contained media, and the offline open-time budget."""

from __future__ import annotations

import json
import re
from pathlib import Path


def _section(html: str, config: str) -> str:
    m = re.search(rf"<section class=card id='cfg-{config}'.*?</section>", html, re.S)
    assert m, f"no section for {config}"
    return m.group(0)


def test_criteria_read_as_sentences_and_findings_are_grouped(report: dict) -> None:
    html = Path(report["pages"][0]).read_text()
    good, short, broken = (_section(html, c) for c in ("good", "shortcut", "broken"))
    # one sentence per criterion: what was measured, the threshold, the verdict; raw numbers folded away
    assert "Measured whether the roles move and their motion comes from a solver" in good
    assert "Verdict: passed" in good and "Verdict: failed" in short
    assert "Threshold:" in short and "<details><summary>raw numbers</summary>" in short
    # the shortcut's keyframed ball: a scripted_motion group naming the object and its frames
    assert "Scripted motion:" in short and "<b>Ball</b>" in short and re.search(r"frames? \d+", short)
    assert "Scripted motion:" not in good and "The audit found no task-independent violation." in good
    assert "no valid artifact" in broken.lower() and "program exited with status 1" in broken
    # the finding's still, with the object box projected through the scene camera
    out = Path(report["out"])
    cache = json.loads((out / "evidence" / "shortcut__mini_r.json").read_text())
    sm = [f for f in cache["findings"] if f["kind"] == "scripted_motion"]
    assert sm and "Ball" in sm[0]["still"]["boxes"], cache
    x0, y0, x1, y1 = sm[0]["still"]["boxes"]["Ball"]
    assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1 and (x1 - x0) < 0.5
    # every finding has its witness plot and its still
    n = short.count("<div class=finding>")
    assert n == len(cache["findings"]) >= 1 and short.count("alt='witness ") == n and short.count("alt='still ") == n
    stills = re.findall(r"src='\.\./(img/[^']+_still\.png)'", short)
    assert stills and all((out / s).is_file() for s in stills)
    assert not (out / "evidence" / "good__mini_r.json").exists()  # nothing to re-read for a clean run


def test_plots_media_and_size(report: dict) -> None:
    out = Path(report["out"])
    html = Path(report["pages"][0]).read_text()
    assert (out / "img" / "mini_r" / "trajectories.png").is_file() and "alt='trajectories mini_r'" in html
    assert (out / "img" / "mini_r" / "iou.png").is_file()
    vids = re.findall(r"<video[^>]* src='\.\./(media/[^']+)'", html)
    assert len(vids) == 3 and all((out / v).is_file() for v in vids)
    assert report["videos"]["errors"] == [] and report["videos"]["clips"] == 3
    assert "http://" not in html and "https://" not in html
    index = (out / "index.html").read_text()
    assert "http://" not in index and "https://" not in index
    assert "S_tot vs launches" in index and "alt='S_tot vs launches'" in index
    # every mean carries its averaging set
    assert index.count("<small>n=") >= 3 * 9
    print(f"\nreport: {report['bytes'] / 1e6:.2f} MB, built in {report['build_seconds']:.1f} s")
    assert report["bytes"] < 5e6


def test_report_names_its_task_set(report: dict) -> None:
    """Markdown, JSON and HTML headers name the set and version every row was scored on (a custom folder here)."""
    out = Path(report["out"])
    ts = report["task_set"]
    assert ts["set"] == "custom:tasks" and ts["version"] and ts["selected"] == ts["n_tasks"] == 1
    assert ts["rows_on"] == [f"{ts['set']}@{ts['version']}"]
    line = f"Task set: {ts['set']} version {ts['version']} (1 of 1 tasks, sha256 {ts['sha256'][:12]})."
    assert line in (out / "leaderboard.md").read_text().splitlines()
    assert json.loads((out / "leaderboard.json").read_text())["task_set"]["version"] == ts["version"]
    assert f"<p class=taskset>{line}</p>" in (out / "index.html").read_text()
