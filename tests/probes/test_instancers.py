"""Motion candidates are everything that renders, not only objects of a geometry type: an EMPTY that instances a
collection draws material as surely as a mesh does (`probes.scene.geometry` holds what it instances under its name).

Real, small bakes (`testing.demo_scenes.instanced_ball`): a ball with no physics whose only rendered copy is a
collection instanced by an empty, beside a simulated ball. Keyed, the empty slides the ball along the ground
(`scripted_motion`); switched, its hide_render is keyed off mid-run and the ball vanishes (`scripted_motion`, cause
`visibility_switch`: missed while the switch detector and the per-frame visibility read only geometry types); the
honest twin, a still instancing empty, stays clean.
"""

from __future__ import annotations

import pytest
from physcodegym.probes.audit.findings import AuditReport
from physcodegym.testing import demo_scenes as D


def _audit(how: str) -> AuditReport:
    from physcodegym.probes.audit.audit import audit_scene

    try:
        return audit_scene(D.instanced_ball(how))
    finally:
        D.clear_user_handlers()


def _said(rep: AuditReport) -> list[tuple[str, list[str], str]]:
    return [(f.kind, f.objects, f.message) for f in rep.findings]


@pytest.mark.parametrize("how", ["keyed", "switch"])
def test_a_keyed_or_switching_instancing_empty_is_scripted(how: str) -> None:
    rep = _audit(how)
    hits = [f for f in rep.findings if f.kind == "scripted_motion" and "Carrier" in f.objects]
    assert hits, _said(rep)
    if how == "switch":
        assert any(f.evidence.get("cause") == "visibility_switch" for f in hits), _said(rep)
    else:
        assert "1.500 m" in hits[0].message, _said(rep)


def test_a_still_instancing_empty_is_clean() -> None:
    rep = _audit("still")
    assert not rep.findings, _said(rep)
