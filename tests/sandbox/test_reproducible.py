"""A program run twice in the sandbox runs the same way: same memory layout, same bake (real bpy, real bwrap).

Why it matters: a truth re-run must reproduce its reference video, and Blender's SPH particle solver depends on
thread scheduling and on the process's memory layout (sandbox.runner). The runner therefore starts the child on one
CPU with address randomisation off, behind a fixed in-wall layout (sandbox.isolation.layout), with a command line of
the same length in every mode. These tests fail if any of that is lost: the C pointers of a fresh scene differ
between two runs when the layout moves, and liquid_duck's liquid bakes differently in 1 run out of 3 or so.
The SPH solver also reads heap memory it never wrote: without `core.determinism.SIMULATION_ENV` the hose_jet
truth baked differently from two checkouts at different paths. What is not claimed (and so not tested): a run without
the wall (`--unsafe-no-isolation`) bakes the same liquid as a walled run only for some run folders, since its paths
are the host's (measured on a clean clone: hose_jet walled and unwalled bit-identical in every frame under one pytest
folder, different under another, 3 of 3 times); the walled child sees the same paths whatever the host's.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from physcodegym.sandbox import isolation as wall
from physcodegym.sandbox.runner import run_program

REPO = Path(__file__).resolve().parents[2]

# Prints where it runs and the addresses of objects Blender and Python allocate; renders one frame.
LAYOUT_PROBE = """
import bpy
import os
import sys
sc = bpy.context.scene
ob = bpy.data.objects.new("probe", bpy.data.meshes.new("probe"))
facts = {
    "cwd": os.getcwd(),
    "file": __file__,
    "executable": sys.executable,
    "cpus": len(os.sched_getaffinity(0)),
    "scene_ptr": sc.as_pointer(),
    "object_ptr": ob.as_pointer(),
    "py_id": id(ob),
    "no_site": sys.flags.no_site,
}
print("PCGFACTS " + repr(facts), flush=True)
sc.render.engine = "BLENDER_WORKBENCH"
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 640, 360, 100
sc.render.filepath = "//frames/"
sc.frame_start = sc.frame_end = 1
bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))
bpy.ops.render.render(animation=True)
print("PCGAFTER " + str(len(os.sched_getaffinity(0))), flush=True)
"""

PARTICLES = """
import sys, json, hashlib
import bpy
import numpy as np
bpy.ops.wm.open_mainfile(filepath=sys.argv[1])
sc = bpy.context.scene
out = {}
for f in (sc.frame_end // 6, sc.frame_end // 2, sc.frame_end):
    sc.frame_set(f)
    dg = bpy.context.evaluated_depsgraph_get()
    h = hashlib.sha256()
    n = 0
    for ob in sc.objects:
        for ps in ob.evaluated_get(dg).particle_systems:
            a = np.zeros(len(ps.particles) * 3, dtype=np.float32)
            ps.particles.foreach_get("location", a)
            h.update(a.tobytes())
            n += len(ps.particles)
    out[str(f)] = [n, h.hexdigest()]
print("PCGPARTICLES " + json.dumps(out))
"""


def _facts(run_dir: Path, tag: str) -> str:
    line = next(ln for ln in (run_dir / "run.log").read_text().splitlines() if ln.startswith(tag))
    return line.split(" ", 1)[1]


@pytest.mark.alone  # beside a parallel worker the layout moved (object pointers 80 B apart) and the SPH bake differed
def test_the_child_sees_one_layout_one_cpu_and_no_address_randomisation(tmp_path: Path) -> None:
    prog = tmp_path / "probe.py"
    prog.write_text(LAYOUT_PROBE)
    runs = {
        "short": (tmp_path / "a", "full"),
        "a_much_longer_run_folder_name": (tmp_path / "a_much_longer_run_folder_name" / "deeper", "full"),
        "bake": (tmp_path / "b", "bake_only"),
    }
    facts = {}
    for key, (out, mode) in runs.items():
        rec = run_program(prog, out, timeout_s=180, mode=mode, expected_frames=1)
        assert rec.status == "ok", (rec.reason, rec.log_tail)
        facts[key] = eval(_facts(out, "PCGFACTS"))  # noqa: S307 - a dict literal our own probe printed
    first = facts["short"]
    assert first["cwd"] == wall.WALL_RUN and first["file"] == f"{wall.WALL_PROGRAM_DIR}/scene.py"
    assert first["executable"].startswith(wall.WALL_VENV) or sys.prefix == sys.base_prefix
    assert first["cpus"] == 1  # the simulation runs on one CPU: one TBB thread
    # no .pth file ran (an editable install's finder names the checkout's path, which would move the layout)
    assert first["no_site"] == 1, first
    # every address Blender allocates is the same in every run folder and in both modes: the layout does not move.
    # Python's own object ids are not compared: the child runs with -I, so its string hash seed is random. Blender's
    # pointers are. They moved 224 B between runs when the bootstrap watched its lifeline from a thread (measured on
    # a clean clone after the parallel phase: 4 of 8 children on one address, 4 on another; the SPH bake then
    # differed too); with the watcher a forked process, 28 of 28 children agreed (sandbox.bootstrap._watch_lifeline)
    for key, f in facts.items():
        assert {k: v for k, v in f.items() if k != "py_id"} == {k: v for k, v in first.items() if k != "py_id"}, \
            (key, f, first)
    # rendering gets every CPU back (the full runs only: a bake-only run never renders)
    assert int(_facts(tmp_path / "a", "PCGAFTER")) == len(__import__("os").sched_getaffinity(0))


def _baked_liquid(prog: Path, out: Path) -> dict:
    """Bake `prog` bake-only into `out` and return its particle digests per frame (a real liquid is asserted)."""
    rec = run_program(prog, out, timeout_s=600, mode="bake_only")
    assert rec.status == "ok", (rec.reason, rec.log_tail)
    p = subprocess.run([sys.executable, "-c", PARTICLES, str(out / "scene.blend")], capture_output=True,
                       text=True, timeout=300)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("PCGPARTICLES ")), None)
    assert line, p.stderr[-2000:]
    doc = json.loads(line.split(" ", 1)[1])
    assert doc[max(doc, key=int)][0] > 100, doc  # a real liquid was baked
    return doc


@contextlib.contextmanager
def _busy_machine(n: int = 3):
    """`n` processes spinning on the CPUs while the block runs: a loaded CI machine, where start-up takes longer
    and anything of the child's that depends on the clock shows."""
    spin = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in spin:
            p.kill()
            p.wait()


@pytest.mark.slow
@pytest.mark.alone  # beside a parallel worker the layout moved (object pointers 80 B apart) and the SPH bake differed
def test_an_sph_liquid_bakes_the_same_in_every_run_folder_on_a_busy_machine(tmp_path: Path) -> None:
    """liquid_duck's truth (particles splashing off a collider), baked four times in folders of different names while
    other processes load the CPUs. The shipped truth, not its small copy (tests/rubric/small_tasks.py): with the
    bootstrap's old lifeline thread the shipped truth's bakes differed in 2 of 2 serial phases on a clean clone, the
    small copy's in 0 of 2 (sandbox.bootstrap._watch_lifeline). CI failed here before that: the child reported its
    import time as a rounded float before the bake, its printed length followed the load, and that moved the heap
    (sandbox.bootstrap); on an idle machine the import time hardly varies, so the test loads the machine to see it
    (measured with the float: 1 bake in 4 differed under load, 0 in 6 idle)."""
    prog = REPO / "tasks" / "packs" / "liquid_duck" / "truth.py"
    names = ("r", "run_two", "a_third_run_with_a_long_name", "r4")
    with _busy_machine():
        digests = [_baked_liquid(prog, tmp_path / name) for name in names]
    assert all(d == digests[0] for d in digests[1:]), digests
