"""Render a submitted scene outside the sandbox without letting it write files.

Why: a compositor File Output node writes its image to any directory and file name the scene names, on every
render (measured on bpy 5.0: a node with `directory="/tmp/x/"` wrote `/tmp/x/file_name.exr` during a
still render). The program's own renders run inside the wall, where only the run folder is writable, but
the audit's render check (`probes.render_match`) and the panel's preview render the saved scene in a
trusted process: there a File Output node could overwrite another submission's frames in a batch, a decoded
reference cache or a results file. `no_file_outputs` mutes every File Output node of every compositor node
tree (nested groups and other scenes' trees included: a Render Layers node or a VSE scene strip can render
another scene) for as long as the render runs, and puts the mute flags back (the panel renders the artist's
live scene). A muted output node is not executed; the composite the camera shows is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

FILE_OUTPUT = "CompositorNodeOutputFile"


def file_output_nodes(bpy: Any) -> list[Any]:
    """Every File Output node in every compositor node tree of the file."""
    trees = [g for g in bpy.data.node_groups if getattr(g, "bl_idname", "") == "CompositorNodeTree"]
    for sc in bpy.data.scenes:  # older files may keep an embedded tree on the scene
        t = getattr(sc, "node_tree", None)
        if t is not None and t not in trees:
            trees.append(t)
    return [n for t in trees for n in t.nodes if n.bl_idname == FILE_OUTPUT]


@contextmanager
def no_file_outputs() -> Iterator[list[str]]:
    """Mute every compositor File Output node while the body renders; yields "tree/node" of those muted."""
    import bpy

    nodes = file_output_nodes(bpy)
    saved = [(n, n.mute) for n in nodes]
    for n in nodes:
        n.mute = True
    try:
        yield [f"{n.id_data.name}/{n.name}" for n in nodes]
    finally:
        for n, m in saved:
            n.mute = m
