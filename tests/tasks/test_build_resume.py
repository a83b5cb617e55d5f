"""`physcodegym tasks build` resumes a killed build, and every task says where its reference came from.

Built with real Blender on tests/tasks/tiny_task (a ball dropped on a slab, 48 Cycles frames at 96x54, a
fraction of a second a frame): one uninterrupted build, and one build killed with SIGKILL to its whole process
group part-way through its render and then run again. The module shares those two builds (about 40 s of work).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from physcodegym.core.errors import InputError
from physcodegym.core.hashing import sha256_file

TINY = Path(__file__).resolve().parent / "tiny_task"
FRAMES = 48
KILL_AT = 12  # frames on disk when the build is killed (of FRAMES)


def _cli(*args: str, cache: Path | None = None, **kw: Any) -> subprocess.CompletedProcess:
    env = dict(os.environ, **({"PHYSCODEGYM_BUILD_CACHE": str(cache)} if cache else {}))
    return subprocess.run([sys.executable, "-m", "physcodegym", *args], capture_output=True, text=True,
                          timeout=900, env=env, **kw)


def _scratch(cache: Path) -> Path:
    found = sorted(p for p in cache.glob("tiny_task-*") if p.is_dir())
    assert len(found) == 1, found
    return found[0]


def _pngs(frames: Path) -> list[Path]:
    return sorted(frames.glob("[0-9][0-9][0-9][0-9].png"))


def _kill_mid_render(folder: Path, cache: Path) -> dict[str, Any]:
    """Start a build in its own process group and SIGKILL the group once KILL_AT frames are on disk."""
    env = dict(os.environ, PHYSCODEGYM_BUILD_CACHE=str(cache))
    proc = subprocess.Popen([sys.executable, "-m", "physcodegym", "tasks", "build", str(folder)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        while proc.poll() is None:
            frames = [d / "frames" for d in cache.glob("tiny_task-*") if d.is_dir()]
            if frames and len(_pngs(frames[0])) >= KILL_AT:
                os.killpg(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.02)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert rc == -signal.SIGKILL, f"the build ended before it was killed (rc {rc}): {proc.stderr.read()[-2000:]}"
    time.sleep(1.0)  # let the render child's parent-death signal land before counting what is on disk
    frames = _scratch(cache) / "frames"
    return {"frames": {p.name: p.stat().st_mtime_ns for p in _pngs(frames)}}


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One uninterrupted build (A) and one killed then resumed (B), each with its own scratch cache."""
    root = tmp_path_factory.mktemp("build_resume")
    out: dict[str, Any] = {"root": root}
    for name in ("a", "b"):
        shutil.copytree(TINY, root / name / "tiny_task", ignore=shutil.ignore_patterns("__pycache__"))
        out[name] = root / name / "tiny_task"
        out[f"cache_{name}"] = root / f"cache_{name}"
    r = _cli("tasks", "build", str(out["a"]), "--keep-scratch", "--json", cache=out["cache_a"])
    assert r.returncode == 0, r.stderr[-3000:]
    out["record_a"] = json.loads(r.stdout)["built"][0]
    out["next_a"] = json.loads(r.stdout)["next"]
    killed = _kill_mid_render(out["b"], out["cache_b"])
    out["killed"] = killed
    out["after_kill_files"] = sorted(p.name for p in out["b"].iterdir())
    out["decodable_after_kill"] = _all_decode(_scratch(out["cache_b"]) / "frames")
    # a half-written frame of the killed session (as a render child leaves it): never taken for a frame
    (_scratch(out["cache_b"]) / "frames" / ".0047.part.png").write_bytes(b"\x89PNG\r\n\x1a\n half a frame")
    r = _cli("tasks", "build", str(out["b"]), "--keep-scratch", "--json", cache=out["cache_b"])
    assert r.returncode == 0, r.stderr[-3000:]
    out["record_b"] = json.loads(r.stdout)["built"][0]
    out["resume_stderr"] = r.stderr
    return out


def _all_decode(frames: Path) -> bool:
    import cv2

    return all(cv2.imread(str(p)) is not None for p in _pngs(frames))


def test_killed_build_leaves_no_output_and_only_whole_frames(builds: dict[str, Any]) -> None:
    """SIGKILL mid-render: the task folder holds only its sources; every frame on disk is a whole image."""
    assert builds["after_kill_files"] == ["annotation.py", "truth.py"]
    n = len(builds["killed"]["frames"])
    assert KILL_AT <= n < FRAMES, n
    assert builds["decodable_after_kill"]


def test_resumed_build_renders_only_the_missing_frames(builds: dict[str, Any]) -> None:
    """The second session reuses the bake and every frame the killed one wrote (same files, untouched) and
    renders the rest; the half-written frame it found is gone."""
    kept = builds["killed"]["frames"]
    rec = builds["record_b"]
    assert rec["bake_reused"] is True
    assert rec["render"]["frames_reused"] == len(kept)
    assert rec["render"]["frames_rendered"] == FRAMES - len(kept)
    assert "reused" in builds["resume_stderr"]
    frames = _scratch(builds["cache_b"]) / "frames"
    assert {p.name: p.stat().st_mtime_ns for p in _pngs(frames) if p.name in kept} == kept
    assert len(_pngs(frames)) == FRAMES and not list(frames.glob("*.part.png"))
    log = [json.loads(ln) for ln in (_scratch(builds["cache_b"]) / "render_log.jsonl").read_text().splitlines()]
    # every frame's seconds are logged; only the frame being renamed at the kill can have been rendered twice
    assert {r["frame"] for r in log} == set(range(1, FRAMES + 1)) and len(log) <= FRAMES + 1
    a = builds["record_a"]
    assert a["bake_reused"] is False and a["render"]["frames_reused"] == 0 and a["render"]["frames_rendered"] == FRAMES


def test_resumed_build_equals_uninterrupted_build(builds: dict[str, Any]) -> None:
    """Pixels of every frame, the trajectories, task.json and the decoded reference equal the uninterrupted
    build's (Cycles with a fixed seed renders a frame the same in any session)."""
    import cv2
    from physcodegym.authoring.media import decode_video

    fa, fb = (_pngs(_scratch(builds[c]) / "frames") for c in ("cache_a", "cache_b"))
    assert [p.name for p in fa] == [p.name for p in fb]
    diff = [int(np.abs(cv2.imread(str(x)).astype(int) - cv2.imread(str(y)).astype(int)).max()) for x, y in zip(fa, fb, strict=True)]
    assert max(diff) == 0, diff
    a, b = builds["a"], builds["b"]
    assert builds["record_a"]["trajectories_sha256"] == builds["record_b"]["trajectories_sha256"]
    assert json.loads((a / "task.json").read_text()) == json.loads((b / "task.json").read_text())
    assert np.array_equal(decode_video(a / "reference.mp4"), decode_video(b / "reference.mp4"))


def test_generated_provenance_recorded_and_exposed(builds: dict[str, Any]) -> None:
    """build.json validates (tasks.schema.BuildRecord) and names the program, engine, samples, Blender and
    seconds; `tasks show` and `tasks list` give the same provenance, list also template, family and summary."""
    from importlib import metadata

    from physcodegym.tasks.loader import read_build_record

    a = builds["a"]
    rec = read_build_record(a)
    assert rec is not None and rec.provenance is not None
    p = rec.provenance
    assert p.kind == "generated" and p.program_sha256 == sha256_file(a / "truth.py")
    assert (p.engine, p.samples, p.blender) == ("CYCLES", 8, metadata.version("bpy"))
    raw = builds["record_a"]
    assert p.build_seconds == pytest.approx(raw["bake_seconds"] + raw["render_seconds"] + raw["post_seconds"],
                                            abs=0.02)
    assert p.build_seconds > 0
    b = builds["record_b"]  # seconds add up over both sessions: every frame's render counted once
    assert b["render"]["frames_rendered"] + b["render"]["frames_reused"] == FRAMES and b["render_seconds"] > 0
    r = _cli("tasks", "show", str(a), "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["provenance"] == p.model_dump()
    r = _cli("tasks", "list", "--root", str(a.parent), "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    row = doc["tasks"][0]
    assert row["provenance"] == p.model_dump() and row["template"] == "tiny_task" and row["family"] is None
    s = doc["summary"]
    assert s["tasks"] == 1 and s["target_tasks"] == 156 and s["target_event_items"] == 578
    assert s["groups"]["falling-bouncing"] == {"tasks": 1, "target": 16, "short": 15, "templates": 1,
                                               "event_items": 1}
    assert s["provenance"]["generated"] == 1 and s["meets_target"] is False


def test_build_skips_up_to_date_and_tracks_inputs(builds: dict[str, Any], tmp_path: Path) -> None:
    """A second `tasks build` of a built task does no work; an edited annotation.py or truth.py makes it stale;
    a build.json from before the inputs were recorded is current while it names the current truth.py."""
    from physcodegym.authoring.build import up_to_date

    r = _cli("tasks", "build", str(builds["a"]), "--json", cache=tmp_path / "cache")
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["built"] == [] and doc["up_to_date"] == ["tiny_task"]
    assert not (tmp_path / "cache").exists()  # nothing baked or rendered
    t = tmp_path / "tiny_task"
    shutil.copytree(builds["a"], t)
    assert up_to_date(t)
    (t / "annotation.py").write_text((t / "annotation.py").read_text() + "\n# edited\n")
    assert not up_to_date(t)
    rec = json.loads((t / "build.json").read_text())
    del rec["inputs_sha256"]
    (t / "build.json").write_text(json.dumps(rec))
    assert up_to_date(t)  # legacy record: judged by truth.py alone
    (t / "truth.py").write_text((t / "truth.py").read_text() + "\n# edited\n")
    assert not up_to_date(t)


@pytest.mark.parametrize("edit, field", [
    (lambda rec: rec["provenance"].update(samples=0), "provenance.samples"),
    (lambda rec: rec["provenance"].update(program_sha256="f" * 64), "provenance"),
    (lambda rec: rec.pop("build_seconds"), "build_seconds"),
    (lambda rec: rec["render"].update(engine=""), "render.engine"),
])
def test_malformed_build_json_names_file_and_field(builds: dict[str, Any], tmp_path: Path, edit: Any,
                                                   field: str) -> None:
    t = tmp_path / "tiny_task"
    shutil.copytree(builds["a"], t)
    rec = json.loads((t / "build.json").read_text())
    edit(rec)
    (t / "build.json").write_text(json.dumps(rec))
    r = _cli("tasks", "show", str(t), "--json")
    assert r.returncode == 2, r.stdout[-1000:] + r.stderr[-1000:]
    out = r.stdout + r.stderr
    assert str(t / "build.json") in out and field in out, out[-1500:]


def test_build_json_not_json_names_file(builds: dict[str, Any], tmp_path: Path) -> None:
    from physcodegym.tasks.loader import read_build_record

    t = tmp_path / "tiny_task"
    shutil.copytree(builds["a"], t)
    (t / "build.json").write_text('{"id": "tiny_task", "build_seconds": ')
    with pytest.raises(InputError) as e:
        read_build_record(t)
    assert e.value.file == str(t / "build.json") and "invalid JSON" in e.value.message


def test_shipped_pack_built_before_provenance_reports_what_is_missing() -> None:
    """A pack built before build.json recorded its render keeps its reference; its provenance says what is
    missing and why (no rebuild)."""
    from physcodegym.tasks.loader import load_task, provenance

    doc = provenance(load_task("ball_bounce"))
    assert doc["kind"] == "generated"
    assert doc["program_sha256"] == sha256_file(load_task("ball_bounce").folder / "truth.py")
    if "missing" in doc:  # until the pack is rebuilt
        assert set(doc["missing"]) == {k for k in ("engine", "samples", "blender") if doc[k] is None}
        assert all("before" in why for why in doc["missing"].values())


def _clip(path: Path) -> Path:
    import cv2

    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 30.0, (160, 90))
    for i in range(30):
        im = np.full((90, 160, 3), 100, np.uint8)
        cv2.circle(im, (20 + 4 * i, 45), 12, (255, 255, 255), -1)
        vw.write(im)
    vw.release()
    return path


def test_import_records_url_and_licence(tmp_path: Path) -> None:
    """`tasks import --url --licence`: the clip's provenance as the user states it, with the file's name and hash;
    without them the provenance says they were not given; a malformed URL is refused naming the field."""
    from physcodegym.tasks.loader import load_task, provenance

    clip = _clip(tmp_path / "drop clip.mp4")
    r = _cli("tasks", "import", str(clip), "--id", "real_drop", "--category", "rigid/falling-bouncing", "--out",
             str(tmp_path), "--encoder", "mp4v", "--url", "https://example.org/clips/drop.mp4", "--licence",
             "CC BY 4.0", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    doc = provenance(load_task(tmp_path / "real_drop", draft=True))
    assert doc == {"kind": "imported", "file": "drop clip.mp4", "sha256": sha256_file(clip),
                   "url": "https://example.org/clips/drop.mp4", "licence": "CC BY 4.0"}
    r = _cli("tasks", "import", str(clip), "--id", "bare", "--category", "wind", "--out", str(tmp_path),
             "--encoder", "mp4v", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    doc = provenance(load_task(tmp_path / "bare", draft=True))
    assert doc["url"] is None and doc["licence"] is None and set(doc["missing"]) == {"url", "licence"}
    r = _cli("tasks", "import", str(clip), "--id", "badurl", "--category", "wind", "--out", str(tmp_path),
             "--encoder", "mp4v", "--url", "not a url")
    assert r.returncode == 2 and "url" in r.stderr, r.stderr[-1000:]
    assert not (tmp_path / "badurl").exists()


def test_jobs_run_members_in_parallel_and_a_failure_loses_nothing() -> None:
    """`--jobs 2`: two jobs are under way at once (each waits for the other at a barrier, which breaks if they
    ran one after the other); a failing job is recorded and the others' records are kept."""
    from physcodegym.authoring.families import run_parallel

    barrier = threading.Barrier(2, timeout=60)

    def meet(name: str) -> Any:
        def job(say: Any) -> dict[str, Any]:
            barrier.wait()
            say(f"{name} met")
            return {"id": name}
        return job

    def broken(say: Any) -> dict[str, Any]:
        raise RuntimeError("render child died")

    done, failed = run_parallel([("x", meet("x")), ("y", meet("y")), ("z", broken)], 2, "building")
    assert [d["id"] for d in done] == ["x", "y"]
    assert failed == [{"id": "z", "error": "RuntimeError: render child died"}]


def test_generate_skips_members_built_from_current_sources(tmp_path: Path) -> None:
    """A library member whose files are what its family and seed give now, and whose build finished, is not
    built again by `tasks generate` (no Blender here); a changed source makes it due."""
    from physcodegym.authoring.families import generate_member, member_up_to_date
    from physcodegym.tasks.loader import LIBRARY_DIR

    src = sorted(p.parent for p in LIBRARY_DIR.glob("*/family.json"))[0]
    fam = json.loads((src / "family.json").read_text())
    dest = tmp_path / src.name
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    assert member_up_to_date(fam["family"], fam["seed"], dest)
    doc = generate_member(fam["family"], fam["seed"], out_root=tmp_path)
    assert doc["skipped"] == "up to date" and doc["folder"] == str(dest)
    (dest / "truth.py").write_text((dest / "truth.py").read_text() + "\n# edited\n")
    assert not member_up_to_date(fam["family"], fam["seed"], dest)


def test_annotations_only_remerge_leaves_the_task_current(builds: dict[str, Any], tmp_path: Path) -> None:
    """`--annotations-only` after an edited annotation.py: task.json takes the edit, the reference stays the same
    file, and the next `tasks build` has nothing to do."""
    from physcodegym.authoring.build import up_to_date

    t = tmp_path / "tiny_task"
    shutil.copytree(builds["a"], t)
    mp4 = (t / "reference.mp4").read_bytes()
    ann = t / "annotation.py"
    ann.write_text(ann.read_text().replace("Ball dropped on a slab (build test)", "A red ball dropped on a slab"))
    assert not up_to_date(t)
    r = _cli("tasks", "build", str(t), "--annotations-only", "--json", cache=tmp_path / "cache")
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((t / "task.json").read_text())["title"] == "A red ball dropped on a slab"
    assert (t / "reference.mp4").read_bytes() == mp4 and up_to_date(t)


def test_a_second_build_of_the_same_task_is_refused_while_one_runs(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Two builds of one task would share one scratch folder: the second stops at once, naming the task."""
    from physcodegym.authoring.build import exclusive

    t = tmp_path / "tiny_task"
    shutil.copytree(TINY, t, ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    monkeypatch.setenv("PHYSCODEGYM_BUILD_CACHE", str(cache))
    with exclusive(t.resolve()):
        r = _cli("tasks", "build", str(t), "--json", cache=cache)
    assert r.returncode == 1, r.stdout[-1000:] + r.stderr[-1000:]
    failed = json.loads(r.stdout)["failed"]
    assert len(failed) == 1 and "another build" in failed[0]["error"] and "tiny_task" in failed[0]["error"]
    assert not (t / "build.json").exists() and not list(cache.glob("tiny_task-*/bake"))


def test_build_names_the_counterfactual_step_only_where_the_rubric_needs_it(builds: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    """`tasks build` does not measure the rubric's counterfactuals (`physcodegym counterfactual --truth` does): it
    says so for a built task whose rubric has counterfactual criteria and whose truth_counterfactuals.json is
    missing or older than its sources, and for no other."""
    from physcodegym.headless.commands.tasks import _stale_counterfactuals

    assert builds["next_a"] == []  # tiny_task's rubric has no counterfactual criterion
    pack = tmp_path / "ball_bounce"
    shutil.copytree(Path(__file__).resolve().parents[2] / "tasks" / "packs" / "ball_bounce", pack)
    built = [{"id": "ball_bounce"}]
    cf, truth = pack / "truth_counterfactuals.json", pack / "truth.py"
    os.utime(truth, (1_000_000, 1_000_000))
    os.utime(pack / "annotation.py", (1_000_000, 1_000_000))
    os.utime(cf, (2_000_000, 2_000_000))
    assert _stale_counterfactuals([str(pack)], built) == []  # measured after the last edit
    os.utime(truth, (3_000_000, 3_000_000))
    assert _stale_counterfactuals([str(pack)], built) == [str(pack)]  # the truth changed since
    cf.unlink()
    assert _stale_counterfactuals([str(pack)], built) == [str(pack)]  # never measured
    assert _stale_counterfactuals([str(pack)], []) == []  # not built by this command
