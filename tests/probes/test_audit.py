"""The audit tells each defect scene from its close valid twin (real bakes), and valid scenes are clean."""

from __future__ import annotations

import pytest
from physcodegym.probes.audit.findings import FINDING_KINDS
from physcodegym.testing import demo_scenes as D

# (case, kind that must be found, objects that finding must name)
DEFECTS = [
    ("embedded_eggs", "interpenetration", {"Table"}),
    ("oversized_proxy", "collider_mismatch", {"Ball"}),
    ("wrong_shape", "collider_mismatch", {"Crate"}),
    ("pass_through", "no_contact_response", {"Wall", "Ball"}),
    ("invisible_shelf", "hidden_support", {"Parcel", "Shelf"}),
    ("hidden_floor", "hidden_support", {"Ball", "Catcher"}),
    ("keyframed_ball", "scripted_motion", {"Ball"}),
    ("keyframed_ball", "not_simulated", {"Ball"}),
    ("handler_ball", "scripted_motion", {"Ball"}),
    ("attractor", "unexplained_force_field", {"Attractor", "Ball"}),
    ("crumpling_cloth", "self_intersection", {"Sheet"}),
    ("exploding_cloth", "numerical_instability", {"Sheet"}),
]


@pytest.mark.parametrize("case,kind,objects", DEFECTS, ids=[f"{c}-{k}" for c, k, _ in DEFECTS])
def test_defect_found_and_twin_clean_of_it(audited, case, kind, objects):
    bad = audited(f"{case}:defect")
    hits = bad.by_kind(kind)
    assert hits, f"{case}: expected {kind}, got {[(f.kind, f.objects) for f in bad.findings]}"
    assert any(objects <= set(f.objects) for f in hits), [f.objects for f in hits]
    for f in hits:
        assert f.message and f.frames, f
    twin = audited(f"{case}:twin")
    assert not twin.by_kind(kind), [f.model_dump(exclude={"evidence"}) for f in twin.by_kind(kind)]


def test_every_twin_is_clean(audited):
    for case in sorted({c for c, _, _ in DEFECTS}):
        rep = audited(f"{case}:twin")
        assert rep.findings == [], (case, [(f.kind, f.objects, f.message) for f in rep.findings])


@pytest.mark.parametrize("case", ["bouncing_ball", "dominoes", "pendulum", "flag"])
def test_valid_scenes_have_no_findings(audited, case):
    rep = audited(case)
    assert rep.scene["moving"], f"{case}: nothing moved, the scene does not test anything"
    assert rep.findings == [], [(f.kind, f.objects, f.message) for f in rep.findings]


def test_energy_gain_from_hidden_field_vs_plain_bounce(audited):
    pumped = audited("pumped_ball")
    eg = pumped.by_kind("energy_gain")
    assert eg and eg[0].unit == "J" and eg[0].value > 1.0
    assert "Pump" in eg[0].evidence["fields_acting"]
    assert eg[0].evidence["series"]["y"], "energy witness curve missing"
    assert not audited("bouncing_ball").by_kind("energy_gain")


def test_static_scene_is_not_simulated(audited):
    assert audited("static").by_kind("not_simulated")
    assert not audited("bouncing_ball").by_kind("not_simulated")


def test_embedded_eggs_depth_and_frames(audited):
    rep = audited("embedded_eggs:defect")
    hits = rep.by_kind("interpenetration")
    assert {o for f in hits for o in f.objects} >= {"Egg0", "Egg1", "Egg2"}
    for f in hits:
        assert f.unit == "m" and 0.05 < f.value < 0.25  # eggs (r 0.1) rest on the floor inside a 0.3 m slab
        assert f.frames[-1] == 60


def test_handler_in_program_text_is_reported():
    from physcodegym.probes.scene.sources import scan_program_handlers

    recs = scan_program_handlers(D.HANDLER_PROGRAM)
    assert recs and recs[0]["event"] == "frame_change_pre" and recs[0]["moves"]
    assert "Ball" in recs[0]["names"] and "location" in recs[0]["writes"]
    assert scan_program_handlers("import bpy\nprint('x')\n") == []
    alias = "import bpy\nh = bpy.app.handlers.depsgraph_update_post\ndef f(s, d):\n    s.objects['Cube'].rotation_euler.z += 0.1\nh.append(f)\n"
    rec = scan_program_handlers(alias)
    assert rec and rec[0]["event"] == "depsgraph_update_post" and rec[0]["writes"] == ["rotation_euler"]
    harmless = "import bpy\ndef f(s, d=None):\n    print(s.frame_current)\nbpy.app.handlers.frame_change_post.append(f)\n"
    assert scan_program_handlers(harmless)[0]["moves"] is False
    assert scan_program_handlers("def (:")[0]["error"]


def test_program_handler_finding_on_otherwise_valid_scene(audited):
    rep = audited("handler_ball:twin", program_text=D.HANDLER_PROGRAM)
    hits = rep.by_kind("scripted_motion")
    assert hits and hits[0].evidence["handler"]["origin"] == "program" and "Ball" in hits[0].objects
    assert not audited("handler_ball:twin").by_kind("scripted_motion")


def test_finding_kinds_are_the_spec_vocabulary():
    from physcodegym.probes.audit.findings import Finding

    assert len(FINDING_KINDS) == 12 and "stale_cache" in FINDING_KINDS and "self_intersection" in FINDING_KINDS and "non_physical_parameter" in FINDING_KINDS
    from physcodegym.tasks.schema import DEFAULT_FINDING_CAPS
    from physcodegym.verifier.rubric import VALIDITY_KINDS

    assert set(VALIDITY_KINDS) == set(FINDING_KINDS) == set(DEFAULT_FINDING_CAPS)  # every finding kind costs S_val
    with pytest.raises(ValueError):
        Finding(kind="made_up", message="x")


@pytest.mark.parametrize("how,reason", [("driver", "drivers"), ("path", "FOLLOW_PATH")])
def test_driver_and_path_constraint_are_scripted(how, reason):
    from physcodegym.probes.audit.audit import audit_scene

    rep = audit_scene(D.driven_ball(how))
    hits = [f for f in rep.by_kind("scripted_motion") if "Ball" in f.objects]
    assert hits and reason in hits[0].message, [f.message for f in rep.findings]
    ok = audit_scene(D.driven_ball("solver"))
    assert not ok.by_kind("scripted_motion") and not ok.by_kind("not_simulated")


def test_live_handler_registered_by_a_program():
    """The program runs in this process (as in the Blender panel): its handler shows up live."""
    from physcodegym.probes.audit.audit import audit_scene

    sc = D.reset(30)
    D.rigid_world(sc, 30)
    D.ground()
    D.sphere("Ball", (-2.0, 0, 0.25), 0.25, rb=None)
    try:
        exec(compile(D.HANDLER_PROGRAM, "scene.py", "exec"), {"__name__": "__main__"})
        rep = audit_scene(sc)
    finally:
        D.clear_user_handlers()
    live = [f for f in rep.by_kind("scripted_motion") if f.evidence.get("handler", {}).get("origin") == "live"]
    assert live and live[0].objects == ["Ball"] and live[0].evidence["handler"]["event"] == "frame_change_pre"
