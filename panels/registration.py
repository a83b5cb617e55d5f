"""Registers the add-on's classes (preferences, properties, operators, panels) and its job timer.

The toolkit's modules import each other as `physcodegym.*`; installed as an extension the package is
`bl_ext.<repo>.physcodegym`, so the extension's package is aliased to `physcodegym` first (one copy of
every module, whichever way Blender imported us).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

_ROOT = __package__.rsplit(".", 1)[0]
_REGISTERED: list[Any] = []
_MANIFEST = Path(__file__).resolve().parent.parent / "blender_manifest.toml"


def minimum_version() -> tuple[int, int, int]:
    """`blender_version_min` of the manifest (one source of truth: Blender's installer reads the same line)."""
    m = re.search(r'^blender_version_min\s*=\s*"(\d+)\.(\d+)\.(\d+)"', _MANIFEST.read_text(), flags=re.M)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else (0, 0, 0)


def refusal(version: tuple[int, ...]) -> str | None:
    """Why this Blender cannot run the extension, or None. The extension installer refuses an older Blender by the
    manifest, but the legacy add-on route (a folder in scripts/addons, `addon_utils.enable`, the bpy module) does
    not read it: register() says it in one line instead of failing later on a missing API."""
    need = minimum_version()
    if tuple(version[:3]) < need:
        have = ".".join(str(v) for v in version[:3])
        return f"PhysCodeGym needs Blender {'.'.join(map(str, need))} or newer; this is Blender {have}"
    return None


class UnsupportedBlender(RuntimeError):
    """Raised by register() on a Blender older than the manifest's minimum; the message is the whole story."""


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
    import bpy

    why = refusal(tuple(bpy.app.version))
    if why:
        print(f"PhysCodeGym: {why}", file=sys.stderr)
        raise UnsupportedBlender(why) from None
    _ensure_alias()
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
