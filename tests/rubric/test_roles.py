"""Role mapping: explicit file first, then projection + colour, then names; unmapped roles reported."""

import json
from pathlib import Path

import pytest
from physcodegym.core.errors import InputError
from physcodegym.probes.scene.roles import load_roles_file, map_roles


def cands() -> list[dict]:
    # names are deliberately misleading: "red_thing" is the white ball on screen
    return [
        {"name": "red_thing", "type": "MESH", "screen_xy": (0.21, 0.51), "color_rgb": (0.9, 0.9, 0.9)},
        {"name": "Sphere.001", "type": "MESH", "screen_xy": (0.49, 0.52), "color_rgb": (0.8, 0.1, 0.05)},
        {"name": "Plane", "type": "MESH", "screen_xy": (0.5, 0.61), "color_rgb": (0.4, 0.25, 0.1)},
    ]


def test_projection_beats_misleading_names(billiard_task) -> None:
    m = map_roles(billiard_task.task, cands())
    assert m["roles"]["incoming_ball"]["object"] == "red_thing"
    assert m["roles"]["target_ball"]["object"] == "Sphere.001"
    assert m["roles"]["target_ball"]["source"] == "projection"
    assert m["unmapped"] == []


def test_explicit_mapping_wins_and_names_fill_in(billiard_task) -> None:
    c = [dict(x, screen_xy=None) for x in cands()] + [{"name": "TableTop", "type": "MESH", "screen_xy": None, "color_rgb": None}]
    m = map_roles(billiard_task.task, c, explicit={"incoming_ball": "Sphere.001"})
    assert m["roles"]["incoming_ball"] == {"object": "Sphere.001", "confidence": 1.0, "source": "explicit"}
    assert m["roles"]["table"]["object"] == "TableTop" and m["roles"]["table"]["source"] == "name"
    assert m["roles"]["target_ball"]["object"] == "red_thing"  # name hint 'red'
    assert m["unmapped"] == []


def test_unmapped_and_bad_explicit_reported(billiard_task) -> None:
    m = map_roles(billiard_task.task, [{"name": "Cube", "type": "MESH", "screen_xy": (0.9, 0.1), "color_rgb": None}], explicit={"target_ball": "Nope", "ghost_role": "Cube"})
    assert set(m["unmapped"]) == {"incoming_ball", "target_ball", "table"}
    assert any("Nope" in p for p in m["problems"]) and any("ghost_role" in p for p in m["problems"])


def test_bad_roles_file_names_file_and_field(tmp_path: Path) -> None:
    p = tmp_path / "roles.json"
    p.write_text(json.dumps({"incoming_ball": 3}))
    with pytest.raises(InputError) as e:
        load_roles_file(p)
    assert e.value.field == "incoming_ball" and str(p) in str(e.value.file)
