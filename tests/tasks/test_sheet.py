"""The task contact sheet (`physcodegym tasks sheet`, `authoring.sheet`): real videos written with OpenCV, one
frame decoded per task, tiles on a sheet and the distance between scenes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from physcodegym.authoring.sheet import SheetTask, build_sheet


def _video(path: Path, colour: tuple[int, int, int], box_x: int) -> Path:
    import cv2

    w = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 30, (160, 90))
    for f in range(120):
        im = np.full((90, 160, 3), colour, np.uint8)
        cv2.rectangle(im, (box_x + f % 10, 30), (box_x + 30 + f % 10, 60), (255, 255, 255), -1)
        w.write(im)
    w.release()
    return path


def test_sheet_tiles_every_task_and_seeds_of_a_template_are_closer_than_other_templates(tmp_path: Path) -> None:
    import cv2

    tasks = [SheetTask("a", "fam_a", "g1", _video(tmp_path / "a.mp4", (40, 40, 40), 10)),
             SheetTask("a_s1", "fam_a", "g1", _video(tmp_path / "a1.mp4", (45, 40, 40), 14)),
             SheetTask("b", "b", "g2", _video(tmp_path / "b.mp4", (200, 180, 20), 110))]
    doc = build_sheet(tasks, tmp_path / "sheet.png", at_s=2.0, columns=2)
    im = cv2.imread(str(tmp_path / "sheet.png"))
    assert im is not None and im.shape[0] > im.shape[1] / 2  # 3 tiles on 2 columns: two rows
    assert doc["tasks"] == 3 and doc["templates"] == 2
    assert doc["median_within_template"] < doc["median_across_templates"], doc
    assert doc["closest_across"]["tasks"] in (["a", "b"], ["a_s1", "b"]), doc
    # per subcategory: g1 has one template (nothing across), g2 one task (no pair at all)
    g1 = doc["by_group"]["g1"]
    assert g1["templates"] == 1 and g1["first_frame"]["across_templates"] is None
    assert g1["motion_mask"]["within_template"] is not None, g1
    assert doc["by_group"]["g2"]["first_frame"] == {"within_template": None, "across_templates": None}


def test_motion_masks_tell_where_things_move(tmp_path: Path) -> None:
    """Two templates in one subcategory moving a box in different places are far apart on the motion mask (1 - IoU
    near 1) while two seeds of one template (the box a few pixels apart) are close; a still clip has no mask."""
    from physcodegym.authoring.sheet import mask_distance, sample_video

    left, left2 = sample_video(_video(tmp_path / "l.mp4", (40, 40, 40), 10), 1.0), \
        sample_video(_video(tmp_path / "l2.mp4", (40, 40, 40), 12), 1.0)
    right = sample_video(_video(tmp_path / "r.mp4", (40, 40, 40), 110), 1.0)
    assert left.motion.any() and mask_distance(left.motion, left2.motion) < 0.5
    assert mask_distance(left.motion, right.motion) > 0.9
    still = np.zeros_like(left.motion)
    assert mask_distance(still, still) == 0.0 and mask_distance(still, left.motion) == 1.0
    tasks = [SheetTask("l", "tl", "g", tmp_path / "l.mp4"), SheetTask("l2", "tl", "g", tmp_path / "l2.mp4"),
             SheetTask("r", "tr", "g", tmp_path / "r.mp4")]
    doc = build_sheet(tasks, tmp_path / "t.png", at_s=1.0, per_template=True)
    mm = doc["by_group"]["g"]["motion_mask"]
    assert mm["within_template"] < 0.5 < mm["across_templates"], mm
    import cv2

    im = cv2.imread(str(tmp_path / "t.png"))
    assert im.shape[0] == 2 * (108 + 16) and im.shape[1] == 3 * 192  # two templates, first/middle/last each


def test_sheet_cli_on_the_shipped_tasks_writes_a_jpeg(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    out = tmp_path / "sheet.jpg"
    p = subprocess.run([sys.executable, "-m", "physcodegym", "tasks", "sheet", "--out", str(out), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert out.read_bytes()[:3] == b"\xff\xd8\xff" and doc["tasks"] >= 15 and doc["templates"] >= 15, doc
