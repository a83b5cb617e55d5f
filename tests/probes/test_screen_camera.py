"""The rendered-frame check under a moving camera: a dolly moves every static object on screen, which is no script.

A valid reconstruction of a hand-held or dollied shot keys its camera. The screen check compared each frame with
the first and called the static table and mug "moved by a handler" (ball_bounce's truth with a 30 cm dolly scored
S_val 0.5). Real bake, Workbench renders of a few frames at low resolution, the whole audit on the run folder.
"""

from __future__ import annotations

from pathlib import Path

from physcodegym.testing import demo_scenes as D

FRAMES = 12


def _dolly_run(root: Path) -> Path:
    import bpy

    sc = D.reset(FRAMES)
    D.workbench_frames(sc)
    D.rigid_world(sc, FRAMES)
    cam = D.camera(sc, (0, -6, 2.0), (0, 0, 0.5))
    D.ground()
    crate = D.box("Crate", (1.2, 0.5, 0.4), (0.8, 0.8, 0.8), rb="PASSIVE")
    red = bpy.data.materials.new("Red")
    red.diffuse_color = (0.9, 0.1, 0.05, 1.0)
    crate.data.materials.append(red)
    D.sphere("Ball", (-0.5, 0, 1.5), 0.25)
    for f, dx in ((1, -0.6), (FRAMES, 0.6)):  # 1.2 m across the shot: the crate slides across the picture
        cam.location.x = dx
        cam.keyframe_insert("location", frame=f)
    D.bake()
    sc.render.filepath = str(root / "frames" / "####")
    bpy.ops.render.render(animation=True)
    sc.frame_set(1)
    bpy.ops.wm.save_as_mainfile(filepath=str(root / "scene.blend"))
    return root


def test_a_dolly_moves_static_objects_on_screen_without_a_script(tmp_path):
    from physcodegym.probes.audit.audit import audit_path

    rep = audit_path(_dolly_run(tmp_path / "dolly"))
    sm = rep.meta["screen_motion"]
    assert sm["state"] == "ok", sm
    assert "Crate" in sm["moved_by_the_camera"], sm  # the crate really moves on screen (else this tests nothing)
    assert sm["changed_fraction"] > 0.05, sm
    assert not rep.by_kind("scripted_motion"), [f.message for f in rep.by_kind("scripted_motion")]
