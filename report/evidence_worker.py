"""Child process of the report (bpy): the full audit findings of one run and where their objects are on screen.

    python -m physcodegym.report.evidence_worker RUN_DIR OUT.json

The score document keeps only the kinds of the audit's findings; the report needs their evidence (the
witness series) and a still with the objects outlined. This re-runs the task-independent audit on the run's
baked scene (deterministic: the same findings the scorer saw) and projects each finding's objects with the
scene camera at its witness frame: a normalised box (x0, y0, x1, y1; y down) per object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _boxes(scene, names: list[str], frame: int) -> dict[str, list[float]]:
    import bpy
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    cam = scene.camera
    if cam is None:
        return {}
    scene.frame_set(int(frame))
    dg = bpy.context.evaluated_depsgraph_get()
    out: dict[str, list[float]] = {}
    for n in names:
        ob = bpy.data.objects.get(n)
        if ob is None:
            continue
        ev = ob.evaluated_get(dg)
        pts = [ev.matrix_world @ Vector(c) for c in ev.bound_box]
        uv = [world_to_camera_view(scene, cam, p) for p in pts]
        if not uv or all(p.z <= 0 for p in uv):
            continue
        xs = [min(max(p.x, 0.0), 1.0) for p in uv]
        ys = [min(max(1.0 - p.y, 0.0), 1.0) for p in uv]
        if max(xs) - min(xs) <= 0 or max(ys) - min(ys) <= 0:
            continue
        out[n] = [round(min(xs), 4), round(min(ys), 4), round(max(xs), 4), round(max(ys), 4)]
    return out


def witness_frame(frames: list[int]) -> int:
    """The frame a finding's still shows: the first witness frame (its range starts there)."""
    return int(frames[0]) if frames else 1


def main(argv: list[str] | None = None) -> int:
    a = sys.argv[1:] if argv is None else argv
    run_dir, out = Path(a[0]), Path(a[1])
    from physcodegym.probes.audit.audit import audit_path_full
    from physcodegym.probes.scene.render_safety import install_load_guard

    install_load_guard()  # stored code and paths off as the scene loads (docs/THREAT_MODEL.md)
    report, _samples, scene = audit_path_full(run_dir, save_samples=False)
    findings = []
    for f in report.findings:
        d = f.public(with_evidence=True)
        fr = witness_frame(f.frames)
        d["still"] = {"frame": fr, "boxes": _boxes(scene, list(f.objects), fr)}
        findings.append(d)
    from physcodegym.core import atomic

    atomic.write(out, json.dumps({"findings": findings}, default=_default))
    return 0


def _default(o):
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:
        pass
    return str(o)


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
