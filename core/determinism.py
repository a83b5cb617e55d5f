"""Environment that makes Blender's simulations repeat exactly from one process to the next.

Why: Blender 5.0's SPH particle solver reads heap memory it never wrote, so its result depended on what the
process had allocated and freed before the bake (measured on the hose_jet truth: the same program in the same
sandbox baked 0.25 m apart in the liquid's quartiles from a checkout at /check/work/main and one at /work/main,
and a re-simulation in a worker differed from both; run to run in one place it was bit-identical, so CI failed
where the developer's machine passed). glibc's `MALLOC_PERTURB_` fills every fresh allocation with one byte
and every freed block with another, so such a read sees the same value in every process: measured, the two
checkouts then bake bit-identically, and a worker's re-simulation matches the sandbox's bake bit for bit.
glibc reads it when a process starts, so it must be in a child's environment, never set later.

A `MALLOC_PERTURB_` alone was not enough for the audit's workers: with two threads and a random layout, the
re-simulation worker re-baked the hose_jet truth 0.11 m apart (quartiles) from the sandbox's bake in 1 audit
out of 5 (measured; CI failed on it), on one CPU with a random layout in 1 out of 11, and on one CPU with a fixed
layout in 0 out of 16 (`benchmarks/resim_repeat.py`). So every simulating child also runs on one CPU
(`pick_cpu`: TBB sizes its pool when Blender starts, one thread then) with address randomisation off
(`fix_layout`), as the sandbox's child always has (`sandbox.runner`).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

SIMULATION_ENV: dict[str, str] = {"MALLOC_PERTURB_": "165"}


def simulation_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with the variables that make a child's bakes repeat."""
    env = dict(os.environ if base is None else base)
    env.update(SIMULATION_ENV)
    return env


def pick_cpu() -> int | None:
    """The allowed CPU with the fewest processes pinned to it alone (other simulating children), None if one is
    allowed; between CPUs with as many, the one whose pinned process started last.

    Why: each simulating child runs on one CPU, and it cannot move once pinned; parallel batch workers and the
    audit's parallel workers must not all land on the same one. The tie-break: the audit starts its longest
    worker first (the re-simulation re-bakes the whole run) and short ones after (the rubric's branches, the
    solvers-off run, the field and collider branches). Measured on flag_wind: a field branch pinned, on a tie,
    next to the re-simulation waited for it while the other CPU, whose branch had finished, stood idle (the
    audit's field stage took 3.8 s instead of 2.6 s)."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if len(allowed) < 2:
        return None
    use = dict.fromkeys(allowed, 0)
    newest = dict.fromkeys(allowed, -1)
    with contextlib.suppress(OSError):
        for e in os.scandir("/proc"):
            if not e.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                aff = os.sched_getaffinity(int(e.name))
                if len(aff) == 1 and not _kernel_thread(e.name):
                    (c,) = aff
                    if c in use:
                        use[c] += 1
                        newest[c] = max(newest[c], _start_ticks(e.name))
    return min(allowed, key=lambda c: (use[c], -newest[c], c))


def _kernel_thread(pid: str) -> bool:
    """Per-CPU kernel threads (kworker/0:1, ksoftirqd/1) are pinned to one CPU each and come and go: they are no
    simulating child and must not tip the choice (they have no command line)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return not f.read(1)
    except OSError:
        return True


def _start_ticks(pid: str) -> int:
    """When a process started (clock ticks since boot, /proc/PID/stat field 22); -1 when unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return -1


ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag: the child's memory layout is the same on every run


def fix_layout(libc: Any, cpu: int | None) -> None:
    """In a child before exec: address randomisation off and the process on `cpu` alone (None: left as it is).

    Why: a simulating child's result may depend on its memory layout and its threads (module docstring); both
    settings are kept through exec. `libc` is `ctypes.CDLL(None)` loaded before the fork (None: layout left)."""
    if libc is not None:
        with contextlib.suppress(Exception):
            cur = libc.personality(0xFFFFFFFF)
            if cur != -1:
                libc.personality(cur | ADDR_NO_RANDOMIZE)
    if cpu is not None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {cpu})
