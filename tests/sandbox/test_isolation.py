"""The operating-system wall (SPEC §3): each bypass class works without it and is contained by it (real bwrap, real bpy).

Every side effect is aimed at planted fakes in a temporary folder (a fake truth file and reference, a fake API key in
the runner's environment, a TCP listener on loopback, a fake HOME): never the real task files or keys. The runner runs
in its own process so that the key is in its initial environment (what `/proc/<ppid>/environ` shows), as under `run`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from physcodegym.sandbox import isolation as wall
from physcodegym.sandbox.policy import check_source
from physcodegym.sandbox.runner import run_program
from progs import attack, codes, scene

TOKEN = "PCG-PLANTED-SECRET-7f3a9c"
KEY = "sk-pcg-fake-key-5b1e77d0"
RUNNER = """
import json, sys
from pathlib import Path
from physcodegym.sandbox import isolation
from physcodegym.sandbox.runner import run_program
if sys.argv[3] == "none":  # the control: no wall and no per-run cgroup either (the bare attack's effect)
    isolation.make_cgroups = lambda *a, **k: []
rec = run_program(Path(sys.argv[1]), Path(sys.argv[2]), timeout_s=120, expected_frames=1, isolation=sys.argv[3],
                  barrier=sys.argv[4] == "1")
print("RECORD " + rec.model_dump_json())
"""


class Listener:
    """A loopback TCP server in the test process: what reaches it came through the host's network namespace."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            with c:
                c.settimeout(2)
                try:
                    self.received.append(c.recv(4096))
                except OSError:
                    pass

    def close(self) -> None:
        self._stop = True
        self.thread.join(2)
        self.sock.close()


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    pack = root / "packs" / "ball_bounce"
    pack.mkdir(parents=True)
    (pack / "truth.py").write_text(f"# truth program\nSECRET = {TOKEN!r}\n")
    (pack / "reference.mp4").write_text(f"not really a video {TOKEN}-REF\n")
    lst = Listener()
    yield {"root": root, "secret": pack / "truth.py", "ref": pack / "reference.mp4", "listener": lst}
    lst.close()


def _survivors(marker: str) -> list[int]:
    """Host processes whose command line names `marker` (the run folder): what outlived the run."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def _attack_run(planted: dict, tmp: Path, isolation: str, barrier: bool) -> tuple[dict, dict, dict]:
    name = f"{isolation}-{'hook' if barrier else 'nohook'}"
    outside, home = tmp / name / "outside", tmp / name / "home"
    outside.mkdir(parents=True)
    home.mkdir(parents=True)
    prog = tmp / name / "src" / "scene.py"
    prog.parent.mkdir()
    prog.write_text(attack(secret=str(planted["secret"]), ref=str(planted["ref"]), outside=str(outside), home=str(home),
                           key=KEY, port=planted["listener"].port, runner_pid=os.getpid(), linger=60))
    assert check_source(prog.read_text()).ok, "the bypass program must pass the static check (it is not the wall)"
    out = tmp / name / "run"
    env = {**os.environ, "PCG_FAKE_PROVIDER_KEY": KEY, "HOME": str(home)}
    before = len(planted["listener"].received)
    p = subprocess.run([sys.executable, "-c", RUNNER, str(prog), str(out), isolation, "1" if barrier else "0"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    rec = json.loads(next(ln for ln in p.stdout.splitlines() if ln.startswith("RECORD "))[7:])
    log = (out / "run.log").read_text(errors="replace")
    probe = json.loads(next(ln for ln in log.splitlines() if ln.startswith("PCGPROBE "))[9:])
    time.sleep(0.3)  # let the listener take what arrived
    effects = {
        "network_bytes": b"".join(planted["listener"].received[before:]),
        "outside_files": sorted(x.name for x in outside.iterdir()),
        "config_written": (home / ".config" / "physcodegym" / "config.toml").exists(),
        "survivors": _survivors(str(out)),
    }
    for pid in effects["survivors"]:  # the control's detached child: we started it, we end it
        os.kill(pid, signal.SIGKILL)
    return rec, probe, effects


def test_each_bypass_class_works_without_the_wall_and_is_contained_by_it(planted: dict, tmp_path: Path) -> None:
    # control: no wall, no audit hook -> every class gets its side effect on this host
    rec, probe, fx = _attack_run(planted, tmp_path, "none", barrier=False)
    assert rec["isolation"].startswith("none")
    assert TOKEN in probe["read_secret"] and TOKEN in probe["texts_load_secret"], probe
    assert TOKEN + "-REF" in probe["texts_load_reference"] and probe["reference_visible"] == "True", probe
    assert probe["environ"].startswith("found"), probe  # the runner's key, read from /proc/<ppid>/environ
    assert probe["runner_visible"] == "True" and probe["network"] == "connected", probe
    assert fx["network_bytes"] == KEY.encode()
    assert fx["outside_files"] == ["c.blend", "py.txt"] and fx["config_written"]
    assert fx["survivors"], "the detached child outlived the run without the wall"

    # the wall alone (audit hook disabled): every class is contained
    for barrier in (False, True):
        rec, probe, fx = _attack_run(planted, tmp_path, "bwrap", barrier=barrier)
        assert rec["isolation"].startswith("bwrap"), rec["isolation"]
        assert rec["status"] != "ok"
        for k in ("read_secret", "texts_load_secret", "texts_load_reference"):
            assert TOKEN not in probe[k], (barrier, k, probe[k])
        assert probe["reference_visible"] == "False" and probe["runner_visible"] == "False", probe
        assert not probe["environ"].startswith("found") and probe["network"] != "connected", probe
        assert fx == {"network_bytes": b"", "outside_files": [], "config_written": False, "survivors": []}, (barrier, fx)
        assert TOKEN not in (Path(tmp_path) / f"bwrap-{'hook' if barrier else 'nohook'}" / "run" / "run.log").read_text(errors="replace")
        if barrier:  # both layers: the hook also records the attempts, so the run is a policy breach
            assert rec["status"] == "policy" and rec["violations"], rec["reason"]
        else:
            assert probe["detached_fork"].startswith("forked"), probe  # it did fork; the PID namespace ended it


WINDOWS = '''
import bpy
import os
import json
import time
import logging


def g(o, n):
    return getattr(o, n)


def s(*c):
    return "".join(chr(x) for x in c)


SECRET = {secret}
R = {{}}
sysm = g(os, {sys_})
mods = g(sysm, {modules})
R["in_sys_modules"] = sorted(k for k in list(mods) if "barrier" in k or k.startswith("_pcg"))
imp = g(mods[{builtins}], {import_})
refs = []
f = logging.currentframe()
while f is not None:
    for k, v in list(g(f, {f_locals}).items()):
        # the hook, its helpers or the barrier module itself (module name `_pcg_barrier`), by name or by object
        owner = str(g(v, {dmodule}) if hasattr(v, {dmodule}) else "") + g(type(v), {dmodule})
        if type(v).__name__ == "module":
            owner += repr(v)
        if "_pcg_barrier" in owner or k in ("barrier", "hook", "barrier_mod"):
            refs.append(k)
    f = g(f, {f_back})
R["frame_refs"] = refs
try:
    g(imp({gc}), {get_objects})()
    R["gc"] = "got the objects"
except BaseException as e:
    R["gc"] = "blocked: " + type(e).__name__
state = {{"returned": False, "late": []}}


def late():
    while not state["returned"]:
        time.sleep(0.001)
    for _ in range(400):
        try:
            with open(SECRET) as fh:
                print("LATE", fh.read(), flush=True)
        except BaseException as e:
            state["late"].append(type(e).__name__)
        time.sleep(0.001)


g(imp({thread}), {start})(late, ())


class Sneaky(Exception):
    def __str__(self):
        with open(SECRET) as fh:
            return fh.read()


print("PCGPROBE " + json.dumps(R), flush=True)
state["returned"] = True
raise Sneaky()
'''


def test_audit_hook_is_unreachable_and_has_no_window(planted: dict, tmp_path: Path) -> None:
    """Second layer alone (no wall): the hook cannot be found or switched off, and it stays on after the program."""
    names = {n: codes(v) for n, v in {"sys_": "sys", "modules": "modules", "builtins": "builtins", "import_": "__import__",
                                      "gc": "gc", "get_objects": "get_objects", "thread": "_thread",
                                      "start": "start_new_thread", "f_locals": "f_locals",
                                      "f_back": "f_back", "dmodule": "__module__"}.items()}
    src = WINDOWS.format(secret=codes(str(planted["secret"])), **names)
    assert check_source(src).ok
    prog = tmp_path / "src" / "scene.py"
    prog.parent.mkdir()
    prog.write_text(src)
    rec = run_program(prog, tmp_path / "run", timeout_s=120, expected_frames=1, isolation="none")
    log = (tmp_path / "run" / "run.log").read_text(errors="replace")
    probe = json.loads(next(ln for ln in log.splitlines() if ln.startswith("PCGPROBE "))[9:])
    assert probe["in_sys_modules"] == [] and probe["frame_refs"] == [], probe
    assert probe["gc"].startswith("blocked"), probe
    assert TOKEN not in log, "the exception's __str__ or a thread after the program read the secret"
    assert rec.status == "policy"
    refused_reads = [v for v in rec.violations if v["rule"] == "file-outside-workdir" and str(planted["secret"]) in (v["message"] or "")]
    assert refused_reads, rec.violations  # the late thread / __str__ did try, under the hook


LEGIT = '''
import bpy
import os
import io
import csv
bpy.ops.wm.read_factory_settings(use_empty=True)
for name in ("meshes", "materials", "objects", "cameras", "lights"):
    coll = getattr(bpy.data, name)
    for block in list(coll):
        coll.remove(block)
rows = list(csv.DictReader(io.StringIO("kind,z\\ncube,1\\nuv_sphere,3\\n")))
for row in rows:
    op = getattr(bpy.ops.mesh, "primitive_" + row["kind"] + "_add")
    op(location=(0, 0, float(row["z"])))
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, 1
bpy.ops.object.camera_add(location=(0, -12, 2), rotation=(1.5, 0, 0))
sc.camera = bpy.context.active_object
sc.render.engine = "BLENDER_WORKBENCH"
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
os.makedirs(os.getcwd() + "/frames", exist_ok=True)
sc.render.filepath = os.getcwd() + "/frames/"
bpy.ops.wm.save_as_mainfile(filepath=os.getcwd() + "/scene.blend")
img = bpy.data.images.new("checker", 64, 64)
img.generated_type = "COLOR_GRID"
img.filepath_raw = "//checker.png"
img.file_format = "PNG"
img.save()
bpy.ops.wm.save_as_mainfile(filepath=os.getcwd() + "/scene.blend")
bpy.ops.render.render(animation=True)
'''


def test_legitimate_program_runs_ok_behind_the_wall(tmp_path: Path) -> None:
    assert check_source(LEGIT).ok
    prog = tmp_path / "scene.py"
    prog.write_text(LEGIT)
    rec = run_program(prog, tmp_path / "run", timeout_s=120, expected_frames=1)
    assert rec.status == "ok", (rec.reason, rec.log_tail)
    assert rec.isolation.startswith("bwrap") and rec.violations == []
    assert (tmp_path / "run" / "frames" / "0001.png").is_file()


def test_size_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RLIMIT_FSIZE stops one big file; the folder cap stops many files (the child is killed, the record says why)."""
    from physcodegym.sandbox import runner

    monkeypatch.setattr(runner, "FILE_CAP_MB", 8)
    src = ("import bpy\nimport time\nblock = b'x' * (1 << 20)\ntry:\n    with open('big.bin', 'wb') as fh:\n"
           "        for _ in range(32):\n            fh.write(block)\nexcept OSError as e:\n    print('FSIZE', e, flush=True)\n"
           "for i in range(200):\n    with open('f%03d.bin' % i, 'wb') as fh:\n        for _ in range(4):\n"
           "            fh.write(block)\n    time.sleep(0.05)\n")
    prog = tmp_path / "scene.py"
    prog.write_text(src)
    rec = run_program(prog, tmp_path / "run", timeout_s=120, expected_frames=1, folder_cap_mb=24)
    log = (tmp_path / "run" / "run.log").read_text(errors="replace")
    assert "FSIZE" in log and "File too large" in log, log[-2000:]
    assert rec.status == "failed" and "exceeded its cap" in rec.reason, rec.reason
    assert not (tmp_path / "run" / "sandbox").exists() or sum(
        f.stat().st_size for f in (tmp_path / "run" / "sandbox").rglob("*")) < 200 * 4 << 20


def test_no_wall_no_run_unless_explicitly_unsafe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture) -> None:
    from physcodegym.headless.cli import main

    prog = tmp_path / "scene.py"
    prog.write_text(scene(1))
    monkeypatch.setattr(wall, "find_bwrap", lambda: None)
    wall.check_available.cache_clear()
    try:
        rec = run_program(prog, tmp_path / "a", timeout_s=60, expected_frames=1)
        assert rec.status == "failed" and "bubblewrap" in rec.reason and wall.UNSAFE_FLAG in rec.reason
        assert rec.returncode is None and not (tmp_path / "a" / "sandbox").exists()  # nothing was started
        assert main(["run", str(prog), "--out", str(tmp_path / "b"), "--json"]) == 2
        err = json.loads(capsys.readouterr().out)["error"]
        assert "bubblewrap" in err["message"] and wall.UNSAFE_FLAG in err["message"]
    finally:
        wall.check_available.cache_clear()


def test_argv_binds_only_the_scratch_folder_writable(tmp_path: Path) -> None:
    scratch = tmp_path / "run" / "sandbox"
    scratch.mkdir(parents=True)
    (tmp_path / "run" / "scene.py").write_text("x = 1\n")
    argv = wall.bwrap_argv(["python", "x.py"], scratch=scratch, readonly_files=[tmp_path / "run" / "scene.py"])
    writable = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert writable == [str(scratch.resolve())]
    ro = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    repo = Path(wall.__file__).resolve().parents[1]
    assert not any(Path(r) == repo or Path(r) in (repo / "tasks").parents or str(r).startswith(str(repo / "tasks")) for r in ro), ro
    assert not any(r in ("/", "/etc", "/home", "/root", os.path.expanduser("~")) for r in ro), ro
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--disable-userns"):
        assert flag in argv
    assert argv[argv.index("--bind") + 2] == wall.WALL_RUN  # seen inside at a fixed path (sandbox.isolation.layout)
    assert argv[argv.index("--chdir") + 1] == wall.WALL_RUN and argv[-2:] == ["python", "x.py"]
    # host paths of the child's own command line are rewritten to where it sees them
    argv = wall.bwrap_argv(["python", str(scratch / "f.txt"), str(tmp_path / "run" / "scene.py")], scratch=scratch,
                           readonly_files=[tmp_path / "run" / "scene.py"])
    assert argv[-2:] == [f"{wall.WALL_RUN}/f.txt", f"{wall.WALL_PROGRAM_DIR}/scene.py"]


FORK_BOMB = '''
import bpy
import os
import time


def g(o, n):
    return getattr(o, n)


def s(*c):
    return "".join(chr(x) for x in c)


fork = g(os, {fork})
n = 0
err = ""
for _ in range(3000):
    try:
        pid = fork()
    except OSError as e:
        err = str(e)
        break
    if pid == 0:
        time.sleep(30)
        g(os, {_exit})(0)
    n += 1
print("FORKED", n, err, flush=True)
'''


def test_fork_bomb_is_bounded_and_ends_with_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind the wall without the hook: the per-run pids cgroup stops the bomb, the PID namespace ends the rest."""
    monkeypatch.setattr(wall, "PIDS_MAX", 64)  # the mechanism, at a size this test can afford (default 1024)
    src = FORK_BOMB.format(fork=codes("fork"), _exit=codes("_exit"))
    assert check_source(src).ok
    prog = tmp_path / "scene.py"
    prog.write_text(src)
    out = tmp_path / "run"
    rec = run_program(prog, out, timeout_s=120, expected_frames=1, barrier=False)
    log = (out / "run.log").read_text(errors="replace")
    forked = int(next(ln for ln in log.splitlines() if ln.startswith("FORKED")).split()[1])
    probe = wall.make_cgroups(f"probe-{os.getpid()}", None)
    wall.remove_cgroups(probe)
    if probe:  # this host lets the runner make per-run cgroups: the bomb stopped at pids.max
        assert "pids.max" in rec.isolation and forked < wall.PIDS_MAX, (forked, rec.isolation)
    else:
        assert "no per-run cgroup" in rec.isolation
    assert _survivors(str(out)) == []


HANDLER = '''
import bpy
import os


def s(*c):
    return "".join(chr(x) for x in c)


SECRET = {secret}


def peek(scene, *args):
    try:
        with open(SECRET) as fh:
            print("HANDLER", fh.read(), flush=True)
    except OSError as e:
        print("HANDLER blocked", type(e).__name__, flush=True)


bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
bpy.ops.object.camera_add(location=(0, -10, 0), rotation=(1.5708, 0, 0))
sc.camera = bpy.context.active_object
sc.render.engine = "BLENDER_WORKBENCH"
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
bpy.app.handlers.render_pre.append(peek)
bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))
'''


def test_render_handler_in_preview_runs_under_the_hook(planted: dict, tmp_path: Path) -> None:
    """Preview mode renders after the program returns; the program's render handler still runs under the hook."""
    src = HANDLER.format(secret=codes(str(planted["secret"])))
    assert check_source(src).ok
    prog = tmp_path / "scene.py"
    prog.write_text(src)
    rec = run_program(prog, tmp_path / "run", timeout_s=120, mode="preview", isolation="none")
    log = (tmp_path / "run" / "run.log").read_text(errors="replace")
    assert "HANDLER blocked" in log and TOKEN not in log, log[-2000:]
    assert rec.status == "policy" and any(str(planted["secret"]) in (v["message"] or "") for v in rec.violations)


SILENCE = '''
import bpy
import os


def s(*c):
    return "".join(chr(x) for x in c)


for fd in range(3, 256):  # every socket among the inherited descriptors (fstat raises no audit event)
    try:
        if (os.fstat(fd).st_mode & 0o170000) == 0o140000:
            os.close(fd)
    except OSError:
        pass
print("SILENCED", flush=True)
try:
    open(s(47, 101, 116, 99, 47, 104, 111, 115, 116, 110, 97, 109, 101)).read()
    print("READ", flush=True)
except OSError:
    print("REFUSED", flush=True)
'''


def test_silencing_the_status_channel_does_not_hide_a_breach(tmp_path: Path) -> None:
    """Closing the barrier's status socket and then breaking a rule ends the run as failed, never ok."""
    assert check_source(SILENCE).ok
    prog = tmp_path / "scene.py"
    prog.write_text(SILENCE)
    rec = run_program(prog, tmp_path / "run", timeout_s=120, mode="bake_only")
    log = (tmp_path / "run" / "run.log").read_text(errors="replace")
    assert "SILENCED" in log and "READ" not in log and "REFUSED" not in log, log[-1500:]
    assert rec.status == "failed" and "status channel" in rec.reason, rec.reason


def test_every_task_data_folder_of_the_package_is_hidden() -> None:
    """Truths live in tasks/packs and tasks/library (generated family members): both are hidden wherever the
    package is installed (a non-editable install puts them inside the bound .venv)."""
    from physcodegym.sandbox import isolation
    from physcodegym.tasks.loader import LIBRARY_DIR, PACKS_DIR

    hidden = set(isolation.hidden_paths())
    assert {PACKS_DIR.resolve(), LIBRARY_DIR.resolve()} <= hidden
