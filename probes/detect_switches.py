"""Motion made by switching what the frames show rather than by moving anything: a solid that renders on some
frames and not on others, or a timeline marker that cuts to another camera.

Why: every other detector asks what moved a thing. A second ball resting where the first should end up, hidden
until frame 60 while the first is hidden from frame 60 on, moves nothing by script: each ball is simulated, and
the audit (which calls an object hidden on any frame hidden) saw two hidden balls and scored the swap S_val 1.0.
The picture still shows one ball jump 25 cm in a frame. Matter does not appear or vanish, and a cut to a camera
looking at a second copy of the set does the same to everything on screen. Mechanisms, not properties: render
visibility is read per sampled frame whatever switches it (hide_render, camera visibility, holdout, a material
keyed transparent, a collection that stops rendering; `sampling.appearance_varies` says when it can vary), and
the camera per frame is the one Blender's markers bind there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.physics import GEOMETRY_TYPES

CUT_MOVE_M = 0.01  # m: two cameras whose centres are this close ...
CUT_TURN_DEG = 1.0  # ... and whose axes turn less than this between them show the same picture: no cut


def visibility_switches(a: Any) -> None:
    """`scripted_motion` (cause `visibility_switch`) for each geometry object that renders on some sampled frames
    and not on others, in the camera's view."""
    for name, info in a.info.items():
        hf = (info.get("render") or {}).get("hidden_frames")
        if not hf or info.get("type") not in GEOMETRY_TYPES or not 0 < hf["count"] < hf["of"]:
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


def camera_cuts(a: Any) -> None:
    """`scripted_motion` (cause `camera_cut`) where a timeline marker binds a different camera, at a different
    pose, during the run: every object on screen jumps at that frame."""
    scene = a.scene
    bound = sorted((int(m.frame), m.camera) for m in scene.timeline_markers if m.camera is not None)
    if not bound:
        return
    first, last = int(a.frames[0]), int(a.frames[-1])
    cams = [_camera_at(bound, f, scene.camera) for f in range(first, last + 1)]
    cuts = []
    for f, prev, cur in zip(range(first + 1, last + 1), cams[:-1], cams[1:], strict=True):
        if prev is None or cur is None or prev == cur:
            continue
        move, turn = _pose_change(a, prev, cur, f)
        if move > CUT_MOVE_M or turn > CUT_TURN_DEG:
            cuts.append({"frame": f, "from": prev.name, "to": cur.name, "move_m": round(move, 4),
                         "turn_deg": round(turn, 2)})
    if not cuts:
        return
    a.add(
        kind="scripted_motion",
        objects=sorted({c["from"] for c in cuts} | {c["to"] for c in cuts}),
        frames=[cuts[0]["frame"], cuts[-1]["frame"]],
        value=float(len(cuts)),
        unit="camera cuts",
        message=(f"timeline markers cut from camera {cuts[0]['from']} to {cuts[0]['to']} at frame {cuts[0]['frame']}"
                 + (f" ({len(cuts)} cuts)" if len(cuts) > 1 else "")
                 + ": everything on screen jumps by a cut, not by a solver"),
        evidence={"cause": "camera_cut", "cuts": cuts[:20],
                  "thresholds": {"move_m": CUT_MOVE_M, "turn_deg": CUT_TURN_DEG}},
    )


def _camera_at(bound: list[tuple[int, Any]], frame: int, default: Any) -> Any:
    """The camera markers bind at `frame`: the latest marker at or before it, else the earliest marker (as
    Blender switches cameras on a frame change), else the scene's camera."""
    cam = None
    for f, c in bound:
        if f <= frame:
            cam = c
    return cam if cam is not None else (bound[0][1] if bound else default)


def _pose_change(a: Any, c0: Any, c1: Any, frame: int) -> tuple[float, float]:
    """(distance between the two cameras' centres, angle between their view axes in degrees) at `frame`."""
    m0, m1 = _matrix(a, c0, frame), _matrix(a, c1, frame)
    move = float(np.linalg.norm(m0[:3, 3] - m1[:3, 3]))
    z0, z1 = m0[:3, 2] / np.linalg.norm(m0[:3, 2]), m1[:3, 2] / np.linalg.norm(m1[:3, 2])
    turn = float(np.degrees(np.arccos(np.clip(float(z0 @ z1), -1.0, 1.0))))
    return move, turn


def _matrix(a: Any, cam: Any, frame: int) -> np.ndarray:
    """A camera's world matrix at `frame`: sampled when the samples hold it, else as the scene has it now."""
    if cam.name in a.s.names:
        fi = int(np.searchsorted(a.frames, frame).clip(0, len(a.frames) - 1))
        return np.asarray(a.s.matrices[a.s.index(cam.name), fi], dtype=np.float64)
    return np.array(cam.matrix_world, dtype=np.float64)
