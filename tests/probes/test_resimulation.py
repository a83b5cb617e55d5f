"""A bake made from another scene (edited after baking) is not the saved scene's physics.

Blender keeps a baked cache when the scene is edited afterwards, so a program can bake with a helper
(a deflecting plank, weak gravity, an attractor on liquid drops) and then remove it: the saved scene
carries motion its own physics does not make, and nothing in it names the helper. Each defect scene here
is baked for real, edited after the bake, and audited; its twin is the same scene baked honestly. The
audit re-simulates the saved scene in a worker (`probes.resimulation`) and must tell them apart.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from physcodegym.probes.findings import AuditReport
from physcodegym.testing import demo_scenes as D


def plank_deflects(defect: bool, frames: int = 40) -> Any:
    """A ball falls on a tilted plank and rolls off sideways. Defect: the plank is deleted after the bake."""
    import bpy

    sc = D.rigid_stage(frames)
    D.sphere("Ball", (0, 0, 2.0), 0.2)
    plank = D.box("Plank", (0, 0, 1.0), (1.2, 0.6, 0.05), rb="PASSIVE")
    plank.rotation_euler = (0, math.radians(30), 0)
    D.bake()
    if defect:
        bpy.data.objects.remove(plank)
    return sc


def weak_gravity(defect: bool, frames: int = 60) -> Any:
    """A ball falls from 3 m. Defect: baked at 2 m/s², then gravity is set back to 9.81 (the bake is kept)."""
    sc = D.rigid_stage(frames)
    D.sphere("Ball", (0, 0, 3.0), 0.2)
    if defect:
        sc.gravity = (0.0, 0.0, -2.0)
    D.bake()
    sc.gravity = (0.0, 0.0, -9.81)
    return sc


def drops_pulled(defect: bool, frames: int = 30) -> Any:
    """Liquid drops fall on a floor. Defect: baked with an attractor pulling them sideways, which is then
    deleted. Twin: the same drops baked with no field (SPH re-bakes are not bit-identical: the twin checks
    the particle tolerance sits above that noise)."""
    import bpy

    sc = D.liquid_attractor(defect, frames)
    if defect:
        bpy.data.objects.remove(bpy.data.objects["Pull"])
    return sc


BUILDERS = {"plank_deflects": plank_deflects, "weak_gravity": weak_gravity, "drops_pulled": drops_pulled}


@pytest.fixture(scope="module")
def audited_resim() -> Any:
    from physcodegym.probes.audit import audit_scene

    cache: dict[tuple[str, bool], AuditReport] = {}

    def get(case: str, defect: bool) -> AuditReport:
        if (case, defect) not in cache:
            try:
                cache[(case, defect)] = audit_scene(BUILDERS[case](defect))
            finally:
                D.clear_user_handlers()
        return cache[(case, defect)]

    return get


def _resim_findings(rep: AuditReport) -> list[Any]:
    return [f for f in rep.by_kind("scripted_motion") if "re-simulat" in f.message or "simulating the saved scene"
            in f.message]


@pytest.mark.parametrize("case,obj", [("plank_deflects", "Ball"), ("weak_gravity", "Ball"), ("drops_pulled", "Spout")])
def test_a_bake_from_an_edited_scene_is_scripted_and_the_honest_twin_is_clean(audited_resim, case: str,
                                                                               obj: str) -> None:
    bad = audited_resim(case, True)
    hits = _resim_findings(bad)
    assert hits and hits[0].objects == [obj], [(f.kind, f.objects, f.message) for f in bad.findings]
    assert bad.meta["resimulation"]["ran"] is True
    twin = audited_resim(case, False)
    assert twin.meta["resimulation"]["ran"] is True, twin.meta["resimulation"]
    assert not _resim_findings(twin), [(f.objects, f.message) for f in _resim_findings(twin)]
    assert not twin.by_kind("scripted_motion"), [f.message for f in twin.findings]


def test_rigid_bodies_re_simulate_bit_for_bit(audited_resim) -> None:
    """The honest rigid twins re-simulate exactly: the tolerance is not hiding a real difference."""
    for case in ("plank_deflects", "weak_gravity"):
        doc = audited_resim(case, False).meta["resimulation"]
        assert doc["objects"]["Ball"]["max_m"] == 0.0, (case, doc["objects"])


def test_the_re_simulation_stops_after_the_bake_stops_moving(audited_resim) -> None:
    """Only frames up to the bake's last motion plus the tail are simulated again (the costliest branch)."""
    from physcodegym.probes.resimulation import RESIM_TAIL_FRAMES

    doc = audited_resim("weak_gravity", False).meta["resimulation"]
    # the ball rests from frame 30 (measured) of 60: frames 1..45 are simulated again
    assert RESIM_TAIL_FRAMES < doc["frames"] < 60, doc["frames"]


def test_an_unbaked_scene_is_not_simulated_twice() -> None:
    """A stepped (unbaked) scene is simulated by the audit's own sampling: no re-simulation is run."""
    from physcodegym.probes.audit import audit_scene

    sc = D.rigid_stage(20)
    D.sphere("Ball", (0, 0, 1.0), 0.2)
    try:
        rep = audit_scene(sc)
    finally:
        D.clear_user_handlers()
    assert rep.meta["resimulation"]["ran"] is False and "no cache is baked" in rep.meta["resimulation"]["reason"]


def test_an_audit_leaves_a_disk_cache_as_it_found_it(tmp_path) -> None:
    """Branches free bakes; on a disk cache that deleted the submission's own files (measured: 30 cloth frames
    down to 1 after one audit). Each branch now works on a private copy: the files stay, and the re-simulation
    of the honest disk-cached cloth matches its bake."""
    import bpy
    from physcodegym.probes.audit import audit_path

    sc = D.reset(20)
    D.camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=8, y_subdivisions=8, size=2, location=(0, 0, 2))
    sheet = bpy.context.active_object
    sheet.name = "Sheet"
    cloth = sheet.modifiers.new("Cloth", "CLOTH")
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))  # a disk cache needs a saved file
    cloth.point_cache.use_disk_cache = True
    cloth.point_cache.frame_end = 20
    D.bake()
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    cache_dir = tmp_path / "blendcache_scene"
    before = sorted(p.name for p in cache_dir.iterdir())
    assert len(before) >= 20
    rep = audit_path(blend)
    assert sorted(p.name for p in cache_dir.iterdir()) == before
    doc = rep.meta["resimulation"]
    assert doc["ran"] is True and doc["objects"]["Sheet"]["max_m"] == 0.0, doc
    assert not rep.by_kind("scripted_motion"), [f.message for f in rep.findings]
