"""Witness geometry of a finding (contact points, penetration depth, support gaps, trajectories) and
its viewport drawing with the `gpu` module.

`witness_geometry` is pure data (testable without a window); `draw_callback` only turns that data into
GPU batches and is skipped in background mode, where the gpu drawing module is unavailable.
"""

from __future__ import annotations

import json
from typing import Any

import bpy
from physcodegym.physcodegym_addon import state

_HANDLE: list[Any] = []
POINT_KEYS = ("point", "contact", "location", "witness", "nearest", "vertex", "position")
SEGMENT_KEYS = ("gap", "segment", "pair", "depth_vector")
PATH_KEYS = ("traj", "path", "track")


def _is_vec(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) == 3 and all(isinstance(x, (int, float)) for x in v)


def _walk(ev: Any, out: dict[str, list], key: str = "") -> None:
    k = key.lower()
    if isinstance(ev, dict):
        for kk, vv in ev.items():
            _walk(vv, out, str(kk))
        return
    if not isinstance(ev, (list, tuple)):
        return
    if _is_vec(ev):
        if any(p in k for p in POINT_KEYS):
            out["points"].append(tuple(float(x) for x in ev))
        return
    if ev and all(_is_vec(v) for v in ev):
        vecs = [tuple(float(x) for x in v) for v in ev]
        if any(p in k for p in PATH_KEYS):
            out["polylines"].append(vecs)
        elif any(p in k for p in SEGMENT_KEYS) and len(vecs) == 2:
            out["segments"].append((vecs[0], vecs[1]))
        elif any(p in k for p in POINT_KEYS):
            out["points"].extend(vecs)
        return
    if ev and all(isinstance(v, (list, tuple)) and len(v) == 2 and all(_is_vec(p) for p in v) for v in ev):
        if any(p in k for p in SEGMENT_KEYS):
            out["segments"].extend((tuple(map(float, a)), tuple(map(float, b))) for a, b in ev)
            return
    for v in ev:
        _walk(v, out, key)


def _object_tracks(scene: Any, names: list[str], frames: list[int]) -> list[list[tuple[float, float, float]]]:
    """World locations of the objects over the frames (stepping in order; restores the current frame)."""
    obs = [scene.objects.get(n) for n in names]
    obs = [o for o in obs if o is not None]
    if not obs or not frames:
        return []
    cur = scene.frame_current
    tracks: list[list[tuple[float, float, float]]] = [[] for _ in obs]
    try:
        for f in range(min(frames), max(frames) + 1):
            scene.frame_set(f)
            for i, o in enumerate(obs):
                tracks[i].append(tuple(o.matrix_world.translation))
    finally:
        scene.frame_set(cur)
    return [t for t in tracks if len(t) > 1]


def witness_geometry(finding: Any, scene: Any) -> dict[str, Any]:
    """Points, segments and polylines to draw for one finding; trajectories of its objects if the
    evidence carries no geometry of its own."""
    try:
        ev = json.loads(finding.evidence_json or "{}")
    except json.JSONDecodeError:
        ev = {}
    out: dict[str, list] = {"points": [], "segments": [], "polylines": []}
    _walk(ev, out)
    names = [n for n in finding.objects.split(",") if n]
    if not any(out.values()):
        frames = _frames_of(finding)
        out["polylines"] = _object_tracks(scene, names, frames)
    label = finding.kind
    if finding.has_value:
        label += f" {finding.value:.4g} {finding.unit}".rstrip()
    return {**out, "label": label, "objects": names}


def _frames_of(finding: Any) -> list[int]:
    out: list[int] = []
    for part in (finding.frames or "").split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def focus_finding(context: Any, index: int) -> None:
    """Select a finding's objects, jump to its first frame and set its witness for drawing."""
    scene = context.scene
    st = scene.physcodegym
    if not (0 <= index < len(st.findings)):
        state.WITNESS.pop(scene.name, None)
        return
    f = st.findings[index]
    names = [n for n in f.objects.split(",") if n]
    view_layer = context.view_layer
    for o in view_layer.objects:
        o.select_set(o.name in names)
    first = next((view_layer.objects.get(n) for n in names if view_layer.objects.get(n)), None)
    if first is not None:
        view_layer.objects.active = first
    state.WITNESS[scene.name] = witness_geometry(f, scene)
    if f.first_frame >= 0:
        scene.frame_set(f.first_frame)
    ensure_draw_handler()


def draw_callback() -> None:
    """POST_VIEW draw: witness of the selected finding and baseline/intervened counterfactual paths."""
    if bpy.app.background:
        return
    import gpu
    from gpu_extras.batch import batch_for_shader

    scene = bpy.context.scene
    w = state.WITNESS.get(scene.name)
    tr = state.TRAJECTORIES.get(scene.name)
    if not w and not tr:
        return
    shader = gpu.shader.from_builtin("UNIFORM_COLOR")
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("NONE")

    def strip(pts: list, color: tuple) -> None:
        if len(pts) > 1:
            shader.uniform_float("color", color)
            batch_for_shader(shader, "LINE_STRIP", {"pos": pts}).draw(shader)

    gpu.state.line_width_set(2.0)
    if w:
        if w["points"]:
            gpu.state.point_size_set(9.0)
            shader.uniform_float("color", (1.0, 0.2, 0.1, 1.0))
            batch_for_shader(shader, "POINTS", {"pos": w["points"]}).draw(shader)
        if w["segments"]:
            shader.uniform_float("color", (1.0, 0.8, 0.0, 1.0))
            batch_for_shader(shader, "LINES", {"pos": [p for s in w["segments"] for p in s]}).draw(shader)
        for pl in w["polylines"]:
            strip(pl, (0.2, 0.8, 1.0, 1.0))
    if tr:
        for pl in tr.get("baseline", {}).values():
            strip([tuple(p) for p in pl], (0.7, 0.7, 0.7, 0.9))
        for pl in tr.get("intervened", {}).values():
            strip([tuple(p) for p in pl], (1.0, 0.3, 0.6, 1.0))
    gpu.state.blend_set("NONE")


def ensure_draw_handler() -> None:
    if not _HANDLE:
        _HANDLE.append(bpy.types.SpaceView3D.draw_handler_add(draw_callback, (), "WINDOW", "POST_VIEW"))
    for win in getattr(bpy.context.window_manager, "windows", []):
        for area in win.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


def remove_draw_handler() -> None:
    while _HANDLE:
        bpy.types.SpaceView3D.draw_handler_remove(_HANDLE.pop(), "WINDOW")


def draw_handler_active() -> bool:
    return bool(_HANDLE)
