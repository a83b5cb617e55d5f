"""The isolated runner records ok, timeout, crash, policy, missing-output and barrier-refusal runs (real bpy)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from physcodegym.sandbox.runner import RunRecord, png_size, run_program
from progs import scene


def _prog(tmp: Path, src: str, name: str = "scene.py") -> Path:
    p = tmp / "src" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(src)
    return p


def _record(out: Path) -> RunRecord:
    return RunRecord.model_validate_json((out / "run.json").read_text())


def test_ok_run_and_record(tmp_path: Path) -> None:
    out = tmp_path / "run"
    rec = run_program(_prog(tmp_path, scene(3)), out, timeout_s=120, expected_frames=3)
    assert rec.status == "ok", rec.log_tail
    assert rec.missing == [] and rec.outputs["frames_complete"] and rec.outputs["frame_count"] == 3
    assert png_size(out / "frames" / "0003.png") == (640, 360)
    assert (out / "scene.blend").is_file() and (out / "scene.py").is_file() and (out / "run.log").is_file()
    assert rec.bpy_version and rec.bpy_version.startswith("5.")
    assert rec.peak_memory_mb and rec.peak_memory_mb > 100  # bpy alone is ~270 MB
    assert _record(out) == rec
    # re-running into the same folder starts clean: a program that renders nothing leaves no stale frames
    rec2 = run_program(_prog(tmp_path, scene(3, render="pass"), "norender.py"), out, timeout_s=120, expected_frames=3)
    assert rec2.status == "invalid" and "frames/0001.png" in rec2.missing


def test_timeout_kills_the_group(tmp_path: Path) -> None:
    rec = run_program(_prog(tmp_path, "import bpy\nwhile True:\n    pass\n"), tmp_path / "run", timeout_s=4, expected_frames=3)
    assert rec.status == "timeout"
    assert 4 <= rec.seconds < 30
    assert "wall-clock" in rec.reason


def test_crash_is_recorded_with_its_log(tmp_path: Path) -> None:
    rec = run_program(_prog(tmp_path, "import bpy\nraise RuntimeError('boom at line two')\n"), tmp_path / "run",
                      timeout_s=60, expected_frames=3)
    assert rec.status == "failed" and rec.returncode == 1
    assert "boom at line two" in rec.log_tail and "scene.py" in rec.log_tail


def test_static_policy_stops_before_running(tmp_path: Path) -> None:
    out = tmp_path / "run"
    rec = run_program(_prog(tmp_path, "import bpy\nimport socket\nsocket.socket().connect(('1.1.1.1', 80))\n"), out, timeout_s=60)
    assert rec.status == "policy" and rec.returncode is None
    assert {"rule": "network", "line": 2} == {k: rec.violations[0][k] for k in ("rule", "line")}
    assert _record(out).status == "policy"
    # no child ran: the Blender version is the installed bpy package's (every record names it)
    assert rec.blender_version and rec.blender_version_source == "bpy package"


def test_missing_and_wrong_size_outputs(tmp_path: Path) -> None:
    rec = run_program(_prog(tmp_path, scene(3)), tmp_path / "a", timeout_s=120, expected_frames=4)
    assert rec.status == "invalid" and rec.missing == ["frames/0004.png"]
    src = scene(2, w=320, h=180).replace('bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))', "")
    rec = run_program(_prog(tmp_path, src, "small.py"), tmp_path / "b", timeout_s=120, expected_frames=2)
    assert rec.status == "invalid" and "scene.blend" in rec.missing
    assert any("320x180" in p for p in rec.problems)


def test_memory_limit(tmp_path: Path) -> None:
    src = "import bpy\nimport numpy as np\nx = np.ones((3000, 1024, 1024), dtype=np.uint8)\nprint(x.sum())\n"
    rec = run_program(_prog(tmp_path, src), tmp_path / "run", timeout_s=60, memory_mb=1500, expected_frames=1)
    assert rec.status == "failed" and "MemoryError" in rec.log_tail


EVADES = {
    # each passes the static checker (computed paths / names) and must be stopped by the run-time barrier
    "read_outside": ("import bpy\nimport os\nparts = ['', 'etc', 'passwd']\ntry:\n    open(os.sep.join(parts)).read()\n"
                     "except PermissionError:\n    pass\n", "file-outside-workdir"),
    "write_outside": ("import bpy\nimport os\np = os.sep + os.path.join(*['tmp', 'pcg_escape.txt'])\nopen(p, 'w').write('x')\n",
                      "file-outside-workdir"),
    "list_outside": ("import bpy\nimport os\nd = os.path.dirname(os.getcwd())\nprint(os.listdir(d))\n", "file-outside-workdir"),
}


@pytest.mark.parametrize("case", sorted(EVADES))
def test_barrier_refuses_what_slipped_past(tmp_path: Path, case: str) -> None:
    from physcodegym.sandbox.policy import check_source

    src, rule = EVADES[case]
    assert check_source(src).ok, "the case must evade the static check to test the run-time barrier"
    rec = run_program(_prog(tmp_path, src), tmp_path / "run", timeout_s=60, expected_frames=1)
    assert rec.status == "policy", (rec.status, rec.reason, rec.log_tail)
    assert rec.violations[0]["rule"] == rule and rec.violations[0]["stage"] == "runtime"
    assert not Path("/tmp/pcg_escape.txt").exists()


def test_post_run_media_audit(tmp_path: Path) -> None:
    """A movie decoded by Blender's C code (no Python audit event) is found in bpy.data after the run."""
    from physcodegym.sandbox.policy import check_source

    render = (
        "ims = sc.render.image_settings\nims.media_type = 'VIDEO'\nsc.render.ffmpeg.format = 'MPEG4'\n"
        "sc.render.ffmpeg.codec = 'H264'\nsc.render.filepath = os.path.abspath('clip.mp4')\n"
        "bpy.ops.render.render(animation=True)\ncoll = [bpy.data.movieclips][0]\nclip = coll.load(os.path.abspath('clip.mp4'))\n"
        "print('clip frames', clip.frame_duration)\n"
    )
    src = scene(2, render=render)
    assert check_source(src).ok, "the case must evade the static check"
    rec = run_program(_prog(tmp_path, src), tmp_path / "run", timeout_s=120, expected_frames=2)
    assert rec.status == "policy", (rec.status, rec.reason, rec.log_tail)
    assert rec.violations[0]["rule"] == "media-decode" and rec.violations[0]["audit_event"] == "post-run"


def test_barrier_blocks_process_network_ctypes(tmp_path: Path) -> None:
    """The audit hook itself, in a plain child interpreter (no bpy): each action raises and is recorded."""
    barrier = Path(__file__).resolve().parents[2] / "sandbox" / "barrier.py"
    code = f"""
import importlib.util, json, os, sys, socket, subprocess, ctypes
spec = importlib.util.spec_from_file_location("b", {str(barrier)!r}); b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
b.install({str(tmp_path)!r}, None, b.default_read_roots(), program=__file__)
res = {{}}
for name, fn in [("subprocess", lambda: subprocess.run(["true"])), ("system", lambda: os.system("true")),
                 ("socket", lambda: socket.socket().connect(("127.0.0.1", 9))), ("dns", lambda: socket.getaddrinfo("example.com", 80)),
                 ("ctypes", lambda: ctypes.CDLL(None)), ("fork", lambda: os.fork()),
                 ("open_outside", lambda: open("/etc/hostname")), ("write_inside", lambda: open("ok.txt", "w").write("x"))]:
    try:
        fn(); res[name] = "allowed"
    except PermissionError:
        res[name] = "refused"
print(json.dumps(res))
"""
    script = tmp_path / "probe.py"
    script.write_text(code)
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    assert res.pop("write_inside") == "allowed"
    assert set(res.values()) == {"refused"}, res


def test_modes_preview_and_bake_only(tmp_path: Path) -> None:
    prog = _prog(tmp_path, scene(5))
    rec = run_program(prog, tmp_path / "p", timeout_s=120, mode="preview", preview_frame=4)
    assert rec.status == "ok", rec.log_tail
    assert png_size(tmp_path / "p" / "preview.png") == (640, 360) and not (tmp_path / "p" / "frames").exists()
    rec = run_program(prog, tmp_path / "b", timeout_s=120, mode="bake_only")
    assert rec.status == "ok" and rec.outputs["blend"] and not (tmp_path / "b" / "frames").exists()


def _external_cache_src(where: str) -> str:
    """The tiny scene with a cloth whose point cache is external at `where` (set after the bake, saved again)."""
    from progs import codes

    setup = (
        "def s(*c):\n    return ''.join(chr(x) for x in c)\n"
        "pl = bpy.data.objects['Plane']\nm = pl.modifiers.new('Cloth', 'CLOTH')\n"
        "m.point_cache.use_disk_cache = True\nm.point_cache.use_external = True\n"
        f"m.point_cache.filepath = {codes(where)}\n"
        "bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath('scene.blend'))\n"
        "bpy.ops.render.render(animation=True)\n"
    )
    return scene(2, render=setup)


def test_post_run_audit_refuses_an_external_point_cache_outside_the_run(tmp_path: Path) -> None:
    """A point cache read from (and, on a re-bake, written to) a folder outside the run: the audit re-bakes the
    saved scene outside the sandbox, where that folder is real, so the run is refused after it ends. Twin: the
    same external cache in a folder inside the run is accepted."""
    from physcodegym.sandbox.policy import check_source

    src = _external_cache_src("/tmp/pcg_external_cache")
    assert check_source(src).ok, "the case must evade the static check"
    rec = run_program(_prog(tmp_path, src), tmp_path / "run", timeout_s=120, expected_frames=2)
    assert rec.status == "policy", (rec.status, rec.reason, rec.log_tail)
    assert rec.violations[0]["rule"] == "file-outside-workdir" and rec.violations[0]["audit_event"] == "post-run"
    assert "external point cache" in rec.violations[0]["message"]
    twin = run_program(_prog(tmp_path / "t", _external_cache_src("//cache")), tmp_path / "run_twin", timeout_s=120,
                       expected_frames=2)
    assert twin.status == "ok", (twin.status, twin.reason, twin.violations)


_IMPORT_NODE = (
    "def s(*c):\n    return ''.join(chr(x) for x in c)\n"
    "ng = bpy.data.node_groups.new('Read', 'GeometryNodeTree')\n"
    "ng.interface.new_socket('Geometry', in_out='OUTPUT', socket_type='NodeSocketGeometry')\n"
    "imp = ng.nodes.new('GeometryNodeImportText')\n"
    "ng.links.new(imp.outputs[0], ng.nodes.new('NodeGroupOutput').inputs[0])\n"
    "{path}\n"
    "bpy.data.objects['Plane'].modifiers.new('Read', 'NODES').node_group = ng\n"
)
FILE_READS = {
    # a geometry-nodes Import node reading a fixed file outside the run (the trusted audit evaluates the scene)
    "import_node_fixed_path": _IMPORT_NODE.format(path="imp.inputs['Path'].default_value = " + "{etc}"),
    # ... or a path computed by other nodes: nothing fixed to check, refused as well
    "import_node_computed_path": _IMPORT_NODE.format(
        path="st = ng.nodes.new('FunctionNodeInputString')\nst.string = {etc}\n"
        "ng.links.new(st.outputs[0], imp.inputs['Path'])"
    ),
    # a volume data-block whose file lies outside the run
    "volume_outside": "def s(*c):\n    return ''.join(chr(x) for x in c)\nv = bpy.data.volumes.new('Fog')\n"
    "v.filepath = {etc}\n",
}


@pytest.mark.parametrize("case", sorted(FILE_READS))
def test_post_run_audit_refuses_files_the_scene_reads_from_outside(tmp_path: Path, case: str) -> None:
    """What a trusted process would read from outside the run folder when it opens and evaluates the saved scene
    (the audit, the re-bakes): refused after the run as `file-outside-workdir`."""
    from physcodegym.sandbox.policy import check_source
    from progs import codes

    setup = FILE_READS[case].format(etc=codes("/etc/hostname"))
    src = scene(2, render=setup + "bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath('scene.blend'))\n"
                "bpy.ops.render.render(animation=True)\n")
    assert check_source(src).ok, "the case must evade the static check"
    rec = run_program(_prog(tmp_path, src), tmp_path / "run", timeout_s=120, expected_frames=2)
    assert rec.status == "policy", (rec.status, rec.reason, rec.log_tail)
    assert rec.violations[0]["rule"] == "file-outside-workdir" and rec.violations[0]["audit_event"] == "post-run"
    word = {"import": "reads", "volume": "loads"}[case.split("_")[0]]
    assert word in rec.violations[0]["message"], rec.violations
