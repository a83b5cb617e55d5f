"""The run-time barrier trusts no claim and leaves no raw-memory route, and lets Blender's own code be.

One program tries every route (each attempt reports `ok ...` or `blocked ...` on stdout). It passes the static
check (names spelled by character codes through a getattr trampoline): the barrier is what must stop it. The same
program with the barrier off (the wall still on) is the control that shows each route works; with the barrier on,
every attempt is blocked and the run is `policy` with one breach per route. A legitimate program that uses the
libraries those routes abuse (logging's frames, namedtuple, pathlib, traceback printing, an import after the
barrier) runs `ok`, and so does the shipped truth (on bpy 5.2.3 Blender compiles strings of its own there).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from physcodegym.sandbox.policy import check_source
from physcodegym.sandbox.runner import run_program
from progs import codes

REPO = Path(__file__).resolve().parents[2]

ROUTES = '''
import bpy
import os
import json


def g(o, n):
    return getattr(o, n)


def s(*c):
    return "".join(chr(x) for x in c)


R = {{}}


def attempt(name, fn):
    try:
        R[name] = "ok " + str(fn())[:80]
    except BaseException as e:
        R[name] = "blocked " + type(e).__name__ + ": " + str(e)[:160]


sysm = g(os, {sys_})
builtins_mod = g(sysm, {modules})[{builtins}]
imp = g(builtins_mod, {import_})
compile_ = g(builtins_mod, {compile_})
exec_ = g(builtins_mod, {exec_})


def fake_filename():
    # a trusted file's name on the program's own source: the old barrier trusted the frames it made
    code = compile_({src}, g(os, {file_}), {mode})
    exec_(code, {{}})
    return "compiled and ran as " + g(os, {file_})


def launder_timeit():
    return g(imp({timeit}), {timer})({src})


def launder_typing():
    class C:
        pass
    setattr(C, {ann}, {{{a}: {src_expr}}})
    return g(imp({typing}), {hints})(C)


def traceback_frames():
    tb_mod = imp({traceback})
    try:
        open(s(47, 101, 116, 99, 47, 104, 111, 115, 116, 110, 97, 109, 101))  # refused: its traceback holds the hook
    except OSError as e:
        frames = [f for f, _ in g(tb_mod, {walk_tb})(g(e, {tb_}))]
        return str(len(frames)) + " frames, the deepest " + str(frames[-1])


def ctypes_import():
    return imp({ctypes})


def ctypes_extension_load():
    mach = imp({machinery_full}, None, None, [{dummy}])
    util = imp({util_full}, None, None, [{dummy}])
    spec = g(g(mach, {pathfinder}), {find_spec})({uctypes})
    return g(util, {mfs})(spec)


def proc_mem():
    with open(s(47, 112, 114, 111, 99, 47, 115, 101, 108, 102, 47, 109, 101, 109), "rb") as fh:
        return "opened " + str(fh)


def symlink():
    g(os, {symlink})(s(47, 112, 114, 111, 99, 47, 115, 101, 108, 102, 47, 109, 101, 109), "m")
    return "linked"


def mmap_new():
    mm = imp({mmap})
    return g(mm, {mmap})(-1, 4096)


def thread():
    t = g(imp({threading}), {thread_cls})(target=len, args=([],))
    t.start()
    t.join()
    return "started"


class TwoFaced:
    n = 0

    def __fspath__(self):
        TwoFaced.n += 1
        return "inside.txt" if TwoFaced.n % 2 == 0 else s(47, 101, 116, 99, 47, 104, 111, 115, 116, 110, 97, 109, 101)


def two_faced_path():
    with open(TwoFaced()) as fh:
        return "read " + str(len(fh.read())) + " bytes"


for name, fn in [("fake_filename", fake_filename), ("launder_timeit", launder_timeit),
                 ("launder_typing", launder_typing), ("traceback_frames", traceback_frames),
                 ("ctypes_import", ctypes_import), ("ctypes_extension_load", ctypes_extension_load),
                 ("proc_mem", proc_mem), ("symlink", symlink), ("mmap", mmap_new), ("thread", thread),
                 ("two_faced_path", two_faced_path)]:
    attempt(name, fn)
print("PCGPROBE " + json.dumps(R), flush=True)
'''

NAMES = {
    "sys_": "sys", "modules": "modules", "builtins": "builtins", "import_": "__import__", "compile_": "compile",
    "exec_": "exec", "file_": "__file__", "mode": "exec", "src": "x = 1 + 1", "timeit": "timeit", "timer": "timeit",
    "ann": "__annotations__", "a": "a", "src_expr": "len if 1 else len", "typing": "typing", "hints": "get_type_hints",
    "traceback": "traceback", "walk_tb": "walk_tb", "tb_": "__traceback__", "ctypes": "ctypes",
    "imputil": "importlib", "importlib": "importlib", "machinery": "machinery", "pathfinder": "PathFinder",
    "find_spec": "find_spec", "uctypes": "_ctypes", "util": "util", "machinery_full": "importlib.machinery",
    "util_full": "importlib.util", "dummy": "x", "mfs": "module_from_spec", "symlink": "symlink", "mmap": "mmap",
    "threading": "threading", "thread_cls": "Thread",
}
ROUTE_NAMES = ("fake_filename", "launder_timeit", "launder_typing", "traceback_frames", "ctypes_import",
               "ctypes_extension_load", "proc_mem", "symlink", "mmap", "two_faced_path")
# Python 3.11 raises no audit event for a thread start (3.13: _thread.start_joinable_thread, refused): where there is
# none, the static check and the wall are what stop threads (nothing the barrier checks can be raced without links)
THREAD_AUDITED = sys.version_info >= (3, 13)


def _routes_program() -> str:
    return ROUTES.format(**{k: codes(v) for k, v in NAMES.items()})


def _probe(log_tail: str, out: Path) -> dict:
    text = (out / "run.log").read_text(errors="replace")
    line = [ln for ln in text.splitlines() if ln.startswith("PCGPROBE ")]
    assert line, text[-3000:]
    return json.loads(line[-1][len("PCGPROBE "):])


@pytest.fixture(scope="module")
def routes_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = _routes_program()
    assert check_source(src).ok, check_source(src).violations[:3]
    p = tmp_path_factory.mktemp("routes") / "scene.py"
    p.write_text(src)
    return p


def test_routes_work_without_the_barrier(tmp_path: Path, routes_src: Path) -> None:
    """The control: behind the wall alone, each route does what it is for (so the barrier's refusal is the cause)."""
    out = tmp_path / "run"
    rec = run_program(routes_src, out, timeout_s=120, mode="bake_only", barrier=False, expected_frames=1)
    r = _probe(rec.log_tail, out)
    for name in ("fake_filename", "launder_timeit", "launder_typing", "traceback_frames", "ctypes_import",
                 "ctypes_extension_load", "proc_mem", "symlink", "mmap", "thread"):
        assert r[name].startswith("ok"), (name, r[name])
    assert "barrier.py" not in r["traceback_frames"]  # no barrier: no hook frame either
    assert rec.violations == []


def test_the_barrier_blocks_every_route(tmp_path: Path, routes_src: Path) -> None:
    out = tmp_path / "run"
    rec = run_program(routes_src, out, timeout_s=120, mode="bake_only", expected_frames=1)
    r = _probe(rec.log_tail, out)
    for name in ROUTE_NAMES + (("thread",) if THREAD_AUDITED else ()):
        assert r[name].startswith("blocked PermissionError"), (name, r[name])
    assert rec.status == "policy"
    msgs = [(v["rule"], v["audit_event"], v["message"]) for v in rec.violations]
    assert sum(1 for m in msgs if m[1] == "compile") >= 3  # fake file name, timeit, typing
    assert any(m[0] == "native-code" and m[1] == "import" for m in msgs)
    assert any(m[1] == "object.__getattr__" and "barrier" in m[2] for m in msgs)
    assert any(m[1] == "mmap.__new__" for m in msgs) and any(m[1] == "os.symlink" for m in msgs)
    assert any(m[0] == "process" and "thread" in m[1] for m in msgs) == THREAD_AUDITED


LEGIT = '''
import bpy
import collections
import logging
import os
import pathlib
import traceback
import json

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("scene")
log.info("building")  # logging reads its caller's frame and code
P = collections.namedtuple("P", "x y z")
p = P(0.0, 0.0, 1.0)
pathlib.Path("notes.txt").write_text("ok")
with open(pathlib.Path("notes.txt")) as fh:
    fh.read()
try:
    {{}}["missing"]
except KeyError:
    traceback.print_exc()  # the program's own traceback, formatted by the library
import fractions  # a module imported after the barrier: verified against its file, then trusted
fractions.Fraction(1, 3)
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.context.scene.frame_end = 1
bpy.ops.mesh.primitive_uv_sphere_add(location=p)
bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))
print("LEGIT done")
'''


def test_legitimate_library_use_passes(tmp_path: Path) -> None:
    src = LEGIT.replace("{{}}", "{}")
    assert check_source(src).ok, check_source(src).violations[:3]
    p = tmp_path / "src" / "scene.py"
    p.parent.mkdir()
    p.write_text(src)
    rec = run_program(p, tmp_path / "run", timeout_s=120, mode="bake_only", expected_frames=1)
    assert rec.status == "ok", (rec.reason, rec.violations[:3], rec.log_tail[-2000:])
    assert "LEGIT done" in (tmp_path / "run" / "run.log").read_text()


def test_shipped_truth_runs_ok_under_the_barrier(tmp_path: Path) -> None:
    truth = REPO / "tasks" / "packs" / "ball_bounce" / "truth.py"
    rec = run_program(truth, tmp_path / "run", timeout_s=300, mode="bake_only")
    assert rec.status == "ok", (rec.reason, rec.violations[:3])
    assert rec.blender_version and rec.blender_version_source == "child"
