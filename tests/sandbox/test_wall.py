"""The wall around trusted children that open a submitted scene (`sandbox.wall`, docs/THREAT_MODEL.md).

Each class of escape has an unsandboxed control that shows the effect (a plain bpy child, as the trusted
processes ran before the wall) and a walled or refused run that shows none:
- code stored in a scene: a Freestyle style module in Python-scripting mode runs on render whatever Auto Run says;
- paths stored in a scene: a point-cache name edited in the file's bytes writes the disk cache elsewhere;
- sizes: a sparse file is counted by what it is (apparent size), not by the blocks it occupies;
- secrets: a walled child sees no task pack, no HOME, no network, and cannot write the run folder.
The scenes are tiny (a few frames, 64x36 Workbench renders); the blends are built once per module.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap
from pathlib import Path

import pytest
from physcodegym.core.limits import run_limited
from physcodegym.sandbox import isolation, wall

ROOT = Path(__file__).resolve().parents[2]
TRUTH = ROOT / "tasks" / "packs" / "ball_bounce" / "truth.py"
CACHE_NAME = b"PCGCACHENAME"
ESCAPE_NAME = b"../../esc/xx"  # same length: edited in place in the saved file's bytes

pytestmark = pytest.mark.skipif(not isolation.check_available().available, reason="bubblewrap cannot run here")

BUILD = textwrap.dedent(
    """
    import bpy, sys
    fs_blend, pc_blend, marker = sys.argv[-3:]
    # 1. a Freestyle style module (Python-scripting mode): on render it writes `marker` and tries to read a truth
    bpy.ops.wm.read_factory_settings(use_empty=False)
    sc = bpy.context.scene
    sc.render.engine = "BLENDER_WORKBENCH"
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 64, 36, 100
    sc.render.use_freestyle = True
    fs = sc.view_layers[0].freestyle_settings
    fs.mode = "SCRIPT"
    t = bpy.data.texts.new("style.py")
    t.write(
        "import os\\n"
        f"try:\\n    open({marker!r}, 'w').write('ran')\\nexcept OSError as e:\\n    print('marker refused', e)\\n"
        f"seen = os.path.exists({str(sys.argv[-4])!r})\\n"
        "open(os.path.join(os.getcwd(), 'seen_truth'), 'w').write(str(seen))\\n"
    )
    m = fs.modules.new()
    m.script, m.use = t, True
    bpy.ops.wm.save_as_mainfile(filepath=fs_blend)
    # 2. a particle system with a disk cache, named so that the name can be edited in the bytes afterwards
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, 4
    bpy.ops.mesh.primitive_plane_add()
    ob = bpy.context.object
    ob.modifiers.new("P", "PARTICLE_SYSTEM")
    ob.particle_systems[0].settings.count = 10
    bpy.ops.wm.save_as_mainfile(filepath=pc_blend, compress=False)  # a disk cache needs a saved file
    pc = ob.particle_systems[0].point_cache
    pc.use_disk_cache = True
    pc.name = "PCGCACHENAME"
    bpy.ops.wm.save_as_mainfile(filepath=pc_blend, compress=False)
    """
)

RENDER = textwrap.dedent(
    """
    import bpy, sys
    blend, out, neutral = sys.argv[-3:]
    bpy.context.preferences.filepaths.use_scripts_auto_execute = False
    bpy.ops.wm.open_mainfile(filepath=blend, use_scripts=False)
    if neutral == "1":
        from physcodegym.probes.scene.render_safety import neutralise
        print("NEUTRALISED", neutralise(bpy))
    bpy.context.scene.render.filepath = out
    bpy.ops.render.render(write_still=True)
    """
)

STEP = textwrap.dedent(
    """
    import bpy, sys
    blend, neutral = sys.argv[-2:]
    if neutral == "1":  # before the open: Blender writes frame 1's disk cache while it loads the file
        from physcodegym.probes.scene.render_safety import install_load_guard
        install_load_guard()
    bpy.ops.wm.open_mainfile(filepath=blend, use_scripts=False)
    for f in range(1, 5):
        bpy.context.scene.frame_set(f)
    """
)


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """fs.blend (Freestyle Python module writing <base>/marker) and run/scene.blend (a cache name escaping)."""
    base = tmp_path_factory.mktemp("wall_scenes")
    (base / "fsrun").mkdir()
    (base / "run").mkdir()
    fs_blend, pc_blend, marker = base / "fsrun" / "scene.blend", base / "run" / "scene.blend", base / "marker"
    res = run_limited([sys.executable, "-c", BUILD, str(TRUTH), str(fs_blend), str(pc_blend), str(marker)],
                      timeout_s=120, memory_mb=None)
    assert res.returncode == 0, res.stderr[-2000:]
    data = pc_blend.read_bytes()
    assert data.count(CACHE_NAME) >= 1
    pc_blend.write_bytes(data.replace(CACHE_NAME, ESCAPE_NAME))
    return {"base": base, "fs": fs_blend, "pc": pc_blend, "marker": marker}


def test_stored_python_runs_on_render_in_a_plain_child_but_not_behind_the_wall(scenes: dict[str, Path],
                                                                               tmp_path: Path) -> None:
    marker = scenes["marker"]
    marker.unlink(missing_ok=True)
    # control: a plain trusted child (Auto Run off) renders the scene: the stored Python runs and sees the truth
    plain = run_limited([sys.executable, "-c", RENDER, str(scenes["fs"]), str(tmp_path / "a.png"), "0"],
                        timeout_s=120, memory_mb=None, cwd=str(tmp_path))
    assert plain.returncode == 0, plain.stderr[-1500:]
    assert marker.read_text() == "ran"
    assert (tmp_path / "seen_truth").read_text() == "True"
    marker.unlink()
    # walled: the same render, the same scene code: it cannot write outside its scratch folder, sees no truth
    with wall.scratch_folder() as scratch:
        res = wall.run_walled([sys.executable, "-c", RENDER, str(scenes["fs"]), str(scratch / "a.png"), "0"],
                              scratch=scratch, readonly=[scenes["fs"].parent], timeout_s=120, memory_mb=4096)
        assert res.returncode == 0, res.stderr[-1500:]
        assert (scratch / "a.png").is_file()  # it did render
        assert (scratch / "seen_truth").read_text() == "False"  # it ran, blind
    assert not marker.exists()
    # defence in depth: the neutraliser removes the module before the render, even without the wall
    n = run_limited([sys.executable, "-c", RENDER, str(scenes["fs"]), str(tmp_path / "b.png"), "1"],
                    timeout_s=120, memory_mb=None, cwd=str(tmp_path))
    assert n.returncode == 0 and "freestyle python modules removed" in n.stdout, n.stderr[-1500:]
    assert not marker.exists()


def test_a_cache_name_edited_in_the_bytes_escapes_a_plain_child_and_is_refused(scenes: dict[str, Path]) -> None:
    run = scenes["pc"].parent
    esc = run.parent / "esc"
    # control: a plain trusted child steps the scene: its disk cache is written outside the run folder
    res = run_limited([sys.executable, "-c", STEP, str(scenes["pc"]), "0"], timeout_s=120, memory_mb=None)
    assert res.returncode == 0, res.stderr[-1500:]
    assert esc.is_dir() and list(esc.glob("*.bphys"))
    for f in esc.iterdir():
        f.unlink()
    esc.rmdir()
    # validation: the walled media audit refuses the scene (the runner turns this into status `invalid`)
    doc = wall_media_audit(scenes["pc"])
    assert doc["ok"], doc
    assert [r["rule"] for r in doc["refusals"]] == ["path-outside-run"], doc["refusals"]
    # walled: the same stepping writes nothing outside (the run folder is read-only, the rest is absent)
    with wall.scratch_folder() as scratch:
        w = wall.run_walled([sys.executable, "-c", STEP, str(scenes["pc"]), "0"], scratch=scratch,
                            readonly=[run], timeout_s=120, memory_mb=4096)
        assert w.returncode == 0, w.stderr[-1500:]
    assert not esc.exists()
    # defence in depth: neutralised as it loads, a plain child keeps its cache names plain
    n = run_limited([sys.executable, "-c", STEP, str(scenes["pc"]), "1"], timeout_s=120, memory_mb=None)
    assert n.returncode == 0, n.stderr[-1500:]
    assert not esc.exists()


def wall_media_audit(blend: Path) -> dict:
    from physcodegym.sandbox.media_audit import run_trusted

    return run_trusted(str(blend), str(blend.parent))


def test_the_media_audit_refuses_stored_python_and_passes_a_clean_scene(scenes: dict[str, Path]) -> None:
    doc = wall_media_audit(scenes["fs"])
    assert doc["ok"], doc
    assert [r["rule"] for r in doc["refusals"]] == ["code-in-scene"], doc["refusals"]
    assert "Freestyle" in doc["refusals"][0]["detail"]


def test_the_folder_cap_counts_a_sparse_file_by_its_apparent_size(tmp_path: Path) -> None:
    from physcodegym.sandbox.runner import _folder_usage

    f = tmp_path / "sparse.bin"
    with open(f, "wb") as fh:
        fh.truncate(3 << 30)  # 3 GiB that occupy (almost) nothing on disk
    st = f.stat()
    assert st.st_blocks * 512 < (1 << 20)  # control: counted by blocks, it would pass any cap
    used, entries = _folder_usage(tmp_path, 100)
    assert used >= 3 << 30 and entries == 1


PROBE = textwrap.dedent(
    """
    import json, os, socket, sys
    run, packs, home, port = sys.argv[-4:]
    out = {"packs": sorted(os.listdir(packs)) if os.path.isdir(packs) else None,
           "home": sorted(os.listdir(home)) if os.path.isdir(home) else [],
           "git": os.path.exists(os.path.join(os.path.dirname(os.path.dirname(packs)), ".git")),
           "env_keys": sorted(k for k in os.environ if "KEY" in k or "TOKEN" in k)}
    try:
        open(os.path.join(run, "written"), "w").write("x"); out["run_writable"] = True
    except OSError:
        out["run_writable"] = False
    try:
        socket.create_connection(("127.0.0.1", int(port)), timeout=2); out["network"] = True
    except OSError:
        out["network"] = False
    open("scratch_ok", "w").write("x")
    try:
        b = bytearray(3 << 30); out["big"] = len(b)
    except MemoryError:
        out["big"] = "MemoryError"
    print(json.dumps(out))
    """
)


def test_a_walled_child_sees_no_secrets_writes_only_its_scratch_and_is_memory_bounded(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    packs = ROOT / "tasks" / "packs"
    home = os.path.realpath(os.path.expanduser("~"))
    # what of HOME a walled child may see: only the way to an interpreter installed under it (pyenv, uv)
    bound = {Path(r).relative_to(home).parts[0] for r in isolation.interpreter_roots()
             if Path(r).is_relative_to(home) and Path(r) != Path(home)}
    env = {**os.environ, "PCG_TEST_API_KEY": "secret"}
    # the network probe: a listener on this host's loopback (a walled child has a loopback of its own, so it
    # cannot reach it); no test traffic leaves the machine
    listener = socket.create_server(("127.0.0.1", 0))
    port = str(listener.getsockname()[1])
    plain = run_limited([sys.executable, "-c", PROBE, str(run), str(packs), home, port], timeout_s=60, memory_mb=None,
                        env=env, cwd=str(tmp_path))
    p = json.loads(plain.stdout.strip().splitlines()[-1])
    assert "ball_bounce" in p["packs"] and p["run_writable"] and p["env_keys"] and p["network"]  # control: sees all
    assert set(p["home"]) - bound or not p["home"]
    (run / "written").unlink()
    os.environ["PCG_TEST_API_KEY"] = "secret"
    try:
        with wall.scratch_folder() as scratch:
            res = wall.run_walled([sys.executable, "-c", PROBE, str(run), str(packs), home, port], scratch=scratch,
                                  readonly=[run], timeout_s=60, memory_mb=1024)
            assert (scratch / "scratch_ok").is_file()
    finally:
        del os.environ["PCG_TEST_API_KEY"]
        listener.close()
    w = json.loads(res.stdout.strip().splitlines()[-1])
    assert w["packs"] == [] and set(w["home"]) <= bound and not w["git"] and w["env_keys"] == []
    assert w["run_writable"] is False and w["network"] is False
    assert w["big"] == "MemoryError"  # past its address-space limit the child fails at once, never hangs
    assert not (run / "written").exists()


def test_an_unknown_isolation_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        wall.run_walled([sys.executable, "-c", "pass"], scratch=tmp_path, isolation_mode="chroot", timeout_s=10,
                        memory_mb=None)


def test_the_walled_audit_writes_nothing_outside_and_past_its_memory_limit_records_invalid(
        scenes: dict[str, Path]) -> None:
    """`physcodegym audit` of the scene whose cache name escapes (a plain child wrote outside: the test above):
    walled, it ends `ok` and nothing appears outside; with an address space too small for bpy it ends at once
    with status `invalid` and the reason, not an error or a hang."""
    esc = scenes["pc"].parent.parent / "esc"
    cli = [sys.executable, "-m", "physcodegym", "audit", str(scenes["pc"]), "--json", "--timeout", "300"]
    res = run_limited(cli, timeout_s=400, memory_mb=None)
    doc = json.loads(res.stdout)
    assert res.returncode == 0 and doc["status"] == "ok" and doc["isolation"].startswith("bwrap"), res.stderr[-800:]
    assert any("point cache name" in n for n in doc["neutralised"]), doc["neutralised"]  # the load guard's record
    assert not esc.exists()
    res = run_limited([*cli, "--memory-mb", "700"], timeout_s=120, memory_mb=None)
    doc = json.loads(res.stdout)
    assert doc["status"] == "invalid" and doc["limit"] == "memory", (doc.get("S_val_reason"), res.stderr[-600:])
    assert "memory limit (700 MiB)" in doc["invalid_reason"] and res.seconds < 60


CACHE_PROG = textwrap.dedent(
    '''
    import bpy
    import os
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, 2
    bpy.ops.mesh.primitive_plane_add()
    ob = bpy.context.object
    ob.modifiers.new("P", "PARTICLE_SYSTEM")
    ob.particle_systems[0].settings.count = 5
    bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"), compress=False)
    pc = ob.particle_systems[0].point_cache
    pc.use_disk_cache = True
    pc.name = "PCGCACHENAME"
    bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"), compress=False)
    {edit}
    '''
)
EDIT = ('data = open("scene.blend", "rb").read()\n'
        'open("scene.blend", "wb").write(data.replace(b"PCGCACHENAME", b"../../esc/xx"))')


@pytest.mark.parametrize("edited", [True, False])
def test_a_run_whose_saved_cache_name_leads_outside_is_invalid_with_the_reason(tmp_path: Path, edited: bool) -> None:
    """The program edits the cache name in its saved file's bytes (Blender cleans it only through Python): the run
    is `invalid` with the media audit's reason, and `audit` reports the same; the unedited twin is `ok`."""
    from physcodegym.sandbox.runner import run_program

    prog = tmp_path / "scene.py"
    prog.write_text(CACHE_PROG.format(edit=EDIT if edited else ""))
    rec = run_program(prog, tmp_path / "run", timeout_s=120, mode="bake_only", expected_frames=2)
    if not edited:
        assert rec.status == "ok", (rec.reason, rec.log_tail)
        return
    assert rec.status == "invalid" and "[path-outside-run]" in rec.reason and "../../esc/xx" in rec.reason, rec.reason
    assert json.loads((tmp_path / "run" / "run.json").read_text())["reason"] == rec.reason
    res = run_limited([sys.executable, "-m", "physcodegym", "audit", str(tmp_path / "run"), "--json"], timeout_s=120,
                      memory_mb=None)
    doc = json.loads(res.stdout)
    assert doc["status"] == "invalid" and rec.reason in doc["invalid_reason"]
    assert not (tmp_path / "esc").exists()


def test_an_input_that_holds_the_checkout_still_shows_no_task_pack_or_history(tmp_path: Path) -> None:
    """A trusted command pointed at a folder that contains secrets (here: the checkout itself) gets the folder
    read-only with the task data and the git history still covered."""
    probe = ("import os, sys; r = sys.argv[1]; "
             "print(os.listdir(os.path.join(r, 'tasks', 'packs')), os.listdir(os.path.join(r, '.git')))")
    plain = run_limited([sys.executable, "-c", probe, str(ROOT)], timeout_s=60, memory_mb=None)
    assert "ball_bounce" in plain.stdout  # control
    with wall.scratch_folder() as scratch:
        res = wall.run_walled([sys.executable, "-c", probe, str(ROOT)], scratch=scratch, readonly=[ROOT],
                              timeout_s=60, memory_mb=2048)
    assert res.returncode == 0 and res.stdout.strip() == "[] []", (res.stdout, res.stderr[-500:])
