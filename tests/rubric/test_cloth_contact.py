"""no_interpenetration on cloth: a cloth resting on a collider is contact, a cloth falling through a
non-colliding ball is overlap. A sheet has no inside, so the ball's points behind it must not count."""

from __future__ import annotations

from typing import Any

import pytest
from physcodegym.probes.scene.sampling import sample_scene
from physcodegym.tasks.schema import Criterion
from physcodegym.verifier.checks import CheckContext, check_no_interpenetration

FRAMES = 40


def _drape(collides: bool) -> Any:
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, FRAMES
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.5, location=(0, 0, 1.0))
    ball = bpy.context.active_object
    ball.name = "Ball"
    if collides:
        ball.modifiers.new("Collision", "COLLISION")
        ball.collision.thickness_outer = 0.01
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=16, y_subdivisions=16, size=1.6, location=(0, 0, 1.7))
    cl = bpy.context.active_object
    cl.name = "Sheet"
    cm = cl.modifiers.new("Cloth", "CLOTH")
    cm.settings.quality = 4
    cm.collision_settings.distance_min = 0.01
    cm.point_cache.frame_end = FRAMES
    sc.frame_set(1)
    bpy.ops.ptcache.bake_all(bake=True)
    return sc


@pytest.mark.parametrize("collides", [True, False])
def test_cloth_on_ball_is_contact_cloth_through_ball_is_overlap(collides: bool) -> None:
    sc = _drape(collides)
    samples = sample_scene(sc)
    ctx = CheckContext(scene=sc, samples=samples, mapping={"cloth": "Sheet", "ball": "Ball"})
    crit = Criterion(id="solid", description="cloth stays outside the ball", weight=1.0, roles=["cloth", "ball"], check="no_interpenetration")
    out = check_no_interpenetration(ctx, crit)
    ev = out["evidence"]["Sheet|Ball"]
    assert ctx.is_sheet("Sheet") and not ctx.is_sheet("Ball")
    if collides:
        assert out["passed"] is True, out
        assert ev["threshold_m"] > 0.01  # cloth distance_min + collider thickness are contact, not overlap
    else:
        assert out["passed"] is False, out
        assert ev["max_depth_m"] > 0.1


def test_pruned_pair_queries_give_the_numbers_of_the_full_query() -> None:
    """`need="depth"` skips points outside the other's box and `need="distance"` stops at the box bound: both
    must return what querying every point returns, on every frame of a cloth falling through a ball."""
    sc = _drape(False)
    samples = sample_scene(sc)
    ctx = CheckContext(scene=sc, samples=samples, mapping={})
    deep = 0
    for fi in range(len(samples.frames)):
        full = ctx.pair_distance("Sheet", "Ball", fi)
        depth = ctx.pair_distance("Sheet", "Ball", fi, need="depth")
        dist = ctx.pair_distance("Sheet", "Ball", fi, need="distance")
        assert full is not None and depth is not None and dist is not None
        assert depth[1] == pytest.approx(full[1]) and dist[0] == pytest.approx(full[0]), (fi, full, depth, dist)
        deep += full[1] > 0.05
    assert deep >= 3  # the sheet does pass through the ball: the depth query is exercised


@pytest.mark.parametrize("crossed", [True, False])
def test_the_rubric_reads_a_cloth_crossing_from_the_audit(crossed: bool) -> None:
    """`no_self_intersection` is the audit's `self_intersection` finding on the role (one definition of a crossing),
    not a second count with its own neighbour rule: a folded sheet through itself fails, its twin passes."""
    from physcodegym.testing import demo_scenes as D
    from physcodegym.verifier.checks import check_no_self_intersection

    sc = D.folded_sheet(crossed)
    ctx = CheckContext(scene=sc, samples=sample_scene(sc), mapping={"cloth": "Sheet"})
    crit = Criterion(id="no_x", description="the cloth does not cross itself", weight=1.0, roles=["cloth"],
                     check="no_self_intersection")
    out = check_no_self_intersection(ctx, crit)
    audit = [f for f in ctx.findings() if f["kind"] == "self_intersection" and "Sheet" in f["objects"]]
    assert out["passed"] is (not crossed), out
    assert bool(audit) is crossed and out["evidence"]["Sheet"]["max_crossing_pairs"] == (
        int(audit[0]["value"]) if audit else 0)
