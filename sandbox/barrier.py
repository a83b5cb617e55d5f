"""Run-time barrier installed inside the sandbox child before the scene program runs.

The second layer behind the operating-system wall (`sandbox.isolation`): a `sys.addaudithook` hook
that refuses process launches, sockets, ctypes, blocked imports, code compiled or unmarshalled by the
program, and Python-level file access outside the working folder (reads are also allowed in the
interpreter's own folders, which bpy and numpy need). Every refusal is appended to a status file
descriptor the parent handed over, before the PermissionError is raised, so a program that catches
the error is still recorded as a breach.

The hook cannot be switched off: `install()` builds it as a closure over its own state and returns
nothing; no object of this module stays reachable from the program (the bootstrap loads this file
without registering it in `sys.modules` and drops every reference before the program runs), and
the hook refuses the ways to dig it out again (`gc.get_objects/get_referrers/get_referents`,
replacing a function's `__code__`, `sys.addaudithook`, tracing). There is no "off" state: the
bootstrap's own post-run work runs under the same hook.

Standard library only: this file is loaded by path, also inside a Blender binary's Python.
"""

from __future__ import annotations

import json
import os
import sys
import time

BLOCKED_EVENTS = {
    # processes
    "os.system": "process",
    "os.exec": "process",
    "os.spawn": "process",
    "os.posix_spawn": "process",
    "os.fork": "process",
    "os.forkpty": "process",
    "os.kill": "process",
    "os.killpg": "process",
    "subprocess.Popen": "process",
    "pty.spawn": "process",
    "os.startfile": "process",
    "_posixsubprocess": "process",
    # network
    "socket.connect": "network",
    "socket.bind": "network",
    "socket.getaddrinfo": "network",
    "socket.gethostbyname": "network",
    "socket.gethostbyaddr": "network",
    "socket.gethostbyname_ex": "network",
    "socket.sendto": "network",
    "socket.sendmsg": "network",
    "socket.__new__": "network",
    "urllib.Request": "network",
    "http.client.connect": "network",
    "ftplib.connect": "network",
    "smtplib.connect": "network",
    "poplib.connect": "network",
    "imaplib.open": "network",
    "webbrowser.open": "network",
    # native code
    "ctypes.dlopen": "native-code",
    "ctypes.dlsym": "native-code",
    "ctypes.dlsym/handle": "native-code",
    "ctypes.cdata": "native-code",
    "ctypes.cdata/buffer": "native-code",
    "ctypes.call_function": "native-code",
    "ctypes.string_at": "native-code",
    "ctypes.wstring_at": "native-code",
    "ctypes.create_string_buffer": "native-code",
    "ctypes.addressof": "native-code",
    "mmap.__new__": "native-code",
    # interpreter internals (refused whoever asks: no library needs them in a scene program)
    "code.__new__": "exec-eval",
    "sys.settrace": "reflection",
    "sys.setprofile": "reflection",
    "sys.addaudithook": "reflection",
    "gc.get_objects": "reflection",
    "gc.get_referrers": "reflection",
    "gc.get_referents": "reflection",
    "sys._current_frames": "reflection",
    "threading.settrace": "reflection",
    "threading.setprofile": "reflection",
    "cpython.PyInterpreterState_Clear": "reflection",
    "cpython.run_command": "exec-eval",
    "cpython.run_file": "exec-eval",
    "cpython.run_module": "exec-eval",
    "cpython.run_startup": "exec-eval",
    "cpython.run_interactivehook": "exec-eval",
}
TAMPER_EXIT = 86  # exit code when the status channel was closed or replaced before a breach (runner.TAMPER_EXIT)
# refused when the nearest frame is untrusted code (the program or anything it made): libraries may use them
UNTRUSTED_EVENTS = {
    "compile": "exec-eval",
    "exec": "exec-eval",
    "marshal.loads": "exec-eval",
    "marshal.load": "exec-eval",
    "sys._getframe": "reflection",
    "sys._getframemodulename": "reflection",
}
FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "__code__"})
PATH_EVENTS_ONE = {  # event -> index of the path argument; any use outside the folder is refused
    "os.chdir": 0,
    "os.listdir": 0,
    "os.scandir": 0,
    "os.remove": 0,
    "os.rmdir": 0,
    "os.mkdir": 0,
    "os.rename": 0,
    "os.replace": 0,
    "os.link": 0,
    "os.symlink": 1,
    "os.truncate": 0,
    "os.chmod": 0,
    "os.chown": 0,
    "os.utime": 0,
    "shutil.rmtree": 0,
    "shutil.copyfile": 1,
    "shutil.copytree": 1,
    "shutil.move": 1,
    "glob.glob": 0,
    "os.chflags": 0,
    "os.setxattr": 0,
    "os.removexattr": 0,
}
BLOCKED_IMPORTS = {
    "subprocess": "process",
    "_posixsubprocess": "process",
    "multiprocessing": "process",
    "pty": "process",
    "socket": "network",
    "_socket": "network",
    "ssl": "network",
    "urllib.request": "network",
    "http.client": "network",
    "ftplib": "network",
    "smtplib": "network",
    "requests": "network",
    "ctypes": "native-code",
    "_ctypes": "native-code",
    "cffi": "native-code",
    "cv2": "media-decode",
    "imageio": "media-decode",
    "av": "media-decode",
    "PIL": "media-decode",
}


def _as_path(p: object) -> str | None:
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if isinstance(p, str):
        return p
    if hasattr(p, "__fspath__"):
        try:
            return os.fspath(p)  # type: ignore[arg-type]
        except Exception:
            return None
    return None


def install(
    workdir: str,
    status_fd: int | None,
    read_roots: list[str],
    program: str = "",
    write_roots: list[str] = (),
    trusted_roots: list[str] = (),
) -> None:
    """Install the hook for the rest of the process. Returns nothing: there is no handle to switch it off.

    `write_roots`: writable besides `workdir` (a private /tmp); `trusted_roots`: folders whose code is library
    code (the interpreter, site-packages, this folder); any other frame is the program's.
    """
    wd = os.path.realpath(workdir)
    writable = tuple(sorted({wd, *(os.path.realpath(r) for r in write_roots if r)}))
    readable = tuple(
        sorted(
            {
                *writable,
                *(os.path.realpath(r) for r in read_roots if r),
                *((os.path.realpath(program),) if program else ()),
            }
        )
    )
    trusted = tuple(
        sorted({os.path.realpath(r) for r in trusted_roots if r} | {os.path.dirname(os.path.abspath(__file__))})
    )
    here = __file__
    program_real = os.path.realpath(program) if program else None
    realpath, join, write, fstat, exit_now = os.path.realpath, os.path.join, os.write, os.fstat, os._exit
    channel = None
    if status_fd is not None:
        try:
            st0 = os.fstat(status_fd)
            channel = (st0.st_dev, st0.st_ino)
        except OSError:
            channel = None
    dumps, now, getframe = json.dumps, time.time, sys._getframe
    flag_bits = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    blocked_events, path_events, blocked_imports = dict(BLOCKED_EVENTS), dict(PATH_EVENTS_ONE), dict(BLOCKED_IMPORTS)
    untrusted_events, frame_attrs = dict(UNTRUSTED_EVENTS), FRAME_ATTRS
    import _thread

    get_ident = _thread.get_ident
    busy: set[int] = set()  # re-entrancy guard, per thread (another thread's events are never skipped)

    def emit(doc: dict) -> None:
        if status_fd is None:
            return
        try:  # the channel must still be the one the runner handed over: closed or replaced means tampering
            st = fstat(status_fd)
            same = (st.st_dev, st.st_ino) == channel
        except OSError:
            same = False
        if not same:
            exit_now(TAMPER_EXIT)  # a breach that cannot be recorded ends the run (the runner reads the exit code)
        try:
            write(status_fd, (dumps(doc, default=str) + "\n").encode())
        except OSError:
            exit_now(TAMPER_EXIT)

    def refuse(rule: str, event: str, detail: str) -> None:
        emit({"event": "breach", "rule": rule, "audit_event": event, "detail": detail[:500], "t": now()})
        raise PermissionError(f"sandbox policy ({rule}): {event} {detail[:200]} is not allowed in a scene program")

    def inside(path: str, roots: tuple) -> bool:
        try:
            rp = realpath(join(wd, path))
        except Exception:
            return False
        return any(rp == r or rp.startswith(r.rstrip("/") + "/") for r in roots)

    def is_trusted_file(fn: str) -> bool:
        if not fn or fn.startswith("<"):
            return fn.startswith("<frozen ")  # the import machinery; "<string>", "<stdin>"... are data
        rp = realpath(join(wd, fn))
        return any(rp.startswith(r.rstrip("/") + "/") for r in trusted)

    def untrusted() -> bool:
        """Is the nearest Python frame outside this file program code (not the interpreter's or a library's)?"""
        f = getframe(2)
        while f is not None:
            fn = f.f_code.co_filename
            if fn != here:
                return not is_trusted_file(fn)
            f = f.f_back
        return False

    def check_open(args: tuple) -> None:
        path = _as_path(args[0]) if args else None
        if path is None:  # an fd or an object: already open
            return
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        wr = bool(mode and any(c in str(mode) for c in "wax+")) or bool(flags & flag_bits)
        if path in ("/dev/null", "/dev/urandom", "/dev/random"):
            return
        if wr:
            if not inside(path, writable):
                refuse("file-outside-workdir", "open", f"write {path!r}")
        elif not inside(path, readable):
            refuse("file-outside-workdir", "open", f"read {path!r}")

    def check(event: str, args: tuple) -> None:
        if event == "open":
            check_open(args)
            return
        rule = blocked_events.get(event)
        if rule:
            refuse(rule, event, repr(args)[:200])
        if event in path_events:
            idx = path_events[event]
            p = _as_path(args[idx]) if len(args) > idx else None
            if p is None:
                if event in ("os.listdir", "os.scandir") and (not args or args[0] is None):
                    return
                if event == "os.chdir":
                    refuse("file-outside-workdir", event, "chdir by descriptor")
                return
            roots = writable if event not in ("os.listdir", "os.scandir", "glob.glob") else readable
            if not inside(p, roots):
                refuse("file-outside-workdir", event, repr(p))
            if event in ("os.rename", "os.replace", "os.link"):
                q = _as_path(args[1]) if len(args) > 1 else None
                if q is not None and not inside(q, writable):
                    refuse("file-outside-workdir", event, repr(q))
            return
        if event == "object.__setattr__":
            if (
                len(args) > 1
                and args[1] in ("__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__")
                and callable(args[0])
                and untrusted()
            ):
                refuse("reflection", event, f"setting {args[1]} of a function")
            return
        if event == "object.__getattr__":
            if len(args) > 1 and args[1] in frame_attrs and untrusted():
                refuse("reflection", event, f"reading {args[1]} (interpreter frames and code)")
            return
        rule = untrusted_events.get(event)
        if rule:
            if event == "compile":  # library sources compiled on import are fine; the program compiling code is not
                fname = _as_path(args[1]) if len(args) > 1 else None
                if not is_trusted_file(fname or "") and untrusted():
                    refuse(rule, event, f"code compiled from data ({fname or '?'})")
            elif event == "exec":
                fname = getattr(args[0], "co_filename", "") if args else ""
                if not is_trusted_file(fname) and fname != program_real and untrusted():
                    refuse(rule, event, f"code object from {fname or '?'}")
            elif untrusted():
                refuse(rule, event, event)
            return
        if event == "import":
            top = str(args[0]) if args else ""
            for name, r in blocked_imports.items():
                # media decoders are refused whoever asks (nothing of Blender's needs them); the rest only when the
                # program asks (libraries import urllib/socket lazily; their actions are audited events anyway)
                if (top == name or top.startswith(name + ".")) and (r == "media-decode" or untrusted()):
                    refuse(r, event, top)
            return

    def hook(event: str, args: tuple) -> None:
        tid = get_ident()
        if tid in busy:
            return
        busy.add(tid)
        try:
            check(event, args)
        finally:
            busy.discard(tid)

    sys.addaudithook(hook)


def default_read_roots() -> list[str]:
    """Folders a child may read besides its working folder: the interpreter, its packages, bpy's data."""
    import sysconfig

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for k in ("stdlib", "platstdlib", "purelib", "platlib", "data"):
        try:
            roots.add(sysconfig.get_paths()[k])
        except KeyError:
            pass
    for p in sys.path:
        if p and os.path.isdir(p) and ("site-packages" in p or "dist-packages" in p or "python3" in p):
            roots.add(p)
    bpy_mod = sys.modules.get("bpy")
    if bpy_mod is not None and getattr(bpy_mod, "__file__", None):
        roots.add(os.path.dirname(os.path.dirname(bpy_mod.__file__)))
    try:
        import bpy  # noqa: F401  (only present in the child)

        for sub in ("", "scripts", "datafiles"):
            d = bpy.utils.resource_path("LOCAL")
            if d:
                roots.add(os.path.join(d, sub))
    except Exception:
        pass
    roots.update(
        {
            "/usr/share/fonts",
            "/usr/share/glvnd",
            "/usr/share/drirc.d",
            "/etc/drirc",
            "/usr/share/X11",
            "/etc/fonts",
            "/usr/share/zoneinfo",
        }
    )
    return sorted(r for r in roots if r)
