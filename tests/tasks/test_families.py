"""Task families and the generated library: seed 0 is the shipped pack, PARAMS substitution round-trips, every
generated member validates and matches the manifest, variants differ in physics and look, and one member of the
cheapest family is generated from scratch and verified (the end-to-end check of `tasks generate`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from physcodegym.authoring import families as F
from physcodegym.core.errors import InputError
from physcodegym.tasks import manifest
from physcodegym.tasks.loader import LIBRARY_DIR, PACKS_DIR, load_task
from physcodegym.tasks.schema import SUBCATEGORIES, Category

FAMILIES = F.family_ids()
MEMBERS = sorted(p.parent.name for p in LIBRARY_DIR.glob("*/family.json")) if LIBRARY_DIR.is_dir() else []
# parameters that change how a scene looks (everything else changes its physics or geometry)
LOOK_KEYS = {"world_rgb", "studio_light", "cavity", "table_rgb", "lens"}
LOOK_SUFFIXES = ("_rgb", "_colour", "_color", "_colours", "_rough", "_metal", "colours")


def _is_look(key: str) -> bool:
    return key in LOOK_KEYS or key.endswith(LOOK_SUFFIXES) or key.startswith("camera")


def _source_params(fam: str, name: str) -> dict:
    path = PACKS_DIR / fam / name
    return F.read_params(path.read_text(encoding="utf-8"), file=str(path))


def test_every_shipped_pack_is_a_family():
    shipped = sorted(p.parent.name for p in PACKS_DIR.glob("*/task.json"))
    assert FAMILIES == shipped, sorted(set(shipped) - set(FAMILIES))


@pytest.mark.parametrize("fam", FAMILIES)
def test_seed_zero_is_the_shipped_pack(fam):
    """params(0) is exactly the PARAMS literal of the shipped truth.py and annotation.py (minus the task id)."""
    p0 = F.member_params(fam, 0)
    assert p0 == _source_params(fam, "truth.py")
    ann = _source_params(fam, "annotation.py")
    assert ann.pop("task_id") == fam
    assert p0 == ann


@pytest.mark.parametrize("fam", FAMILIES)
def test_params_substitution_round_trips(fam):
    """Replacing the PARAMS literal changes only that span; substituting seed 0 back gives the shipped values."""
    src = (PACKS_DIR / fam / "truth.py").read_text(encoding="utf-8")
    p1 = F.member_params(fam, 1)
    s1 = F.substitute_params(src, p1)
    assert F.read_params(s1) == p1
    back = F.substitute_params(s1, F.member_params(fam, 0))
    assert F.read_params(back) == F.read_params(src)
    head = src[: src.index("PARAMS = ")]
    assert s1.startswith(head) and back.startswith(head)
    tail = src[src.index("\n\n", src.index("PARAMS = ")):]
    assert s1.endswith(tail) and back.endswith(tail)
    compile(s1, f"{fam}_s1/truth.py", "exec")


@pytest.mark.parametrize("fam", FAMILIES)
def test_variants_differ_in_physics_and_look(fam):
    p0 = F.member_params(fam, 0)
    for seed in range(1, 5):
        p = F.member_params(fam, seed)
        assert p == F.member_params(fam, seed), "params(seed) must be deterministic"
        assert set(p) == set(p0), (seed, set(p) ^ set(p0))
        changed = {k for k in p if p[k] != p0[k]}
        assert {k for k in changed if _is_look(k)}, (fam, seed, "no look parameter differs from seed 0")
        assert {k for k in changed if not _is_look(k)}, (fam, seed, "no physics parameter differs from seed 0")


def test_substitution_needs_exactly_one_top_level_params():
    with pytest.raises(InputError):
        F.substitute_params("x = 1\n", {"a": 1})
    with pytest.raises(InputError):
        F.read_params("PARAMS = {'a': 1}\nPARAMS = {'a': 2}\n")
    with pytest.raises(InputError):
        F.read_params("PARAMS = dict(a=1)\n")


def test_parse_seeds():
    assert F.parse_seeds("1..4") == [1, 2, 3, 4]
    assert F.parse_seeds("7") == [7]
    assert F.parse_seeds("1,5,7..8") == [1, 5, 7, 8]
    for bad in ("4..1", "a..b", "", "-1"):
        with pytest.raises(InputError):
            F.parse_seeds(bad)


def test_library_counts_per_subcategory():
    """Shipped packs + generated members: at least 60 tasks, at least 5 per subcategory (or per category without)."""
    tasks = [load_task(f).task for f in manifest.pack_folders()]
    assert len(tasks) >= 60, len(tasks)
    for cat in Category:
        subs = SUBCATEGORIES.get(cat) or []
        if subs:
            for sub in subs:
                n = sum(1 for t in tasks if t.category == cat and t.subcategory == sub)
                assert n >= 5, (cat.value, sub.value, n)
        else:
            assert sum(1 for t in tasks if t.category == cat) >= 5, cat.value


@pytest.mark.parametrize("member", MEMBERS)
def test_generated_member_validates(member):
    """A generated pack: valid task.json with media, its sources are the family's current params for its seed."""
    folder = LIBRARY_DIR / member
    fam = json.loads((folder / "family.json").read_text())
    assert member == F.member_id(fam["family"], fam["seed"])
    lt = load_task(folder, check_media=True)
    assert lt.id == member
    params = F.member_params(fam["family"], fam["seed"])
    assert fam["params"] == params, "family.py changed since this member was generated: regenerate it"
    # a member is its pack plus its parameters, byte for byte: its programs are generated, never edited by hand
    # (an edit to the pack that is not regenerated into its members fails here)
    for name, extra in (("truth.py", {}), ("annotation.py", {"task_id": member})):
        pack_src = (PACKS_DIR / fam["family"] / name).read_text(encoding="utf-8")
        assert (folder / name).read_text(encoding="utf-8") == F.substitute_params(pack_src, {**params, **extra}), (
            f"{member}/{name} is not {fam['family']}/{name} with its PARAMS: regenerate it (tasks generate --force)"
        )
    assert lt.truth_counterfactuals is not None and lt.truth_counterfactuals.is_file()
    cf = json.loads(lt.truth_counterfactuals.read_text())
    assert cf["criteria"] and all(c["passed"] for c in cf["criteria"].values()), cf["criteria"]
    build = json.loads((folder / "build.json").read_text())
    assert build["id"] == member and build["build_seconds"] > 0


def test_manifest_matches_the_packs():
    assert manifest.check() == []
    cur = manifest.current()
    assert cur["set"] == manifest.SET_NAME and cur["n_tasks"] == len(manifest.pack_folders())
    doc = manifest.load()
    assert doc is not None
    ids = [t["id"] for t in doc["tasks"]]
    assert len(ids) == len(set(ids))
    assert {t["id"] for t in doc["tasks"] if t["seed"] > 0} == set(MEMBERS)


def test_manifest_version_bumps_only_on_change(tmp_path, monkeypatch):
    """Regenerating an unchanged set keeps its version; changing one pack's bytes bumps the minor number."""
    tasks_dir = tmp_path / "tasks"
    for sub, name in (("packs", "ball_bounce"), ("packs", "marble_ramp")):
        dst = tasks_dir / sub / name
        dst.mkdir(parents=True)
        for f in ("task.json", "truth.py", "build.json"):
            shutil.copyfile(PACKS_DIR / name / f, dst / f)
    monkeypatch.setattr(manifest, "TASKS_DIR", tasks_dir.resolve())
    monkeypatch.setattr(manifest, "PACKS_DIR", tasks_dir / "packs")
    monkeypatch.setattr(manifest, "LIBRARY_DIR", tasks_dir / "library")
    monkeypatch.setattr(manifest, "MANIFEST", tasks_dir / "manifest.json")
    assert manifest.check() and "no manifest" in manifest.check()[0]
    assert manifest.write_manifest()["version"] == manifest.FIRST_VERSION
    first = manifest.current()
    assert manifest.write_manifest()["version"] == manifest.FIRST_VERSION
    assert manifest.current()["sha256"] == first["sha256"] and manifest.check() == []
    with open(tasks_dir / "packs" / "marble_ramp" / "truth.py", "a") as fh:
        fh.write("\n# edited\n")
    (tasks_dir / "packs" / "marble_ramp" / "__pycache__").mkdir()
    (tasks_dir / "packs" / "marble_ramp" / "__pycache__" / "x.pyc").write_bytes(b"cache")
    problems = manifest.check()
    assert len(problems) == 1 and problems[0].startswith("marble_ramp:"), problems
    assert manifest.write_manifest()["version"] == "1.1.0"
    (tasks_dir / "packs" / "marble_ramp" / "__pycache__" / "x.pyc").write_bytes(b"other cache")
    assert manifest.check() == []  # caches are not content
    shutil.rmtree(tasks_dir / "packs" / "ball_bounce")
    assert any("ball_bounce" in p for p in manifest.check())


def test_tasks_list_names_family_seed_and_set(capsys):
    from physcodegym.headless.cli import main

    assert main(["tasks", "list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["set"]["name"] == manifest.SET_NAME and doc["set"]["version"] == manifest.current()["version"]
    rows = {r["id"]: r for r in doc["tasks"]}
    for fam in FAMILIES:
        assert rows[fam]["family"] == fam and rows[fam]["seed"] == 0
    for m in MEMBERS:
        assert rows[m]["seed"] > 0 and m.startswith(rows[m]["family"] + "_s")


@pytest.mark.slow
def test_generate_one_member_from_scratch_and_verify(tmp_path: Path):
    """`tasks generate marble_ramp --seeds 9 --out TMP` end to end (real build, counterfactuals), then `tasks verify`."""
    from physcodegym.authoring.verify import verify_task
    from physcodegym.headless.cli import main

    if "marble_ramp" not in FAMILIES:
        pytest.fail("marble_ramp is not a family")
    assert main(["tasks", "generate", "marble_ramp", "--seeds", "9", "--out", str(tmp_path), "--json"]) == 0
    folder = tmp_path / "marble_ramp_s9"
    lt = load_task(folder, check_media=True)
    assert lt.id == "marble_ramp_s9"
    fam = json.loads((folder / "family.json").read_text())
    assert fam == {"family": "marble_ramp", "seed": 9, "params": F.member_params("marble_ramp", 9)}
    build = json.loads((folder / "build.json").read_text())
    assert build["reference_ssim"]["ssim_mean"] > 0.98 and build["generate_seconds"] >= build["build_seconds"] > 0
    assert set(build["events"]) == {e.id for e in lt.task.events}
    cf = json.loads((folder / "truth_counterfactuals.json").read_text())
    assert all(c["passed"] and c["took_effect"] for c in cf["criteria"].values())
    v = verify_task(str(folder))
    assert v["ok"], v["problems"]
    assert v["rerun_digest"] == build["trajectories_sha256"]
    doc = manifest.load() or {"tasks": []}
    assert "marble_ramp_s9" not in {t["id"] for t in doc["tasks"]}  # an output outside tasks/library stays out of the manifest
