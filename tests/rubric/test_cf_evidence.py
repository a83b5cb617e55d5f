"""A counterfactual that cannot apply because the visible object has no collider is evidence, not an unknown."""

from __future__ import annotations


def test_no_collider_intervention_fails_the_criterion_with_the_reason() -> None:
    from physcodegym.probes.branches.interventions import NO_COLLISION_OWNER
    from physcodegym.verifier.checks import _cf_failure

    r = _cf_failure({"ok": False, "reason": f"intervened branch failed: 'Glass' and ['Drops'] {NO_COLLISION_OWNER}"})
    assert r["passed"] is False and "no collision owner" in r["reason"] and r["evidence"]["no_collision_owner"]
    r = _cf_failure({"ok": False, "reason": "worker timed out after 600 s"})
    assert r["passed"] is None and "timed out" in r["reason"]
