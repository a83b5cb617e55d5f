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
  through);
- a geometry-nodes "Is Viewport" node reads True in the viewport and False in renders, so a node tree can give
  the solver one shape and the camera another (it is fed False here, as in a render).

The audit's geometry is "the evaluated, rendered mesh surface" (`probes.scene.geometry`). `render_configuration`
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

from physcodegym.probes.scene.physics import SOLVER_MODIFIERS

# modifiers whose visibility is physics, not appearance: never switched here
KEEP_MODIFIERS = SOLVER_MODIFIERS | {"COLLISION", "PARTICLE_SYSTEM"}


def _node_groups(ob: Any) -> list[Any]:
    """The geometry-node groups `ob`'s modifiers use, nested groups included."""
    seen: list[Any] = []
    stack = [m.node_group for m in ob.modifiers if m.type == "NODES" and getattr(m, "node_group", None) is not None]
    while stack:
        ng = stack.pop()
        if ng in seen:
            continue
        seen.append(ng)
        stack.extend(n.node_tree for n in ng.nodes if getattr(n, "node_tree", None) is not None)
    return seen


def _is_viewport_nodes(scene: Any) -> list[tuple[Any, Any, list[str]]]:
    """(node group, node, objects using the group) of every geometry-nodes "Is Viewport" node with a linked output
    in the groups the scene's modifiers use: the node reads True in the viewport and False in renders."""
    users: dict[Any, list[str]] = {}
    for ob in scene.objects:
        for ng in _node_groups(ob):
            users.setdefault(ng, []).append(ob.name)
    return [(ng, n, names) for ng, names in users.items() for n in ng.nodes
            if n.bl_idname == "GeometryNodeIsViewport" and any(o.is_linked for o in n.outputs)]


def divergences(scene: Any) -> list[dict[str, Any]]:
    """Every place where the viewport configuration of `scene` differs from its render configuration, as
    {"path", "viewport", "render"} rows (JSON-able, in scene order)."""
    out: list[dict[str, Any]] = []
    for ng, n, names in _is_viewport_nodes(scene):
        out.append({"path": f"bpy.data.node_groups[{ng.name!r}].nodes[{n.name!r}]", "type": "IS_VIEWPORT",
                    "viewport": True, "render": False, "objects": names})
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


def _render_is_viewport(ng: Any, node: Any) -> Any:
    """Feed what an "Is Viewport" node reads in renders (False) to everything it feeds; returns the undo."""
    const = ng.nodes.new("FunctionNodeInputBool")
    const.boolean = False
    moved = []
    for out in node.outputs:
        for link in list(out.links):
            to = link.to_socket
            ng.links.remove(link)
            ng.links.new(const.outputs[0], to)
            moved.append((out, to))

    def undo() -> None:
        for out, to in moved:
            ng.links.new(out, to)
        ng.nodes.remove(const)

    return undo


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
        for step in reversed(undo):
            try:
                if callable(step):
                    step()
                else:
                    owner, attr, value = step
                    setattr(owner, attr, value)
            except (ReferenceError, AttributeError, RuntimeError):  # removed while the block ran (a worker's load)
                pass


def apply_render_configuration(scene: Any) -> list[tuple[Any, str, Any]]:
    """Switch `scene` to what renders and keep it so (a worker that re-bakes the scene as it renders, to measure
    what the viewport-only differences did to the physics: `probes.audit.effects`); returns, for each switch made, an
    (owner, attribute, old value) or a callable that undoes it."""
    undo: list[Any] = []
    for ng, n, _names in _is_viewport_nodes(scene):
        undo.append(_render_is_viewport(ng, n))
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
