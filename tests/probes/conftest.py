"""Fixtures for the probe/audit tests: real bpy scenes built in this process, audited once per session.

Each builder in `physcodegym.testing.demo_scenes` resets Blender to an empty factory scene, so scenes are
built one at a time; the audit report of each (builder, variant) is cached for the whole session.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from physcodegym.probes.audit.findings import AuditReport
from physcodegym.testing import demo_scenes as D

BUILDERS: dict[str, Callable[[], object]] = {
    "bouncing_ball": D.bouncing_ball,
    "dominoes": D.dominoes,
    "pendulum": D.pendulum,
    "flag": D.flag,
    "pumped_ball": lambda: D.bouncing_ball(pumped=True),
    "static": D.static_scene,
}
for _name in (
    "embedded_eggs",
    "oversized_proxy",
    "wrong_shape",
    "pass_through",
    "invisible_shelf",
    "keyframed_ball",
    "handler_ball",
    "attractor",
    "crumpling_cloth",
    "exploding_cloth",
    "hidden_floor",
    "nla_ball",
    "gn_cloth",
    "follower_ball",
    "slow_gravity",
    "static_overlap",
    "folded_sheet",
    "born_inside",
    "sourceless",
    "keyed_emitter",
    "speck_source",
    "hidden_tray",
    "liquid_attractor",
    "steered_drops",
):
    BUILDERS[f"{_name}:defect"] = (lambda fn: (lambda: fn(True)))(getattr(D, _name))
    BUILDERS[f"{_name}:twin"] = (lambda fn: (lambda: fn(False)))(getattr(D, _name))


@pytest.fixture(scope="session")
def audited() -> Callable[..., AuditReport]:
    """audited(case, program_text=None) -> AuditReport of that demo scene (built, baked, audited once)."""
    from physcodegym.probes.audit.audit import audit_scene

    cache: dict[tuple[str, str | None], AuditReport] = {}

    def get(case: str, program_text: str | None = None) -> AuditReport:
        key = (case, program_text)
        if key not in cache:
            try:
                sc = BUILDERS[case]()
                cache[key] = audit_scene(sc, program_text=program_text)
            finally:
                D.clear_user_handlers()
        return cache[key]

    return get
