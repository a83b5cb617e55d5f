"""Geometry probes against analytic answers on real bpy meshes (two spheres, a box stack, a folded sheet)."""

from __future__ import annotations

import math

import numpy as np
import pytest


@pytest.fixture(scope="module")
def spheres():
    """Two r=1 spheres 1.5 m apart on frame 1 and 3 m apart on frame 2 (true depth 0.5, then gap 1.0)."""
    import bpy
    from physcodegym.probes.scene.geometry import SceneGeometry
    from physcodegym.probes.scene.sampling import sample_scene
    from physcodegym.testing import demo_scenes as D

    sc = D.reset(2)
    a = D.sphere("A", (0, 0, 0), 1.0, rb=None)
    b = D.sphere("B", (1.5, 0, 0), 1.0, rb=None)
    b.keyframe_insert("location", frame=1)
    b.location.x = 3.0
    b.keyframe_insert("location", frame=2)
    D.hold_keys(b)
    D.box("Slab", (0, 0, -1.5), (4, 4, 1.0)).scale = (1.0, 1.0, 1.0)
    assert a.name == "A"
    s = sample_scene(sc)
    return SceneGeometry.from_scene(s, sc), bpy


def test_depth_and_distance_of_two_spheres(spheres):
    g, _ = spheres
    assert g.penetration_depth("A", "B", 1) == pytest.approx(0.5, abs=0.03)
    assert g.penetration_depth("A", "B", 2) == 0.0
    assert g.min_distance("A", "B", 2, max_dist=2.0) == pytest.approx(1.0, abs=0.03)
    assert g.support_gap("A", "B", 1) < -0.4
    assert g.support_gap("A", "B", 2, max_dist=2.0) > 0.9


def test_resting_contact_has_zero_gap_and_no_depth(spheres):
    g, _ = spheres
    # Slab top at z=-1.0 touches sphere A's bottom pole: distance ~0, depth ~0
    assert g.min_distance("A", "Slab", 1) < 0.01
    assert g.penetration_depth("A", "Slab", 1) < 0.01


def test_aabb_broad_phase(spheres):
    g, _ = spheres
    box = g.aabbs("B")
    assert box.shape == (2, 2, 3)
    assert box[1, 0, 0] == pytest.approx(2.0, abs=1e-5) and box[1, 1, 0] == pytest.approx(4.0, abs=1e-5)
    pairs = {(a, b): m.tolist() for a, b, m in g.candidate_pairs(["A", "B", "Slab"])}
    assert pairs[("A", "B")] == [True, False]
    tri = g.world_triangles("B", 2)
    assert tri.shape[1:] == (3, 3) and np.all(tri[..., 0] >= 2.0 - 1e-5)


def test_self_intersections_exclude_neighbours():
    """A sheet folded flat onto itself through its middle crosses; the flat sheet does not."""
    import bpy
    from physcodegym.probes.scene.geometry import SceneGeometry
    from physcodegym.probes.scene.sampling import sample_scene
    from physcodegym.testing import demo_scenes as D

    sc = D.reset(1)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=12, y_subdivisions=6, size=2)
    ob = bpy.context.active_object
    ob.name = "Sheet"
    ob.modifiers.new("Cloth", "CLOTH")
    flat = SceneGeometry.from_scene(sample_scene(sc), sc)
    assert len(flat.self_intersections("Sheet", 1)) == 0
    # tilt the right half up and through the left half (a crossing, not a touching fold)
    for v in ob.data.vertices:
        if v.co.x > 0.2:
            x = v.co.x - 0.2
            v.co.x, v.co.z = 0.2 - x * math.cos(0.3), 0.15 - x * 0.5
    ob.data.update()
    crossed = SceneGeometry.from_scene(sample_scene(sc), sc)
    assert len(crossed.self_intersections("Sheet", 1)) > 0


def test_centre_bound_never_under_the_sampled_depth_and_prunes_resting_contact():
    """The one-query bound of a small body against a large closed one (`centre_depth_bounds`) is never below the
    sampled depth, whether the ball is apart, resting, sunk, centred in the slab or wholly inside it; it is near
    zero for the resting ball (what it prunes) and gives no bound (inf) once the centre is inside."""
    from physcodegym.probes.scene.geometry import SceneGeometry
    from physcodegym.probes.scene.sampling import sample_scene
    from physcodegym.testing import demo_scenes as D

    heights = [0.2, 0.1, 0.07, 0.02, -0.05, -0.3]  # ball centre z; slab top at 0, bottom at -0.5; r = 0.1
    sc = D.reset(len(heights))
    ball = D.sphere("Ball", (0.1, 0.05, heights[0]), 0.1, rb=None)
    for f, z in enumerate(heights, start=1):
        ball.location.z = z
        ball.keyframe_insert("location", frame=f)
    D.hold_keys(ball)
    slab = D.box("Slab", (0, 0, -0.25), (2.0, 1.0, 0.5))
    slab.rotation_euler.z = 0.5  # the query runs in the slab's own (rotated, scaled) frame
    g = SceneGeometry.from_scene(sample_scene(sc), sc)
    fis = np.arange(len(heights))
    bound = g.centre_depth_bounds("Ball", "Slab", fis)
    assert np.array_equal(bound, g.centre_depth_bounds("Slab", "Ball", fis))  # the smaller body is found either way
    depth = np.array([g.penetration_depth("Ball", "Slab", f) for f in range(1, len(heights) + 1)])
    assert depth[0] == 0.0 and depth[2] == pytest.approx(0.03, abs=0.01) and depth[5] > 0.15
    assert np.all(bound >= depth - 1e-9), (bound, depth)
    assert bound[0] == 0.0 and bound[1] < 0.005  # apart, resting: pruned without the exact query
    assert bound[2] == pytest.approx(0.03, abs=0.005) and bound[3] == pytest.approx(0.08, abs=0.005)
    assert np.isinf(bound[4]) and np.isinf(bound[5])  # centre inside: no bound


def test_centre_bound_is_not_used_where_merged_shells_put_faces_inside_the_material():
    """A slab merged with a post that crosses it (one object, two closed shells): a ball sunk into the slab right
    above the post's top face, which lies inside the slab, has that face as its centre's nearest, on its outer
    side. The bound is not used there (inf), so the sampled depth decides; a single box keeps the bound."""
    import bmesh
    import bpy
    from physcodegym.probes.scene.geometry import SceneGeometry
    from physcodegym.probes.scene.sampling import sample_scene
    from physcodegym.testing import demo_scenes as D

    sc = D.reset(1)
    bm = bmesh.new()
    for loc, size in (((0, 0, -0.25), (2.0, 2.0, 0.5)), ((0, 0, -0.6), (0.2, 0.2, 0.6))):  # post top at z = -0.3
        made = bmesh.ops.create_cube(bm, size=1.0)
        for v in made["verts"]:
            v.co = (v.co.x * size[0] + loc[0], v.co.y * size[1] + loc[1], v.co.z * size[2] + loc[2])
    me = bpy.data.meshes.new("Merged")
    bm.to_mesh(me)
    bm.free()
    sc.collection.objects.link(bpy.data.objects.new("Merged", me))
    D.sphere("Ball", (0, 0, -0.2), 0.1, rb=None)  # inside the slab (top at 0); its centre is nearest the post
    D.box("Single", (5, 0, -0.25), (2.0, 2.0, 0.5))
    g = SceneGeometry.from_scene(sample_scene(sc), sc)
    assert g.meshes["Merged"].closed and not g._one_boundary("Merged")
    assert np.isinf(g.centre_depth_bounds("Ball", "Merged", np.array([0])))[0]
    assert g.penetration_depth("Ball", "Merged", 1) > 0.1
    assert g._one_boundary("Single")
