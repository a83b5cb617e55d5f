"""Shipped tasks: every pack validates with its media, its measured parts re-derive from its truth
trajectories, and (for the CI packs, testing/ci_tasks.py) the trajectories match a fresh re-run of truth.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from physcodegym.authoring.build import PACKS_DIR, load_annotation, shipped_ids, trajectories_digest
from physcodegym.samples import SceneSamples
from physcodegym.sandbox.policy import check_file
from physcodegym.tasks.loader import load_task
from physcodegym.tasks.schema import FRAMES, SUBCATEGORIES, Category
from physcodegym.testing.ci_tasks import CI_TASKS, ci_tasks

BUILT = [t for t in shipped_ids() if (PACKS_DIR / t / "task.json").is_file()]
# the packs whose truth CI bakes again (a fixed list: the suite does not grow with every new pack); the cheap
# structural tests above and below cover every pack in BUILT
CI_BUILT = ci_tasks(BUILT)


def test_at_least_twelve_tasks_cover_every_subcategory():
    assert len(BUILT) >= 12, BUILT
    tasks = [load_task(t).task for t in BUILT]
    cats = {t.category for t in tasks}
    assert cats == set(Category)
    subs = {t.subcategory for t in tasks if t.subcategory}
    for cat, allowed in SUBCATEGORIES.items():
        assert set(allowed) <= subs, (cat, set(allowed) - subs)


@pytest.mark.parametrize("task_id", BUILT)
def test_pack_validates_with_media(task_id):
    lt = load_task(task_id, check_media=True)
    t = lt.task
    assert lt.truth_program.is_file() and lt.truth_trajectories.is_file()
    assert t.truth.program_sha256 == __import__("hashlib").sha256(lt.truth_program.read_bytes()).hexdigest()
    assert any(c.counterfactual for c in t.rubric.criteria)
    for c in t.rubric.criteria:
        if c.check in ("moves_by_simulation", "no_scripted_motion", "supported_by", "no_interpenetration"):
            assert c.structural, c.id
    for r in t.roles:
        if r.required and r.core:
            assert r.screen_xy is not None and 0.0 <= r.screen_xy[0] <= 1.0 and 0.0 <= r.screen_xy[1] <= 1.0, (r.name, r.screen_xy)
            assert r.color_rgb is not None


@pytest.mark.parametrize("task_id", BUILT)
def test_truth_program_passes_the_policy(task_id):
    rep = check_file(PACKS_DIR / task_id / "truth.py")
    assert rep.ok, [v.to_dict() for v in rep.violations]


@pytest.mark.parametrize("task_id", BUILT)
def test_events_rederive_from_truth_trajectories(task_id):
    """The intervals in task.json are exactly what the annotation's detectors measure on the stored npz."""
    lt = load_task(task_id)
    s = SceneSamples.load_npz(lt.truth_trajectories)
    assert s.matrices.shape[1] == FRAMES
    measured = load_annotation(lt.folder).measure_events(s)
    for ev in lt.task.events:
        m = measured[ev.id]
        assert (ev.interval.start_s, ev.interval.end_s) == (m["start_s"], m["end_s"]), ev.id
        assert ev.evidence == m["evidence"]
    # ordered events do not start before the events they follow
    by_id = {e.id: e for e in lt.task.events}
    for ev in lt.task.events:
        for a in ev.after:
            assert by_id[a].interval.start_s <= ev.interval.start_s + 1e-9, (a, ev.id)


def test_ci_packs_are_shipped_and_cover_every_subcategory():
    """Every CI pack is shipped, and the CI packs alone still cover every category and subcategory, so the bakes
    CI runs reach every kind of scene whatever packs are added outside the list."""
    assert CI_BUILT == list(CI_TASKS), sorted(set(CI_TASKS) - set(BUILT))
    tasks = [load_task(t).task for t in CI_BUILT]
    assert {t.category for t in tasks} == set(Category)
    subs = {t.subcategory for t in tasks if t.subcategory}
    for cat, allowed in SUBCATEGORIES.items():
        assert set(allowed) <= subs, (cat, set(allowed) - subs)


@pytest.mark.parametrize("task_id", CI_BUILT)
def test_truth_trajectories_match_a_rerun(task_id, verified):
    doc = verified(task_id)
    assert doc["ok"], doc["problems"]
    assert doc["max_matrix_diff"] <= 1e-4 and doc["max_vertex_diff"] <= 1e-4
    for key, p in doc.get("particles", {}).items():
        assert p["alive_equal"] and p["identical_frames"] >= 10, (key, p)
    # determinism: the rounded trajectories hash the same for the stored and the re-run sampling
    assert doc["rerun_digest"] == doc["stored_digest"]
    build = json.loads((PACKS_DIR / task_id / "build.json").read_text())
    assert build["trajectories_sha256"] == doc["stored_digest"]


def test_deforming_and_particle_tasks_carry_their_data():
    for task_id in BUILT:  # reads the stored npz only: every pack
        lt = load_task(task_id)
        s = SceneSamples.load_npz(lt.truth_trajectories)
        cat = lt.task.category.value
        # a deformable task, or a wind task whose wind moves a cloth, carries vertex tracks; a wind task that blows
        # rigid bodies (leaf_blow) carries their matrix tracks, and something in them must move
        if cat == "deformable" or (cat == "wind" and s.verts):
            assert s.verts, task_id
            v = next(iter(s.verts.values()))
            assert v.shape[0] == FRAMES and np.isfinite(v).all()
        elif cat == "wind":
            travel = np.linalg.norm(s.matrices[:, -1, :3, 3] - s.matrices[:, 0, :3, 3], axis=-1)
            assert s.matrices.shape[1] == FRAMES and travel.max() > 0.05, (task_id, travel.max())
        if lt.task.category.value == "liquid":
            key = next(iter(s.particles))
            alive = s.particles_alive[key]
            assert alive[-1].sum() > 500, (task_id, int(alive[-1].sum()))


def test_digest_detects_a_changed_trajectory(tmp_path):
    lt = load_task(BUILT[0])
    s = SceneSamples.load_npz(lt.truth_trajectories)
    a = tmp_path / "a.npz"
    s.save_npz(a)
    s.matrices[0, 100, 2, 3] += 0.01
    b = tmp_path / "b.npz"
    s.save_npz(b)
    assert trajectories_digest(a) == trajectories_digest(lt.truth_trajectories)
    assert trajectories_digest(a) != trajectories_digest(b)


def test_particle_flow_comparison_tells_a_shifted_flow_from_the_same_flow():
    """verify.compare_samples accepts the stored liquid against itself and refuses a twin shifted by 0.5 m."""
    from physcodegym.authoring.verify import compare_samples

    liquid = [t for t in BUILT if load_task(t).task.category.value == "liquid"][0]
    s = SceneSamples.load_npz(load_task(liquid).truth_trajectories)
    same = compare_samples(s, SceneSamples.load_npz(load_task(liquid).truth_trajectories))
    assert same["ok"], same["problems"]
    key = next(iter(s.particles))
    assert same["particles"][key]["identical_frames"] == FRAMES
    shifted = SceneSamples.load_npz(load_task(liquid).truth_trajectories)
    shifted.particles[key][120:, :, 0] += 0.5
    bad = compare_samples(s, shifted)
    assert not bad["ok"] and any("centroid" in p for p in bad["problems"])
    assert bad["particles"][key]["identical_frames"] == 120
