"""Environment that makes Blender's simulations repeat exactly from one process to the next.

Why: Blender 5.0's SPH particle solver reads heap memory it never wrote, so its result depended on what the
process had allocated and freed before the bake (measured on the hose_jet truth: the same program in the same
sandbox baked 0.25 m apart in the liquid's quartiles from a checkout at /check/work/main and one at /work/main,
and a re-simulation in a worker differed from both; run to run in one place it was bit-identical, so CI failed
where the developer's machine passed). glibc's `MALLOC_PERTURB_` fills every fresh allocation with one byte
and every freed block with another, so such a read sees the same value in every process: measured, the two
checkouts then bake bit-identically, and a worker's re-simulation matches the sandbox's bake bit for bit.
glibc reads it when a process starts, so it must be in a child's environment, never set later.
"""

from __future__ import annotations

import os

SIMULATION_ENV: dict[str, str] = {"MALLOC_PERTURB_": "165"}


def simulation_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with the variables that make a child's bakes repeat."""
    env = dict(os.environ if base is None else base)
    env.update(SIMULATION_ENV)
    return env
