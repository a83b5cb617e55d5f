"""Liquid particles passing through a rendered solid with no collider are `no_contact_response`; with a collider, not.
Liquid that vanishes mid-run (a plate that kills the particles it touches, a lifetime shorter than the run) is
`non_physical_parameter` naming the setting; the same pour with neither stays clean."""

from __future__ import annotations

import pytest

bpy = pytest.importorskip("bpy")

from physcodegym.probes.audit.audit import audit_scene  # noqa: E402


def _pour_on_plate(with_collider: bool, kill: bool = False, lifetime: int = 200):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, 40
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0, 0, 0))
    plate = bpy.context.active_object
    plate.name = "Plate"
    plate.scale = (1.0, 1.0, 0.05)
    bpy.ops.object.transform_apply(scale=True)
    if with_collider:
        plate.modifiers.new("Collision", "COLLISION")
        plate.collision.use_particle_kill = kill
    bpy.ops.mesh.primitive_ico_sphere_add(radius=0.15, location=(0, 0, 1.0))
    em = bpy.context.active_object
    em.name = "Spout"
    em.hide_render = True
    em.modifiers.new("Liquid", "PARTICLE_SYSTEM")
    ps = em.particle_systems[0].settings
    ps.count, ps.frame_start, ps.frame_end, ps.lifetime = 300, 1, 10, lifetime
    ps.physics_type = "FLUID"
    ps.normal_factor = 0.0
    bpy.ops.ptcache.bake_all(bake=True)
    return sc


def test_particles_through_collider_less_plate_are_reported() -> None:
    rep = audit_scene(_pour_on_plate(with_collider=False))
    hits = [f for f in rep.findings if f.kind == "no_contact_response" and "Plate" in f.objects]
    assert hits, [f.message for f in rep.findings]
    assert hits[0].evidence["crossings"] >= 50


def test_particles_stopped_by_a_collider_are_not_reported() -> None:
    rep = audit_scene(_pour_on_plate(with_collider=True))
    assert not [f for f in rep.findings if f.kind == "no_contact_response"], [f.message for f in rep.findings]


def _vanish(rep):
    return [f for f in rep.findings if f.kind == "non_physical_parameter" and f.evidence.get("param") == "particle_death"]


@pytest.mark.parametrize("how", ["kill_collider", "short_lifetime"])
def test_vanishing_liquid_is_a_non_physical_parameter(how: str) -> None:
    sc = (_pour_on_plate(with_collider=True, kill=True) if how == "kill_collider"
          else _pour_on_plate(with_collider=True, lifetime=15))
    rep = audit_scene(sc)
    hits = _vanish(rep)
    assert hits and "Spout" in hits[0].objects, [(f.kind, f.message) for f in rep.findings]
    paths = [c["path"] for c in hits[0].evidence["causes"]]
    want = "collision.use_particle_kill" if how == "kill_collider" else "settings.lifetime"
    assert any(p.endswith(want) for p in paths), paths
    assert hits[0].evidence["died"] >= 100, hits[0].evidence
    if how == "kill_collider":
        assert "Plate" in hits[0].objects


def test_liquid_that_stays_is_not_vanishing() -> None:
    rep = audit_scene(_pour_on_plate(with_collider=True))
    assert not _vanish(rep), [f.message for f in rep.findings]
