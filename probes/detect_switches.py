"""Motion made by switching what the frames show rather than by moving anything: a solid that renders on some
frames and not on others, geometry built or removed mid-run, or a cut of the camera (a marker binding another
camera, a camera that teleports).

Why: every other detector asks what moved a thing. A second ball resting where the first should end up, hidden
until frame 60 while the first is hidden from frame 60 on, moves nothing by script: each ball is simulated, and
the audit (which calls an object hidden on any frame hidden) saw two hidden balls and scored the swap S_val 1.0.
The picture still shows one ball jump 25 cm in a frame. Matter does not appear or vanish, and a cut to a camera
looking at a second copy of the set does the same to everything on screen. Mechanisms, not properties: render
visibility is read per sampled frame whatever switches it (hide_render, camera visibility, holdout, a material
keyed transparent, a collection that stops rendering; `sampling.appearance_varies` says when it can vary), and
the camera per frame is the one Blender's markers bind there, wherever its own animation puts it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.physics import GEOMETRY_TYPES

SOLVER_TOPOLOGY = {"FLUID", "PARTICLE_INSTANCE", "EXPLODE"}  # vertex count follows a solver (its particles)
STILL_TOPOLOGY = {"CLOTH", "SOFT_BODY", "COLLISION", "SUBSURF", "SOLIDIFY", "BEVEL", "TRIANGULATE"}  # not the cause
SWITCH_MOVE_M = 0.01  # m: two cameras a marker switches between whose centres are this close ...
SWITCH_TURN_DEG = 1.0  # ... and which turn less than this between them show the same picture: no cut
CUT_MOVE_M = 0.05  # m: one camera's step between two frames above this ...
CUT_TURN_DEG = 2.0  # ... or its turn above this (degrees) ...
CUT_SPIKE = 4.0  # ... and this many times its largest step on the `CUT_AROUND` frames either side is a teleport
CUT_AROUND = 3  # (a dolly or a pan moves about as much on every frame: no cut)


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


def topology_switches(a: Any) -> None:
    """`scripted_motion` (cause `geometry_switch`) for a rendered mesh in the camera's view whose evaluated vertex
    count changes between sampled frames: material built or removed mid-run (a Build modifier, geometry nodes
    switching on the time) rather than moved. A liquid's surface (a FLUID domain), particle instances
    (PARTICLE_INSTANCE) and a mesh shattered by its particles (EXPLODE, whose dead pieces go) change with what
    their solver does and are left to the detectors of their particles."""
    from physcodegym.probes.physics import rendered

    for name, info in a.info.items():
        topo = info.get("topology")
        if not topo or not rendered(info):
            continue
        mods = [m for m in info.get("modifiers", []) if m.get("show_render", True)]
        if any(m["type"] in SOLVER_TOPOLOGY for m in mods):
            continue
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
    marker binds a different camera at a different pose, or the camera itself teleports (a step well above
    `CUT_MOVE_M` / `CUT_TURN_DEG` that is `CUT_SPIKE` times its steps on the frames around it: a cut, not a move).
    Every object on screen jumps there, while nothing in the scene moved."""
    scene = a.scene
    bound = sorted((int(m.frame), m.camera) for m in scene.timeline_markers if m.camera is not None)
    frames = [int(f) for f in a.frames]
    cams = [_camera_at(bound, f, scene.camera) for f in frames]
    if len(frames) < 2 or all(c is None for c in cams):
        return
    mats = [_matrix(a, c, f) if c is not None else None for c, f in zip(cams, frames, strict=True)]
    steps = np.zeros((len(frames), 2))  # (move m, turn deg) from the frame before
    for k in range(1, len(frames)):
        if mats[k] is not None and mats[k - 1] is not None:
            steps[k] = _pose_change(mats[k - 1], mats[k])
    cuts = []
    for k in range(1, len(frames)):
        move, turn = steps[k]
        if cams[k] is not cams[k - 1] and cams[k] is not None and cams[k - 1] is not None:
            if move > SWITCH_MOVE_M or turn > SWITCH_TURN_DEG:
                cuts.append(_cut(frames[k], cams[k - 1], cams[k], move, turn, "a marker binds another camera"))
            continue
        around = np.r_[steps[max(1, k - CUT_AROUND): k], steps[k + 1: k + 1 + CUT_AROUND]]
        near_move, near_turn = (around.max(axis=0) if len(around) else (0.0, 0.0))
        jumps = move > CUT_MOVE_M and move > CUT_SPIKE * near_move
        if jumps or (turn > CUT_TURN_DEG and turn > CUT_SPIKE * near_turn):
            cuts.append(_cut(frames[k], cams[k - 1], cams[k], move, turn, "the camera teleports"))
    if not cuts:
        return
    a.add(
        kind="scripted_motion",
        objects=sorted({c["from"] for c in cuts} | {c["to"] for c in cuts}),
        frames=[cuts[0]["frame"], cuts[-1]["frame"]],
        value=float(len(cuts)),
        unit="camera cuts",
        message=(f"the picture cuts at frame {cuts[0]['frame']} ({cuts[0]['how']}: {cuts[0]['move_m']:.3f} m, "
                 f"{cuts[0]['turn_deg']:.1f} deg in one frame)" + (f" and {len(cuts) - 1} more time(s)" if len(cuts) > 1
                                                                  else "")
                 + ": everything on screen jumps by a cut, not by a solver"),
        evidence={"cause": "camera_cut", "cuts": cuts[:20],
                  "thresholds": {"switch_move_m": SWITCH_MOVE_M, "switch_turn_deg": SWITCH_TURN_DEG,
                                 "move_m": CUT_MOVE_M, "turn_deg": CUT_TURN_DEG, "spike": CUT_SPIKE,
                                 "around_frames": CUT_AROUND}},
    )


def _cut(frame: int, c0: Any, c1: Any, move: float, turn: float, how: str) -> dict[str, Any]:
    return {"frame": frame, "from": c0.name, "to": c1.name, "how": how, "move_m": round(float(move), 4),
            "turn_deg": round(float(turn), 2)}


def _camera_at(bound: list[tuple[int, Any]], frame: int, default: Any) -> Any:
    """The camera markers bind at `frame`: the latest marker at or before it, else the earliest marker (as
    Blender switches cameras on a frame change), else the scene's camera."""
    cam = None
    for f, c in bound:
        if f <= frame:
            cam = c
    return cam if cam is not None else (bound[0][1] if bound else default)


def _pose_change(m0: np.ndarray, m1: np.ndarray) -> tuple[float, float]:
    """(distance between two camera poses' centres, their relative rotation in degrees, roll included)."""
    move = float(np.linalg.norm(m0[:3, 3] - m1[:3, 3]))
    r0 = m0[:3, :3] / np.linalg.norm(m0[:3, :3], axis=0)
    r1 = m1[:3, :3] / np.linalg.norm(m1[:3, :3], axis=0)
    turn = float(np.degrees(np.arccos(np.clip((np.trace(r0.T @ r1) - 1.0) / 2.0, -1.0, 1.0))))
    return move, turn


def _matrix(a: Any, cam: Any, frame: int) -> np.ndarray:
    """A camera's world matrix at `frame`: sampled when the samples hold it, else as the scene has it now."""
    if cam.name in a.s.names:
        fi = int(np.searchsorted(a.frames, frame).clip(0, len(a.frames) - 1))
        return np.asarray(a.s.matrices[a.s.index(cam.name), fi], dtype=np.float64)
    return np.array(cam.matrix_world, dtype=np.float64)
