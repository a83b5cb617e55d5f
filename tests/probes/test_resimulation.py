"""A bake made from another scene (edited after baking) is not the saved scene's physics.

Blender keeps a baked cache when the scene is edited afterwards, so a program can bake with a helper
(a deflecting plank, weak gravity, an attractor on liquid drops) and then remove it: the saved scene
carries motion its own physics does not make, and nothing in it names the helper. Each defect scene here
is baked for real, edited after the bake, and audited; its twin is the same scene baked honestly. The
audit re-simulates the saved scene in a worker (`probes.branches.resimulation`) and must tell them apart.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from physcodegym.probes.audit.findings import AuditReport
from physcodegym.testing import demo_scenes as D


def plank_deflects(defect: bool, frames: int = 40) -> Any:
    """A ball falls on a tilted plank and rolls off sideways. Defect: the plank is deleted after the bake."""
    import bpy

    sc = D.rigid_stage(frames)
    D.sphere("Ball", (0, 0, 2.0), 0.2)
    plank = D.box("Plank", (0, 0, 1.0), (1.2, 0.6, 0.05), rb="PASSIVE")
    plank.rotation_euler = (0, math.radians(30), 0)
    D.bake()
    if defect:
        bpy.data.objects.remove(plank)
    return sc


def weak_gravity(defect: bool, frames: int = 60) -> Any:
    """A ball falls from 3 m. Defect: baked at 2 m/s², then gravity is set back to 9.81 (the bake is kept)."""
    sc = D.rigid_stage(frames)
    D.sphere("Ball", (0, 0, 3.0), 0.2)
    if defect:
        sc.gravity = (0.0, 0.0, -2.0)
    D.bake()
    sc.gravity = (0.0, 0.0, -9.81)
    return sc


def drops_pulled(defect: bool, frames: int = 30) -> Any:
    """Liquid drops fall on a floor. Defect: baked with an attractor pulling them sideways, which is then
    deleted. Twin: the same drops baked with no field (SPH re-bakes are not bit-identical: the twin checks
    the particle tolerance sits above that noise)."""
    import bpy

    sc = D.liquid_attractor(defect, frames)
    if defect:
        bpy.data.objects.remove(bpy.data.objects["Pull"])
    return sc


BUILDERS = {"plank_deflects": plank_deflects, "weak_gravity": weak_gravity, "drops_pulled": drops_pulled}


@pytest.fixture(scope="module")
def audited_resim() -> Any:
    from physcodegym.probes.audit.audit import audit_scene

    cache: dict[tuple[str, bool], AuditReport] = {}

    def get(case: str, defect: bool) -> AuditReport:
        if (case, defect) not in cache:
            try:
                cache[(case, defect)] = audit_scene(BUILDERS[case](defect))
            finally:
                D.clear_user_handlers()
        return cache[(case, defect)]

    return get


def _resim_findings(rep: AuditReport) -> list[Any]:
    return [f for f in rep.by_kind("stale_cache") if "re-simulat" in f.message or "simulating the saved scene"
            in f.message]


@pytest.mark.parametrize("case,obj", [("plank_deflects", "Ball"), ("weak_gravity", "Ball"), ("drops_pulled", "Spout")])
def test_a_bake_from_an_edited_scene_is_a_stale_cache_and_the_honest_twin_is_clean(audited_resim, case: str,
                                                                               obj: str) -> None:
    bad = audited_resim(case, True)
    hits = _resim_findings(bad)
    assert hits and hits[0].objects == [obj], [(f.kind, f.objects, f.message) for f in bad.findings]
    assert bad.meta["resimulation"]["ran"] is True
    twin = audited_resim(case, False)
    assert twin.meta["resimulation"]["ran"] is True, twin.meta["resimulation"]
    assert not _resim_findings(twin), [(f.objects, f.message) for f in _resim_findings(twin)]
    assert not twin.by_kind("scripted_motion"), [f.message for f in twin.findings]


def test_rigid_bodies_re_simulate_bit_for_bit(audited_resim) -> None:
    """The honest rigid twins re-simulate exactly: the tolerance is not hiding a real difference."""
    for case in ("plank_deflects", "weak_gravity"):
        doc = audited_resim(case, False).meta["resimulation"]
        assert doc["objects"]["Ball"]["max_m"] == 0.0, (case, doc["objects"])


def test_the_re_simulation_stops_after_the_bake_stops_moving(audited_resim) -> None:
    """Only frames up to the bake's last motion plus the tail are simulated again (the costliest branch)."""
    from physcodegym.probes.branches.resimulation import RESIM_TAIL_FRAMES

    doc = audited_resim("weak_gravity", False).meta["resimulation"]
    # the ball rests from frame 30 (measured) of 60: frames 1..45 are simulated again
    assert RESIM_TAIL_FRAMES < doc["frames"] < 60, doc["frames"]


def test_an_unbaked_scene_is_not_simulated_twice() -> None:
    """A stepped (unbaked) scene is simulated by the audit's own sampling: no re-simulation is run."""
    from physcodegym.probes.audit.audit import audit_scene

    sc = D.rigid_stage(20)
    D.sphere("Ball", (0, 0, 1.0), 0.2)
    try:
        rep = audit_scene(sc)
    finally:
        D.clear_user_handlers()
    assert rep.meta["resimulation"]["ran"] is False and "no cache is baked" in rep.meta["resimulation"]["reason"]


def test_an_audit_leaves_a_disk_cache_as_it_found_it(tmp_path) -> None:
    """Branches free bakes; on a disk cache that deleted the submission's own files (measured: 30 cloth frames
    down to 1 after one audit). Each branch now works on a private copy: the files stay, and the re-simulation
    of the honest disk-cached cloth matches its bake."""
    import bpy
    from physcodegym.probes.audit.audit import audit_path

    sc = D.reset(20)
    D.camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=8, y_subdivisions=8, size=2, location=(0, 0, 2))
    sheet = bpy.context.active_object
    sheet.name = "Sheet"
    cloth = sheet.modifiers.new("Cloth", "CLOTH")
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))  # a disk cache needs a saved file
    cloth.point_cache.use_disk_cache = True
    cloth.point_cache.frame_end = 20
    D.bake()
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    cache_dir = tmp_path / "blendcache_scene"
    before = sorted(p.name for p in cache_dir.iterdir())
    assert len(before) >= 20
    rep = audit_path(blend)
    assert sorted(p.name for p in cache_dir.iterdir()) == before
    doc = rep.meta["resimulation"]
    assert doc["ran"] is True and doc["objects"]["Sheet"]["max_m"] == 0.0, doc
    assert not rep.by_kind("scripted_motion"), [f.message for f in rep.findings]


def _audit_started_early(tmp_path, particles: bool) -> tuple[Any, AuditReport, Any]:
    """Save the live scene, start `EarlyResimulation` on it, audit the file; (early, report, samples)."""
    import bpy
    from physcodegym.probes.audit.audit import EarlyResimulation, audit_path_full

    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    D.clear_user_handlers()
    early = EarlyResimulation(blend, may_hold_particles=particles)
    try:
        rep, samples, _ = audit_path_full(blend, early_resim=early)
    finally:
        early.close()
        D.clear_user_handlers()
    return early, rep, samples


@pytest.mark.parametrize("case,defect,particles", [("weak_gravity", True, False), ("plank_deflects", False, False),
                                                   ("drops_pulled", True, True)])
def test_a_re_simulation_started_before_sampling_judges_as_the_audits_own(tmp_path, case: str, defect: bool,
                                                                         particles: bool) -> None:
    """`EarlyResimulation` (started before Blender's import, its end found by the worker from the bake) is adopted
    by the audit and reaches the verdict and the end frame the audit's own re-simulation reaches."""
    import os

    from physcodegym.probes.branches.resimulation import resim_end

    BUILDERS[case](defect)
    early, rep, samples = _audit_started_early(tmp_path, particles)
    doc = rep.meta["resimulation"]
    assert early.adopted and doc["ran"] is True and doc["started_before_sampling"] is True, doc
    assert doc["worker_cpus"] == (1 if particles else len(os.sched_getaffinity(0))), doc  # SPH on one CPU only
    assert doc["frames"] == resim_end(samples) - int(samples.frames[0]) + 1, doc["frames"]
    assert bool(_resim_findings(rep)) is defect, [(f.kind, f.objects, f.message) for f in rep.findings]
    assert not early.work.exists()


def test_an_early_re_simulation_nobody_needs_is_stopped(tmp_path) -> None:
    """An unbaked scene is simulated by the audit's sampling: the early worker is stopped, not waited for."""
    D.rigid_stage(20)
    D.sphere("Ball", (0, 0, 1.0), 0.2)
    early, rep, _ = _audit_started_early(tmp_path, particles=False)
    assert not early.adopted and rep.meta["resimulation"]["ran"] is False
    assert early.run.result()[0][0] is None  # stopped: no samples were read


STALE_PROGRAM = '''import os
import bpy

sc = bpy.context.scene
for ob in list(bpy.data.objects):
    bpy.data.objects.remove(ob)
sc.frame_start, sc.frame_end = 1, 240
bpy.ops.rigidbody.world_add()
sc.rigidbody_world.point_cache.frame_end = 240
bpy.ops.mesh.primitive_plane_add(size=10)
bpy.context.active_object.name = "Ground"
bpy.ops.rigidbody.object_add(type="PASSIVE")
bpy.ops.mesh.primitive_uv_sphere_add(radius=0.2, location=(0, 0, 3))
bpy.context.active_object.name = "Ball"
bpy.ops.rigidbody.object_add(type="ACTIVE")
sc.gravity = (0.0, 0.0, {g})
bpy.ops.ptcache.bake_all(bake=True)
sc.gravity = (0.0, 0.0, -9.81)
bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))
'''


@pytest.mark.parametrize("stale", [True, False])
def test_a_sandboxed_run_is_re_simulated_from_the_start_of_the_audit(tmp_path, stale: bool) -> None:
    """`physcodegym audit RUN` on a validated run starts the re-simulation before Blender's import (the run's record
    says whether the file holds particle settings) and still tells a bake made at 2 m/s² from the honest one."""
    import json

    from physcodegym.core import launch
    from physcodegym.core.limits import run_limited
    from physcodegym.sandbox.runner import run_program

    prog = tmp_path / "scene.py"
    prog.write_text(STALE_PROGRAM.format(g=-2.0 if stale else -9.81))
    run = tmp_path / "run"
    rec = run_program(prog, run, timeout_s=180, mode="bake_only")
    assert rec.status == "ok", (rec.reason, rec.log_tail)
    assert rec.validation["headers"]["scene.blend"]["particle_settings"] == 0
    res = run_limited(launch.cli_argv(["audit", str(run), "--json", "--save", str(tmp_path / "rep.json")]),
                      timeout_s=300, memory_mb=None)
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads((tmp_path / "rep.json").read_text())
    resim = doc["meta"]["resimulation"]
    assert resim["ran"] is True and resim["started_before_sampling"] is True, resim
    from physcodegym.probes.branches.resimulation import resim_end
    from physcodegym.samples import SceneSamples

    samples = SceneSamples.load_npz(run / "audit_samples.npz")  # the audit's own sampling of the bake
    assert resim["frames"] == resim_end(samples) - int(samples.frames[0]) + 1  # the worker stopped where it would
    hits = [f for f in doc["findings"] if f["kind"] == "stale_cache" and "Ball" in f["objects"]]
    assert bool(hits) is stale, doc["findings"]
    assert not [f for f in doc["findings"] if f["kind"] == "scripted_motion"], doc["findings"]  # re-bake, not a script
    if stale:  # the audit names the setting: the program's edit after its bake, and the gravity the bake falls at
        assert any("sc.gravity = (0.0, 0.0, -9.81)" in e for f in hits for e in f["evidence"].get("changed_after_bake",
                                                                                                   [])), hits


def _cloth_on_deleted_ball(frames: int = 30) -> Any:
    """A sheet baked falling on a collider ball; the ball is deleted after the bake (the bake is kept)."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, frames
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.5, location=(0, 0, 1.0))
    ball = bpy.context.active_object
    ball.modifiers.new("Collision", "COLLISION")
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=10, y_subdivisions=10, size=1.6, location=(0, 0, 1.7))
    cm = bpy.context.active_object.modifiers.new("Cloth", "CLOTH")
    cm.settings.quality = 3
    cm.point_cache.frame_end = frames
    sc.frame_set(1)
    bpy.ops.ptcache.bake_all(bake=True)
    bpy.data.objects.remove(ball)
    return sc


@pytest.mark.parametrize("case", ["weak_gravity", "drops_pulled", "cloth"])
def test_a_bake_read_before_it_is_freed_is_still_simulated_again(tmp_path, case: str) -> None:
    """`cf_worker.rebake` after the same process sampled the bake: frames it read stay in memory after
    `free_bake_all` and were kept by `bake_all` (a rigid body world "re-baked" in 0.5 ms, identical to the bake of
    an edited scene). Each scene here was edited after its bake, so a real re-simulation departs from it."""
    import bpy
    import numpy as np
    from physcodegym.probes.rebake.cf_worker import rebake
    from physcodegym.probes.scene.sampling import sample_scene

    sc = _cloth_on_deleted_ball() if case == "cloth" else BUILDERS[case](True)
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    D.clear_user_handlers()
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    sc = bpy.context.scene
    before = sample_scene(sc)
    rebake(sc, sc.frame_end)
    after = sample_scene(sc)
    if case == "cloth":
        (key,) = before.verts
        moved = float(np.abs(before.verts[key] - after.verts[key]).max())
    elif case == "drops_pulled":
        (key,) = before.particles
        moved = float(np.nanmax(np.abs(np.nanmedian(before.particles[key], axis=1)
                                       - np.nanmedian(after.particles[key], axis=1))))
    else:
        i = before.index("Ball")
        moved = float(np.abs(before.matrices[i][:, :3, 3] - after.matrices[i][:, :3, 3]).max())
    assert moved > 0.05, (case, moved)


def _audit_live(sc: Any) -> AuditReport:
    """Audit the live scene, then drop the handlers it registered (the next builder starts clean)."""
    from physcodegym.probes.audit.audit import audit_scene

    try:
        return audit_scene(sc)
    finally:
        D.clear_user_handlers()


def sinking_sheet(defect: bool, frames: int = 90, disk: Any = None) -> Any:
    """A sheet under 1 % of gravity sinks from z = 1 m, never faster than 3 mm a frame (measured), so the
    re-simulation restarts from the bake's own state (`resimulation.resim_plan`; the weak gravity is another
    check's finding). Defect: the gravity is set back to Earth's after the bake, which is kept (the sheet on
    screen sinks as it never would in the saved scene). `disk`: a folder; the file is saved there first and baked
    to a disk cache."""
    import bpy

    sc = D.reset(frames)
    D.camera(sc)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=10, y_subdivisions=10, size=1.0, location=(0, 0, 1.0))
    sheet = bpy.context.active_object
    sheet.name = "Sheet"
    cm = sheet.modifiers.new("Cloth", "CLOTH")
    cm.settings.effector_weights.gravity = 0.01  # a lighter sheet flutters 2 cm a frame: a fast phase throughout
    cm.point_cache.frame_end = frames
    if disk is not None:
        bpy.ops.wm.save_as_mainfile(filepath=str(disk / "scene.blend"))  # a disk cache needs a saved file
        cm.point_cache.use_disk_cache = True
    D.bake()
    if defect:
        cm.settings.effector_weights.gravity = 1.0
    if disk is not None:
        bpy.ops.wm.save_as_mainfile(filepath=str(disk / "scene.blend"))
    return sc


@pytest.mark.parametrize("early", [False, True])
def test_a_cloth_restarted_from_its_bake_finds_an_edit_after_the_bake_and_clears_its_twin(tmp_path,
                                                                                         early: bool) -> None:
    """An all-cloth scene is simulated again in runs restarted from the bake's own state (a fraction of the
    frames), by the audit's worker and by one started before sampling. The restarted runs reproduce the honest
    bake exactly; where gravity was changed after the bake, every run falls away from it."""
    for defect in (False, True):
        sc = sinking_sheet(defect)
        rep = _audit_started_early(tmp_path, particles=False)[1] if early else _audit_live(sc)
        doc = rep.meta["resimulation"]
        assert doc["ran"] is True and doc["mode"] == "restarted_runs", doc
        assert len(doc["runs"]) >= 2 and doc["runs"][0][0] == 1, doc["runs"]
        assert len(doc["frame_numbers"]) < int(doc["runs"][-1][1]), doc["runs"]  # not every frame again
        hits = _resim_findings(rep)
        if defect:
            assert hits and hits[0].objects == ["Sheet"], [(f.kind, f.objects, f.message) for f in rep.findings]
            assert "restarted from the bake's own state" in hits[0].message
        else:
            assert not hits, [f.message for f in hits]
            assert doc["objects"]["Sheet"]["max_m"] == 0.0, doc["objects"]


def test_a_restarted_cloth_on_a_disk_cache_leaves_its_files(tmp_path) -> None:
    """A disk cache restarts from the branch's private copy: the submission's files stay, the bake is matched."""
    from physcodegym.probes.audit.audit import audit_path

    sinking_sheet(False, disk=tmp_path)
    cache_dir = tmp_path / "blendcache_scene"
    before = sorted(p.name for p in cache_dir.iterdir())
    assert len(before) >= 90
    rep = audit_path(tmp_path / "scene.blend")
    assert sorted(p.name for p in cache_dir.iterdir()) == before
    doc = rep.meta["resimulation"]
    assert doc["ran"] is True and doc["mode"] == "restarted_runs", doc
    assert doc["objects"]["Sheet"]["max_m"] == 0.0, doc["objects"]
    assert not _resim_findings(rep), [f.message for f in rep.findings]


def test_the_restart_plan_covers_the_fast_phase_then_runs_at_a_secret_phase() -> None:
    """`resim_plan` on the shipped cloth_drape truth: one run from the first frame through the fall, then short
    runs every `SEGMENT_EVERY` frames up to the end, at a phase a program cannot know (the operating system's
    random source; seeded generators here); a rigid scene gets one run from the first frame."""
    import random
    from pathlib import Path

    from physcodegym.probes.branches.resimulation import SEGMENT_EVERY, SEGMENT_FRAMES, resim_end, resim_plan
    from physcodegym.samples import SceneSamples

    tasks = Path(__file__).resolve().parents[2] / "tasks" / "packs"
    cloth = SceneSamples.load_npz(tasks / "cloth_drape" / "truth_trajectories.npz")
    assert resim_end(cloth) == 240
    phases = set()
    for seed in range(8):
        plan = resim_plan(cloth, random.Random(seed))
        assert plan[0][0] == 1 and plan[0][1] >= 30, plan
        assert 240 - plan[-1][1] < SEGMENT_EVERY - SEGMENT_FRAMES, plan
        assert all(b - a == SEGMENT_FRAMES for a, b in plan[1:]), plan
        assert all(c - a == SEGMENT_EVERY for (a, _), (c, _) in zip(plan[1:], plan[2:], strict=False)), plan
        assert sum(b - a + 1 for a, b in plan) < 0.45 * 240, plan
        phases.add(plan[-1][1])
    assert len(phases) > 1, phases
    assert len({tuple(resim_plan(cloth)) for _ in range(6)}) > 1  # unseeded: from the OS

    rigid = SceneSamples.load_npz(tasks / "ball_bounce" / "truth_trajectories.npz")
    assert resim_plan(rigid) == [(1, resim_end(rigid))]


def pouring_drops(defect: bool, frames: int = 90) -> Any:
    """Drops emitted all along fall 1.5 m onto a floor (a pour, never at rest), so the re-simulation restarts from
    the bake's own particle cache (`resimulation.resim_plan`). Defect: baked at half gravity, gravity then set back
    to Earth's (the bake is kept)."""
    sc = D.reset(frames)
    D.camera(sc)
    floor = D.box("Floor", (0, 0, -0.05), (6, 6, 0.1))
    floor.modifiers.new("Collision", "COLLISION")
    em = D._emitter("Spout", (0, 0, 1.5), 300, frames)
    em.particle_systems[0].settings.frame_end = frames
    g = tuple(sc.gravity)
    if defect:
        sc.gravity = (0.0, 0.0, 0.5 * g[2])
    D.bake()
    sc.gravity = g
    return sc


def test_a_pour_restarted_from_its_particle_cache_finds_a_stale_bake_and_clears_its_twin() -> None:
    """A particle system is simulated again in runs restarted from its own cache (switched to a private disk cache,
    its files after the run's first frame deleted): the honest pour re-simulates exactly on those frames; one
    baked at half gravity departs in every run."""
    for defect in (False, True):
        rep = _audit_live(pouring_drops(defect))
        doc = rep.meta["resimulation"]
        assert doc["ran"] is True and doc["mode"] == "restarted_runs", doc
        assert len(doc["frame_numbers"]) < 90, doc["runs"]
        hits = _resim_findings(rep)
        if defect:
            assert hits and hits[0].objects == ["Spout"], [(f.kind, f.objects, f.message) for f in rep.findings]
        else:
            assert not hits, [f.message for f in hits]
            rec = doc["particles"]["Spout/Drops"]
            assert rec["bulk_max_m"] == 0.0 and rec["count_max_rel"] == 0.0, rec



def test_an_early_re_simulation_re_bakes_a_fresh_load_bit_for_bit(tmp_path) -> None:
    """The early worker reads the bake to find where the motion ends, then re-bakes. On the same load, reading even
    one baked frame left state in the rigid-body solver, and ball_dominoes_s3's truth (its ball rolls into the
    fallen dominoes) drifted from its own bake from frame 27, 6.1 cm by frame 240: a false "edited after the bake"
    through `audit --task`. On a fresh load the re-bake is the bake exactly."""
    from physcodegym.probes.audit.audit import EarlyResimulation, audit_path_full
    from physcodegym.sandbox.runner import run_program

    out = tmp_path / "run"
    run_program(Path(__file__).resolve().parents[2] / "tasks" / "library" / "ball_dominoes_s3" / "truth.py", out,
                mode="bake_only")
    early = EarlyResimulation(out / "scene.blend", may_hold_particles=False)
    try:
        rep, _, _ = audit_path_full(out / "scene.blend", early_resim=early)
    finally:
        early.close()
    doc = rep.meta["resimulation"]
    assert early.adopted and doc["ran"] is True, doc
    assert doc["objects"] and all(o["max_m"] == 0.0 for o in doc["objects"].values()), doc["objects"]
    assert not rep.by_kind("scripted_motion"), [f.message for f in rep.findings]
