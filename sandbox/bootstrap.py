"""Child-side entry point of the isolated runner: `python -I bootstrap.py --workdir DIR ...`.

Order matters: import bpy and the libraries a scene program normally uses *before* the audit hook is
installed (their own start-up reads files everywhere), then chdir into the working folder, install
the barrier (for good: there is no off switch, the post-run work below runs under it too, and no
reference to it survives in this module's frames or in sys.modules), compile the program (rewritten for bake_only /
preview) with its real file name so
tracebacks point at the user's lines, and run it as `__main__`. After the program, a post-run audit
looks at what Blender itself loaded (C code does not pass through Python's audit hooks): movie clips,
sounds, file-backed images and VSE strips from outside the folder are recorded as breaches.

Inside a Blender binary this runs through `blender -b --python bootstrap.py -- ARGS`.
Standard library + bpy only.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import resource
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
# the runner passes the mode as a four-letter code: the command line has the same length in every mode
MODE_CODES = {"full": "full", "bake": "bake_only", "prev": "preview"}


def _load(name: str):
    """One of our sibling modules, loaded by path and *not* registered in sys.modules (unreachable by name).

    Compiled from its source every time, never from `__pycache__`: whether a host process has cached it yet must
    not change what the child allocates (its memory layout, and so an SPH bake; see sandbox.runner)."""
    path = os.path.join(HERE, f"{name}.py")
    spec = importlib.util.spec_from_loader(f"_pcg_{name}", loader=None, origin=path)
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = path
    with open(path, encoding="utf-8") as fh:
        code = compile(fh.read(), path, "exec", dont_inherit=True)
    exec(code, mod.__dict__)
    return mod


def _watch_lifeline(fd: int) -> None:
    """End this process when the runner is gone: the runner holds the write end of pipe `fd`, EOF means it died.

    The watcher is a forked process, not a thread of this one: a thread runs, and allocates, when the scheduler lets
    it, and this process's memory must be laid out the same way in every run whatever the machine's load (an SPH bake
    reads memory it never wrote; sandbox.runner). It is forked first thing (with the bpy module: before bpy loads,
    while this process has one thread) and keeps only two pipes: the lifeline, and one whose EOF says this process
    has ended (then it just goes)."""
    import select
    import warnings

    me = os.getpid()
    alive_r, alive_w = os.pipe()  # this process holds the write end until it ends
    with warnings.catch_warnings():
        # inside a Blender binary this runs after Blender started its own threads, and Python 3.12+ warns about
        # fork() then; the forked watcher only waits on two pipes and sends one signal, it takes no lock they hold
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        try:
            keep = sorted((fd, alive_r))
            os.closerange(0, keep[0])
            os.closerange(keep[0] + 1, keep[1])
            os.closerange(keep[1] + 1, 1 << 16)
            while True:
                ready = select.select([fd, alive_r], [], [])[0]
                if alive_r in ready:
                    break
                if not os.read(fd, 64):
                    os.kill(me, 9)  # behind bwrap the PID namespace (every process the program made) ends with it
                    break
        finally:
            os._exit(0)
    os.close(alive_r)
    os.close(fd)


NATIVE_MODULES = ("ctypes", "_ctypes", "cffi", "_cffi_backend")  # sandbox.barrier.NATIVE_MODULES


def _bar_native_modules() -> None:
    """Before bpy and numpy import: no module that reads and writes raw memory without an audited event is loaded.

    numpy imports ctypes if it can and keeps it (`numpy.core._internal.ctypes`): a program could take it from there
    (no import event for a module already loaded). With these entries None, `import ctypes` fails and numpy runs
    without it (measured: bpy 5.0.1 / numpy 1.26 and bpy 5.2.3 / numpy 2 import and bake the same)."""
    for name in NATIVE_MODULES:
        sys.modules.setdefault(name, None)


def _native_sources(bpy) -> list[str]:
    """Blender's own binary: the bpy extension module (`bpy/__init__*.so`, as mapped into this process: `bpy.__file__`
    names the scripts package that replaces it) or the blender executable. Its C string literals are the Python
    source Blender compiles itself (sandbox.barrier)."""
    out: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                path = line.split(None, 5)[-1].strip() if line.count(" ") >= 5 else ""
                head, name = os.path.split(path)
                if os.path.basename(head) == "bpy" and name.startswith("__init__") and ".so" in name:
                    out.append(path)
    except OSError:
        pass
    if bpy.app.binary_path:
        out.append(bpy.app.binary_path)
    return sorted(set(out))


def _install_barrier(workdir: str, program: str, status_fd: int | None, ours: list, native: list[str]) -> None:
    """Install the audit hook; nothing of it is returned or kept in this module (the program runs after this frame).

    `ours`: our modules loaded without sys.modules and this file's functions (trusted code, handed over by
    identity); `native`: Blender's binary."""
    barrier_mod = _load("barrier")
    roots = [*barrier_mod.default_read_roots(), HERE]
    trusted = [r for r in roots if not r.startswith(("/usr/share", "/etc"))]
    tmp = os.environ.get("TMPDIR")
    barrier_mod.install(
        workdir,
        status_fd,
        roots,
        program=program,
        write_roots=[tmp] if tmp else [],
        trusted_roots=trusted,
        trusted_modules=ours,
        native_sources=native,
    )


def _widen_cpus_when_rendering(bpy) -> None:
    """The runner starts this process on one CPU, so that simulations bake the same way every run (sandbox.runner);
    when rendering starts, the renderer may use every CPU again. A persistent handler survives a program's
    read_factory_settings; a program that removes it only renders more slowly."""
    from bpy.app.handlers import persistent

    @persistent
    def pcg_widen_cpus(*_a) -> None:
        try:
            os.sched_setaffinity(0, range(os.cpu_count() or 1))
        except (AttributeError, OSError, ValueError):
            pass

    bpy.app.handlers.render_init.append(pcg_widen_cpus)


def _args(argv: list[str]) -> argparse.Namespace:
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    ap = argparse.ArgumentParser(prog="physcodegym-sandbox")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--status-fd", type=int, default=None)
    ap.add_argument("--mode", default="full", choices=(*MODE_CODES, *MODE_CODES.values()))
    ap.add_argument("--preview-frame", type=int, default=None)
    ap.add_argument("--no-barrier", action="store_true")
    ap.add_argument("--lifeline-fd", type=int, default=None)
    ap.add_argument("--site-dir", action="append", default=[], help="package folder for sys.path (python -S)")
    a = ap.parse_args(argv)
    a.mode = MODE_CODES.get(a.mode, a.mode)
    return a


def main(argv: list[str]) -> int:
    a = _args(argv)
    if a.lifeline_fd is not None:
        _watch_lifeline(a.lifeline_fd)
    workdir = os.path.realpath(a.workdir)
    rewrite_mod = _load("rewrite")
    media_mod = _load("media_audit")  # loaded before the program runs (and before the audit hook)
    status_fd = a.status_fd

    def emit(doc: dict) -> None:
        if status_fd is not None:
            try:
                os.write(status_fd, (json.dumps(doc, default=str) + "\n").encode())
            except OSError:
                pass

    for d in a.site_dir:  # the runner starts the interpreter with -S: package folders without their .pth files
        if d not in sys.path:
            sys.path.append(d)
    t0 = time.time()
    if not a.no_barrier:
        _bar_native_modules()
    import bpy  # preloaded before the barrier: their import reads files everywhere

    for extra in (
        "bmesh",
        "mathutils",
        "numpy",
        "random",
        "math",
        "json",
        "colorsys",
        "dataclasses",
        "collections",
        "bpy_extras",
    ):
        try:
            importlib.import_module(extra)
        except Exception:
            pass
    _widen_cpus_when_rendering(bpy)
    # Every value this process allocates before the program's bake has one size whatever the clock says: the import
    # time goes out as a fixed-width string. As a float its printed length followed the machine's load (1.2 vs 3.456),
    # the status line's allocation moved the heap, and an SPH bake touching a collider differed (measured on the
    # liquid_duck truth under CPU load: 3 of 12 bakes differed with a rounded float, 0 of 22 with this width).
    emit(
        {
            "event": "start",
            "bpy_version": bpy.app.version_string,
            "blender_binary": bool(bpy.app.binary_path),
            "python": sys.version.split()[0],
            "import_s": f"{min(time.time() - t0, 99999.0):011.3f}",
        }
    )

    os.chdir(workdir)
    program = os.path.realpath(a.program)
    with open(program, encoding="utf-8") as fh:
        source = fh.read()
    tree = ast.parse(source, filename=program)
    rendered = {"done": False}
    preview_path = os.path.join(workdir, "preview.png")

    def render_preview() -> set:
        sc = bpy.context.scene
        frame = a.preview_frame if a.preview_frame is not None else sc.frame_start
        r = sc.render
        old = (r.filepath, r.image_settings.file_format)
        old_media = getattr(r.image_settings, "media_type", None)
        sc.frame_set(frame)
        if old_media is not None:
            r.image_settings.media_type = "IMAGE"
        r.image_settings.file_format = "PNG"
        r.filepath = preview_path
        try:
            bpy.ops.render.render(write_still=True)
        finally:
            if old_media is not None:
                r.image_settings.media_type = old_media
            if old_media != "VIDEO":
                r.image_settings.file_format = old[1]
            r.filepath = old[0]
        rendered["done"] = True
        return {"FINISHED"}

    def pcg_render(op: str, *args, **kw) -> set:
        if a.mode == "full":
            return getattr(bpy.ops.render, op)(*args, **kw)
        if a.mode == "bake_only":
            return {"FINISHED"}
        if rendered["done"]:
            return {"FINISHED"}
        return render_preview()

    # render calls are rewritten in every mode (full mode's helper calls the real operator): the compiled program,
    # and so the memory layout up to its bake, is the same in a bake-only and a full run of one program
    tree, n_rewritten = rewrite_mod.rewrite_renders(tree)
    code = compile(tree, program, "exec")
    glb = {"__name__": "__main__", "__file__": program, "__builtins__": __builtins__}
    glb[rewrite_mod.HELPER] = pcg_render

    if not a.no_barrier:
        ours = [media_mod, rewrite_mod, main, _load, _install_barrier, _widen_cpus_when_rendering]
        # from here on, to the end of the process, with no way back
        _install_barrier(workdir, program, status_fd, ours, _native_sources(bpy))
    emit({"event": "program", "mode": a.mode, "rewritten_render_calls": n_rewritten, "barrier": not a.no_barrier})
    sys.argv = [program]
    rc = 0
    t1 = time.time()
    try:
        exec(code, glb)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if rc:
            print(f"scene program exited with status {rc}", file=sys.stderr)
    except BaseException:
        # still under the barrier: the exception's own __str__ (program code) runs contained
        try:
            traceback.print_exc()
        except BaseException:
            print("scene program raised an exception whose message cannot be printed", file=sys.stderr)
        rc = 1
    prog_s = time.time() - t1
    # the program's threads, handlers and drivers stay under the barrier during our post-run work too
    if a.mode == "preview" and rc == 0 and not rendered["done"]:
        try:
            render_preview()  # the program never rendered: render its final state at frame N
        except Exception:
            traceback.print_exc()
    for b in media_mod.scan_loaded_media(bpy, workdir, any_library=False):
        emit({"event": "breach", "audit_event": "post-run", **b})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    emit({"event": "end", "rc": rc, "program_s": round(prog_s, 3), "peak_rss_mb": round(peak, 1)})
    sys.stdout.flush()
    sys.stderr.flush()
    return rc


if __name__ == "__main__":
    code = main(sys.argv[1:])
    os._exit(code)  # skip bpy's atexit teardown (slow, and it may print after the log is closed)
