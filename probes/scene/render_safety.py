"""Render a submitted scene outside the sandbox without letting it write files.

Why: a compositor File Output node writes its image to any directory and file name the scene names, on every
render (measured on bpy 5.0: a node with `directory="/tmp/x/"` wrote `/tmp/x/file_name.exr` during a
still render). The program's own renders run inside the wall, where only the run folder is writable, but
the audit's render check (`probes.audit.render_match`) and the panel's preview render the saved scene in a
trusted process: there a File Output node could overwrite another submission's frames in a batch, a decoded
reference cache or a results file. `no_file_outputs` mutes every File Output node of every compositor node
tree (nested groups and other scenes' trees included: a Render Layers node or a VSE scene strip can render
another scene) for as long as the render runs, and puts the mute flags back (the panel renders the artist's
live scene). A muted output node is not executed; the composite the camera shows is unchanged.
"""

from __future__ import annotations

import contextlib
import re
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


# -- code-running features and stored paths of a submitted scene (docs/THREAT_MODEL.md) ----------------------------
# Standard library only, no import of this package: `sandbox.media_audit` (the validation scan) and every trusted
# worker that loads a submitted .blend (`neutralise`) share these lists.
SAFE_CACHE_NAME = re.compile(r"^[A-Za-z0-9 _.\-]{0,63}$")


def point_caches(bpy: Any) -> list[tuple[str, Any]]:
    """Every point cache in the file with a name for its owner: rigid-body worlds, solver modifiers (cloth, soft
    body, dynamic paint surfaces, ...) and particle systems, on every object of every scene."""
    out: list[tuple[str, Any]] = []
    for sc in bpy.data.scenes:
        rbw = sc.rigidbody_world
        if rbw is not None and rbw.point_cache is not None:
            out.append((f"the rigid-body world of scene {sc.name!r}", rbw.point_cache))
    for ob in bpy.data.objects:
        for m in ob.modifiers:
            pc = getattr(m, "point_cache", None)
            if pc is not None:
                out.append((f"modifier {m.name!r} of {ob.name!r}", pc))
            settings = getattr(m, "canvas_settings", None)
            for surf in getattr(settings, "canvas_surfaces", None) or []:
                if getattr(surf, "point_cache", None) is not None:
                    out.append((f"dynamic-paint surface {surf.name!r} of {ob.name!r}", surf.point_cache))
        for ps in ob.particle_systems:
            out.append((f"particle system {ps.name!r} of {ob.name!r}", ps.point_cache))
    return out


def cache_name_problem(pc: Any) -> str | None:
    """Why a point cache's name would put its disk files elsewhere (a separator, '..', a control character), or
    None. Blender cleans a name set through Python, but not one edited in the saved file's bytes; the name is
    part of every cache file's path."""
    names = [getattr(pc, "name", "") or ""]
    names += [getattr(p, "name", "") or "" for p in (getattr(pc, "point_caches", None) or [])]
    for n in names:
        if not SAFE_CACHE_NAME.match(n) or ".." in n:
            return f"cache name {n!r} is not a plain file name"
    return None


def code_features(bpy: Any) -> list[str]:
    """Every feature of the loaded file that would run code stored in the scene (one line each): Freestyle style
    modules in Python-scripting mode (run on render whatever Auto Run says), text blocks registered as modules,
    scripted drivers that are not simple expressions, OSL script nodes (Cycles)."""
    out: list[str] = []
    for sc in bpy.data.scenes:
        for vl in sc.view_layers:
            fs = getattr(vl, "freestyle_settings", None)
            if fs is None:
                continue
            mods = list(getattr(fs, "modules", []) or [])
            if mods or getattr(fs, "mode", "") == "SCRIPT":
                out.append(f"Freestyle in Python-scripting mode on view layer {vl.name!r} of scene {sc.name!r} "
                           f"({len(mods)} style module(s)): Blender runs them as Python on every render")
    for t in bpy.data.texts:
        if getattr(t, "use_module", False):
            out.append(f"text {t.name!r} is registered as a module (runs when the file is opened with Auto Run)")
    for idb in _animated_ids(bpy):
        ad = getattr(idb, "animation_data", None)
        for fc in (getattr(ad, "drivers", None) or []) if ad is not None else []:
            d = fc.driver
            if d.type == "SCRIPTED" and not getattr(d, "is_simple_expression", False):
                out.append(f"driver {fc.data_path!r} of {idb.name!r} evaluates the Python expression "
                           f"{d.expression[:80]!r}")
                if len(out) > 200:
                    return out
    for owner, n in _node_trees_nodes(bpy):
        if n.bl_idname == "ShaderNodeScript":
            out.append(f"OSL script node {n.name!r} in {owner}")
    return out


def _animated_ids(bpy: Any) -> list[Any]:
    ids: list[Any] = []
    for coll in ("objects", "scenes", "materials", "meshes", "node_groups", "worlds", "cameras", "lights",
                 "shape_keys", "textures", "particles", "curves", "armatures"):
        ids.extend(getattr(bpy.data, coll, []) or [])
    for m in getattr(bpy.data, "materials", []) or []:
        if getattr(m, "node_tree", None) is not None:
            ids.append(m.node_tree)
    return ids


def _node_trees_nodes(bpy: Any) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    trees = [(f"node group {g.name!r}", g) for g in bpy.data.node_groups]
    trees += [(f"material {m.name!r}", m.node_tree) for m in bpy.data.materials if getattr(m, "node_tree", None)]
    trees += [(f"world {w.name!r}", w.node_tree) for w in bpy.data.worlds if getattr(w, "node_tree", None)]
    for owner, t in trees:
        out.extend((owner, n) for n in t.nodes)
    return out


def neutralise(bpy: Any, scratch: str | None = None) -> list[str]:
    """Switch off, in the loaded file, every feature that would run stored code or write through a stored path,
    before any render or bake in a trusted process; returns one line per change (empty for a clean scene).

    Defence in depth behind the wall (`sandbox.wall`): Freestyle off where it runs Python style modules (and the
    modules removed), text modules unregistered, Auto Run off, scripted drivers that are not simple expressions
    muted and the driver namespace emptied, OSL off in Cycles, File Output nodes muted, unsafe point-cache names
    cleared, the render output path moved into `scratch` (default: the temp folder)."""
    import tempfile

    done: list[str] = []
    prefs = getattr(bpy.context, "preferences", None)
    if prefs is not None:
        prefs.filepaths.use_scripts_auto_execute = False
    ns = bpy.app.driver_namespace
    for k in [k for k in ns.keys() if not k.startswith("__")]:  # noqa: SIM118 - a bpy mapping, not a dict
        del ns[k]
    for sc in bpy.data.scenes:
        for vl in sc.view_layers:
            fs = getattr(vl, "freestyle_settings", None)
            if fs is None:
                continue
            mods = list(getattr(fs, "modules", []) or [])
            if mods or getattr(fs, "mode", "") == "SCRIPT":
                for m in mods:
                    m.use = False
                    m.script = None
                    fs.modules.remove(m)
                with contextlib.suppress(TypeError, AttributeError):
                    fs.mode = "EDITOR"
                if sc.render.use_freestyle:
                    sc.render.use_freestyle = False
                done.append(f"freestyle python modules removed on view layer {vl.name!r} of {sc.name!r}")
        cy = getattr(sc, "cycles", None)
        if cy is not None and getattr(cy, "shading_system", False):
            cy.shading_system = False
            done.append(f"OSL off in scene {sc.name!r}")
        out_dir = scratch or tempfile.gettempdir()
        if sc.render.filepath and not sc.render.filepath.startswith(out_dir):
            sc.render.filepath = out_dir.rstrip("/") + "/render_"
    for t in bpy.data.texts:
        if getattr(t, "use_module", False):
            t.use_module = False
            done.append(f"text {t.name!r} unregistered as a module")
    for idb in _animated_ids(bpy):
        ad = getattr(idb, "animation_data", None)
        for fc in (getattr(ad, "drivers", None) or []) if ad is not None else []:
            d = fc.driver
            if d.type == "SCRIPTED" and not getattr(d, "is_simple_expression", False) and not fc.mute:
                fc.mute = True
                done.append(f"python driver {fc.data_path!r} of {idb.name!r} muted")
    for n in file_output_nodes(bpy):
        if not n.mute:
            n.mute = True
            done.append(f"file output node {n.name!r} muted")
    for owner, pc in point_caches(bpy):
        if cache_name_problem(pc):
            pc.name = ""  # set through Python: Blender names the files after the owner instead
            done.append(f"point cache name of {owner} replaced")
    return done


NEUTRALISED: list[str] = []  # what the load guard switched off in this process, for the worker's report


def install_load_guard(scratch: str | None = None) -> None:
    """Run `neutralise` on every file this process opens from now on (a persistent load_post handler), so a
    worker that opens a submitted scene through code that is not ours to change is covered too."""
    import bpy
    from bpy.app.handlers import persistent

    @persistent
    def _pcg_neutralise(*_a: Any) -> None:
        done = neutralise(bpy, scratch)
        if done and len(NEUTRALISED) < 200:
            NEUTRALISED.extend(done[: 200 - len(NEUTRALISED)])

    hs = bpy.app.handlers.load_post
    for h in list(hs):
        if getattr(h, "__name__", "") == "_pcg_neutralise":
            hs.remove(h)
    hs.append(_pcg_neutralise)


@contextmanager
def no_stored_code() -> Iterator[list[str]]:
    """While the body renders: Freestyle off in every scene where a view layer would run Python style modules, OSL
    off in Cycles; put back afterwards (the panel renders the artist's live scene). Yields what was switched."""
    import bpy

    saved: list[tuple[Any, str, Any]] = []
    for sc in bpy.data.scenes:
        py = any(list(getattr(getattr(vl, "freestyle_settings", None), "modules", []) or [])
                 or getattr(getattr(vl, "freestyle_settings", None), "mode", "") == "SCRIPT"
                 for vl in sc.view_layers)
        if py and sc.render.use_freestyle:
            saved.append((sc.render, "use_freestyle", True))
            sc.render.use_freestyle = False
        cy = getattr(sc, "cycles", None)
        if cy is not None and getattr(cy, "shading_system", False):
            saved.append((cy, "shading_system", True))
            cy.shading_system = False
    try:
        yield [f"{getattr(o, 'name', '') or type(o).__name__}.{a}" for o, a, _ in saved]
    finally:
        for o, a, v in saved:
            with contextlib.suppress(Exception):
                setattr(o, a, v)


PATH_SUBTYPES = frozenset({"FILE_PATH", "DIR_PATH"})
# paths `sandbox.media_audit.scan_loaded_media` already judges (reads: a policy breach), and the render output path
# (not refused: Blender's default is '/tmp/'; every trusted renderer sets its own)
SCANNED_ELSEWHERE = frozenset({"images", "movieclips", "sounds", "libraries", "volumes", "fonts", "texts",
                               "cache_files",
                               "screens", "window_managers", "workspaces"})  # the UI: not saved data a worker uses
MAX_PATHS = 5000
# Not walked: `library_weak_reference` (an asset's origin, never loaded by a worker) and `tool_settings` (editing
# tools' state: no bake or render reads a path there, and Blender 4.2 crashes reading some of its tool slots).
SKIPPED_PROPERTIES = frozenset({"rna_type", "library_weak_reference", "tool_settings"})
# Structs that only point at Blender's own read-only data files: a studio light's `path` is the `.sl` file of the
# Blender install (Workbench shading with a studio light references it); nothing of the scene writes there.
SKIPPED_STRUCTS = frozenset({"StudioLight"})
# `all_ids` (Blender 5.2+) lists every ID again, UI ones included; each ID is visited from its own collection.
SKIPPED_COLLECTIONS = frozenset({"all_ids"})
# UI data (windows, screens, workspaces and their file browsers' folders): not saved data a worker uses.
UI_ID_TYPES = ("Screen", "WorkSpace", "WindowManager")


def _struct_paths(owner: str, st: Any, out: list[tuple[str, str]], depth: int, seen: set[int]) -> None:
    """String properties of subtype FILE_PATH / DIR_PATH of `st` and of the structs it points to or holds (small
    collections only), down to `depth`; IDs are not followed (each is visited from its own collection)."""
    if st is None or depth < 0 or len(out) >= MAX_PATHS:
        return
    try:
        key = st.as_pointer()
    except (AttributeError, ReferenceError):
        return
    if key in seen:
        return
    seen.add(key)
    if st.bl_rna.identifier in SKIPPED_STRUCTS:
        return
    for p in st.bl_rna.properties:
        ident = p.identifier
        if ident in SKIPPED_PROPERTIES:
            continue
        try:
            if p.type == "STRING" and p.subtype in PATH_SUBTYPES:
                v = getattr(st, ident)
                if isinstance(v, str) and v:
                    out.append((f"{owner}.{ident}", v))
            elif p.type == "POINTER" and depth > 0 and not p.fixed_type.bl_rna.identifier == "ID" \
                    and not isinstance(getattr(st, ident), _id_type()):
                _struct_paths(f"{owner}.{ident}", getattr(st, ident), out, depth - 1, seen)
            elif p.type == "COLLECTION" and depth > 0:
                coll = getattr(st, ident)
                if len(coll) <= 64:
                    for i, item in enumerate(coll):
                        if not isinstance(item, _id_type()):
                            _struct_paths(f"{owner}.{ident}[{i}]", item, out, depth - 1, seen)
        except (AttributeError, ReferenceError, TypeError, RuntimeError):
            continue


def _id_type() -> type:
    import bpy

    return bpy.types.ID


def stored_paths(bpy: Any) -> list[tuple[str, str]]:
    """(owner, path) of every file or folder path the loaded file carries, found by RNA subtype (FILE_PATH,
    DIR_PATH) rather than by a list of features: every ID's own properties and the structs under them (modifiers
    and their settings, nodes, strips, ...), except the media kinds `media_audit.scan_loaded_media` judges and
    the render output path. Large collections (mesh elements) are not walked; nothing is evaluated."""
    out: list[tuple[str, str]] = []
    seen: set[int] = set()
    for coll_name in dir(bpy.data):
        if coll_name in SCANNED_ELSEWHERE or coll_name in SKIPPED_COLLECTIONS or coll_name.startswith("_"):
            continue
        coll = getattr(bpy.data, coll_name, None)
        if not hasattr(coll, "rna_type") or not hasattr(coll, "__iter__") or isinstance(coll, str):
            continue
        try:
            items = list(coll)
        except TypeError:
            continue
        ui = tuple(t for t in (getattr(bpy.types, n, None) for n in UI_ID_TYPES) if t is not None)
        for idb in items:
            if not isinstance(idb, bpy.types.ID):
                break
            if isinstance(idb, ui):
                continue
            _struct_paths(f"{coll_name}[{idb.name!r}]", idb, out, 3, seen)
            for m in getattr(idb, "modifiers", None) or []:
                _struct_paths(f"{coll_name}[{idb.name!r}].modifiers[{m.name!r}]", m, out, 3, seen)
            tree = getattr(idb, "node_tree", None)
            for n in (getattr(tree, "nodes", None) or []) if tree is not None else []:
                _struct_paths(f"{coll_name}[{idb.name!r}].node_tree.nodes[{n.name!r}]", n, out, 2, seen)
            for n in getattr(idb, "nodes", None) or []:
                _struct_paths(f"{coll_name}[{idb.name!r}].nodes[{n.name!r}]", n, out, 2, seen)
            sed = getattr(idb, "sequence_editor", None)
            for s in list(getattr(sed, "strips_all", None) or [])[:1000] if sed is not None else []:
                _struct_paths(f"{coll_name}[{idb.name!r}].strips[{s.name!r}]", s, out, 2, seen)
    return [(o, p) for o, p in out if not o.endswith(".render.filepath")]
