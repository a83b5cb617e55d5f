"""What renders of a liquid is what its solver simulated (`probes.audit.derived`).

Real, small SPH bakes (`testing.demo_scenes.rendered_liquid`: 40 particles, 24 frames). The honest looks (each
particle draws a sphere; a metaball family fuses the balls its particles draw; a geometry-nodes remesh of that
surface) stay clean: before `probes.audit.derived` the remeshed surface was charged twice (its vertex count changes as
particles merge: `geometry_switch`; its own particles pass through it: `no_contact_response`). The defects carry
rendered material no solver put there: drops built 0.25 m above their origin, drops a scene-time modifier lifts,
a keyframed member of the metaball family (hidden itself), a remesh that adds a keyframed empty's location.
The self-test injections (`probes.defects.defects_hiding`: offset_drops, drifting_drops, keyed_blob, metaball_liquid) are
applied to the honest drops scene here, as the self-test applies them to a task's truth.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from physcodegym.probes.audit import derived
from physcodegym.testing import demo_scenes as D

_AUDITS: dict[str, Any] = {}


def _audit(how: str) -> Any:
    """The audit report of one variant (built, baked and audited once per module)."""
    if how not in _AUDITS:
        from physcodegym.probes.audit.audit import audit_scene

        _AUDITS[how] = audit_scene(D.rendered_liquid(how))
    return _AUDITS[how]


def _said(rep: Any) -> list[tuple[str, list[str], str]]:
    return [(f.kind, f.objects, f.message[:200]) for f in rep.findings]


def _derived_hits(rep: Any, name: str) -> list[Any]:
    return [f for f in rep.findings if f.kind == "scripted_motion" and name in f.objects
            and f.evidence.get("cause") == "derived_departs"]


@pytest.fixture(scope="module")
def reports() -> Any:
    return _audit


@pytest.mark.parametrize("how", ["drops", "metaball", "gn_surface"])
def test_honest_rendered_liquids_are_clean(reports: Any, how: str) -> None:
    rep = reports(how)
    assert not rep.findings, _said(rep)
    checked = rep.meta["derived"]
    if how == "drops":
        assert checked["instances"]["Spout/Drops"]["max_m"] < 1e-3, checked  # each drop drawn at its particle
    else:  # the fused (and remeshed) surface was found and checked, not skipped
        want = {"Liquid"} | ({"LiquidSurface"} if how == "gn_surface" else set())
        assert set(checked["surfaces"]) == want, checked
        assert all(r["vertices_max"] > 100 for r in checked["surfaces"].values()), checked


@pytest.mark.parametrize(("how", "name"), [("offset", "Drop"), ("keyed_blob", "Liquid"),
                                           ("gn_keyed", "LiquidSurface")])
def test_rendered_material_off_its_particles_is_scripted(reports: Any, how: str, name: str) -> None:
    rep = reports(how)
    hits = _derived_hits(rep, name)
    assert hits, _said(rep)
    assert hits[0].value > 0.2, _said(rep)


def test_measure_sees_drops_a_hidden_modifier_moves() -> None:
    """The drifting drop is also caught by the solvers-off test (its mesh deforms there); the derived check sees
    it on its own, from what renders: the instances rise off their particles."""
    from physcodegym.probes.scene.sampling import sample_scene

    sc = D.rendered_liquid("drift")
    doc = derived.measure(sc, sample_scene(sc))
    rec = doc["instances"]["Spout/Drops"]
    assert rec["departs"], rec
    assert rec["max_m"] > 0.3, rec  # 0.6 m/s over 0.77 s
    assert doc["frames"][0] == 1 and len(doc["frames"]) == min(24, derived.DERIVED_FRAMES)


def test_far_from_is_exact_where_it_flags() -> None:
    rng = np.random.default_rng(3)
    refs = rng.uniform(-1, 1, (300, 3))
    pts = rng.uniform(-1.5, 1.5, (4000, 3))
    reach = 0.1
    far = derived.far_from(pts, refs, reach)
    gap = derived.exact_gap(pts, refs)
    assert (gap[far] > reach).all()  # every flagged point is beyond reach
    assert (gap[gap <= reach] >= 0).all() and not far[gap <= reach].any()  # nothing within reach is flagged
    assert (gap[~far] <= 2 * np.sqrt(3) * reach + 1e-9).all()  # a passed point is within the 27 cells
    assert far.any() and (~far).any()
    assert derived.far_from(pts[:5], np.zeros((0, 3)), reach).all()


def _injected(kind: str) -> Any:
    import bpy
    from physcodegym.probes.defects.defects import inject_defect

    sc = D.rendered_liquid("drops")
    rec = inject_defect(sc, kind, {"liquid": "Spout", "__core__": json.dumps(["liquid"])})
    sc = bpy.context.scene
    bpy.ops.ptcache.free_bake_all()
    D.bake()
    return sc, rec


@pytest.mark.parametrize("kind", ["offset_drops", "drifting_drops"])
def test_drop_injections_depart(kind: str) -> None:
    from physcodegym.probes.scene.sampling import sample_scene

    sc, rec = _injected(kind)
    doc = derived.measure(sc, sample_scene(sc))
    assert doc["instances"]["Spout/Drops"]["departs"], (rec, doc["instances"])


@pytest.mark.parametrize("kind", ["keyed_blob", "metaball_liquid"])
def test_metaball_injections(kind: str) -> None:
    from physcodegym.probes.audit.audit import audit_scene
    from physcodegym.probes.defects.defects import DEFECTS, HONEST_TWINS

    sc, rec = _injected(kind)
    rep = audit_scene(sc)
    if kind in HONEST_TWINS:
        assert not rep.findings, (rec, _said(rep))
    else:
        assert {f.kind for f in rep.findings} & set(DEFECTS[kind]), (rec, _said(rep))
        assert _derived_hits(rep, "PCG_Liquid"), (rec, _said(rep))


@pytest.mark.parametrize("surface", ["metaball", "mesh"])
def test_a_stone_lying_in_a_liquid_surface_is_immersed_not_sunk_into_a_solid(surface: str) -> None:
    """A pebble at rest under SPH drops: where the liquid renders as a surface fused from its particles, nothing is
    charged (the surface is liquid: it was `no_contact_response` "passes through rendered solid Liquid" before
    solids() left derived surfaces out); where a plain box renders as the pool, the pebble falling through that
    collider-less solid is still `no_contact_response`."""
    from physcodegym.probes.audit.audit import audit_scene

    rep = audit_scene(D.stone_in_liquid(surface))
    through = [f for f in rep.findings if f.kind == "no_contact_response" and set(f.objects) == {"Liquid", "Pebble"}]
    if surface == "metaball":
        assert rep.meta["derived"]["surfaces"].keys() == {"Liquid"}, rep.meta["derived"]
        assert not rep.findings, _said(rep)
    else:
        assert through, _said(rep)
