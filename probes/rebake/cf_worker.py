"""Child process for one counterfactual branch: open a copy of the native scene, intervene, re-bake, sample.

Run as `python -m physcodegym.probes.rebake.cf_worker --blend B --out OUT.npz [--interventions JSON]
[--mapping JSON] [--frames S:E] [--defect KIND] [--save-blend PATH]`, or with `--jobs JOBS.json` for
several branches in one process (one bpy start-up instead of one per branch). Every job re-opens the
original file (`open_mainfile`) and drops handlers registered since start-up, so edits from another
branch never leak into this one, and the original file is only read. Writes OUT.npz (SceneSamples) and OUT.json (what
was changed, verification, timings).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from physcodegym.core import atomic


def _caches(scene: Any) -> list[Any]:
    out = []
    if scene.rigidbody_world is not None:
        out.append(scene.rigidbody_world.point_cache)
    for ob in scene.objects:
        for m in ob.modifiers:
            pc = getattr(m, "point_cache", None)
            if pc is not None:
                out.append(pc)
        for ps in ob.particle_systems:
            out.append(ps.point_cache)
    return out


def _outdate(scene: Any) -> None:
    """Empty the rigid body world's cache, so the bake that follows simulates every frame again.

    Why: `free_bake_all` only lifts the baked flag; frames of a rigid body world that this process has read stay
    in memory as a valid cache, and `bake_all` keeps them. Measured in bpy 5.0: a rigid body world sampled
    once, then freed and baked, "re-baked" in 0.5 ms, identical to the bake of an edited scene that re-simulates
    2.2 m away. On a freshly opened file nothing was read yet, so this was unseen until a worker sampled the bake
    first (job `to_rest`). Cloth and particle caches read the same way are simulated again (measured, tested).
    Assigning the world a setting's own value runs that setting's update, which resets the cache."""
    rbw = scene.rigidbody_world
    if rbw is not None:
        rbw.time_scale = rbw.time_scale


def rebake(scene: Any, end: int) -> float:
    """Free every cache and bake again up to `end` only (frames past it are never read).

    A particle system's cache range follows its particle settings (assigning its `frame_end` does nothing), so
    `bake_all` went on to the scene's last frame: liquid_duck's counterfactual read at frame 31 baked 231 frames.
    Where a cache still ends after `end`, the frames up to `end` are simulated by stepping through them instead,
    which is what a bake does frame by frame (the particles land in the memory cache and are read from there)."""
    import bpy

    t = time.perf_counter()
    with bpy.context.temp_override(scene=scene):
        bpy.ops.ptcache.free_bake_all()
    _outdate(scene)
    caches = _caches(scene)
    for pc in caches:
        if pc.frame_end > end:
            pc.frame_end = end
    scene.frame_set(scene.frame_start)
    if any(pc.frame_end > end for pc in caches):
        for f in range(scene.frame_start + 1, end + 1):
            scene.frame_set(f)
    else:
        with bpy.context.temp_override(scene=scene):
            bpy.ops.ptcache.bake_all(bake=True)
    return time.perf_counter() - t


class RestartFailed(RuntimeError):
    """A run of `resimulate_runs` did not restart from the bake's own state; the caller re-bakes in full."""


def _clear_after_current(scene: Any) -> list[Any]:
    """Drop every cloth cache's frames after the current frame (they are simulated again when stepped to) and
    return the caches. Assigning a cloth setting its own value runs its update, which marks the cache outdated
    and clears it after the current frame, as an edit in Blender's UI does (measured in bpy 5.0)."""
    caches = []
    for ob in scene.objects:
        for m in ob.modifiers:
            if m.type == "CLOTH":
                m.settings.mass = m.settings.mass
                caches.append(m.point_cache)
    return caches


def _cached_frames(pc: Any) -> int | None:
    """How many frames a cache holds, from its status line ("120 frames in memory (5.7 MiB)..."), or None."""
    import re

    m = re.match(r"\s*(\d+) frames", pc.info or "")
    return int(m.group(1)) if m else None


def _particle_caches(scene: Any) -> list[Any]:
    return [ps.point_cache for ob in scene.objects for ps in getattr(ob, "particle_systems", [])]


def _particles_to_private_disk(scene: Any) -> Path | None:
    """Save the open file into a private folder (with a copy of its disk caches) and switch every particle cache to
    a disk cache there; the cache folder, or None without particle systems.

    Why: a particle cache cannot be cleared after a frame the way a cloth cache is (assigning any particle or
    emitter setting resets the whole system, measured: 231 frames down to 1); its frames on disk can be deleted
    one by one, and stepping past the last one left simulates again from it (measured)."""
    import shutil
    import tempfile

    import bpy

    pcs = _particle_caches(scene)
    if not pcs:
        return None
    cur = Path(bpy.data.filepath)
    where = Path(tempfile.mkdtemp(prefix="pcg_runs_"))
    src = cur.parent / f"blendcache_{cur.stem}"
    if src.is_dir():
        shutil.copytree(src, where / f"blendcache_{cur.stem}", symlinks=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(where / cur.name), relative_remap=True)
    for pc in pcs:
        if not pc.use_disk_cache:
            pc.use_disk_cache = True  # writes every frame it holds
    return where / f"blendcache_{cur.stem}"


def _drop_disk_frames_after(folder: Path, frame: int) -> int:
    """Delete every cache file of `folder` for a frame after `frame`; how many are left after it (0)."""
    import re

    for fn in folder.glob("*.bphys"):
        m = re.search(r"_(\d{6})_\d+\.bphys$", fn.name)
        if m and int(m.group(1)) > frame:
            fn.unlink()
    return sum(1 for fn in folder.glob("*.bphys")
               if (m := re.search(r"_(\d{6})_\d+\.bphys$", fn.name)) and int(m.group(1)) > frame)


def resimulate_runs(scene: Any, runs: list[tuple[int, int]]) -> Any:
    """Simulate the scene (cloth and particles only) again on each run (first, last) of
    `probes.branches.resimulation.resim_plan`, each from the bake's own state at its first frame; the samples of those
    frames.

    The runs go from the last to the first: clearing a cache after a run's first frame keeps every earlier frame
    of the bake for the runs still to come. Each restart is verified, never assumed: the cache must have lost its
    later frames (else stepping would read the bake, not simulate) and the state at the first frame must be the
    bake's. Otherwise `RestartFailed`, and the caller re-bakes in full."""
    import bpy
    import numpy as np
    from physcodegym.probes.scene.sampling import sample_scene
    from physcodegym.samples import SceneSamples

    disk = _particles_to_private_disk(scene)
    scene = bpy.context.scene
    with bpy.context.temp_override(scene=scene):
        bpy.ops.ptcache.free_bake_all()  # lifts the baked flag; the frames stay and are read until cleared
    parts = []
    try:
        for a, b in sorted(runs, reverse=True):
            scene.frame_set(a)
            before = sample_scene(scene, frames=[a], from_start=False)
            caches = _clear_after_current(scene)
            bpy.context.view_layer.update()
            if not caches and disk is None:
                raise RestartFailed("no cloth or particle cache to restart")
            for pc in caches:
                n = _cached_frames(pc)
                if pc.is_baked or n is None or n > a - pc.frame_start + 1:
                    raise RestartFailed(f"the cache still holds frames after {a} ({pc.info!r})")
            if disk is not None and _drop_disk_frames_after(disk, a):
                raise RestartFailed(f"particle cache files after frame {a} could not be deleted")
            part = sample_scene(scene, frames=range(a, b + 1), from_start=False)
            for k, v in before.verts.items():
                if k in part.verts and not np.array_equal(np.nan_to_num(v[0]), np.nan_to_num(part.verts[k][0])):
                    raise RestartFailed(f"{k}: the state at frame {a} is not the bake's after the restart")
            for k, v in before.particles.items():  # the live ones (unborn particles have no state to keep)
                if k not in part.particles:
                    continue
                la, lb = before.particles_alive.get(k), part.particles_alive.get(k)
                live = la[0] if la is not None else np.isfinite(v[0]).all(axis=1)
                if (lb is not None and not np.array_equal(live, lb[0])) or not np.array_equal(
                        np.nan_to_num(v[0][live]), np.nan_to_num(part.particles[k][0][live])):
                    raise RestartFailed(f"{k}: the particles at frame {a} are not the bake's after the restart")
            parts.append(part)
    finally:
        if disk is not None:
            import shutil

            shutil.rmtree(disk.parent, ignore_errors=True)
    return SceneSamples.concat(parts)


def _private_disk_cache(blend: str) -> str | None:
    """Give this branch its own copy of the blend's disk caches (`blendcache_<name>/` beside it); its path or None.

    Why: freeing a bake deletes a disk cache's files, and a branch frees bakes (re-bake, solvers off). On the
    original that deleted the submission's own cache (measured: 30 cloth frames down to 1 after one audit), so
    a later check of the same run read a different scene. The open file is saved into a private folder with
    a copy of the cache folder (relative paths remapped, so textures and other files still resolve); from then
    on every cache operation of this branch touches only the copy.
    """
    import shutil
    import tempfile

    import bpy

    src = Path(blend).parent / f"blendcache_{Path(blend).stem}"
    if not src.is_dir():
        return None
    where = Path(tempfile.mkdtemp(prefix="pcg_cf_cache_"))
    shutil.copytree(src, where / src.name, symlinks=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(where / Path(blend).name), relative_remap=True)
    return str(where)


def reseed_particles(scene: Any, offset: int) -> list[str]:
    """Shift the random seed of every particle system by `offset`: emission draws other positions and
    velocities from the same distributions, nothing else changes. Returns "object/system" of each."""
    done = []
    for ob in scene.objects:
        for ps in getattr(ob, "particle_systems", []):
            ps.seed = (int(ps.seed) + offset) % (2**31 - 1)
            done.append(f"{ob.name}/{ps.name}")
    return done


def decollide(scene: Any, names: list[str]) -> dict[str, str]:
    """Take away each named object's collision and nothing else: a rigid body collides with no collision
    collection, its Collision modifiers are removed. The object stays (an emitter keeps emitting, a parent keeps
    its children, a field its effect), so a branch measures what its collision alone does. Returns {name: what
    changed}. (Unlinking a passive body from the rigid-body world's collection keeps it colliding in the re-bake,
    measured; no collision collection does not.)"""
    out: dict[str, str] = {}
    for n in names:
        ob = scene.objects.get(n)
        if ob is None:
            continue
        done = []
        rb = ob.rigid_body
        if rb is not None and any(rb.collision_collections):
            rb.collision_collections = [False] * len(rb.collision_collections)
            done.append("rigid body collides with no collection")
        for m in [m for m in ob.modifiers if m.type == "COLLISION"]:
            ob.modifiers.remove(m)
            done.append("Collision modifier removed")
        out[n] = ", ".join(done) or "no collision to take away"
    return out


def strip_clear_faces(scene: Any, names: list[str]) -> dict[str, int]:
    """Delete the faces of each named mesh whose material renders nothing in the scene's engine
    (`probes.scene.sampling.clear_slots`); returns {name: faces deleted}. The mesh data is made single-user first,
    so another object sharing it keeps its faces."""
    import bmesh
    from physcodegym.probes.scene.sampling import clear_slots

    out: dict[str, int] = {}
    for n in names:
        ob = scene.objects.get(n)
        if ob is None or ob.type != "MESH":
            continue
        clear = clear_slots(ob, scene)
        if not clear:
            out[n] = 0
            continue
        if ob.data.users > 1:
            ob.data = ob.data.copy()
        bm = bmesh.new()
        bm.from_mesh(ob.data)
        gone = [f for f in bm.faces if f.material_index in clear]
        bmesh.ops.delete(bm, geom=gone, context="FACES")
        bm.to_mesh(ob.data)
        bm.free()
        ob.data.update()
        out[n] = len(gone)
    return out


def collision_stack_gaps(scene: Any, names: list[str], max_points: int = 20000) -> dict[str, dict[str, Any]]:
    """How far each named collider's collision surface lies from its rendered surface. Blender collides with the mesh
    as it is *at* the Collision modifier, so modifiers after it change what renders but not what collides
    (`probes.scene.physics.post_collision_modifiers`); a rigid body's hull or mesh shape is built from its mesh source
    (BASE: before every modifier, DEFORM: after the leading deform-only ones), so the modifiers it skips change
    what renders but not what Bullet collides with (`probes.scene.physics.rigid_source_modifiers`). Both meshes are
    evaluated as they render (every modifier shown in the viewport as it is in renders), the collision one with
    the skipped modifiers off; a hull shape is compared hull to hull (the shape is a hull whatever renders). The
    gap is the largest distance from a vertex of either to the other's surface (m, world space). The modifiers are
    put back before anything else reads the scene."""
    import bpy
    import numpy as np
    from mathutils.bvhtree import BVHTree
    from physcodegym.probes.scene.physics import DEFORM_ONLY_MODIFIERS, NO_GEOMETRY_MODIFIERS, RIGID_SOURCE_SHAPES

    def world_mesh(ob: Any) -> tuple[np.ndarray, list[list[int]]]:
        dg = bpy.context.evaluated_depsgraph_get()
        ev = ob.evaluated_get(dg)
        me = ev.to_mesh()
        try:
            co = np.empty(len(me.vertices) * 3, dtype=np.float64)
            me.vertices.foreach_get("co", co)
            co = co.reshape(-1, 3)
            m = np.array(ev.matrix_world, dtype=np.float64)
            pts = co @ m[:3, :3].T + m[:3, 3]
            polys = [list(pl.vertices) for pl in me.polygons]
        finally:
            ev.to_mesh_clear()
        return pts, polys

    def hull(pts: np.ndarray, polys: list[list[int]]) -> tuple[np.ndarray, list[list[int]]]:
        """The convex hull of the vertices faces use (loose vertices are not in Bullet's hull)."""
        from scipy.spatial import ConvexHull

        used = np.unique(np.fromiter((i for p in polys for i in p), dtype=np.int64))
        q = pts[used]
        try:
            h = ConvexHull(q)
        except Exception:  # flat or degenerate: the faces themselves
            return pts, polys
        return q, h.simplices.tolist()

    def one_way(pts: np.ndarray, tree: Any) -> float:
        if len(pts) > max_points:
            pts = pts[np.linspace(0, len(pts) - 1, max_points).astype(int)]
        ds = [tree.find_nearest(tuple(p))[3] for p in pts]
        return float(max((d for d in ds if d is not None), default=0.0))

    out: dict[str, dict[str, Any]] = {}
    for n in names:
        ob = scene.objects.get(n)
        if ob is None or ob.type != "MESH":
            continue
        mods = list(ob.modifiers)
        rb = ob.rigid_body
        rigid = rb is not None and rb.collision_shape in RIGID_SOURCE_SHAPES and rb.mesh_source != "FINAL"
        if rigid:
            geo = [k for k, m in enumerate(mods) if m.type not in NO_GEOMETRY_MODIFIERS]
            cut = geo[0] if geo else len(mods)
            if rb.mesh_source == "DEFORM":
                cut = next((k for k in geo if mods[k].type not in DEFORM_ONLY_MODIFIERS), len(mods))
            skip = mods[cut:]
            how = f"rigid-body mesh source {rb.mesh_source}"
        else:
            at = [i for i, m in enumerate(mods) if m.type == "COLLISION"]
            if not at:
                continue
            skip = mods[at[0] + 1:]
            how = "Collision modifier"
        shown = [m.show_viewport for m in mods]
        try:
            for m in mods:
                m.show_viewport = m.show_render
            rend, rpoly = world_mesh(ob)
            after = [m for m in skip if m.show_viewport and m.type not in NO_GEOMETRY_MODIFIERS]
            for m in after:
                m.show_viewport = False
            coll, cpoly = world_mesh(ob)
        finally:
            for m, v in zip(mods, shown, strict=True):
                m.show_viewport = v
        if not rpoly or not cpoly:
            out[n] = {"gap_m": None, "after": [m.name for m in after], "how": how, "reason": "a mesh without faces"}
            continue
        if rigid and rb.collision_shape == "CONVEX_HULL":
            rend, rpoly = hull(rend, rpoly)
            coll, cpoly = hull(coll, cpoly)
        gap = max(one_way(rend, BVHTree.FromPolygons([tuple(p) for p in coll], cpoly)),
                  one_way(coll, BVHTree.FromPolygons([tuple(p) for p in rend], rpoly)))
        out[n] = {"gap_m": round(gap, 5), "after": [m.name for m in after], "how": how}
    bpy.context.view_layer.update()
    return out


def _write_rec(out: Path, rec: dict[str, Any]) -> None:
    atomic.write_text(out.with_suffix(".json"), json.dumps(rec, default=str))


def _cpus() -> int | None:
    """The CPUs this worker may run on (None where the system cannot say)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def _open_fresh(blend: str, rec: dict[str, Any], handlers0: dict[str, list[Any]] | None) -> Any:
    """Open `blend` afresh for this branch and return its scene: stored code and paths off before any bake
    (docs/THREAT_MODEL.md), a private copy of its particle disk cache (the previous copy, if any, removed), and
    the handlers registered since `handlers0` (a previous job's, persistent or not) dropped when it is given."""
    import shutil

    import bpy
    from physcodegym.probes.scene.render_safety import neutralise

    used = rec.get("private_disk_cache")
    bpy.ops.wm.open_mainfile(filepath=str(blend), use_scripts=False)  # Auto Run off: the blend is a program's output
    neutralise(bpy)
    rec["private_disk_cache"] = _private_disk_cache(blend)
    if used:
        shutil.rmtree(used, ignore_errors=True)
    if handlers0 is not None:
        for name, keep in handlers0.items():
            lst = getattr(bpy.app.handlers, name)
            for h in [h for h in lst if h not in keep]:
                lst.remove(h)
    return bpy.context.scene


@dataclass
class Branch:
    """One job's working state, handed to each of its edits: the scene (an edit may re-open the file), the job,
    the role mapping, the record being written, and whether the scene now differs from its bake (so it is
    re-baked)."""

    scene: Any
    job: dict[str, Any]
    mapping: dict[str, str]
    rec: dict[str, Any]
    interventions: list[Any]
    changed: bool = False


def _edit_defect(b: Branch) -> None:
    """A self-test defect injected (probes.defects); an injection may re-open the file (defects._reopened)."""
    import bpy
    from physcodegym.probes.defects.defects import inject_defect

    b.rec["defect"] = inject_defect(b.scene, b.job["defect"], b.mapping)
    b.scene = bpy.context.scene
    b.changed = True


def _edit_interventions(b: Branch) -> None:
    """The counterfactual's interventions, each verified; one that cannot be applied is recorded with its error."""
    from physcodegym.probes.branches.interventions import InterventionError, apply_intervention

    for iv in b.interventions:
        try:
            b.rec["interventions"].append(apply_intervention(b.scene, iv, b.mapping))
            b.changed = True
        except InterventionError as ex:
            b.rec["interventions"].append({"kind": iv.kind.value, "roles": iv.roles, "verified": False,
                                           "error": str(ex)})
            b.rec["errors"].append(str(ex))


def _edit_decollide(b: Branch) -> None:
    """Hidden colliders without their collision: what they do (probes.audit.effects)."""
    b.rec["decollided"] = decollide(b.scene, list(b.job["decollide"]))
    b.changed = True


def _edit_strip_clear(b: Branch) -> None:
    """The clear faces of rendered colliders removed: what they do (probes.audit.effects)."""
    b.rec["stripped"] = strip_clear_faces(b.scene, list(b.job["strip_clear"]))
    b.changed = True


def _edit_stack_gaps(b: Branch) -> None:
    """Colliders that render otherwise than they collide, measured (probes.audit.detect_fields); nothing changes."""
    b.rec["stack_gaps"] = collision_stack_gaps(b.scene, list(b.job["stack_gaps"]))


def _edit_render_side(b: Branch) -> None:
    """The bake made as the frames show the scene (probes.scene.render_config)."""
    from physcodegym.probes.scene.render_config import apply_render_configuration

    b.rec["render_side"] = len(apply_render_configuration(b.scene))
    b.changed = True


def _edit_reseed(b: Branch) -> None:
    """Another microstate of the same physics: the noise floor of a chaotic liquid."""
    b.rec["reseeded"] = reseed_particles(b.scene, int(b.job["reseed"]))
    b.changed = True


# The kinds of edit a job asks for (its keys), applied in this order to the freshly opened scene. Each is one
# function of the branch, so a new kind is one function and one line here, and run_job stays the same.
EDITS: dict[str, Callable[[Branch], None]] = {
    "defect": _edit_defect,
    "interventions": _edit_interventions,
    "decollide": _edit_decollide,
    "strip_clear": _edit_strip_clear,
    "stack_gaps": _edit_stack_gaps,
    "render_side": _edit_render_side,
    "reseed": _edit_reseed,
}


def _plan_frames(b: Branch, blend: str, handlers0: dict[str, list[Any]] | None) -> tuple[int, int, list[tuple]]:
    """The frames the branch samples and the runs it re-simulates. A job `to_rest` (a re-simulation started before
    its caller sampled the bake) reads what it simulates from the bake, then opens the file again: reading the
    bake leaves state in the rigid-body solver that a re-bake starts from (the objects' frame-1 transforms are the
    same, measured; the solver's are not a fresh world's). Measured on ball_dominoes_s3's truth: re-baked after
    reading it, the ball departed from frame 27 and by 6.1 cm at frame 240 (a false "edited after the bake");
    re-baked on a fresh load, it is the bake bit for bit."""
    from physcodegym.probes.scene.sampling import sample_scene

    s, e = b.scene.frame_start, b.scene.frame_end
    if b.job.get("frames"):
        fs, fe = b.job["frames"]
        s, e = max(s, int(fs)), min(e, int(fe))
    runs = [tuple(r) for r in b.job.get("runs") or []]
    if b.job.get("to_rest"):
        from physcodegym.probes.branches.resimulation import resim_plan

        runs = resim_plan(sample_scene(b.scene, frames=range(s, e + 1)))
        e = min(e, runs[-1][1]) if runs else e
        b.rec["frames"] = [s, e]
        b.scene = _open_fresh(blend, b.rec, handlers0)
    if len(runs) > 1:
        b.rec["runs"] = [list(r) for r in runs]
    return s, e, runs


def _bake(b: Branch, blend: str, runs: list[tuple], end: int) -> Any:
    """Re-bake a changed scene (or a forced one) up to `end`; an unchanged scene in restarted runs is simulated and
    sampled in one pass, and returns its samples (None otherwise). Runs that cannot restart fall back to the whole
    range from the first frame, on a fresh load (the failed runs may have cleared frames of its cache copy)."""
    samples = None
    if b.rec.get("runs") and not b.changed and b.job.get("force_rebake"):  # the unchanged scene, in restarted runs
        t1 = time.perf_counter()
        try:
            samples = resimulate_runs(b.scene, runs)
            b.rec["bake_s"] = time.perf_counter() - t1  # simulating and sampling are one pass here
            b.rec["baked"] = True
        except RestartFailed as ex:
            b.rec["runs_failed"] = str(ex)
            b.rec.pop("runs")
            b.scene = _open_fresh(blend, b.rec, None)
    if samples is None and (b.changed or b.job.get("force_rebake")):
        b.rec["bake_s"] = rebake(b.scene, end)
        b.rec["baked"] = True
    return samples


def run_job(blend: str, job: dict[str, Any], mapping: dict[str, str],
            handlers0: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """One branch on a fresh load of `blend`: inject/intervene (the job's `EDITS`), re-bake, sample, optionally
    save; returns its record."""
    out = Path(job["out"])
    rec: dict[str, Any] = {"ok": False, "blend": blend, "interventions": [], "errors": [],
                           "cpus": _cpus()}  # 1 when the branch's simulation runs on one thread (core.determinism)
    t0 = time.perf_counter()
    try:
        import bpy
        from physcodegym.probes.scene.sampling import sample_scene
        from physcodegym.tasks.schema import Intervention

        scene = _open_fresh(blend, rec, handlers0)
        rec["load_s"] = time.perf_counter() - t0
        b = Branch(scene, job, mapping, rec, [Intervention.model_validate(x) for x in job.get("interventions", [])])
        s, e, runs = _plan_frames(b, blend, handlers0)
        for kind, edit in EDITS.items():
            if job.get(kind):
                edit(b)
        rec["baked"] = False
        if job.get("solvers_off"):  # the universal ownership test: nothing is baked, nothing simulates
            from physcodegym.probes.branches.ownership import switch_off_solvers

            rec["switched_off"] = switch_off_solvers(b.scene)
            b.changed = False
        samples = _bake(b, blend, runs, e)
        if isinstance(rec.get("defect"), dict) and rec["defect"].get("after_bake"):
            from physcodegym.probes.defects.defects import after_bake

            rec["after_bake"] = after_bake(b.scene, rec["defect"])
        t1 = time.perf_counter()
        if samples is None:
            samples = sample_scene(b.scene, frames=range(s, e + 1), with_particles=not job.get("solvers_off"))
        rec["sample_s"] = time.perf_counter() - t1
        samples.save_npz(out)
        if job.get("save_blend"):
            bpy.ops.wm.save_as_mainfile(filepath=str(job["save_blend"]), copy=True)
        rec["ok"] = not rec["errors"]
    except Exception as ex:  # noqa: BLE001 - the parent gets the failure as data, never a lost branch
        rec["errors"].append(f"{type(ex).__name__}: {ex}")
        rec["traceback"] = traceback.format_exc()[-2000:]
    rec["seconds"] = time.perf_counter() - t0
    if rec.get("private_disk_cache"):
        import shutil

        shutil.rmtree(rec["private_disk_cache"], ignore_errors=True)
    _write_rec(out, rec)
    return rec


HANDLER_LISTS = ("frame_change_pre", "frame_change_post", "load_post", "depsgraph_update_pre", "depsgraph_update_post")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="cf_worker")
    ap.add_argument("--blend", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--interventions", default="[]", help="JSON list of Intervention objects")
    ap.add_argument("--mapping", default="{}", help="JSON {role: object}")
    ap.add_argument("--frames", default=None, help="S:E inclusive")
    ap.add_argument("--defect", default=None, help="selftest defect kind to inject")
    ap.add_argument("--force-rebake", action="store_true")
    ap.add_argument("--save-blend", default=None)
    ap.add_argument("--jobs", default=None,
                    help=("JSON file: list of {out, interventions, frames, defect, save_blend}; each job re-opens the "
                          "blend"))
    a = ap.parse_args(argv)
    mapping = json.loads(a.mapping)
    if a.jobs:
        jobs = json.loads(Path(a.jobs).read_text())
    else:
        if not a.out:
            ap.error("--out or --jobs is required")
        frames = [int(x) for x in a.frames.split(":")] if a.frames else None
        jobs = [{"out": a.out, "interventions": json.loads(a.interventions), "frames": frames, "defect": a.defect,
                 "save_blend": a.save_blend, "force_rebake": a.force_rebake}]
    handlers0 = None
    try:
        import bpy
        from physcodegym.probes.scene.render_safety import install_load_guard

        install_load_guard()  # before any open: Blender writes a disk cache while it loads (docs/THREAT_MODEL.md)
        handlers0 = {n: list(getattr(bpy.app.handlers, n)) for n in HANDLER_LISTS}
    except ImportError:  # pragma: no cover - reported per job below
        pass
    ok = True
    for job in jobs:
        ok = run_job(a.blend, job, mapping, handlers0)["ok"] and ok
    return 0 if ok else 1


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
