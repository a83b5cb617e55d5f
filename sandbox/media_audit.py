"""The post-run media audit, in a separate trusted process (SPEC §3, isolation wall).

`python -m physcodegym.sandbox.media_audit BLEND --root DIR` opens the accepted `scene.blend` with Auto Run
off (`use_scripts=False`, factory settings, no user config) and reports, as JSON on stdout, what Blender
itself would load from the scene: file-backed images from outside the run folder, images that decode a
movie, VSE strips (movie, image, sound), movie clips, sounds and libraries. It used to run inside the
program's own interpreter, where a program could skip it (`os._exit`) or silence it (`dup2` on the status
descriptor). The runner starts it through `core.limits.run_limited` (time and memory limit) and only
after `sandbox.artifacts` has checked the file (regular, one link, Blender header, no library, movie
clip or sound block), so opening it reads nothing outside the run folder.

`audit(blend, root)` is also callable from a process that already has bpy (tests).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

TIMEOUT_S = 120.0
MEMORY_MB = 4096


def audit(blend: str, root: str, also_inside: tuple[str, ...] = (),
          refusals: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Open `blend` (Auto Run off) and scan it; `refusals`, when given, receives `scene_refusals` of the file as it
    was saved: scanned from a load_post handler, before Blender evaluates the scene (a point cache on disk is
    written while the file loads), and then neutralised (`probes.scene.render_safety.neutralise`)."""
    import bpy

    with_prefs = getattr(bpy.context, "preferences", None)
    if with_prefs is not None:
        with_prefs.filepaths.use_scripts_auto_execute = False
    guard = None
    if refusals is not None:
        from bpy.app.handlers import persistent
        from physcodegym.probes.scene.render_safety import neutralise

        @persistent
        def guard(*_a: Any) -> None:
            refusals[:] = scene_refusals(bpy, root, also_inside)
            neutralise(bpy)

        bpy.app.handlers.load_post.append(guard)
    try:
        bpy.ops.wm.open_mainfile(filepath=blend, load_ui=False, use_scripts=False)
    finally:
        if guard is not None:
            bpy.app.handlers.load_post.remove(guard)
    return scan_loaded_media(bpy, root, any_library=True, also_inside=also_inside)


def scene_refusals(bpy: Any, root: str, also_inside: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Why the loaded scene may not be opened by a trusted process at all (the run is `invalid`): a feature that
    runs code stored in the scene (`probes.scene.render_safety.code_features`), or a path it writes through that leads
    outside the run folder after normalisation (point-cache names edited in the file's bytes, File Output nodes).
    Paths it reads from outside are `scan_loaded_media`'s (policy breaches). The render output path is not
    refused (Blender's default is '/tmp/'); every trusted renderer sets its own (`render_safety.neutralise`)."""
    from physcodegym.probes.scene.render_safety import (
        cache_name_problem,
        code_features,
        file_output_nodes,
        point_caches,
        stored_paths,
    )

    roots = [os.path.realpath(root), *(os.path.normpath(r) for r in also_inside)]

    def outside(fp: str) -> bool:
        """`fp` normalised: '//' from the saved file's folder, a plain relative path from the run folder."""
        if fp.startswith("//"):
            ap = bpy.path.abspath(fp)
        elif os.path.isabs(fp):
            ap = fp
        else:
            ap = os.path.join(roots[0], fp)
        ap = os.path.realpath(os.path.normpath(ap))
        return not any(ap == wd or ap.startswith(wd + "/") for wd in roots)

    out = [{"rule": "code-in-scene", "detail": d} for d in code_features(bpy)]
    for owner, pc in point_caches(bpy):
        why = cache_name_problem(pc)
        if why:
            out.append({"rule": "path-outside-run", "detail": f"{owner}: {why} (its disk cache would be written "
                        "outside the run folder)"})
    told: set[str] = set()
    for owner, fp in stored_paths(bpy):
        if outside(fp):
            told.add(fp)
            out.append({"rule": "path-outside-run", "detail": f"{owner} is {fp!r}, outside the run folder"})
    for n in file_output_nodes(bpy):
        for attr in ("directory", "base_path"):
            fp = getattr(n, attr, None)
            if isinstance(fp, str) and fp and fp not in told and outside(fp):
                out.append({"rule": "path-outside-run",
                            "detail": f"compositor File Output node {n.name!r} writes to {fp!r}"})
    return out[:50]


def scan_loaded_media(
    bpy: Any, root: str, any_library: bool, also_inside: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """What Blender decoded or linked, found in `bpy.data`: movies, images from outside `root`, clips, sounds,
    libraries (all of them with `any_library`, else only those from outside `root`) and media VSE strips.

    The one scan for both passes: the child's own first report (sandbox/bootstrap.py, `any_library=False`) and
    this trusted process on the saved scene (`any_library=True`: a saved scene links nothing). `also_inside`: other
    names of the run folder (the fixed path the program saw it at inside the wall, sandbox.isolation.WALL_RUN).
    """
    roots = [os.path.realpath(root), *(os.path.normpath(r) for r in also_inside)]
    out: list[dict[str, Any]] = []

    def outside(fp: str, lib: Any = None) -> bool:
        if not fp:
            return False
        ap = os.path.realpath(bpy.path.abspath(fp, library=lib))
        return not any(ap == wd or ap.startswith(wd + "/") for wd in roots)

    for img in bpy.data.images:
        src = getattr(img, "source", "")
        if src == "MOVIE":
            out.append({"rule": "media-decode", "detail": f"image {img.name!r} decodes a movie {img.filepath!r}"})
        elif src in ("FILE", "SEQUENCE", "TILED") and outside(img.filepath):
            out.append(
                {"rule": "media-decode", "detail": f"image {img.name!r} loads {img.filepath!r} from outside the folder"}
            )
    for clip in bpy.data.movieclips:
        out.append({"rule": "media-decode", "detail": f"movie clip {clip.name!r} loaded from {clip.filepath!r}"})
    for snd in bpy.data.sounds:
        out.append({"rule": "media-decode", "detail": f"sound {snd.name!r} loaded from {snd.filepath!r}"})
    for lib in bpy.data.libraries:
        if any_library:
            out.append({"rule": "load-external-blend", "detail": f"library {lib.filepath!r} linked into the scene"})
        elif outside(lib.filepath):
            out.append(
                {"rule": "load-external-blend", "detail": f"library {lib.filepath!r} linked from outside the folder"}
            )
    for kind, coll in (("volume", "volumes"), ("cache file", "cache_files"), ("font", "fonts"), ("text", "texts")):
        for d in getattr(bpy.data, coll, []):
            fp = getattr(d, "filepath", "") or ""
            if fp == "<builtin>" or (coll == "texts" and getattr(d, "is_in_memory", True)):
                continue
            if outside(fp, getattr(d, "library", None)):
                out.append(
                    {
                        "rule": "file-outside-workdir",
                        "detail": f"{kind} {d.name!r} loads {fp!r} from outside the folder",
                    }
                )
    for owner, path in _import_nodes(bpy):
        if path is None or outside(path):
            what = "a computed path" if path is None else repr(path)
            out.append(
                {
                    "rule": "file-outside-workdir",
                    "detail": f"{owner} reads {what} (only a fixed path inside the run folder can be checked)",
                }
            )
    for owner, pc in _point_caches(bpy):
        if getattr(pc, "use_external", False) and (not pc.filepath or outside(pc.filepath)):
            out.append(
                {
                    "rule": "file-outside-workdir",
                    "detail": f"{owner} reads and writes an external point cache at {pc.filepath!r}, outside "
                    "the run folder (a trusted re-bake would write there)",
                }
            )
    for sc in bpy.data.scenes:
        sed = sc.sequence_editor
        if sed is None:
            continue
        for st in list(getattr(sed, "strips_all", []))[:10000]:
            if st.type in ("MOVIE", "IMAGE", "SOUND"):
                out.append(
                    {"rule": "media-decode", "detail": f"VSE strip {st.name!r} ({st.type}) in scene {sc.name!r}"}
                )
    return out


def _import_nodes(bpy: Any) -> list[tuple[str, str | None]]:
    """Geometry-nodes Import nodes (OBJ, PLY, STL, CSV, VDB, Text) of every node group, with the file each reads:
    its Path input's value, or None when that input is linked (computed by nodes or fed by a modifier input, so
    no fixed path can be checked). Such a node reads its file each time a trusted process evaluates the scene."""
    out: list[tuple[str, str | None]] = []
    for g in bpy.data.node_groups:
        for n in g.nodes:
            if not n.bl_idname.startswith("GeometryNodeImport"):
                continue
            sock = n.inputs.get("Path")
            path = None if sock is None or sock.is_linked else str(sock.default_value)
            out.append((f"node {n.name!r} ({n.bl_idname}) of node group {g.name!r}", path))
    return out


def _point_caches(bpy: Any) -> list[tuple[str, Any]]:
    """Every point cache in the file, with a name for its owner: rigid-body worlds, solver modifiers (cloth, soft
    body, dynamic paint surfaces) and particle systems, on every object of every scene. The same walk as
    `probes.scene.render_safety.point_caches`, kept here because the sandbox child loads this file by path, before
    anything of the package can be imported there."""
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


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="physcodegym-media-audit")
    ap.add_argument("blend")
    ap.add_argument("--root", required=True)
    ap.add_argument("--also-inside", action="append", default=[])
    a = ap.parse_args(argv)
    real_stdout = os.dup(1)
    os.dup2(2, 1)  # Blender's own prints go to stderr; stdout carries the one JSON line
    try:
        refusals: list[dict[str, Any]] = []
        found = audit(a.blend, a.root, tuple(a.also_inside), refusals=refusals)
        doc: dict[str, Any] = {"ok": True, "breaches": found, "refusals": refusals}
        rc = 0
    except Exception as e:  # noqa: BLE001 - the parent turns this into the run's reason
        doc, rc = {"ok": False, "error": f"{type(e).__name__}: {e}"}, 3
    sys.stdout.flush()
    os.write(real_stdout, (json.dumps(doc) + "\n").encode())
    return rc


def run_trusted(blend: str, root: str, timeout_s: float = TIMEOUT_S, memory_mb: int = MEMORY_MB,
                isolation: str = "bwrap") -> dict[str, Any]:
    """Start the audit in a walled, limited child (`sandbox.wall`: the run folder read-only, one scratch folder);
    {"ok": bool, "breaches": [...], "refusals": [...], "error": str, "seconds": float}. `isolation="none"` only
    for a runner started with the unsafe flag; a host without bwrap otherwise gets ok False with the reason."""
    from pathlib import Path

    from physcodegym.core import launch
    from physcodegym.sandbox import wall
    from physcodegym.sandbox.isolation import WALL_RUN

    cmd = launch.module_argv("physcodegym.sandbox.media_audit", [blend, "--root", root, "--also-inside", WALL_RUN])
    with wall.scratch_folder("pcg_media_audit_") as scratch:
        try:
            res = wall.run_walled(cmd, scratch=scratch, readonly=[Path(root)], isolation_mode=isolation,
                                  timeout_s=timeout_s, memory_mb=memory_mb, max_output=1 << 20)
        except wall.IsolationUnavailable as e:
            return {"ok": False, "error": f"media audit: {e}", "seconds": 0.0}
    doc = launch.last_json(res.stdout)
    if res.killed_reason:
        return {"ok": False, "error": f"media audit: {res.killed_reason}", "seconds": res.seconds}
    if not isinstance(doc, dict) or not isinstance(doc.get("breaches", []), list) \
            or not isinstance(doc.get("refusals", []), list):
        return {
            "ok": False,
            "error": f"media audit exited {res.returncode} without a result: {res.stderr.strip()[-300:]}",
            "seconds": res.seconds,
        }
    doc["breaches"] = [b for b in doc.get("breaches") or [] if isinstance(b, dict)][:50]
    doc["refusals"] = [b for b in doc.get("refusals") or [] if isinstance(b, dict)][:50]
    doc["seconds"] = res.seconds
    return doc


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main(sys.argv[1:]))
