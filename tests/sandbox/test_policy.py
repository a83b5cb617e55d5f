"""The static checker refuses bypass attempts (each with its rule and line) and passes legitimate programs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from physcodegym.sandbox.policy import RULES, check_source, path_outside
from progs import scene

REPO = Path(__file__).resolve().parents[2]

BAD = [
    ("x = getattr(__builtins__, 'ex' + 'ec')", "reflection"),
    ("f = getattr(bpy.data.images, 'lo' + 'ad')", "reflection"),
    ("__import__('os').system('ls')", "dynamic-import"),
    ("import importlib\nimportlib.import_module('socket')", "dynamic-import"),
    ("import os\nos.system('ls')", "process"),
    ("import os as o\no.popen('ls')", "process"),
    ("from os import system as s\ns('ls')", "process"),
    ("import subprocess as sp\nsp.run(['ls'])", "process"),
    ("import os\nos.execv('/bin/sh', ['sh'])", "process"),
    ("import socket\nsocket.create_connection(('example.com', 80))", "network"),
    ("import urllib.request\nurllib.request.urlopen('http://x')", "network"),
    ("import requests", "network"),
    ("import bpy\nbpy.ops.wm.url_open(url='http://x')", "network"),
    ("import ctypes\nctypes.CDLL(None)", "native-code"),
    ("import bpy\nimg = bpy.data.images.load('ref.png')", "media-decode"),
    ("import bpy\nD = bpy.data\nD.movieclips.load('reference.mp4')", "media-decode"),
    ("import bpy\nD = bpy.data\nD.sounds.load('a.wav')", "media-decode"),
    ("import bpy\nsed = bpy.context.scene.sequence_editor_create()\nsed.strips.new_movie('c', 'r.mp4', 1, 1)", "media-decode"),
    ("import bpy\nbpy.context.scene.sequence_editor_create().strips.new_image('c', 'f.png', 1, 1)", "media-decode"),
    ("import bpy\nimg = bpy.data.images.new('x', 4, 4)\nimg.source = 'FILE'", "media-decode"),
    ("import bpy\nbpy.ops.image.open(filepath='f.png')", "media-decode"),
    ("import bpy\nbpy.ops.sequencer.movie_strip_add(filepath='r.mp4')", "media-decode"),
    ("import cv2\ncap = cv2.VideoCapture('reference.mp4')", "media-decode"),
    ("import imageio", "media-decode"),
    ("import av", "media-decode"),
    ("open('/etc/passwd').read()", "file-outside-workdir"),
    ("open('../x', 'w')", "file-outside-workdir"),
    ("import os\nopen(os.path.join('..', 'reference.mp4'), 'rb')", "file-outside-workdir"),
    ("from pathlib import Path\nPath('/etc/passwd').read_text()", "file-outside-workdir"),
    ("import os\nos.chdir('/tmp')", "file-outside-workdir"),
    ("import os\nos.listdir('/work')", "file-outside-workdir"),
    ("import bpy\nbpy.context.scene.render.filepath = '/tmp/frames/'", "file-outside-workdir"),
    ("import bpy\nbpy.ops.wm.save_as_mainfile(filepath='/tmp/x.blend')", "file-outside-workdir"),
    ("import bpy\nbpy.ops.wm.open_mainfile(filepath='/data/other.blend')", "load-external-blend"),
    ("import bpy\np = 'x'\nbpy.ops.wm.open_mainfile(filepath=p)", "load-external-blend"),
    ("import bpy\nbpy.ops.wm.append(filepath='/lib/a.blend/Object/Cube', directory='/lib/a.blend/Object/', filename='Cube')", "load-external-blend"),
    ("import bpy\nwith bpy.data.libraries.load('/lib/a.blend') as (src, dst):\n    pass", "load-external-blend"),
    ("eval('1+1')", "exec-eval"),
    ("exec('print(1)')", "exec-eval"),
    ("c = compile('1', 'x', 'eval')", "exec-eval"),
    ("import bpy\nbpy.data.texts['t'].as_module()", "exec-eval"),
    ("import bpy\nbpy.utils.execfile('x.py')", "exec-eval"),
    ("import threading\nthreading.Thread(target=print).start()", "process"),
    ("import multiprocessing\nmultiprocessing.Process(target=print).start()", "process"),
    ("from concurrent.futures import ThreadPoolExecutor", "process"),
    ("g = globals()['__builtins__']", "reflection"),
    ("x = ().__class__.__bases__[0].__subclasses__()", "reflection"),
    ("import sys\nm = sys.modules['os']", "reflection"),
    ("import builtins\nbuiltins.open('x')", "reflection"),
    ("import os\nf = vars(os)['system']", "reflection"),
    ("import bpy\nbpy.app.driver_namespace['e'] = 1", "reflection"),
    ("import pickle", "reflection"),
    ("import shutil\nshutil.copy('/etc/passwd', 'x')", "file-outside-workdir"),
    ("import bpy\nbpy.ops.preferences.addon_install(filepath='a.zip')", "dynamic-import"),
    ("def f(:\n  pass", "syntax-error"),
    # numpy's array protocols over a raw address (no audited event at run time: docs/THREAT_MODEL.md)
    ("import numpy\nclass M:\n    @property\n    def __array_interface__(self):\n        return {}\n", "native-code"),
    ("import numpy\nnumpy.asarray(type('M', (), {'__array_interface__': {}})())", "native-code"),
    ("import numpy\nx = numpy.zeros(1).__array_struct__", "native-code"),
]


@pytest.mark.parametrize("src,rule", BAD, ids=[f"{i:02d}-{r}" for i, (_, r) in enumerate(BAD)])
def test_refuses_bypass(src: str, rule: str) -> None:
    rep = check_source(src)
    assert not rep.ok, f"not refused: {src!r}"
    rules = {v.rule for v in rep.violations}
    assert rule in rules, f"{src!r}: expected {rule}, got {rep.to_dict()}"
    assert all(v.rule in RULES for v in rep.violations)
    assert all(v.line >= 1 for v in rep.violations)


def test_every_violation_with_its_line() -> None:
    src = "import bpy\nimport socket\nx = 1\neval('2')\nimport os\nos.system('ls')\nopen('/etc/passwd')\n"
    rep = check_source(src)
    got = [(v.rule, v.line) for v in rep.violations]
    assert ("network", 2) in got and ("exec-eval", 4) in got and ("process", 6) in got
    assert ("file-outside-workdir", 7) in got
    assert [v.line for v in rep.violations] == sorted(v.line for v in rep.violations)


LEGIT = '''
import bpy
import bmesh
import math
import random
import os
from mathutils import Vector, noise
import numpy as np

bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
random.seed(3)
os.makedirs("frames", exist_ok=True)
out = os.path.join(os.getcwd(), "scene.blend")
mesh = bpy.data.meshes.new("Rock")
bm = bmesh.new()
bmesh.ops.create_icosphere(bm, subdivisions=2, radius=0.5)
for v in bm.verts:
    v.co += v.co.normalized() * 0.05 * noise.noise(v.co * 3.0)
bm.to_mesh(mesh)
bm.free()
rock = bpy.data.objects.new("Rock", mesh)
sc.collection.objects.link(rock)
mat = bpy.data.materials.new("RockMat")
mat.use_nodes = True
nt = mat.node_tree
tex = nt.nodes.new("ShaderNodeTexNoise")
tex.inputs["Scale"].default_value = 8.0
nt.links.new(tex.outputs["Color"], nt.nodes["Principled BSDF"].inputs["Base Color"])
img = bpy.data.images.new("Gen", 64, 64)
img.generated_type = "UV_GRID"
rock.data.materials.append(mat)
sc.frame_set(1)
bpy.context.view_layer.objects.active = rock
bpy.ops.rigidbody.object_add()
rock.rigid_body.mass = 2.0
rock.location = Vector((0.0, 0.0, 3.0))
bpy.ops.mesh.primitive_grid_add(x_subdivisions=10, y_subdivisions=10, size=2, location=(0, 0, 2))
flag = bpy.context.active_object
cm = flag.modifiers.new("Cloth", "CLOTH")
cm.settings.quality = 5
bpy.ops.object.effector_add(type="WIND", location=(0, -3, 2))
bpy.context.active_object.field.strength = 800.0
bpy.ops.mesh.primitive_uv_sphere_add(location=(2, 0, 3))
em = bpy.context.active_object
ps = em.modifiers.new("Fluid", "PARTICLE_SYSTEM").particle_system.settings
ps.physics_type = "FLUID"
ps.count = 500
arr = np.zeros(3)
val = getattr(rock, "location", None)
setattr(rock.rigid_body, "friction", 0.5)
vals = {k: getattr(rock.rigid_body, k) for k in ["mass"]}
sc.render.filepath = "//frames/"
sc.render.engine = "BLENDER_WORKBENCH"
bpy.ops.ptcache.bake_all(bake=True)
bpy.ops.wm.save_as_mainfile(filepath=out)
bpy.ops.wm.open_mainfile(filepath="scene.blend")
with open("notes.txt", "w") as fh:
    fh.write(str(math.pi))
bpy.ops.render.render(animation=True)
'''


def _truth_programs() -> list[Path]:
    return sorted((REPO / "tasks" / "packs").glob("*/truth.py")) + sorted((REPO / "submissions").glob("*/*/scene.py"))


def test_legitimate_programs_pass() -> None:
    for name, src in (("legit", LEGIT), ("tiny", scene())):
        rep = check_source(src, name)
        assert rep.ok, f"{name}: {rep.to_dict()}"


@pytest.mark.parametrize("path", [p for p in _truth_programs() if "broken-agent" not in str(p)],
                         ids=lambda p: "/".join(p.parts[-3:]))
def test_shipped_programs_pass(path: Path) -> None:
    rep = check_source(path.read_text(), str(path))
    assert rep.ok, f"{path}: {rep.to_dict()}"


def test_path_outside() -> None:
    assert path_outside("/etc/passwd") and path_outside("../x") and path_outside("a/../../b") and path_outside("~/x")
    assert path_outside("//../x") and path_outside("http://x")
    assert not path_outside("frames/0001.png") and not path_outside("//frames/") and not path_outside("a/../b")


def test_cli_json(tmp_path: Path) -> None:
    bad = tmp_path / "scene.py"
    bad.write_text("import bpy\nimport socket\n")
    exe = [sys.executable, "-m", "physcodegym", "check", str(bad), "--json"]
    p = subprocess.run(exe, capture_output=True, text=True, timeout=120)
    doc = json.loads(p.stdout)
    assert p.returncode == 0 and doc["ok"] is False
    assert doc["violations"] == [{"rule": "network", "line": 2, "message": doc["violations"][0]["message"]}]
    p = subprocess.run([sys.executable, "-m", "physcodegym", "check", str(tmp_path / "nope.py"), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "nope.py" in json.loads(p.stdout)["error"]["file"]


# Ordinary scene code the checker once refused: it is the friendly early report, not the wall.
ISSUE_LEGIT = {
"video_out": '''import bpy
import os
sc = bpy.context.scene
sc.render.image_settings.media_type = "VIDEO"
sc.render.filepath = os.path.abspath("render.mp4")
sc.render.filepath = "//render.mp4"
''',
"texture": '''import bpy
img = bpy.data.images.new("checker", 64, 64)
img.generated_type = "COLOR_GRID"
img.filepath_raw = "//checker.png"
img.file_format = "PNG"
img.save()
''',
"cleanup": '''import bpy
for name in ("meshes", "materials", "objects", "cameras", "lights"):
    coll = getattr(bpy.data, name)
    for block in list(coll):
        coll.remove(block)
''',
"prim": '''import bpy
for kind in ("cube", "uv_sphere", "cylinder"):
    op = getattr(bpy.ops.mesh, "primitive_" + kind + "_add")
    op(location=(0, 0, 1))
''',
"cwd": '''import bpy
import os
out = os.getcwd() + "/frames"
os.makedirs(out, exist_ok=True)
bpy.context.scene.render.filepath = os.getcwd() + "/frames/"
bpy.ops.wm.save_as_mainfile(filepath=os.getcwd() + "/scene.blend")
''',
"csv": '''import bpy
import io
import csv
buf = io.StringIO("name,mass\\nball,2.0\\n")
rows = list(csv.DictReader(buf))
out = io.StringIO()
w = csv.writer(out)
w.writerow(["a", 1])
print(rows, out.getvalue())
''',
}

# ... while the rules that catch bypass attempts behind the same constructs still hold.
ISSUE_BAD = {
 "lo_ad_var": "import bpy\nk = 'lo' + 'ad'\nf = getattr(bpy.data.images, k)\n",
 "frag": "import bpy\ndef g(x):\n    return getattr(bpy.data.images, 'lo' + x)\n",
 "wm": "import bpy\ndef f(n):\n    getattr(bpy.ops.wm, n)()\n",
 "libs": "import bpy\nfor n in ('libraries',):\n    c = getattr(bpy.data, n)\n",
 "joinabs": "import os\nopen(os.path.join(os.getcwd(), '/etc/passwd'))\n",
 "dotdot": "import os\nopen(os.getcwd() + '/../truth.py')\n",
 "ioopen": "import io\nio.open('/etc/passwd')\n",
 "mp4": "import bpy\nimg = bpy.data.images.new('x', 4, 4)\nimg.filepath = 'ref.mp4'\n",
}


@pytest.mark.parametrize("name", sorted(ISSUE_LEGIT))
def test_issue_legit_programs_pass(name: str) -> None:
    rep = check_source(ISSUE_LEGIT[name], name)
    assert rep.ok, rep.to_dict()


@pytest.mark.parametrize("name", sorted(ISSUE_BAD))
def test_issue_bypasses_behind_the_same_constructs_are_refused(name: str) -> None:
    rep = check_source(ISSUE_BAD[name], name)
    assert not rep.ok, f"{name} not refused"
