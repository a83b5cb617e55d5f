"""Concealment mechanisms (motion that hides from the obvious checks, SPEC §5): each as a defect scene and a
close valid twin (real bakes, real solvers-off re-evaluation).

The solvers-off re-evaluation runs in a fresh worker on a saved copy of the live scene, so these tests also
exercise the universal ownership test end to end.
"""

from __future__ import annotations

import pytest

# (case, kind that must be found, objects that finding must name, evidence key that must be present)
MECHANISMS = [
    ("nla_ball", "scripted_motion", {"Ball"}, "solvers_off"),  # NLA strip on a body whose rigid-body world is off
    ("gn_cloth", "scripted_motion", {"Sheet"}, "solvers_off"),  # geometry nodes reading time on a fully pinned cloth
    ("gn_cloth", "not_simulated", {"Sheet"}, None),  # ... and the pinned cloth moves nothing
    ("follower_ball", "scripted_motion", {"Ball"}, "reasons"),  # follows a body that does not render
    ("slow_gravity", "non_physical_parameter", {"Ball"}, "path"),  # gravity weight 0.25 and clock 2x
    ("static_overlap", "interpenetration", {"Crate", "Lid"}, "tolerance_m"),  # embedded while nothing moves
    ("folded_sheet", "self_intersection", {"Sheet"}, None),  # a cloth crossing itself without deforming
    ("born_inside", "interpenetration", {"Crate", "Spout"}, "born_inside"),  # particles born in a solid
    ("sourceless", "energy_gain", {"Spout"}, "source_gap_m"),  # drops born in mid-air, far from anything rendered
    ("speck_source", "energy_gain", {"Spout"}, "source_gap_m"),  # ... beside nothing but a 4 mm speck
    ("keyed_emitter", "scripted_motion", {"Spout"}, "reasons"),  # a hidden emitter swept by keyframes
    ("hidden_tray", "hidden_support", {"Catcher", "Spout"}, "measured"),  # invisible collider 2 mm inside a tray catches the drops
    ("liquid_attractor", "unexplained_force_field", {"Pull", "Spout"}, "measured"),  # keyframed attractor on liquid particles
    ("steered_drops", "scripted_motion", {"Spout"}, "reasons"),  # particles steered by boid rules, not forces
    ("attractor", "unexplained_force_field", {"Attractor", "Ball"}, "measured"),  # judged by its measured effect
]


@pytest.mark.parametrize("case,kind,objects,key", MECHANISMS, ids=[f"{c}-{k}" for c, k, _, _ in MECHANISMS])
def test_mechanism_found_and_twin_clean(audited, case, kind, objects, key):
    bad = audited(f"{case}:defect")
    assert bad.meta["solvers_off"]["ran"], bad.meta["solvers_off"]
    hits = [f for f in bad.by_kind(kind) if objects <= set(f.objects)]
    assert hits, f"{case}: expected {kind} on {objects}, got {[(f.kind, f.objects) for f in bad.findings]}"
    if key:
        assert any(key in f.evidence and f.evidence[key] for f in hits), [f.evidence.keys() for f in hits]
    twin = audited(f"{case}:twin")
    assert twin.meta["solvers_off"]["ran"], twin.meta["solvers_off"]
    assert twin.findings == [], [(f.kind, f.objects, f.message) for f in twin.findings]


def test_slow_gravity_names_both_properties(audited):
    rep = audited("slow_gravity:defect")
    paths = {f.evidence["path"] for f in rep.by_kind("non_physical_parameter")}
    assert "scene.rigidbody_world.time_scale" in paths, paths
    assert any("effector_weights.gravity" in p for p in paths), paths
    vals = {f.evidence["param"]: f.evidence["value"] for f in rep.by_kind("non_physical_parameter")}
    assert vals["time_scale"] == 2.0 and abs(vals["gravity"] - 0.25 * 9.81) < 1e-3, vals


def test_nla_defect_is_caught_by_the_universal_test(audited):
    """The NLA strip is not in the active action: the universal test names the motion, the twin (same strip,
    world on) is owned by the solver because its baked pose leaves the animated one."""
    rep = audited("nla_ball:defect")
    assert "Ball" in rep.meta["solvers_off"]["still_moving"], rep.meta["solvers_off"]
    f = [f for f in rep.by_kind("scripted_motion") if f.objects == ["Ball"]][0]
    assert any("every solver and field switched off" in r for r in f.evidence["reasons"]), f.evidence["reasons"]
    assert "Ball" not in audited("nla_ball:twin").meta["solvers_off"]["still_moving"]


def test_decoy_field_that_touches_nothing_is_measured_as_such(audited):
    """The far-away wind of slow_gravity is re-baked away: it changes nothing, so it explains nothing."""
    rep = audited("slow_gravity:defect")
    eff = rep.meta["effects"]
    assert eff["ran"], eff
    assert eff["branches"]["field:Decoy"]["acts_on"] == [], eff["branches"]


def test_a_hidden_emitter_outside_the_task_core_is_still_judged():
    """With a task's core (the rendered hopper only), the emitter is named by no role; it is judged because the
    drops it emits render. Its still twin stays clean."""
    from physcodegym.probes.audit.audit import audit_scene
    from physcodegym.testing import demo_scenes as D

    for defect in (True, False):
        rep = audit_scene(D.keyed_emitter(defect), core_objects=["Hopper"], render_check=False)
        hits = [f for f in rep.by_kind("scripted_motion") if "Spout" in f.objects]
        if defect:
            assert hits and any("emits rendered particles" in r for r in hits[0].evidence["reasons"]), [
                (f.kind, f.objects, f.message) for f in rep.findings]
        else:
            assert rep.findings == [], [(f.kind, f.objects, f.message) for f in rep.findings]
