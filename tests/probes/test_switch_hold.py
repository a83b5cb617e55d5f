"""A body held in mid-air by its rigid-body switch (kinematic, or `enabled` keyed off) is held by nothing.

A short kinematic prefix is an initial-condition hand-off (SPEC: at most 15 frames); longer, the switch is a
hand nobody sees that holds the body until the frame the program wants it to fall. Each case is baked for real
and audited: the long mid-air hold (kinematic, or switched off) must be a `hidden_support`; a hand-off of 10
frames and a long hold of a body resting on the ground stay clean. Measured before the fix: both long holds
audited clean (the five seconds the ball rests on the floor outvoted the second it hovered).
"""

from __future__ import annotations

from typing import Any

import pytest
from physcodegym.probes.audit.findings import AuditReport
from physcodegym.testing import demo_scenes as D


def held_ball(switch: str, until: int, z: float, frames: int = 90) -> Any:
    """A ball at height `z` whose rigid body `switch` ("kinematic" or "enabled") holds it until frame `until`."""
    sc = D.rigid_stage(frames)
    b = D.sphere("Ball", (0, 0, z), 0.25, mass=1.0)
    on, off = (True, False) if switch == "kinematic" else (False, True)
    setattr(b.rigid_body, switch, on)
    b.rigid_body.keyframe_insert(switch, frame=1)
    setattr(b.rigid_body, switch, off)
    b.rigid_body.keyframe_insert(switch, frame=until)
    D.bake()
    return sc


CASES = {
    "kinematic_hover": ("kinematic", 30, 2.0),
    "switched_off_hover": ("enabled", 30, 2.0),
    "handoff": ("kinematic", 10, 2.0),
    "kinematic_on_ground": ("kinematic", 60, 0.25),
}


@pytest.fixture(scope="module")
def audited_hold() -> Any:
    from physcodegym.probes.audit.audit import audit_scene

    cache: dict[str, AuditReport] = {}

    def get(case: str) -> AuditReport:
        if case not in cache:
            try:
                cache[case] = audit_scene(held_ball(*CASES[case]))
            finally:
                D.clear_user_handlers()
        return cache[case]

    return get


@pytest.mark.parametrize("case", ["kinematic_hover", "switched_off_hover"])
def test_a_long_hold_in_mid_air_by_the_switch_is_a_hidden_support(audited_hold, case: str) -> None:
    rep = audited_hold(case)
    hits = [f for f in rep.by_kind("hidden_support") if f.objects == ["Ball"]]
    assert hits and "switch" in hits[0].message, [(f.kind, f.message) for f in rep.findings]
    assert hits[0].evidence["switch_held_frames"][0] < 30


@pytest.mark.parametrize("case", ["handoff", "kinematic_on_ground"])
def test_a_short_hand_off_and_a_hold_on_material_stay_clean(audited_hold, case: str) -> None:
    rep = audited_hold(case)
    assert not rep.by_kind("hidden_support"), [(f.kind, f.message) for f in rep.findings]
