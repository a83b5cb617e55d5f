"""The rendered-frame check and liquids: particles own the pixels they change.

A liquid pouring onto a static tray changes the tray's on-screen footprint; the saved scene explains
that change by its particles, so the tray is not "moved by a script". The same scene with a prop moved
by a frame-change handler (which a .blend does not keep) must still be caught, also when a rendered but
motionless particle cloud sits in front of the prop (particles that stay put explain nothing).
Real bakes and Workbench renders, few frames at low resolution.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from physcodegym.testing import demo_scenes as D

FRAMES = 16


def _move_prop(scene: Any, depsgraph: Any = None) -> None:
    ob = scene.objects.get("Prop")
    if ob is not None:
        ob.location.x = 1.9 - 0.05 * scene.frame_current


def _particles(emitter: Any, name: str, count: int, start: int, end: int, physics: str, size: float, speed: float = 0.0) -> Any:
    import bpy

    emitter.modifiers.new(name, "PARTICLE_SYSTEM")
    ps = emitter.particle_systems[-1]
    st = ps.settings
    st.count, st.frame_start, st.frame_end, st.lifetime = count, start, end, 1000
    st.emit_from, st.use_emit_random, st.normal_factor = "FACE", True, speed
    st.physics_type = physics
    if physics == "FLUID":
        st.fluid.solver = "DDR"
        st.fluid.stiffness = 0.2
        st.use_adaptive_subframes, st.subframes = False, 3
    ps.point_cache.frame_start, ps.point_cache.frame_end = 1, FRAMES
    drop = _ico(name + "Drop")
    drop.data.materials.append(_mat(name + "Blue", (0.2, 0.45, 1.0)))
    st.render_type, st.instance_object, st.particle_size = "OBJECT", drop, size
    emitter.show_instancer_for_render = False
    ps.seed = 3
    bpy.context.view_layer.update()
    return ps


def _ico(name: str) -> Any:
    """A coarse unit icosphere (80 faces) as the drawn particle: cheap to render many times."""
    import bmesh
    import bpy

    bm = bmesh.new()
    bmesh.ops.create_icosphere(bm, subdivisions=1, radius=1.0)
    me = bpy.data.meshes.new(name)
    bm.to_mesh(me)
    bm.free()
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = (0, 0, -30)
    return ob


def _mat(name: str, rgb: tuple[float, float, float]) -> Any:
    import bpy

    m = bpy.data.materials.new(name)
    m.diffuse_color = (*rgb, 1.0)
    return m


def _scene(prop_by_handler: bool, still_cloud: bool) -> Any:
    """Liquid raining onto a static tray (left); optional prop (right) moved by a handler, optional still particle cloud before it."""
    import bpy

    sc = D.reset(FRAMES)
    D.workbench_frames(sc)
    D.camera(sc)
    ground = D.box("Ground", (0, 0, -0.05), (20, 20, 0.1))
    ground.data.materials.append(_mat("Grey", (0.4, 0.4, 0.42)))
    ground.modifiers.new("Collision", "COLLISION")
    tray = D.box("Tray", (-1.2, 0, 0.1), (2.2, 1.6, 0.2))
    tray.data.materials.append(_mat("Black", (0.05, 0.05, 0.05)))
    tray.modifiers.new("Collision", "COLLISION")
    spout = D.box("Spout", (-1.2, 0, 1.6), (1.8, 1.2, 0.02))
    spout.rotation_euler = (3.14159, 0, 0)  # faces down: the liquid leaves downwards
    _particles(spout, "Water", 300, 1, 8, "FLUID", 0.08, speed=1.5)
    prop = D.box("Prop", (1.9, 0, 0.5), (0.7, 0.7, 1.0))
    prop.data.materials.append(_mat("Red", (0.9, 0.1, 0.05)))
    if still_cloud:
        veil = D.box("Veil", (1.75, -0.9, 0.6), (1.2, 0.02, 1.2))
        _particles(veil, "Mist", 120, 1, 1, "NO", 0.05)
    if prop_by_handler:
        bpy.app.handlers.frame_change_pre.append(_move_prop)
    sc.frame_set(1)
    bpy.ops.ptcache.bake_all(bake=True)
    return sc


def _run(root: Path, prop_by_handler: bool, still_cloud: bool) -> Path:
    import bpy

    root.mkdir(parents=True, exist_ok=True)
    try:
        sc = _scene(prop_by_handler, still_cloud)
        sc.render.filepath = str(root / "frames" / "####")
        bpy.ops.render.render(animation=True)
        sc.frame_set(1)
        bpy.ops.wm.save_as_mainfile(filepath=str(root / "scene.blend"))
    finally:
        lst = bpy.app.handlers.frame_change_pre
        for fn in list(lst):
            if fn is _move_prop:
                lst.remove(fn)
    return root


@pytest.fixture(scope="module")
def liquid_runs(tmp_path_factory):
    from physcodegym.probes.audit.audit import audit_path

    root = tmp_path_factory.mktemp("screen_liquids")
    return {
        name: audit_path(_run(root / name, handler, cloud))
        for name, handler, cloud in (("clean", False, False), ("handler", True, False), ("handler_behind_still_cloud", True, True))
    }


def _scripted(rep: Any) -> set[str]:
    return {o for f in rep.by_kind("scripted_motion") for o in f.objects}


def test_liquid_over_static_tray_is_explained_by_its_particles(liquid_runs):
    rep = liquid_runs["clean"]
    sm = rep.meta["screen_motion"]
    assert sm["state"] == "ok", sm
    water = next(p for p in sm["particle_systems"] if p["key"] == "Spout/Water")
    assert water["rendered"] and water["radius_m"] == pytest.approx(0.08, rel=0.05)
    # the liquid really changes the tray's footprint (else this twin would test nothing) ...
    assert sm["particle_explained_fraction"] > 0.02, sm
    # ... and nothing there is left unexplained
    assert "Tray" not in _scripted(rep) and not _scripted(rep), [f.message for f in rep.findings]


def test_handler_moved_prop_next_to_liquid_is_caught(liquid_runs):
    rep = liquid_runs["handler"]
    assert rep.meta["screen_motion"]["state"] == "ok"
    assert _scripted(rep) == {"Prop"}, [f.message for f in rep.findings]


def test_still_particles_do_not_explain_a_scripted_prop(liquid_runs):
    rep = liquid_runs["handler_behind_still_cloud"]
    sm = rep.meta["screen_motion"]
    mist = next(p for p in sm["particle_systems"] if p["key"] == "Veil/Mist")
    assert mist["rendered"] and mist["changed_particle_frames"] == 0, mist
    assert "Prop" in _scripted(rep), [f.message for f in rep.findings]


def test_hidden_particles_are_not_rendered(tmp_path):
    """A system whose emitter is hidden in renders, or whose render type draws nothing, owns no pixels."""
    import bpy
    from physcodegym.probes.scene.sampling import sample_scene
    from physcodegym.probes.scene.screen import rendered_particle_systems

    sc = D.reset(5)
    a = D.box("EmA", (0, 0, 1), (1, 1, 0.02))
    b = D.box("EmB", (2, 0, 1), (1, 1, 0.02))
    c = D.box("EmC", (4, 0, 1), (1, 1, 0.02))
    for ob in (a, b, c):
        _particles(ob, ob.name + "P", 20, 1, 2, "NEWTON", 0.05)
    a.hide_render = True
    b.particle_systems[0].settings.render_type = "NONE"
    bpy.ops.ptcache.bake_all(bake=True)
    recs = {r["key"]: r for r in rendered_particle_systems(sc, sample_scene(sc))}
    assert not recs["EmA/EmAP"]["rendered"] and "emitter" in recs["EmA/EmAP"]["reason"]
    assert not recs["EmB/EmBP"]["rendered"] and "NONE" in recs["EmB/EmBP"]["reason"]
    assert recs["EmC/EmCP"]["rendered"] and recs["EmC/EmCP"]["radius_m"] == pytest.approx(0.05, rel=0.05)
