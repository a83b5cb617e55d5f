"""Run-time barrier installed inside the sandbox child before the scene program runs.

The static checker cannot prove everything (computed paths, aliases through containers, code that
only misbehaves at run time), so the child also installs a `sys.addaudithook` hook that refuses
process launches, sockets, ctypes, code compiled from strings, and Python-level file access
outside the working folder (reads are also allowed in the interpreter's own folders, which bpy and
numpy need). Every refusal is appended to a status file descriptor the parent handed over, before
the PermissionError is raised, so a program that catches the error is still recorded as a breach.

Standard library only: this file is loaded by path, also inside a Blender binary's Python.
"""

from __future__ import annotations

import json
import os
import sys
import time

BLOCKED_EVENTS = {
    # processes
    "os.system": "process", "os.exec": "process", "os.spawn": "process", "os.posix_spawn": "process",
    "os.fork": "process", "os.forkpty": "process", "os.kill": "process", "os.killpg": "process",
    "subprocess.Popen": "process", "pty.spawn": "process", "os.startfile": "process", "_posixsubprocess": "process",
    # network
    "socket.connect": "network", "socket.bind": "network", "socket.getaddrinfo": "network",
    "socket.gethostbyname": "network", "socket.gethostbyaddr": "network", "socket.gethostbyname_ex": "network",
    "socket.sendto": "network", "socket.sendmsg": "network", "socket.__new__": "network",
    "urllib.Request": "network", "http.client.connect": "network", "ftplib.connect": "network",
    "smtplib.connect": "network", "poplib.connect": "network", "imaplib.open": "network",
    "webbrowser.open": "network",
    # native code
    "ctypes.dlopen": "native-code", "ctypes.dlsym": "native-code", "ctypes.dlsym/handle": "native-code",
    "ctypes.cdata": "native-code", "ctypes.cdata/buffer": "native-code", "ctypes.call_function": "native-code",
    "ctypes.string_at": "native-code", "ctypes.wstring_at": "native-code", "ctypes.create_string_buffer": "native-code",
    "ctypes.addressof": "native-code", "mmap.__new__": "native-code",
    # interpreter internals
    "code.__new__": "exec-eval", "sys.settrace": "reflection", "sys.setprofile": "reflection",
}
PATH_EVENTS_ONE = {  # event -> index of the path argument; any use outside the folder is refused
    "os.chdir": 0, "os.listdir": 0, "os.scandir": 0, "os.remove": 0, "os.rmdir": 0, "os.mkdir": 0,
    "os.rename": 0, "os.replace": 0, "os.link": 0, "os.symlink": 1, "os.truncate": 0, "os.chmod": 0,
    "os.chown": 0, "os.utime": 0, "shutil.rmtree": 0, "shutil.copyfile": 1, "shutil.copytree": 1,
    "shutil.move": 1, "glob.glob": 0, "os.chflags": 0, "os.setxattr": 0, "os.removexattr": 0,
}
BLOCKED_IMPORTS = {
    "subprocess": "process", "_posixsubprocess": "process", "multiprocessing": "process", "pty": "process",
    "socket": "network", "_socket": "network", "ssl": "network", "urllib.request": "network",
    "http.client": "network", "ftplib": "network", "smtplib": "network", "requests": "network",
    "ctypes": "native-code", "_ctypes": "native-code", "cffi": "native-code",
    "cv2": "media-decode", "imageio": "media-decode", "av": "media-decode", "PIL": "media-decode",
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


class Barrier:
    """The audit hook; `install()` once, it cannot be removed (that is the point)."""

    def __init__(self, workdir: str, status_fd: int | None, read_roots: list[str], program: str = "") -> None:
        self.workdir = os.path.realpath(workdir)
        self.program = program
        self.status_fd = status_fd
        self.read_roots = sorted({os.path.realpath(r) for r in read_roots if r})
        self.active = False
        self.breaches: list[dict] = []
        self._inside = False

    # -- recording ---------------------------------------------------------------------------
    def emit(self, doc: dict) -> None:
        if self.status_fd is None:
            return
        try:
            os.write(self.status_fd, (json.dumps(doc, default=str) + "\n").encode())
        except OSError:
            pass

    def refuse(self, rule: str, event: str, detail: str) -> None:
        doc = {"event": "breach", "rule": rule, "audit_event": event, "detail": detail[:500], "t": time.time()}
        self.breaches.append(doc)
        self.emit(doc)
        raise PermissionError(f"sandbox policy ({rule}): {event} {detail[:200]} is not allowed in a scene program")

    # -- path rules --------------------------------------------------------------------------
    def inside(self, path: str, roots: list[str]) -> bool:
        try:
            rp = os.path.realpath(os.path.join(self.workdir, path))
        except Exception:
            return False
        return any(rp == r or rp.startswith(r.rstrip("/") + "/") for r in roots)

    def _open(self, args: tuple) -> None:
        path = _as_path(args[0]) if args else None
        if path is None:  # an fd or an object: already open
            return
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        write = bool(mode and any(c in str(mode) for c in "wax+")) or bool(
            flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC)
        )
        if path in ("/dev/null", "/dev/urandom", "/dev/random"):
            return
        if write:
            if not self.inside(path, [self.workdir]):
                self.refuse("file-outside-workdir", "open", f"write {path!r}")
        elif not self.inside(path, [self.workdir, *self.read_roots]):
            self.refuse("file-outside-workdir", "open", f"read {path!r}")

    # -- the hook ----------------------------------------------------------------------------
    def __call__(self, event: str, args: tuple) -> None:
        if not self.active or self._inside:
            return
        self._inside = True
        try:
            self._check(event, args)
        finally:
            self._inside = False

    def _check(self, event: str, args: tuple) -> None:
        if event == "open":
            self._open(args)
            return
        rule = BLOCKED_EVENTS.get(event)
        if rule:
            self.refuse(rule, event, repr(args)[:200])
        if event in PATH_EVENTS_ONE:
            idx = PATH_EVENTS_ONE[event]
            p = _as_path(args[idx]) if len(args) > idx else None
            if p is None:
                if event in ("os.listdir", "os.scandir") and (not args or args[0] is None):
                    return
                if event == "os.chdir":
                    self.refuse("file-outside-workdir", event, "chdir by descriptor")
                return
            roots = [self.workdir] if event not in ("os.listdir", "os.scandir", "glob.glob") else [self.workdir, *self.read_roots]
            if not self.inside(p, roots):
                self.refuse("file-outside-workdir", event, repr(p))
            if event == "os.rename" or event == "os.replace" or event == "os.link":
                q = _as_path(args[1]) if len(args) > 1 else None
                if q is not None and not self.inside(q, [self.workdir]):
                    self.refuse("file-outside-workdir", event, repr(q))
            return
        if event == "compile":
            fname = args[1] if len(args) > 1 else None
            fname = _as_path(fname) or ""
            # library code (dataclasses, namedtuple) compiles generated strings; the program itself may not
            if (fname.startswith("<") or not fname) and self._from_program():
                self.refuse("exec-eval", event, f"code compiled from a string ({fname or '?'})")
            return
        if event == "exec":
            return
        if event == "import":
            mod = args[0] if args else ""
            top = str(mod)
            for name, r in BLOCKED_IMPORTS.items():
                if (top == name or top.startswith(name + ".")) and self._from_program():
                    self.refuse(r, event, top)
            return

    def _from_program(self) -> bool:
        """Is the nearest Python frame (outside this file and the import machinery) the scene program?"""
        f = sys._getframe(1)
        here = __file__
        while f is not None:
            fn = f.f_code.co_filename
            if fn != here and not fn.startswith("<frozen"):
                return fn == self.program
            f = f.f_back
        return False

    def install(self) -> None:
        sys.addaudithook(self)
        self.active = True


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
    roots.update({"/usr/share/fonts", "/usr/share/glvnd", "/usr/share/drirc.d", "/etc/drirc", "/usr/share/X11",
                  "/etc/fonts", "/usr/share/zoneinfo"})
    return sorted(r for r in roots if r)
