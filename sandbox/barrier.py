"""Run-time barrier installed inside the sandbox child before the scene program runs.

The second layer behind the operating-system wall (`sandbox.isolation`): a `sys.addaudithook` hook
that refuses process launches, sockets, native code, blocked imports, code compiled or unmarshalled by the
program, and Python-level file access outside the working folder (reads are also allowed in the
interpreter's own folders, which bpy and numpy need). Every refusal is appended to a status file
descriptor the parent handed over, before the PermissionError is raised, so a program that catches
the error is still recorded as a breach.

Trust is by where code was really loaded from, never by a claim: a code object is library code when
it existed before the program (every function of the modules imported so far, walked at install, and the frames on
the stack then), or when the import system executes it for a real file under a trusted root and it equals our own
compilation of that file. A `co_filename` the program wrote (`compile(src, "/usr/lib/...")`,
`_imp._fix_co_filename`) proves nothing. What a library does while the program is below it on the stack is the
program's doing: code compiled from data, frames and code objects handed out, threads started are refused whenever
a frame of the program is on the stack (down to the module body an import runs), so a standard-library function
that evaluates strings (timeit, typing, runpy...) or walks tracebacks launders nothing. Blender compiles a few
fixed strings itself (`BPY_run_string`, e.g. `addon_utils.disable_all()` in read_factory_settings on 5.2): such a
compile is allowed when its text is a whole C string literal of Blender's own binary, read from the install.

Raw memory without an audited event: `ctypes`/`_ctypes`/`cffi` are never loaded in the child (the bootstrap bars
them before bpy and numpy import, numpy then runs without them) and importing them, or loading their extension
file directly, is refused whoever asks; `mmap` is refused; /proc/self/mem is outside every readable folder, and
symbolic links cannot be made (a link swapped between this check and the open would redirect it). What stays open
is listed in docs/THREAT_MODEL.md (numpy's `__array_interface__` takes a raw address): the wall is the boundary.

The hook cannot be switched off: `install()` builds it as a closure over its own state and returns
nothing; no object of this module stays reachable from the program (the bootstrap loads this file
without registering it in `sys.modules` and drops every reference before the program runs), and
the hook refuses the ways to dig it out again (`gc.get_objects/get_referrers/get_referents`,
replacing a function's `__code__`, `sys.addaudithook`, tracing, traceback frames). It never runs the program's code
(no `__fspath__`, `__repr__`, `__eq__` or `__class__` of the program's objects; its own path resolution and JSON
use only functions captured at install). There is no "off" state: the bootstrap's own post-run work runs under
the same hook.

Standard library only: this file is loaded by path, also inside a Blender binary's Python.
"""

from __future__ import annotations

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
    # a link swapped between the barrier's check of a path and the open would redirect the open (/proc/self/mem)
    "os.symlink": "file-outside-workdir",
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
# refused when the nearest frame is the program's: its own frame's code (logging reads its caller's f_code)
FRAME_ATTRS = frozenset({"f_code"})
# refused whenever the program is on the stack: code objects (a genuine library code object under the program's
# own globals would run as library code)
STRICT_FRAME_ATTRS = frozenset({"__code__", "gi_code", "cr_code", "ag_code"})
# frames handed out by tracebacks and generators: never one of the barrier's own (a refusal's traceback passes
# through the hook, whose frame holds its state), whoever asks; the program may not read them itself (a library
# formatting the program's own traceback may)
HANDED_FRAMES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
# raw memory with no audited event once loaded: refused whoever asks, by module name or extension file name
NATIVE_MODULES = frozenset({"ctypes", "_ctypes", "cffi", "_cffi_backend"})
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


def install(
    workdir: str,
    status_fd: int | None,
    read_roots: list[str],
    program: str = "",
    write_roots: list[str] = (),
    trusted_roots: list[str] = (),
    trusted_modules: list = (),
    native_sources: list[str] = (),
) -> None:
    """Install the hook for the rest of the process. Returns nothing: there is no handle to switch it off.

    `write_roots`: writable besides `workdir` (a private /tmp). `trusted_roots`: folders whose files hold library
    code (the interpreter, site-packages, Blender's scripts, this folder). `trusted_modules`: modules of ours loaded
    without sys.modules. `native_sources`: Blender's own binary (the bpy extension module or the blender
    executable), whose C string literals are the Python source Blender itself compiles (`BPY_run_string`).

    Trust is by identity, never by a name a code object states: a code object is library code when it was loaded
    before the program existed (every function and class of the modules imported so far, walked here), or when the
    import system executes it later for a real file under a trusted root and it equals our own compilation of that
    file. Frames of any other code (the program, anything it compiled, a code object whose `co_filename` was
    rewritten) are the program's.
    """
    import _io
    import types

    try:
        from _json import encode_basestring_ascii as _q
    except ImportError:  # pragma: no cover - CPython always has _json

        def _q(v: str) -> str:
            return '"' + v.encode("ascii", "backslashreplace").decode("ascii").replace('"', "'") + '"'

    lstat, readlink, getcwd, fstat, write, exit_now = os.lstat, os.readlink, os.getcwd, os.fstat, os.write, os._exit
    s_islnk = __import__("stat").S_ISLNK
    now, getframe, compile_ = time.time, sys._getframe, compile
    open_ = _io.open
    from _struct import error as struct_error
    from _struct import unpack_from

    code_type, func_type, str_join, bytes_join = types.CodeType, types.FunctionType, "".join, b"".join
    fs_enc = sys.getfilesystemencoding()
    type_name = type.__dict__["__name__"].__get__
    import pathlib

    path_types = (pathlib.PurePosixPath, pathlib.PosixPath, pathlib.Path)
    direntry_type, fspath, module_type = os.DirEntry, os.fspath, types.ModuleType
    spec_type = __import__("importlib.machinery").machinery.ModuleSpec

    def is_a(x: object, t: type) -> bool:
        """isinstance without the program's `__class__` or metaclass hooks (PyType_IsSubtype on the real type)."""
        return issubclass(type(x), t)

    def real(path: str) -> str:
        """realpath built only on captured C functions (posixpath's globals are the program's to rebind)."""
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        parts = [p for p in path.split("/") if p and p != "."]
        out: list[str] = []
        hops = 0
        while parts:
            p = parts.pop(0)
            if p == "..":
                if out:
                    out.pop()
                continue
            cur = "/" + "/".join(out + [p])
            try:
                st = lstat(cur)
            except OSError:
                out.append(p)
                continue
            if s_islnk(st.st_mode):
                hops += 1
                if hops > 40:
                    return cur  # a loop: judged as named (it cannot be opened anyway)
                try:
                    target = readlink(cur)
                except OSError:
                    out.append(p)
                    continue
                if target.startswith("/"):
                    out = []
                parts = [q for q in target.split("/") if q and q != "."] + parts
            else:
                out.append(p)
        return "/" + "/".join(out)

    wd = real(workdir)
    writable = tuple(sorted({wd, *(real(r) for r in write_roots if r)}))
    readable = tuple(sorted({*writable, *(real(r) for r in read_roots if r), *((real(program),) if program else ())}))
    trusted = tuple(sorted({real(r) for r in trusted_roots if r} | {real(os.path.dirname(os.path.abspath(__file__)))}))
    trusted = tuple(r for r in trusted if not any(r == w or r.startswith(w + "/") for w in writable))
    channel = None
    if status_fd is not None:
        try:
            st0 = os.fstat(status_fd)
            channel = (st0.st_dev, st0.st_ino)
        except OSError:
            channel = None
    flag_bits = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    blocked_events, path_events, blocked_imports = dict(BLOCKED_EVENTS), dict(PATH_EVENTS_ONE), dict(BLOCKED_IMPORTS)
    untrusted_events, frame_attrs, strict_attrs = dict(UNTRUSTED_EVENTS), FRAME_ATTRS, STRICT_FRAME_ATTRS
    handed_frames = HANDED_FRAMES
    frame_holders = (types.TracebackType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
    frame_type = types.FrameType
    native_modules = frozenset(NATIVE_MODULES)
    import _thread

    get_ident = _thread.get_ident
    busy: set[int] = set()  # re-entrancy guard, per thread (another thread's events are never skipped)

    # ---------------------------------------------------------------- trusted code, by identity
    trusted_codes: set[int] = set()
    keep: list = []  # the registered code objects stay alive: an id is never reused by another object
    module_bodies: set[int] = set()
    boundaries: set[int] = set()  # code of Blender's own C string literals (sandbox.barrier: blender_literal)
    own_codes: set[int] = set()

    def register(code: object, into: set[int]) -> None:
        stack = [code]
        while stack:
            c = stack.pop()
            if type(c) is not code_type or id(c) in into:
                continue
            into.add(id(c))
            keep.append(c)
            stack.extend(k for k in c.co_consts if type(k) is code_type)

    register(install.__code__, own_codes)
    f0 = getframe(1)
    while f0 is not None:  # the code on the stack now ran before the program existed (the bootstrap, its runner)
        register(f0.f_code, trusted_codes)
        f0 = f0.f_back
    del f0

    def register_object(v: object, seen: set[int], depth: int = 0) -> None:
        if depth > 4 or id(v) in seen:
            return
        seen.add(id(v))
        if type(v) is func_type:
            register(v.__code__, trusted_codes)
            w = v.__dict__.get("__wrapped__") if hasattr(v, "__dict__") else None
            if w is not None:
                register_object(w, seen, depth + 1)
        elif isinstance(v, staticmethod | classmethod):
            register_object(v.__func__, seen, depth + 1)
        elif isinstance(v, property):
            for f in (v.fget, v.fset, v.fdel):
                if f is not None:
                    register_object(f, seen, depth + 1)
        elif isinstance(v, type):
            for w in list(v.__dict__.values()):
                register_object(w, seen, depth + 1)
        elif type(v) is types.MethodType:
            register_object(v.__func__, seen, depth + 1)
        else:
            w = getattr(v, "__wrapped__", None) if type(v).__module__ == "functools" else None
            if w is not None:
                register_object(w, seen, depth + 1)

    def in_roots(rp: str, roots: tuple) -> bool:
        return any(rp == r or rp.startswith(r.rstrip("/") + "/") for r in roots)

    dir_trust: dict[str, bool] = {}

    def from_trusted_file(mod: object) -> bool:
        fn = getattr(mod, "__file__", None)
        if not isinstance(fn, str):
            spec = getattr(mod, "__spec__", None)
            origin = getattr(spec, "origin", None)
            return origin in ("frozen", "built-in") or fn is None
        d = fn.rsplit("/", 1)[0]  # one resolution per folder, not per module (hundreds share a few folders)
        if d not in dir_trust:
            dir_trust[d] = in_roots(real(d), trusted)
        return dir_trust[d]

    seen: set[int] = set()
    for mod in [*list(sys.modules.values()), *trusted_modules]:
        if mod is None:
            continue
        if not isinstance(mod, types.ModuleType):
            register_object(mod, seen)  # a function of ours handed over directly
            continue
        if mod in trusted_modules or from_trusted_file(mod):
            for v in list(mod.__dict__.values()):
                register_object(v, seen)
    del seen
    for name in NATIVE_MODULES:  # loaded before us (a Blender binary may): unreachable by import from now on
        if sys.modules.get(name) is not None:
            sys.modules[name] = None

    import _imp
    import importlib._bootstrap as _bs
    import importlib._bootstrap_external as _bse
    import importlib.machinery as _mach

    cwfr = _bs._call_with_frames_removed.__code__
    exec_module_code = _bse._LoaderBasics.exec_module.__code__
    compile_bytecode_code = _bse._compile_bytecode.__code__
    frozen_exec_code = getattr(_mach.FrozenImporter.exec_module, "__func__", _mach.FrozenImporter.exec_module).__code__
    source_loader = _mach.SourceFileLoader
    get_frozen_object = _imp.get_frozen_object
    try:
        import ast as _ast
        import collections

        # namedtuple's names are checked identifiers; ast.parse makes a tree, never code (traceback's caret
        # positions parse a line of the failing file with it)
        generators = {id(collections.namedtuple.__code__), id(_ast.parse.__code__)}
    except Exception:  # pragma: no cover
        generators = set()

    def trusted_file_bytes(path: object) -> bytes | None:
        if not is_a(path, str):
            return None
        rp = real(str_join((path,)))
        if not in_roots(rp, trusted):
            return None
        try:
            with open_(rp, "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def verify_import(code: object) -> bool:
        """The import system executes `code` for a real file under a trusted root, and it is that file's code."""
        if type(code) is not code_type:
            return False
        f = first_frame()
        if f is None:
            return False
        if f.f_code is frozen_exec_code:  # FrozenImporter.exec_module: the interpreter's own frozen modules
            mod = f.f_locals.get("module")
            if type(mod) is not module_type:
                return False
            spec = mod.__dict__.get("__spec__")
            name = spec.__dict__.get("name") if type(spec) is spec_type else None
            try:
                return is_a(name, str) and get_frozen_object(str_join((name,))) == code
            except Exception:
                return False
        if f.f_code is not cwfr or f.f_back is None or f.f_back.f_code is not exec_module_code:
            return False
        loader = f.f_back.f_locals.get("self")
        if type(loader) is not source_loader:
            return False
        path = loader.__dict__.get("path")
        path = str_join((path,)) if is_a(path, str) else None
        src = trusted_file_bytes(path)
        if src is None or code.co_filename != path:
            return False
        try:
            return compile_(src, path, "exec", dont_inherit=True) == code
        except Exception:
            return False

    # ---------------------------------------------------------------- Blender's own compiled-in source
    literal_cache: dict[bytes, bool] = {}
    sources = tuple(real(p) for p in native_sources if p)

    def blender_literal(src: object) -> bool:
        """`src` is a whole C string literal of Blender's own binary (what `BPY_run_string` compiles)."""
        if is_a(src, str):
            src = str_join((src,)).encode("utf-8", "surrogateescape")
        elif is_a(src, bytes):
            src = bytes_join((src,))
        else:
            return False
        if not src or len(src) > 4096 or b"\0" in src:
            return False
        hit = literal_cache.get(src)
        if hit is None:
            import mmap as _mmap

            hit = False
            needle = b"\0" + src + b"\0"
            for p in sources:
                try:
                    with open_(p, "rb") as fh, _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ) as m:
                        if any(m.find(needle, a, b) >= 0 for a, b in literal_ranges(p, m)):
                            hit = True
                            break
                except (OSError, ValueError, struct_error):
                    continue
            if len(literal_cache) < 512:
                literal_cache[src] = hit
        return hit

    range_cache: dict[str, list] = {}

    def literal_ranges(p: str, m: object) -> list:
        """Where C string literals live: the ELF `.rodata` section (a tenth of the file: ~0.06 s to search instead
        of ~0.6 s); the whole file where that cannot be read."""
        got = range_cache.get(p)
        if got is None:
            got = [(0, len(m))]
            if m[:4] == b"\x7fELF" and m[4] == 2 and m[5] == 1:  # 64-bit little-endian
                (shoff,) = unpack_from("<Q", m, 0x28)
                shentsize, shnum, shstrndx = unpack_from("<HHH", m, 0x3A)
                stroff = unpack_from("<IIQQQQ", m, shoff + shstrndx * shentsize)[4]
                found = []
                for i in range(shnum):
                    name, _t, _f, _a, off, size = unpack_from("<IIQQQQ", m, shoff + i * shentsize)
                    if m[stroff + name : stroff + name + 8] == b".rodata\0":
                        found.append((max(0, off - 1), off + size + 1))
                got = found or got
            range_cache[p] = got
        return got

    literal_token: set[int] = set()  # threads whose last compile was an allowed Blender literal (its exec follows)

    # ---------------------------------------------------------------- verdicts
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
        parts = []
        for k, v in doc.items():  # our own serializer: json's Python code is the program's to rebind
            if type(v) is str:
                val = _q(v)
            elif type(v) is float or type(v) is int:
                val = repr(v)
            else:
                val = "null"
            parts.append(_q(k) + ": " + val)
        try:
            write(status_fd, ("{" + ", ".join(parts) + "}\n").encode())
        except OSError:
            exit_now(TAMPER_EXIT)

    def show(x: object) -> str:
        """A description of an event argument that runs none of the program's code (no __repr__ of its objects)."""
        t = type(x)
        if t is str or t is bytes or t is int or t is float or t is bool or x is None:
            return repr(x)[:200]
        if t is tuple or t is list:
            return "(" + ", ".join(show(y) for y in x[:6]) + ")"
        return "<" + type_name(t) + ">"

    def refuse(rule: str, event: str, detail: str) -> None:
        emit({"event": "breach", "rule": rule, "audit_event": event, "detail": detail[:500], "t": now()})
        raise PermissionError(f"sandbox policy ({rule}): {event} {detail[:200]} is not allowed in a scene program")

    def as_path(p: object) -> str | None:
        """The path an event names, without calling the program's code; None for a descriptor."""
        if is_a(p, str):
            return str_join((p,))
        if is_a(p, bytes):
            return bytes_join((p,)).decode(fs_enc, "surrogateescape")
        if p is None or is_a(p, int):
            return None
        if type(p) in path_types or type(p) is direntry_type:
            return str_join((fspath(p),))
        return "\0object"  # a path-like of the program's own type (its __fspath__ may answer twice): outside

    def inside(path: str, roots: tuple) -> bool:
        if "\0" in path:
            return False
        try:
            rp = real(path if path.startswith("/") else wd + "/" + path)
        except Exception:
            return False
        return in_roots(rp, roots)

    def first_frame() -> object:
        f = getframe(1)
        while f is not None and id(f.f_code) in own_codes:
            f = f.f_back
        return f

    def untrusted() -> bool:
        """Is the nearest Python frame outside the barrier code that is not library code (by identity)?"""
        f = first_frame()
        return f is not None and id(f.f_code) not in trusted_codes

    def tainted() -> bool:
        """Is any frame of the program on the stack (down to the module body an import is running)?

        A library function that evaluates strings or hands out frames does it for whoever called it: what it does
        while the program is below it on the stack is the program's doing."""
        f = first_frame()
        while f is not None:
            c = id(f.f_code)
            if c not in trusted_codes:
                return True
            if c in module_bodies and f.f_back is not None and f.f_back.f_code is cwfr:
                return False  # a library module being imported: its own import-time work
            if c in boundaries:
                return False  # Blender's own compiled-in string, run by its C code (e.g. addon_utils.reset_all())
            f = f.f_back
        return False

    def check_open(args: tuple) -> None:
        path = as_path(args[0]) if args else None
        if path is None:  # an fd: already open
            return
        mode = args[1] if len(args) > 1 else None
        mode = str_join((mode,)) if is_a(mode, str) else ""
        flags = args[2] if len(args) > 2 and type(args[2]) is int else 0
        wr = any(c in mode for c in "wax+") or bool(flags & flag_bits)
        if path in ("/dev/null", "/dev/urandom", "/dev/random"):
            return
        if wr:
            if not inside(path, writable):
                refuse("file-outside-workdir", "open", f"write {path!r}")
        elif not inside(path, readable):
            refuse("file-outside-workdir", "open", f"read {path!r}")

    def import_name(args: tuple) -> str:
        top = str_join((args[0],)) if args and is_a(args[0], str) else ""
        return top

    def check(event: str, args: tuple) -> None:
        if event == "open":
            check_open(args)
            return
        rule = blocked_events.get(event)
        if rule:
            refuse(rule, event, show(args))
        if event in path_events:
            idx = path_events[event]
            p = as_path(args[idx]) if len(args) > idx else None
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
                q = as_path(args[1]) if len(args) > 1 else None
                if q is not None and not inside(q, writable):
                    refuse("file-outside-workdir", event, repr(q))
            return
        if event == "object.__setattr__":
            name = str_join((args[1],)) if len(args) > 1 and is_a(args[1], str) else ""
            if name in ("__code__", "__globals__", "__closure__") and callable(args[0]) and tainted():
                refuse("reflection", event, f"setting {name} of a function")
            if name in ("__defaults__", "__kwdefaults__") and callable(args[0]) and untrusted():
                refuse("reflection", event, f"setting {name} of a function")
            return
        if event == "object.__getattr__":
            name = str_join((args[1],)) if len(args) > 1 and is_a(args[1], str) else ""
            if name in strict_attrs and tainted():
                refuse("reflection", event, f"reading {name} (code objects) with the program below")
            elif name in handed_frames:
                # the real getter of a real traceback/generator (C; its own audit event is not re-entered); a
                # made-up event with an object of the program's is judged without touching that object
                fr = getattr(args[0], name, None) if type(args[0]) in frame_holders else None
                if fr is not None and type(fr) is frame_type and id(fr.f_code) in own_codes:
                    refuse("reflection", event, f"reading {name}: a frame of the sandbox's barrier")
                if untrusted():
                    refuse("reflection", event, f"reading {name} (interpreter frames and code)")
            elif name in frame_attrs and untrusted():
                refuse("reflection", event, f"reading {name} (interpreter frames and code)")
            return
        if event == "compile":
            src = args[0] if args else None
            fname = as_path(args[1]) if len(args) > 1 else None
            tid = get_ident()
            literal_token.discard(tid)
            if not tainted():
                return
            if fname is not None and (is_a(src, bytes) or is_a(src, str)):
                data = trusted_file_bytes(fname)
                raw = bytes_join((src,)) if is_a(src, bytes) else str_join((src,)).encode("utf-8", "replace")
                if data is not None and data == raw:
                    return  # a library's own source file, compiled by the import system
            f = first_frame()
            if f is not None and id(f.f_code) in generators:
                return
            if blender_literal(src):
                literal_token.add(tid)
                return
            refuse("exec-eval", event, f"code compiled from data ({fname or '?'})")
        if event == "exec":
            code = args[0] if args else None
            tid = get_ident()
            if type(code) is code_type and id(code) in trusted_codes:
                literal_token.discard(tid)
                return
            if verify_import(code):
                register(code, trusted_codes)
                module_bodies.add(id(code))
                literal_token.discard(tid)
                return
            if tid in literal_token:  # Blender's C code runs a string of its own (BPY_run_string)
                literal_token.discard(tid)
                register(code, trusted_codes)
                boundaries.add(id(code))  # what runs from here on was started by Blender itself
                return
            if not tainted():
                return
            f = first_frame()
            if f is not None and id(f.f_code) in generators:
                return
            fname = code.co_filename if type(code) is code_type else "?"
            refuse("exec-eval", event, f"code object from {fname}")
        if event in ("marshal.loads", "marshal.load"):
            f = first_frame()
            if f is not None and f.f_code is compile_bytecode_code:
                bc = f.f_locals.get("bytecode_path")
                data = trusted_file_bytes(str_join((bc,)) if is_a(bc, str) else None)
                if data is not None and args and is_a(args[0], bytes) and data[16:] == bytes_join((args[0],)):
                    return  # a trusted module's cached bytecode; its code is checked again when it is executed
            if tainted():
                refuse("exec-eval", event, "code unmarshalled from data")
            return
        if event in ("_thread.start_new_thread", "_thread.start_joinable_thread"):
            if tainted():
                refuse("process", event, "a thread started with the program on the stack")
            return
        rule = untrusted_events.get(event)
        if rule:
            if untrusted():
                refuse(rule, event, event)
            return
        if event == "import":
            top = import_name(args)
            last = top.rsplit(".", 1)[-1]
            fn = as_path(args[1]) if len(args) > 1 else None
            base = fn.rsplit("/", 1)[-1].split(".", 1)[0] if fn else ""
            if last in native_modules or base in native_modules or top.split(".", 1)[0] in native_modules:
                refuse("native-code", event, top or base)  # whoever asks: raw memory without an audited event
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
