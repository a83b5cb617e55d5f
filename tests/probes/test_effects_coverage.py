"""Every hidden collider is measured, and one whose measurement fails counts as acting (`probes.audit.detect_fields`,
`probes.audit.effects`; real bakes and real re-bake workers):

- decoys first: four colliders that do not render and touch nothing are created before the hidden ramp that
  deflects the falling ball. Only the first four candidates get a branch of their own; the rest are re-baked
  without all of them at once, so the ramp is still found (before: it was never measured, and passed). Twin: the
  same decoys with a rendered ramp (the decoys change nothing, so nothing is reported);
- a hidden deflector that is also a particle emitter (one particle that does not render): emitters used to be left
  out of the candidates (removing one removes its particles), so it was never measured. Its branch now takes away
  only its collision (`cf_worker.decollide`). Twin: the same emitting ramp, rendered;
- an invisible pusher: the ball that rolls down the ramp into the dominoes does not render (the dominoes fall
  with no visible cause). Dynamic bodies were left out of the candidates, and this audited clean. Twin: the
  ball renders;
- the same invisible pusher hidden otherwise: in a collection excluded from the only view layer that renders
  (the first one switched off), or from a second view layer that the compositor outputs alone (both render; the
  probe renders through the compositor and compares with the frame rendered with no geometry), in an "indirect
  only" collection (Cycles), or by its shading (a Mix Shader fully
  towards Transparent, Cycles: the probe renders it on the frame the camera sees it best, not on the first,
  where it is still out of view). Each audited clean before;
- an invisible anchor: the pendulum's bob swings on a HINGE joint to a pivot that does not render (the task admits
  hinges; the joint's anchor must still be something the frames show). Twin: the rendered pivot;
- a branch that fails: with the branch time limit cut to 0.01 s (as a scene too slow to re-bake
  would hit the real one), the hidden ramp is `hidden_support` with the reason it could not be measured. Twin:
  the rendered ramp under the same limit, no hidden collider to measure, no `hidden_support`;
- a decoy wind: a hidden FORCE pump lifts the ball at frame 46 while a wind field 40 m away (reach 1 m) is there
  to "explain" the energy. Removing any effector changes the order of Bullet's force sums, so in this chaotic
  scene the re-bake without the far wind moves the ball too; a field is now credited only if the re-bake without
  it loses the energy rise (before: the wind was credited and the scene audited clean). With seven winds (six
  measured alone, the seventh with the pump in the shared branch) the rise is not credited either. Twin: the wind
  itself blows the ball up from below (it supplied the energy: admitted, no `energy_gain`).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from physcodegym.testing import demo_scenes as D


def deflected_ball(ramp_hidden: bool, decoys: int = 0, frames: int = 60, emits: bool = False) -> Any:
    """A ball falling onto a 35-degree ramp 1.5 m up, which throws it sideways; `decoys` colliders that do not
    render stand 6 m away and are created first; `emits`: the ramp emits one particle that does not render."""
    sc = D.rigid_stage(frames)
    D.sphere("Ball", (0, 0, 3.0), 0.2, restitution=0.3)
    for i in range(decoys):
        D.box(f"Decoy{i}", (6 + 2 * i, 6, 0.5), (0.5, 0.5, 0.5), rb="PASSIVE").hide_render = True
    ramp = D.box("Ramp", (0.15, 0, 1.5), (1.0, 0.6, 0.05), rb="PASSIVE")
    ramp.rotation_euler = (0, math.radians(35), 0)
    ramp.hide_render = ramp_hidden
    if emits:
        st = ramp.modifiers.new("Dust", "PARTICLE_SYSTEM").particle_system.settings
        st.count, st.frame_start, st.frame_end, st.render_type = 1, 1, 2, "NONE"
    D.bake()
    return sc


def _hidden(rep: Any) -> list[Any]:
    return [f for f in rep.findings if f.kind == "hidden_support"]


@pytest.mark.parametrize("hidden", [True, False], ids=["hidden_ramp", "rendered_ramp_twin"])
def test_a_hidden_collider_behind_four_decoys_is_still_measured(hidden: bool) -> None:
    from physcodegym.probes.audit.audit import audit_scene

    rep = audit_scene(deflected_ball(hidden, decoys=4), render_check=False)
    planned = rep.meta["effects"]["planned"]
    hits = _hidden(rep)
    if hidden:
        assert "collider:+rest" in planned and "collider:Ramp" not in planned, planned
        assert hits and "Ramp" in hits[0].objects and "Ball" in hits[0].objects, [(f.kind, f.message) for f in rep.findings]
        assert hits[0].value > 0.5
    else:
        assert "collider:+rest" not in planned, planned  # the four decoys get a branch each
        assert hits == [], [(f.kind, f.message) for f in rep.findings]


@pytest.mark.parametrize("hidden", [True, False], ids=["hidden_ramp", "rendered_ramp_twin"])
def test_a_hidden_collider_that_emits_particles_is_measured_too(hidden: bool) -> None:
    from physcodegym.probes.audit.audit import audit_scene

    rep = audit_scene(deflected_ball(hidden, emits=True), render_check=False)
    hits = _hidden(rep)
    if hidden:
        assert hits and {"Ramp", "Ball"} <= set(hits[0].objects), [(f.kind, f.message) for f in rep.findings]
        assert hits[0].value > 0.5
    else:
        assert hits == [], [(f.kind, f.message) for f in rep.findings]


@pytest.mark.parametrize("hidden", [True, False], ids=["hidden_ramp", "rendered_ramp_twin"])
def test_a_hidden_collider_whose_branch_fails_counts_as_acting(hidden: bool, monkeypatch) -> None:
    from physcodegym.probes.audit.audit import audit_scene

    monkeypatch.setenv("PHYSCODEGYM_BRANCH_TIMEOUT_S", "0.01")
    rep = audit_scene(deflected_ball(hidden), render_check=False)
    hits = _hidden(rep)
    if hidden:
        assert hits and hits[0].objects == ["Ramp"], [(f.kind, f.message) for f in rep.findings]
        assert "unmeasured" in hits[0].evidence and "cannot be measured" in hits[0].message
    else:
        assert hits == [], [(f.kind, f.message) for f in rep.findings]


def pumped_with_winds(winds: int, frames: int = 90) -> Any:
    """A ball dropped on the ground; `winds` wind fields (strength 50, reach 1 m) stand 30 m and more away, then a
    hidden FORCE field under the ground switches on at frame 46 and throws the ball up."""
    import bpy

    sc = D.rigid_stage(frames, restitution=0.8)
    for i in range(winds):
        bpy.ops.object.effector_add(type="WIND", location=(30 + 3 * i, 30, 1))
        w = bpy.context.active_object
        w.name = f"Breeze{i}"
        w.field.strength, w.field.use_max_distance, w.field.distance_max = 50.0, True, 1.0
    D.sphere("Ball", (0, 0, 2.0), 0.25, restitution=0.8)
    _keyed_field("FORCE", "Pump", 1500.0)
    D.bake()
    return sc


def gusted_ball(frames: int = 90) -> Any:
    """The twin: the ball is thrown up by a wind field under the ground that starts at frame 46."""
    sc = D.rigid_stage(frames, restitution=0.8)
    D.sphere("Ball", (0, 0, 2.0), 0.25, restitution=0.8)
    _keyed_field("WIND", "Gust", 400.0)
    D.bake()
    return sc


def _keyed_field(kind: str, name: str, strength: float) -> None:
    import bpy

    bpy.ops.object.effector_add(type=kind, location=(0, 0, -0.5))
    f = bpy.context.active_object
    f.name = name
    f.field.strength = 0.0
    f.field.keyframe_insert("strength", frame=45)
    f.field.strength = strength
    f.field.keyframe_insert("strength", frame=46)


@pytest.mark.parametrize("winds", [1, 7], ids=["one_far_wind", "seven_far_winds"])
def test_a_far_wind_does_not_explain_the_energy_a_hidden_pump_supplies(winds: int) -> None:
    from physcodegym.probes.audit.audit import audit_scene

    rep = audit_scene(pumped_with_winds(winds), render_check=False)
    assert rep.meta["energy"]["admitted_sources"] == [], rep.meta["energy"]
    assert rep.by_kind("energy_gain"), [(f.kind, f.message) for f in rep.findings]


def test_a_wind_that_supplies_the_energy_is_admitted() -> None:
    from physcodegym.probes.audit.audit import audit_scene

    rep = audit_scene(gusted_ball(), render_check=False)
    assert rep.meta["energy"]["admitted_sources"] == ["wind field Gust"], rep.meta["energy"]
    assert not rep.by_kind("energy_gain"), [(f.kind, f.message) for f in rep.findings]


@pytest.mark.parametrize("hidden", [True, False], ids=["hidden_ball", "rendered_ball_twin"])
def test_an_invisible_ball_that_topples_the_dominoes_is_a_hidden_collider(hidden: bool) -> None:
    import bpy
    from physcodegym.probes.audit.audit import audit_scene

    sc = D.dominoes(120)
    if hidden:
        bpy.data.objects["Ball"].hide_render = True
    rep = audit_scene(sc, render_check=False)
    hits = _hidden(rep)
    if hidden:
        assert hits and "Ball" in hits[0].objects and "Domino0" in hits[0].objects, \
            [(f.kind, f.message) for f in rep.findings]
    else:
        assert hits == [], [(f.kind, f.message) for f in rep.findings]


def _ball_in_props(sc: Any) -> Any:
    """Move the dominoes' ball into its own collection "Props" (it stays in the rigid-body world)."""
    import bpy

    b = bpy.data.objects["Ball"]
    col = bpy.data.collections.new("Props")
    sc.collection.children.link(col)
    sc.collection.objects.unlink(b)
    col.objects.link(b)
    return b


def _composite_layer(sc: Any, layer: str) -> None:
    """A compositor whose output is view layer `layer` alone (every view layer still renders)."""
    import bpy

    ng = bpy.data.node_groups.new("Comp", "CompositorNodeTree")
    sc.compositing_node_group = ng
    rl = ng.nodes.new("CompositorNodeRLayers")
    rl.layer = layer
    ng.interface.new_socket("Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    ng.links.new(rl.outputs["Image"], ng.nodes.new("NodeGroupOutput").inputs[0])


@pytest.mark.parametrize("how", ["second_view_layer", "indirect_only", "shading", "shading_among_many",
                                 "compositor_layer", "compositor_layer_workbench"])
def test_a_ball_hidden_by_view_layers_or_shading_is_a_hidden_collider(how: str) -> None:
    """`shading_among_many`: six more rigid bodies (twelve in all) used to switch the probe off for every moving
    body (at most 8 were rendered alone); bodies whose boxes do not overlap now share a probe render."""
    from physcodegym.probes.audit.audit import audit_scene

    sc = D.dominoes(120)
    if how == "shading_among_many":
        import bpy

        for i in range(6):
            D.sphere(f"Pebble{i}", (-2.0 + 0.5 * i, 2.5, 0.15), 0.15)
        bpy.ops.ptcache.free_bake_all()
        D.bake()
    b = _ball_in_props(sc)
    if how == "second_view_layer":
        vl = sc.view_layers.new("Clean")
        vl.layer_collection.children["Props"].exclude = True
        sc.view_layers[0].use = False
    elif how.startswith("compositor_layer"):  # both layers render; the compositor shows the one without the ball
        sc.render.engine = "BLENDER_WORKBENCH" if how.endswith("workbench") else "CYCLES"
        sc.view_layers.new("Clean").layer_collection.children["Props"].exclude = True
        _composite_layer(sc, "Clean")
    elif how == "indirect_only":
        sc.render.engine = "CYCLES"
        sc.view_layers[0].layer_collection.children["Props"].indirect_only = True
    else:
        sc.render.engine = "CYCLES"
        b.data.materials.append(D.shading_material("mix", True))
        assert how != "shading_among_many" or len([o for o in sc.objects if o.rigid_body
                                                   and o.rigid_body.type == "ACTIVE"]) == 12
    rep = audit_scene(sc, render_check=False)
    hits = _hidden(rep)
    assert hits and "Ball" in hits[0].objects, [(f.kind, f.message) for f in rep.findings]


def test_the_twin_ball_in_its_own_rendered_collection_is_clean() -> None:
    """Twin of the three: the ball in its own collection, a second view layer that renders it, Cycles, opaque."""
    from physcodegym.probes.audit.audit import audit_scene

    sc = D.dominoes(120)
    b = _ball_in_props(sc)
    sc.view_layers.new("Also")
    sc.render.engine = "CYCLES"
    b.data.materials.append(D.shading_material("mix", False))
    rep = audit_scene(sc, render_check=False)
    assert _hidden(rep) == [], [(f.kind, f.message) for f in rep.findings]
    assert rep.meta["visibility"]["objects"]["Ball"]["invisible"] is False, rep.meta["visibility"]


@pytest.mark.parametrize("hidden", [True, False], ids=["hidden_pivot", "rendered_pivot_twin"])
def test_a_joint_to_an_invisible_anchor_is_a_hidden_support(hidden: bool) -> None:
    import bpy
    from physcodegym.probes.audit.audit import audit_scene

    sc = D.pendulum(60)
    bpy.data.objects["Pivot"].hide_render = hidden
    rep = audit_scene(sc, render_check=False)
    hits = [f for f in _hidden(rep) if f.evidence.get("anchor") == "Pivot"]
    if hidden:
        assert hits and hits[0].objects == ["Bob", "Pivot"] and hits[0].evidence["joint"] == "HINGE", \
            [(f.kind, f.message) for f in rep.findings]
    else:
        assert _hidden(rep) == [], [(f.kind, f.message) for f in rep.findings]


def glued_to_wall(touching: bool, frames: int = 40) -> Any:
    """A block held up beside a wall by a FIXED joint whose pivot is on the wall's face: touching it (the twin),
    or 1 m away from it in mid-air (nothing that renders links them)."""
    import bpy

    sc = D.rigid_stage(frames)
    wall = D.box("Wall", (0, 0, 1.5), (0.2, 2.0, 3.0), rb="PASSIVE")
    x = 0.3 if touching else 1.3
    block = D.box("Block", (x, 0, 1.5), (0.4, 0.4, 0.4), rb="ACTIVE", mass=1.0)
    emp = bpy.data.objects.new("Glue", None)
    sc.collection.objects.link(emp)
    emp.location = (0.1, 0, 1.5)  # on the wall's face
    bpy.context.view_layer.objects.active = emp
    bpy.ops.rigidbody.constraint_add(type="FIXED")
    emp.rigid_body_constraint.object1, emp.rigid_body_constraint.object2 = wall, block
    D.bake()
    return sc


@pytest.mark.parametrize("case", ["hinge_without_rod", "pendulum_with_rod", "glued_across_air", "glued_touching"])
def test_a_joint_whose_pivot_no_material_reaches_is_a_hidden_support(case: str) -> None:
    """Both joined bodies render, but the pivot is 1 m or more from one's material: the link is invisible."""
    from physcodegym.probes.audit.audit import audit_scene

    bad = case in ("hinge_without_rod", "glued_across_air")
    sc = D.pendulum(60, rod=False) if case == "hinge_without_rod" else D.pendulum(60) \
        if case == "pendulum_with_rod" else glued_to_wall(touching=case == "glued_touching")
    try:
        rep = audit_scene(sc, render_check=False)
    finally:
        D.clear_user_handlers()
    hits = [f for f in _hidden(rep) if "pivot_gap_m" in f.evidence]
    if bad:
        body = "Bob" if case == "hinge_without_rod" else "Block"
        assert hits and hits[0].objects[0] == body and hits[0].evidence["pivot_gap_m"] > 0.9, \
            [(f.kind, f.message) for f in rep.findings]
        assert hits[0].evidence["pivot_far_from"] == body
    else:
        assert _hidden(rep) == [], [(f.kind, f.message) for f in rep.findings]


def test_the_twin_workbench_compositor_showing_the_ball_is_clean() -> None:
    """Twin of `compositor_layer_workbench`: the compositor outputs the view layer that has the ball; Workbench
    is probed because a compositor makes the picture, and the ball is seen."""
    from physcodegym.probes.audit.audit import audit_scene

    sc = D.dominoes(120)
    _ball_in_props(sc)
    sc.render.engine = "BLENDER_WORKBENCH"
    sc.view_layers.new("Clean").layer_collection.children["Props"].exclude = True
    _composite_layer(sc, sc.view_layers[0].name)
    rep = audit_scene(sc, render_check=False)
    assert rep.meta["visibility"]["ran"] is True, rep.meta["visibility"]
    assert rep.meta["visibility"]["objects"]["Ball"]["invisible"] is False, rep.meta["visibility"]
    assert _hidden(rep) == [], [(f.kind, f.message) for f in rep.findings]
