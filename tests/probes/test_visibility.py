"""A collider hidden by its shading is a hidden collider: the audit renders each collider alone.

The settings-based reading of "rendered" knows hide_render, camera visibility, holdout, a Transparent BSDF and
a Principled alpha of 0 wired to the output. Here the shelf holding a parcel in mid-air is hidden by shading
the settings do not name (a Mix Shader fully towards Transparent; a Light Path "Is Camera Ray" factor; an alpha
fed by a Value node), baked for real and audited. Its twin has the same node shapes with an opaque result, and
an occluded shelf (hidden behind a wall from the camera, but opaque) must not be taken for an invisible one.
"""

from __future__ import annotations

from typing import Any

import pytest
from physcodegym.probes.audit.findings import AuditReport
from physcodegym.testing import demo_scenes as D


def shaded_shelf(how: str, hide: bool, frames: int = 40) -> Any:
    """A parcel resting on a shelf 1 m up, the shelf shaded by `how`; `hide`: the shading hides it."""
    sc = D.rigid_stage(frames)
    sc.render.engine = "CYCLES"
    shelf = D.box("Shelf", (0, 0, 1.0), (1.0, 0.6, 0.05), rb="PASSIVE")
    shelf.data.materials.append(D.shading_material(how, hide))
    D.box("Parcel", (0, 0, 1.3), (0.3, 0.3, 0.3), rb="ACTIVE", mass=0.5)
    D.bake()
    return sc


def occluded_shelf(frames: int = 40) -> Any:
    """The parcel on an opaque shelf that a wall between it and the camera hides: occluded, not invisible."""
    sc = D.rigid_stage(frames)
    sc.render.engine = "CYCLES"
    D.box("Shelf", (0, 0, 1.0), (1.0, 0.6, 0.05), rb="PASSIVE")
    D.box("Parcel", (0, 0, 1.3), (0.3, 0.3, 0.3), rb="ACTIVE", mass=0.5)
    D.box("Wall", (0, -3, 1.2), (3.0, 0.1, 2.4), rb="PASSIVE")
    D.bake()
    return sc


@pytest.fixture(scope="module")
def audited_vis() -> Any:
    from physcodegym.probes.audit.audit import audit_scene

    cache: dict[tuple[str, bool], AuditReport] = {}

    def get(how: str, hide: bool) -> AuditReport:
        if (how, hide) not in cache:
            try:
                sc = occluded_shelf() if how == "occluded" else shaded_shelf(how, hide)
                cache[(how, hide)] = audit_scene(sc)
            finally:
                D.clear_user_handlers()
        return cache[(how, hide)]

    return get


@pytest.mark.parametrize("how", ["mix", "camera_ray", "value_alpha"])
def test_a_shelf_hidden_by_shading_is_a_hidden_support_and_its_twin_is_clean(audited_vis, how: str) -> None:
    bad = audited_vis(how, True)
    vis = bad.meta["visibility"]
    assert vis["ran"] and vis["objects"]["Shelf"]["invisible"] is True, vis
    hits = [f for f in bad.by_kind("hidden_support") if "Shelf" in f.objects or "Shelf" in f.message]
    assert hits, [(f.kind, f.objects, f.message) for f in bad.findings]
    twin = audited_vis(how, False)
    tv = twin.meta["visibility"]
    assert tv["objects"]["Shelf"]["invisible"] is False and tv["objects"]["Shelf"]["covered_px"] > 30, tv
    assert not twin.by_kind("hidden_support"), [f.message for f in twin.findings]


def test_a_shelf_that_fades_after_the_first_frame_is_a_hidden_support_and_its_twin_is_clean(audited_vis) -> None:
    """Shading keyed to change: opaque on frame 1 (the frame a static shelf used to be judged on), transparent from
    frame 2 while it holds the parcel. The twin is keyed too, to a factor that still shows it."""
    bad = audited_vis("mix_keyed", True)
    assert any("Fac" in p or "default_value" in p for p in bad.scene["appearance_varies"]), bad.scene
    rec = bad.meta["visibility"]["objects"]["Shelf"]
    assert rec["invisible"] is True and rec["frame"] > 1 and rec["judged_frames"] > 9, rec
    assert any("Shelf" in f.objects for f in bad.by_kind("hidden_support")), \
        [(f.kind, f.objects, f.message) for f in bad.findings]
    twin = audited_vis("mix_keyed", False)
    tr = twin.meta["visibility"]["objects"]["Shelf"]
    assert tr["invisible"] is False and tr["judged_frames"] > 9, tr
    assert not twin.by_kind("hidden_support"), [f.message for f in twin.findings]


def keyed_hidden_shelf(hide: bool, frames: int = 40) -> Any:
    """Workbench: the parcel on a shelf whose hide_render is keyed. `hide`: hidden on every frame but the last
    (the frame the settings used to be read on); the twin is keyed shown on every frame."""
    sc = D.rigid_stage(frames)
    shelf = D.box("Shelf", (0, 0, 1.0), (1.0, 0.6, 0.05), rb="PASSIVE")
    shelf.hide_render = hide
    shelf.keyframe_insert("hide_render", frame=1)
    shelf.hide_render = False
    shelf.keyframe_insert("hide_render", frame=frames)
    D.box("Parcel", (0, 0, 1.3), (0.3, 0.3, 0.3), rb="ACTIVE", mass=0.5)
    D.bake()
    return sc


@pytest.mark.parametrize("hide", [True, False])
def test_a_shelf_keyed_hidden_but_on_the_last_frame_is_a_hidden_support(hide: bool) -> None:
    from physcodegym.probes.audit.audit import audit_scene

    try:
        rep = audit_scene(keyed_hidden_shelf(hide))
    finally:
        D.clear_user_handlers()
    assert "objects['Shelf'].hide_render" in rep.scene["appearance_varies"], rep.scene
    hits = [f for f in rep.by_kind("hidden_support") if "Shelf" in f.objects]
    if hide:
        assert rep.scene["hidden_frames"]["Shelf"]["count"] == 39, rep.scene["hidden_frames"]
        assert hits, [(f.kind, f.objects, f.message) for f in rep.findings]
    else:
        assert "Shelf" not in rep.scene["hidden_frames"], rep.scene["hidden_frames"]
        assert not hits and not rep.by_kind("hidden_support"), [f.message for f in rep.findings]


def test_an_occluded_support_is_not_an_invisible_one(audited_vis) -> None:
    rep = audited_vis("occluded", False)
    vis = rep.meta["visibility"]["objects"]
    assert vis["Shelf"]["invisible"] is False and vis["Wall"]["invisible"] is False, vis
    assert not rep.by_kind("hidden_support"), [f.message for f in rep.findings]


def test_a_workbench_scene_is_read_from_its_settings_not_rendered() -> None:
    """Workbench draws exactly the viewport colour and alpha the settings give (read by the sampler), so no probe
    render runs there: its GPU renders are kept out of long-lived processes."""
    from physcodegym.probes.audit.audit import audit_scene

    sc = shaded_shelf("mix", True)
    sc.render.engine = "BLENDER_WORKBENCH"
    try:
        rep = audit_scene(sc)
    finally:
        D.clear_user_handlers()
    assert rep.meta["visibility"]["ran"] is False and "Workbench" in rep.meta["visibility"]["reason"]
