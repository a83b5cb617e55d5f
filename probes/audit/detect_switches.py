"""Motion made by switching what the frames show rather than by moving anything: a solid that renders on some
frames and not on others, geometry built or removed mid-run, or a cut of the camera (a marker binding another
camera, a camera that teleports or jumps in focal length or lens shift).

Why: every other detector asks what moved a thing. A second ball resting where the first should end up, hidden
until frame 60 while the first is hidden from frame 60 on, moves nothing by script: each ball is simulated, and
the audit (which calls an object hidden on any frame hidden) saw two hidden balls and scored the swap S_val 1.0.
The picture still shows one ball jump 25 cm in a frame. Matter does not appear or vanish, and a cut to a camera
looking at a second copy of the set does the same to everything on screen. Mechanisms, not properties: render
visibility is read per sampled frame whatever switches it (hide_render, camera visibility, holdout, a material
keyed transparent, a collection that stops rendering; `sampling.appearance_varies` says when it can vary), and
the camera per frame is the one Blender's markers bind there, wherever its own animation puts it and whatever
lens it keys.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.scene.physics import GEOMETRY_TYPES, rendered

SOLVER_TOPOLOGY = {"FLUID", "PARTICLE_INSTANCE", "EXPLODE"}  # vertex count follows a solver (its particles)
STILL_TOPOLOGY = {"CLOTH", "SOFT_BODY", "COLLISION", "SUBSURF", "SOLIDIFY", "BEVEL", "TRIANGULATE"}  # not the cause
STEP_NAMES = ("move_m", "turn_deg", "zoom_log", "shift")  # a view's change between two frames (`_view_change`)
SWITCH_LIMITS = (0.01, 1.0, 0.01, 0.005)  # two cameras a marker switches between that differ less show one picture
CUT_LIMITS = (0.05, 2.0, 0.05, 0.02)  # one camera's step above any of these (5 cm, 2 deg, 5 % zoom, 2 % shift) ...
CUT_SPIKE = 4.0  # ... that is this many times its largest step on the `CUT_AROUND` frames either side is a cut
CUT_AROUND = 3  # (a dolly, a pan or a zoom moves about as much on every frame: no cut)


def draws(a: Any, name: str) -> bool:
    """Does the object put material in the frames: an object of a geometry type, or one that draws what it
    instances (an EMPTY instancing a collection, vertex or face instances; `probes.scene.geometry` holds their material
    under the instancer's name)? Why: a detector that picks its objects by geometry type alone misses a ball whose
    only rendered copy is an instanced collection carried by a keyed or switching empty."""
    info = a.info.get(name) or {}
    if info.get("type") in GEOMETRY_TYPES or info.get("instance_type") in {"COLLECTION", "VERTS", "FACES"}:
        return True
    geom = getattr(a, "geom", None)
    return geom is not None and name in geom.meshes


def visibility_switches(a: Any) -> None:
    """`scripted_motion` (cause `visibility_switch`) for each object that draws material (`draws`) and renders on
    some sampled frames and not on others, in the camera's view."""
    for name, info in a.info.items():
        hf = (info.get("render") or {}).get("hidden_frames")
        if not hf or not draws(a, name) or not 0 < hf["count"] < hf["of"]:
            continue
        if name in a.geom.meshes and not a._in_view(name):
            continue  # nothing the frames show changes
        runs = hf.get("runs") or [[hf["first"], hf["last"]]]
        first, last = int(a.frames[0]), int(a.frames[-1])
        switches = sorted({f for r0, r1 in runs for f in (r0, r1 + 1) if first < f <= last})
        a.add(
            kind="scripted_motion",
            objects=[name],
            frames=[switches[0], switches[-1]] if switches else [hf["first"], hf["last"]],
            value=float(len(switches)),
            unit="visibility switches",
            message=(f"{name} renders on {hf['of'] - hf['count']} of {hf['of']} frames and is hidden on the others "
                     f"(it {'appears or vanishes' if len(switches) != 1 else 'switches'} at frame "
                     f"{', '.join(map(str, switches[:6]))}): what the frames show changes by switching visibility, "
                     "not by a solver"),
            evidence={"cause": "visibility_switch", "hidden_frames": hf, "switch_frames": switches[:40]},
        )


def topology_switches(a: Any) -> None:
    """`scripted_motion` (cause `geometry_switch`) for a rendered mesh in the camera's view whose evaluated vertex
    count changes between sampled frames: material built or removed mid-run (a Build modifier, geometry nodes
    switching on the time) rather than moved. A liquid's surface (a FLUID domain), particle instances
    (PARTICLE_INSTANCE) and a mesh shattered by its particles (EXPLODE, whose dead pieces go) change with what
    their solver does and are left to the detectors of their particles."""
    for name, info in a.info.items():
        topo = info.get("topology")
        if not topo or not rendered(info):
            continue
        mods = [m for m in info.get("modifiers", []) if m.get("show_render", True)]
        if any(m["type"] in SOLVER_TOPOLOGY for m in mods) or name in getattr(a, "derived_surfaces", ()):
            continue  # a derived surface (a remeshed liquid) is checked against its particles (`probes.audit.derived`)
        if name in a.geom.meshes and not a._in_view(name):
            continue
        made = [m["name"] for m in mods if m["type"] not in STILL_TOPOLOGY]
        what = ("appears or vanishes" if topo["empty_frames"] else
                f"changes between {topo['vertices_min']} and {topo['vertices_max']} vertices")
        a.add(
            kind="scripted_motion",
            objects=[name],
            frames=[topo["changes"][0], topo["changes"][-1]],
            value=float(topo["n_changes"]),
            unit="geometry changes",
            message=(f"{name}'s rendered geometry {what} at frame {', '.join(map(str, topo['changes'][:6]))}"
                     + (f" ({', '.join(made[:4])})" if made else "")
                     + ": material made or removed mid-run, not moved by a solver"),
            evidence={"cause": "geometry_switch", "topology": topo, "modifiers": made[:8]},
        )


def camera_cuts(a: Any) -> None:
    """`scripted_motion` (cause `camera_cut`) where the picture's viewpoint jumps between two frames: a timeline
    marker binds a different camera that shows another picture, or the camera itself teleports or zooms (a step
    in its pose, focal length or lens shift well above `CUT_LIMITS` that is `CUT_SPIKE` times its steps on the
    frames around it: a cut, not a move). Every object on screen jumps there, while nothing in the scene moved."""
    scene = a.scene
    bound = sorted((int(m.frame), m.camera) for m in scene.timeline_markers if m.camera is not None)
    frames = [int(f) for f in a.frames]
    cams = [_camera_at(bound, f, scene.camera) for f in frames]
    if len(frames) < 2 or all(c is None for c in cams):
        return
    views = [_view(a, c, k) if c is not None else None for k, c in enumerate(cams)]
    steps = np.zeros((len(frames), len(STEP_NAMES)))  # (move m, turn deg, zoom, shift) from the frame before
    for k in range(1, len(frames)):
        if views[k] is not None and views[k - 1] is not None:
            steps[k] = _view_change(views[k - 1], views[k])
    limits, switch = np.array(CUT_LIMITS), np.array(SWITCH_LIMITS)
    cuts = []
    for k in range(1, len(frames)):
        if cams[k] is not cams[k - 1] and cams[k] is not None and cams[k - 1] is not None:
            if (steps[k] > switch).any():
                cuts.append(_cut(frames[k], cams[k - 1], cams[k], steps[k], "a marker binds another camera"))
            continue
        around = np.r_[steps[max(1, k - CUT_AROUND): k], steps[k + 1: k + 1 + CUT_AROUND]]
        near = around.max(axis=0) if len(around) else np.zeros(len(STEP_NAMES))
        if ((steps[k] > limits) & (steps[k] > CUT_SPIKE * near)).any():
            cuts.append(_cut(frames[k], cams[k - 1], cams[k], steps[k], "the camera teleports or zooms"))
    if not cuts:
        return
    c0 = cuts[0]
    a.add(
        kind="scripted_motion",
        objects=sorted({c["from"] for c in cuts} | {c["to"] for c in cuts}),
        frames=[c0["frame"], cuts[-1]["frame"]],
        value=float(len(cuts)),
        unit="camera cuts",
        message=(f"the picture cuts at frame {c0['frame']} ({c0['how']}: {c0['move_m']:.3f} m, {c0['turn_deg']:.1f} "
                 f"deg, zoom x{np.exp(c0['zoom_log']):.2f}, shift {c0['shift']:.3f} in one frame)"
                 + (f" and {len(cuts) - 1} more time(s)" if len(cuts) > 1 else "")
                 + ": everything on screen jumps by a cut, not by a solver"),
        evidence={"cause": "camera_cut", "cuts": cuts[:20],
                  "thresholds": {"switch": dict(zip(STEP_NAMES, SWITCH_LIMITS, strict=True)),
                                 "step": dict(zip(STEP_NAMES, CUT_LIMITS, strict=True)), "spike": CUT_SPIKE,
                                 "around_frames": CUT_AROUND}},
    )


def _cut(frame: int, c0: Any, c1: Any, step: np.ndarray, how: str) -> dict[str, Any]:
    return {"frame": frame, "from": c0.name, "to": c1.name, "how": how,
            **{n: round(float(v), 4) for n, v in zip(STEP_NAMES, step, strict=True)}}


def _view(a: Any, cam: Any, fi: int) -> tuple[np.ndarray, np.ndarray]:
    """(world matrix, intrinsics row `sampling.INTRINSICS`) of a camera at sample index `fi`: sampled where the
    samples hold them (the pose of every object; the intrinsics of a camera whose lens data is keyed or driven),
    else as the scene has them now."""
    from physcodegym.probes.scene.sampling import camera_intrinsics

    if cam.name in a.s.names:
        m = np.asarray(a.s.matrices[a.s.index(cam.name), fi], dtype=np.float64)
    else:
        m = np.array(cam.matrix_world, dtype=np.float64)
    rows = ((a.info.get(cam.name) or {}).get("intrinsics") or {}).get("frames")
    lens = np.asarray(rows[fi] if rows and fi < len(rows) else camera_intrinsics(cam.data), dtype=np.float64)
    return m, lens


def _view_change(v0: tuple[np.ndarray, np.ndarray], v1: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """`STEP_NAMES` between two views: centres' distance (m), relative rotation (deg, roll included), |log| of the
    focal length's ratio (an orthographic scale's for orthographic cameras; a change of type is infinite) and the
    larger lens-shift change (in widths of the frame)."""
    (m0, i0), (m1, i1) = v0, v1
    move = float(np.linalg.norm(m0[:3, 3] - m1[:3, 3]))
    r0 = m0[:3, :3] / np.linalg.norm(m0[:3, :3], axis=0)
    r1 = m1[:3, :3] / np.linalg.norm(m1[:3, :3], axis=0)
    turn = float(np.degrees(np.arccos(np.clip((np.trace(r0.T @ r1) - 1.0) / 2.0, -1.0, 1.0))))
    lens0, sensor0, sx0, sy0, ortho0, is_ortho0 = i0
    lens1, sensor1, sx1, sy1, ortho1, is_ortho1 = i1
    if is_ortho0 != is_ortho1:
        zoom = float("inf")
    elif is_ortho0:
        zoom = abs(float(np.log(max(ortho0, 1e-9) / max(ortho1, 1e-9))))
    else:
        zoom = abs(float(np.log(max(lens1 / max(sensor1, 1e-9), 1e-9) / max(lens0 / max(sensor0, 1e-9), 1e-9))))
    shift = max(abs(sx1 - sx0), abs(sy1 - sy0))
    return np.array([move, turn, zoom, shift])


def _camera_at(bound: list[tuple[int, Any]], frame: int, default: Any) -> Any:
    """The camera markers bind at `frame`: the latest marker at or before it, else the earliest marker (as
    Blender switches cameras on a frame change), else the scene's camera."""
    cam = None
    for f, c in bound:
        if f <= frame:
            cam = c
    return cam if cam is not None else (bound[0][1] if bound else default)
