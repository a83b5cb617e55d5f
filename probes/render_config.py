"""Evaluate the scene as it renders, not as the viewport shows it.

Why: Blender evaluates two configurations of one scene. A modifier can be shown in renders and not in the
viewport (`show_render` and not `show_viewport`), or the reverse, and an object or collection can be
disabled in viewports and still render. bpy's `evaluated_depsgraph_get()` is the viewport configuration,
and so are bakes. A program can use the difference:
- geometry nodes that read the scene time, in a render-only modifier, move a body in every rendered frame
  while the viewport (and an audit that reads it) sees it at rest;
- a viewport-only modifier that grows a rigid body's mesh makes the solver collide with a surface no frame
  shows (a ball that bounces on air above the table);
- a body disabled in viewports is left out of the bake and drawn in every frame (a wall the ball passes
  through).

The audit's geometry is "the evaluated, rendered mesh surface" (`probes.geometry`). `render_configuration`
switches the scene to what renders for as long as the audit reads it: each non-solver modifier shown as it
is in renders, and each rendered object or collection enabled in viewports, and puts it back afterwards.
Solver modifiers (cloth, soft body, fluid, dynamic paint) and the collision settings are left alone: they
are the physics, and the solvers-off worker switches them off on purpose. Baked caches are not touched by
the switch; a stepped (unbaked) scene steps in the rendered configuration, which is what a render does too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from physcodegym.probes.physics import SOLVER_MODIFIERS

# modifiers whose visibility is physics, not appearance: never switched here
KEEP_MODIFIERS = SOLVER_MODIFIERS | {"COLLISION", "PARTICLE_SYSTEM"}


def divergences(scene: Any) -> list[dict[str, Any]]:
    """Every place where the viewport configuration of `scene` differs from its render configuration, as
    {"path", "viewport", "render"} rows (JSON-able, in scene order)."""
    out: list[dict[str, Any]] = []
    for col in _collections(scene):
        if col.hide_viewport and not col.hide_render:
            out.append({"path": f"bpy.data.collections[{col.name!r}].hide_viewport", "viewport": False,
                        "render": True})
    for ob in scene.objects:
        if ob.hide_viewport and not ob.hide_render:
            out.append({"path": f"bpy.data.objects[{ob.name!r}].hide_viewport", "viewport": False, "render": True})
        for m in ob.modifiers:
            if m.type not in KEEP_MODIFIERS and bool(m.show_viewport) != bool(m.show_render):
                out.append({"path": f"bpy.data.objects[{ob.name!r}].modifiers[{m.name!r}]", "type": m.type,
                            "viewport": bool(m.show_viewport), "render": bool(m.show_render)})
    return out


def _collections(scene: Any) -> list[Any]:
    seen: list[Any] = []
    stack = list(scene.collection.children)
    while stack:
        c = stack.pop()
        if c not in seen:
            seen.append(c)
            stack.extend(c.children)
    return seen


@contextmanager
def render_configuration(scene: Any) -> Iterator[list[dict[str, Any]]]:
    """Within the block, the viewport depsgraph of `scene` evaluates what renders (see the module docstring);
    yields `divergences(scene)`. Does nothing (no depsgraph update) when the two configurations agree."""
    rows = divergences(scene)
    if not rows:
        yield rows
        return
    undo = apply_render_configuration(scene)
    try:
        yield rows
    finally:
        for owner, attr, value in reversed(undo):
            try:
                setattr(owner, attr, value)
            except (ReferenceError, AttributeError):  # removed while the block ran (a worker's throwaway load)
                pass


def apply_render_configuration(scene: Any) -> list[tuple[Any, str, Any]]:
    """Switch `scene` to what renders and keep it so (a worker that re-bakes the scene as it renders, to measure
    what the viewport-only differences did to the physics: `probes.effects`); returns (owner, attribute, old
    value) for each switch made."""
    undo: list[tuple[Any, str, Any]] = []
    for col in _collections(scene):
        if col.hide_viewport and not col.hide_render:
            undo.append((col, "hide_viewport", True))
            col.hide_viewport = False
    for ob in scene.objects:
        if ob.hide_viewport and not ob.hide_render:
            undo.append((ob, "hide_viewport", True))
            ob.hide_viewport = False
        for m in ob.modifiers:
            if m.type not in KEEP_MODIFIERS and bool(m.show_viewport) != bool(m.show_render):
                undo.append((m, "show_viewport", m.show_viewport))
                m.show_viewport = m.show_render
    return undo
