"""Rendered motion vs native motion: objects that move on screen but are static in the saved scene.

Handlers do not survive in a `.blend`, so a program that moved an object from a frame-change handler
leaves a saved scene where that object never moves, while its rendered frames show it moving. This
check projects every natively moving object's world AABB through the scene camera (numpy, all frames
at once), takes the screen regions that change in the rendered frames (downscaled colour difference
against the first frame, decoded once), and attributes changed pixels that no native motion explains
to the static objects whose first-frame footprint they cover.

Rendered particles own pixels too: a liquid flowing over a static tray changes the tray's footprint,
and that change is explained by the particles drawn there, not by a script. Every particle system
whose particles reach the render (emitter seen by the camera, system shown in renders, a render type
that draws geometry) paints a disc of its drawn radius (particle size x instance extent, projected
at the particle's depth) at each sampled frame where a particle differs from the first frame: where
it is now, and where it was in the first frame if it has moved or died since. Particles that stay
put explain nothing, so a static particle cloud cannot cover a scripted object.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.probes.scene import physics as ph

SCREEN_W, SCREEN_H = 160, 90  # analysis resolution
DIFF_LEVEL = 25  # levels (0-255) of any colour channel for a pixel to count as changed (a red box on a grey floor
# of the same brightness is invisible in grayscale)
MAX_FRAMES = 48  # frames decoded (evenly spaced)
CAMERA_SHIFT_PX = 1.0  # analysis pixels a static object's projected box may shift (the camera moving) before
# its changes count as explained by that shift
UNEXPLAINED_MIN = 0.25  # fraction of a static object's footprint that changes with no native mover there
PARTICLE_MARGIN_PX = 1.5  # analysis pixels added to a particle's projected radius (anti-aliasing, downscale)
# particle render types that draw geometry in Workbench / EEVEE / Cycles renders
DRAWN_RENDER_TYPES = {"OBJECT", "COLLECTION", "HALO", "LINE", "PATH"}


def _project(scene: Any, samples: Any, pts: np.ndarray, fidx: np.ndarray) -> np.ndarray | None:
    """(K, N, 3) world points at sample indices `fidx` -> (K, N, 2) pixels at SCREEN_W x SCREEN_H (camera per frame)."""
    r = _project_depth(scene, samples, pts, fidx)
    return None if r is None else r[0]


def _project_depth(scene: Any, samples: Any, pts: np.ndarray,
                   fidx: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """`_project` plus the clip w of each point (view depth) and the x focal length in analysis pixels."""
    import bpy

    cam = scene.camera
    if cam is None:
        return None
    dg = bpy.context.evaluated_depsgraph_get()
    rx, ry = scene.render.resolution_x, scene.render.resolution_y
    proj = np.array(cam.calc_matrix_camera(dg, x=rx, y=ry, scale_x=scene.render.pixel_aspect_x,
                                           scale_y=scene.render.pixel_aspect_y))
    if cam.name in samples.names:
        cw = samples.matrices[samples.index(cam.name)][np.asarray(fidx)]  # (K, 4, 4): the camera at those frames
    else:
        cw = np.repeat(np.array(cam.matrix_world)[None], pts.shape[0], axis=0)
    view = np.linalg.inv(cw)
    h = np.concatenate([pts, np.ones(pts.shape[:2] + (1,))], axis=2)
    clip = np.einsum("ij,fjk,fnk->fni", proj, view, h)
    w = clip[..., 3:4]
    w = np.where(np.abs(w) < 1e-9, 1e-9, w)
    ndc = clip[..., :2] / w
    px = (ndc[..., 0] + 1) / 2 * SCREEN_W
    py = (1 - (ndc[..., 1] + 1) / 2) * SCREEN_H
    out = np.stack([px, py], axis=-1)
    out[(clip[..., 3] <= 0)] = np.nan  # behind the camera
    return out, clip[..., 3], float(proj[0, 0] * SCREEN_W / 2)


def in_camera_view(scene: Any, samples: Any, geom: Any, name: str, max_frames: int = 48) -> bool:
    """Whether any part of a mesh can be in the render camera's view on some sampled frame: its world AABB
    projected through the camera of that frame overlaps the image (a box reaching behind the camera counts
    as seen). Without a camera or a mesh the answer is True (nothing to judge by)."""
    if scene is None or getattr(scene, "camera", None) is None or name not in getattr(geom, "meshes", {}):
        return True
    n = len(samples.frames)
    if n == 0:
        return True
    fidx = np.unique(np.linspace(0, n - 1, min(n, max_frames)).astype(int))
    corners = _boxes(geom, [name], fidx)[name]  # (K, 8, 3)
    r = _project_depth(scene, samples, corners, fidx)
    if r is None:
        return True
    px, w, _ = r
    for k in range(len(fidx)):
        if np.any(w[k] <= 0):
            if np.any(w[k] > 0):
                return True  # straddles the camera plane
            continue
        lo, hi = np.nanmin(px[k], axis=0), np.nanmax(px[k], axis=0)
        if hi[0] >= 0 and lo[0] <= SCREEN_W and hi[1] >= 0 and lo[1] <= SCREEN_H:
            return True
    return False


def _boxes(geom: Any, names: list[str], fidx: np.ndarray) -> dict[str, np.ndarray]:
    out = {}
    for n in names:
        b = geom.aabbs(n)[fidx]  # (K, 2, 3)
        c = np.stack(
            [np.stack([b[:, i, 0], b[:, j, 1], b[:, k, 2]], axis=1) for i in (0, 1) for j in (0, 1) for k in (0, 1)],
            axis=1)
        out[n] = c  # (K, 8, 3)
    return out


def _instance_extent(st: Any) -> float:
    """Largest distance from a particle to its drawn geometry, per unit of particle size (instance bound boxes, origin
    included)."""

    def ext(ob: Any) -> float:
        if ob is None:
            return 0.0
        if ob.type == "MESH" and len(ob.data.vertices):  # the mesh itself: tighter than its bound box
            bb = np.empty(len(ob.data.vertices) * 3, dtype=np.float64)
            ob.data.vertices.foreach_get("co", bb)
            bb = bb.reshape(-1, 3)
        else:
            bb = np.array([tuple(c) for c in ob.bound_box], dtype=np.float64)  # object space
        sc = np.abs(np.array(ob.scale, dtype=np.float64))
        return float(max(np.linalg.norm(bb, axis=1).max(), np.linalg.norm(bb * sc, axis=1).max()))

    if st.render_type == "OBJECT":
        return ext(st.instance_object)
    if st.render_type == "COLLECTION" and st.instance_collection is not None:
        return max((ext(o) + float(np.linalg.norm(np.array(o.location))) for o in st.instance_collection.all_objects),
                   default=0.0)
    return 1.0  # HALO / LINE / PATH: drawn around the particle at about its size


def _emitter_seen(ob: Any, scene: Any, samples: Any) -> bool:
    """Whether an emitter's particles can reach the render: `probes.scene.physics.rendered` without the emitter's
    own surface (its material or "show instancer" do not hide its particles)."""
    info = samples.info.get(ob.name)
    if info is None or "render" not in info:
        from physcodegym.probes.scene.sampling import object_info, render_visibility

        info = dict(object_info(ob), render=render_visibility(ob, scene))
    return ph.rendered(info, own_surface=False)


def rendered_particle_systems(scene: Any, samples: Any) -> list[dict[str, Any]]:
    """Every sampled particle system with whether its particles reach the render and their drawn radius (m)."""
    out = []
    for key in samples.particles:
        obname, psname = key.split("/", 1)
        ob = scene.objects.get(obname)
        rec: dict[str, Any] = {"key": key, "rendered": False, "radius_m": 0.0, "reason": None}
        out.append(rec)
        ps = ob.particle_systems.get(psname) if ob is not None else None
        if ps is None:
            rec["reason"] = "system not in the scene"
            continue
        st = ps.settings
        mod = next((m for m in ob.modifiers if m.type == "PARTICLE_SYSTEM" and m.particle_system == ps), None)
        if not _emitter_seen(ob, scene, samples):
            rec["reason"] = "emitter not seen in renders"
        elif mod is not None and not mod.show_render:
            rec["reason"] = "particle system disabled in renders"
        elif st.render_type not in DRAWN_RENDER_TYPES:
            rec["reason"] = f"render type {st.render_type}"
        else:
            r = float(st.particle_size) * _instance_extent(st)
            if r <= 0:
                rec["reason"] = "zero drawn size"
            else:
                rec.update(rendered=True, radius_m=r)
    return out


def _paint_discs(mask: np.ndarray, xy: np.ndarray, r: np.ndarray) -> None:
    """Set every pixel of `mask` within r[i] of xy[i] (pixel units; NaN rows are skipped)."""
    ok = np.isfinite(xy).all(axis=1) & np.isfinite(r)
    xy, r = xy[ok], r[ok]
    on = (xy[:, 0] + r >= 0) & (xy[:, 0] - r <= SCREEN_W) & (xy[:, 1] + r >= 0) & (xy[:, 1] - r <= SCREEN_H)
    xy, r = xy[on], np.minimum(r[on], max(SCREEN_W, SCREEN_H))
    if not len(xy):
        return
    # bucket by integer radius so each bucket is one vectorised scatter
    ri = np.ceil(r).astype(int)
    for R in np.unique(ri):
        sel = ri == R
        c, rr = xy[sel], r[sel]
        oy, ox = np.mgrid[-R : R + 1, -R : R + 1]
        px = np.floor(c[:, 0])[:, None] + ox.ravel()[None] + 0.5
        py = np.floor(c[:, 1])[:, None] + oy.ravel()[None] + 0.5
        inside = (px - c[:, :1]) ** 2 + (py - c[:, 1:2]) ** 2 <= (rr[:, None] + 0.5) ** 2
        px, py = px.astype(int), py.astype(int)
        inside &= (px >= 0) & (px < SCREEN_W) & (py >= 0) & (py < SCREEN_H)
        mask[py[inside], px[inside]] = True


def particle_explained(scene: Any, samples: Any, fidx: np.ndarray,
                       systems: list[dict[str, Any]]) -> tuple[np.ndarray, dict[str, int]]:
    """Pixels that rendered particles can have changed between the first sampled frame and any other one."""
    mask = np.zeros((SCREEN_H, SCREEN_W), dtype=bool)
    counts: dict[str, int] = {}
    for rec in systems:
        if not rec["rendered"]:
            continue
        P = samples.particles[rec["key"]][fidx].astype(np.float64)  # (K, N, 3)
        A = samples.particles_alive[rec["key"]][fidx]  # (K, N)
        if P.size == 0:
            continue
        r = rec["radius_m"]
        moved = np.linalg.norm(np.nan_to_num(P - P[:1]), axis=2) > r
        changed = A & (~A[:1] | moved)  # drawn now, somewhere it was not drawn in the first frame
        left = A[:1] & (~A | moved)  # drawn in the first frame, gone from there since
        pr = _project_depth(scene, samples, np.nan_to_num(P), fidx)
        if pr is None:
            continue
        xy, w, fpx = pr
        rad = r * fpx / np.where(w > 1e-6, w, np.nan) + PARTICLE_MARGIN_PX
        _paint_discs(mask, xy[changed], rad[changed])
        first = left.any(axis=0)
        _paint_discs(mask, xy[0][first], rad[0][first])
        counts[rec["key"]] = int(changed.sum())
    return mask, counts


def _fill_box(mask: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> None:
    """Set the pixels (x, y) of `mask` with x0 <= x <= x1 and y0 <= y <= y1, as a slice: comparing whole pixel
    grids per mover and frame was a third of the check on bead_pile (its beads times 48 frames)."""
    if not all(np.isfinite(v) for v in (x0, y0, x1, y1)):
        yy, xx = np.mgrid[0:mask.shape[0], 0:mask.shape[1]]
        mask |= (xx >= x0) & (xx <= x1) & (yy >= y0) & (yy <= y1)
        return
    c0, c1 = max(0, int(np.ceil(x0))), min(mask.shape[1] - 1, int(np.floor(x1)))
    r0, r1 = max(0, int(np.ceil(y0))), min(mask.shape[0] - 1, int(np.floor(y1)))
    if c0 <= c1 and r0 <= r1:
        mask[r0:r1 + 1, c0:c1 + 1] = True


def screen_motion_check(scene: Any, samples: Any, frames_dir: Path, audit: Any) -> dict[str, Any]:
    """Compare rendered frame changes with native motion; adds `scripted_motion` findings to `audit`."""
    import cv2

    files = sorted(p for p in Path(frames_dir).glob("*.png") if p.stem.isdigit())
    if len(files) < 2:
        return {"state": "skipped", "reason": f"{len(files)} numbered PNG frames in {frames_dir}"}
    sel = np.unique(np.linspace(0, len(files) - 1, num=min(MAX_FRAMES, len(files))).astype(int))
    files = [files[i] for i in sel]
    fnums = np.array([int(p.stem) for p in files])
    fidx = np.array([int(np.argmin(np.abs(samples.frames - f))) for f in fnums])
    imgs = []
    for p in files:
        im = cv2.imread(str(p), cv2.IMREAD_COLOR)
        if im is None:
            return {"state": "error", "reason": f"cannot decode {p}"}
        imgs.append(cv2.resize(im, (SCREEN_W, SCREEN_H), interpolation=cv2.INTER_AREA))
    stack = np.stack(imgs).astype(np.int16)
    changed = (np.abs(stack - stack[0]) > DIFF_LEVEL).any(axis=(0, 3))
    geom = audit.geom
    movers = [n for n in geom.meshes if n in audit.moving]
    statics = [n for n in geom.meshes if n not in audit.moving and ph.rendered(audit.info[n])]
    explained = np.zeros_like(changed)
    yy, xx = np.mgrid[0:SCREEN_H, 0:SCREEN_W]
    boxes = _boxes(geom, movers + statics, fidx)
    for n in movers:
        pr = _project(scene, samples, boxes[n], fidx)
        if pr is None:
            return {"state": "skipped", "reason": "scene has no camera"}
        for k in range(len(fidx)):
            p = pr[k]
            if np.isnan(p).all():
                continue
            x0, y0 = np.nanmin(p, axis=0) - 2
            x1, y1 = np.nanmax(p, axis=0) + 2
            _fill_box(explained, x0, y0, x1, y1)
    # a moving camera moves every static object on screen: where its projection shifts between the checked
    # frames, its pixels change with nothing scripted (a dolly in a valid reconstruction scored S_val 0.5 here);
    # the re-render comparison (`probes.audit.render_match`) judges those frames against the saved scene instead
    carried = []
    for n in statics:
        pr = _project(scene, samples, boxes[n], fidx)
        if pr is None or np.isnan(pr).all():
            continue
        lo, hi = np.nanmin(pr, axis=1), np.nanmax(pr, axis=1)  # (K, 2) per checked frame
        if np.nanmax(np.abs(np.concatenate([lo - lo[:1], hi - hi[:1]], axis=1))) <= CAMERA_SHIFT_PX:
            continue
        carried.append(n)
        for k in range(len(fidx)):
            if np.isfinite(lo[k]).all() and np.isfinite(hi[k]).all():
                _fill_box(explained, lo[k][0] - 2, lo[k][1] - 2, hi[k][0] + 2, hi[k][1] + 2)
    systems = rendered_particle_systems(scene, samples)
    by_particles, particle_counts = particle_explained(scene, samples, fidx, systems)
    explained |= by_particles
    unexplained = changed & ~explained
    suspects = []
    for n in statics:
        pr = _project(scene, samples, boxes[n][:1], fidx[:1])
        if pr is None or np.isnan(pr).all():
            continue
        x0, y0 = np.nanmin(pr[0], axis=0)
        x1, y1 = np.nanmax(pr[0], axis=0)
        foot = (xx >= x0) & (xx <= x1) & (yy >= y0) & (yy <= y1)
        area = int(foot.sum())
        if area < 4:
            continue
        frac = float((unexplained & foot).sum() / area)
        if frac >= UNEXPLAINED_MIN:
            suspects.append((n, frac))
    for n, frac in suspects:
        audit.add(
            kind="scripted_motion",
            objects=[n],
            frames=[int(fnums[0]), int(fnums[-1])],
            value=round(frac, 4),
            unit="fraction of footprint",
            message=f"{n} is static in the saved scene but {frac:.0%} of its on-screen footprint changes in the "
            "rendered frames with no native motion there (moved by a handler or script that the .blend does not keep)",
            evidence={"frames_checked": [int(f) for f in fnums], "analysis_size": [SCREEN_W, SCREEN_H],
                      "diff_level": DIFF_LEVEL},
        )
    return {
        "state": "ok",
        "frames_checked": len(files),
        "changed_fraction": round(float(changed.mean()), 5),
        "unexplained_fraction": round(float(unexplained.mean()), 5),
        "suspects": [{"object": n, "fraction": round(f, 4)} for n, f in suspects],
        "moved_by_the_camera": carried[:20],
        "particle_systems": [dict(r, radius_m=round(r["radius_m"], 5),
                                  changed_particle_frames=particle_counts.get(r["key"], 0)) for r in systems],
        "particle_explained_fraction": round(float((changed & by_particles).mean()), 5),
    }
