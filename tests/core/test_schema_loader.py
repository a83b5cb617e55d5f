"""Task schema and loader: valid tasks load; malformed ones are refused naming file and field."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from physcodegym.core.errors import InputError
from physcodegym.tasks.loader import load_task, parse_task

MINIMAL = {
    "id": "unit_ball",
    "title": "A ball falls on a table",
    "category": "rigid",
    "subcategory": "falling-bouncing",
    "roles": [
        {"name": "ball", "description": "red rubber ball"},
        {"name": "table", "description": "wooden table", "core": False},
    ],
    "checklist": [{"id": "obj_ball", "category": "ball", "count": 1, "attributes": ["red"], "roles": ["ball"]}],
    "events": [
        {
            "id": "ev_land",
            "description": "the ball lands on the table",
            "roles": ["ball", "table"],
            "interval": {"start_s": 0.5, "end_s": 1.0},
            "weight": 1.0,
            "key": True,
        }
    ],
    "rubric": {
        "criteria": [
            {"id": "c_sim", "description": "ball moves by simulation", "weight": 1, "roles": ["ball"], "check": "moves_by_simulation"},
            {
                "id": "c_support",
                "description": "ball rests on the table",
                "weight": 1,
                "roles": ["ball"],
                "check": "supported_by",
                "params": {"support": "table"},
                "structural": True,
            },
        ]
    },
}


def write_task(tmp_path: Path, doc: dict) -> Path:
    folder = tmp_path / doc.get("id", "t")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.json").write_text(json.dumps(doc))
    return folder


def test_minimal_task_loads(tmp_path: Path) -> None:
    lt = load_task(write_task(tmp_path, MINIMAL))
    assert lt.id == "unit_ball"
    assert lt.task.rubric.aggregation.default_cap == 0.5
    assert lt.task.events[0].interval.start_frame == 16


@pytest.mark.parametrize(
    "mutate, field, words",
    [
        (lambda d: d.update(subcategory="pouring-filling"), "<root>", "not in category"),
        (lambda d: d.update(category="wind"), "<root>", "no subcategories"),
        (lambda d: d["events"][0].update(roles=["ghost"]), "<root>", "unknown roles"),
        (lambda d: d["rubric"]["criteria"][0].update(check="looks_nice"), "rubric.criteria[0]", "unknown check"),
        (lambda d: d["rubric"]["criteria"][1].update(params={}), "rubric.criteria[1]", "needs params"),
        (lambda d: d.pop("checklist"), "checklist", "Field required"),
        (lambda d: d["events"][0]["interval"].update(start_s=9.5), "events[0].interval.start_s", "less than or equal"),
        (lambda d: d["events"][0].update(weight=0), "events[0].weight", "greater than 0"),
        (lambda d: d.update(colour="red"), "colour", "Extra inputs"),
    ],
)
def test_malformed_task_names_file_and_field(tmp_path: Path, mutate, field: str, words: str) -> None:
    doc = copy.deepcopy(MINIMAL)
    mutate(doc)
    folder = write_task(tmp_path, doc)
    with pytest.raises(InputError) as ei:
        parse_task(folder / "task.json")
    err = ei.value
    assert err.file == str(folder / "task.json")
    assert err.field == field
    assert words in err.message


def test_invalid_json_names_line(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "task.json").write_text('{"id": "x",\n "title": }')
    with pytest.raises(InputError) as ei:
        parse_task(folder / "task.json")
    assert "line 2" in ei.value.message


def test_cli_validate_exits_2_with_json_error(tmp_path: Path) -> None:
    doc = copy.deepcopy(MINIMAL)
    doc["rubric"]["criteria"][0]["check"] = "looks_nice"
    folder = write_task(tmp_path, doc)
    p = subprocess.run(
        [sys.executable, "-m", "physcodegym", "tasks", "validate", str(folder), "--no-media", "--json"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2, p.stderr
    out = json.loads(p.stdout)  # stdout holds exactly one JSON document
    assert out["error"]["file"].endswith("task.json")
    assert out["error"]["field"] == "rubric.criteria[0]"


def test_missing_video_is_reported_with_field(tmp_path: Path) -> None:
    folder = write_task(tmp_path, MINIMAL)
    with pytest.raises(InputError) as ei:
        load_task(folder, check_media=True)
    assert ei.value.field == "video.file"


def test_wrong_length_video_reports_measured_frames(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    folder = write_task(tmp_path, MINIMAL)
    w = cv2.VideoWriter(str(folder / "reference.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), 30, (640, 360))
    for i in range(45):
        w.write(np.full((360, 640, 3), i * 5 % 255, np.uint8))
    w.release()
    with pytest.raises(InputError) as ei:
        load_task(folder, check_media=True)
    assert ei.value.extra["measured"]["frames"] == 45
    assert "45 frames" in ei.value.message
