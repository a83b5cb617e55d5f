"""How a child process that imported `bpy` ends: flush, then leave without the interpreter's teardown.

Why: Blender's Python module tears itself down at interpreter exit, and that teardown is not reliable across the
versions the product supports: measured, the audit child and the counterfactual worker segfault there on bpy 4.2.23
and hang in a futex on bpy 4.5.15, both after they printed their result. The parent then reads a crash or a timeout
where the work succeeded. The sandbox bootstrap has always ended this way; every other child that may import bpy
ends through `exit_child`. A process without bpy (the batch, the CLI of a pure-Python command) exits normally, so
its atexit work (pools, temporary folders) still runs.
"""

from __future__ import annotations

import os
import sys


def exit_child(code: int | None) -> None:
    """Exit with `code`: at once after flushing when `bpy` is loaded, through SystemExit otherwise."""
    code = int(code or 0)
    if "bpy" not in sys.modules:
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)
