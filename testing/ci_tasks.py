"""The shipped packs the CI test suite bakes: a fixed list, so the suite does not grow with every new pack.

Why a fixed list: tests that bake, render or self-test a pack cost 15 s (a rigid truth) to several minutes (a
cloth or an SPH liquid) each, and packs are added every wave. Parametrising those tests over whatever
`tasks/packs` holds made each new pack a permanent CI cost, and CI must finish in 25 minutes on 2 cores.
These twelve packs cover every category and subcategory (tests/tasks/test_packs.py checks that) and every
solver the product audits (rigid bodies, constraints and motors, cloth, wind fields, SPH liquids).

What still covers every pack: the cheap structural tests (schema, task.json with its media, the policy on
truth.py, events re-derived from the stored trajectories, the manifest) run over all shipped packs. A pack
outside this list is verified by its author and by a maintainer outside CI with `physcodegym tasks verify <id>`
(re-bake and trajectory comparison) and `physcodegym selftest --task <id>` (the injected-defect matrix).
Adding a pack here is a deliberate CI cost: do it when it brings a mechanism no listed pack has.
"""

from __future__ import annotations

CI_TASKS: tuple[str, ...] = (
    "ball_bounce",
    "ball_dominoes",
    "bead_pile",
    "block_stack",
    "cloth_drape",
    "flag_wind",
    "hose_jet",
    "liquid_duck",
    "marble_ramp",
    "milk_pour",
    "pendulum",
    "turntable",
)


def ci_tasks(available: list[str] | tuple[str, ...] | None = None) -> list[str]:
    """The CI packs, in CI_TASKS order; with `available` (the ids a test would otherwise cover), only those of
    them that are there (a pack removed from tasks/packs is not baked; tests/tasks/test_packs.py says it is
    missing)."""
    if available is None:
        return list(CI_TASKS)
    have = set(available)
    return [t for t in CI_TASKS if t in have]
