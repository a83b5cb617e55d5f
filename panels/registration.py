"""Registers the add-on's classes (preferences, properties, operators, panels) and its job timer.

The toolkit's modules import each other as `physcodegym.*`; installed as an extension the package is
`bl_ext.<repo>.physcodegym`, so the extension's package is aliased to `physcodegym` first (one copy of
every module, whichever way Blender imported us).
"""

from __future__ import annotations

import sys
from typing import Any

_ROOT = __package__.rsplit(".", 1)[0]
_REGISTERED: list[Any] = []


def _ensure_alias() -> None:
    if _ROOT != "physcodegym" and "physcodegym" not in sys.modules:
        sys.modules["physcodegym"] = sys.modules[_ROOT]


def classes() -> list[Any]:
    """Every class to register, in dependency order (property groups before what points at them)."""
    _ensure_alias()
    from physcodegym.operators import agent_ops, audit_ops, counterfactual_ops, rubric_ops, task_ops
    from physcodegym.panels import annotate
    from physcodegym.panels import main as panels
    from physcodegym.physcodegym_addon import preferences, properties

    return [
        preferences.PCG_AddonPreferences,
        *properties.CLASSES,
        *task_ops.CLASSES,
        *audit_ops.CLASSES,
        *counterfactual_ops.CLASSES,
        *rubric_ops.CLASSES,
        *agent_ops.CLASSES,
        *panels.CLASSES,
        *annotate.CLASSES,
    ]


def register() -> None:
    _ensure_alias()
    import bpy
    from physcodegym.physcodegym_addon import properties

    if _REGISTERED:
        return
    for cls in classes():
        bpy.utils.register_class(cls)
        _REGISTERED.append(cls)
    properties.register()


def unregister() -> None:
    import bpy
    from physcodegym.physcodegym_addon import jobs, properties, state, witness

    jobs.stop_all()
    witness.remove_draw_handler()
    state.clear()
    properties.unregister()
    while _REGISTERED:
        cls = _REGISTERED.pop()
        try:
            bpy.utils.unregister_class(cls)
        except RuntimeError:
            pass  # already gone (Blender unregistered it on reload)


def is_registered() -> bool:
    return bool(_REGISTERED)
