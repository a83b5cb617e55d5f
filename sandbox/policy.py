"""Static policy checker for scene programs (SPEC §3).

A scene program may build and simulate a Blender scene and save it in its working folder. It may
not decode media, touch the network, spawn processes, import modules dynamically, reach builtins
by reflection, or read files outside its working folder. This module finds such code by walking
the AST and reports *every* violation with a stable rule id and its line, so an agent (or a
reviewer) can fix all of them at once. It is the early, friendly report for agents, not the security
boundary: the operating-system wall (`sandbox.isolation`) is, with `sandbox.barrier` (inside the run)
as a second layer. So the checker refuses what is clearly a bypass attempt and lets ordinary scene
code through (computed operator names, cleanup loops over `bpy.data`, paths built from `os.getcwd()`,
in-memory text with `io`/`csv`, a generated texture saved to `//name.png`).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# Stable rule ids (documented in the README; scripts match on them).
RULES: dict[str, str] = {
    "syntax-error": "the program does not parse",
    "import-not-allowed": "a module outside the allow-list is imported",
    "dynamic-import": "a module is imported at run time (__import__, importlib, add-on install)",
    "exec-eval": "code is built and run from data (exec, eval, compile, runpy, text blocks as modules)",
    "reflection": "builtins or internals are reached indirectly (getattr with computed names, __dict__, __builtins__, "
    "...)",
    "process": "a process or thread is spawned or signalled",
    "network": "the network is touched (sockets, URL clients, url_open)",
    "native-code": "native code is loaded or called (ctypes, cffi)",
    "media-decode": "media is decoded (image/movie/sound loading, VSE strips, cv2/imageio/av/PIL)",
    "file-outside-workdir": "a file or folder outside the working folder is read, written or entered",
    "load-external-blend": "a .blend is opened, appended or linked (open_mainfile, append, link, libraries.load)",
}

# Top-level modules a scene program may import (prefix match on dotted names).
ALLOWED_MODULES = frozenset(
    {
        "bpy",
        "bmesh",
        "mathutils",
        "bpy_extras",
        "bl_math",
        "idprop",
        "math",
        "cmath",
        "random",
        "os",
        "os.path",
        "pathlib",
        "time",
        "datetime",
        "itertools",
        "functools",
        "collections",
        "json",
        "numpy",
        "colorsys",
        "typing",
        "dataclasses",
        "enum",
        "__future__",
        "statistics",
        "copy",
        "sys",
        "re",
        "string",
        "decimal",
        "fractions",
        "operator",
        "heapq",
        "bisect",
        "array",
        "warnings",
        "logging",
        "contextlib",
        "abc",
        "textwrap",
        "numbers",
        "struct",
        "hashlib",
        "uuid",
        "traceback",
        "io",
        "csv",
        "base64",
        "binascii",
        "pprint",
        "zlib",
        "weakref",
        "difflib",
        "unicodedata",
        "calendar",
        "graphlib",
        "reprlib",
        "queue",
    }
)

# Modules whose import is a specific breach (rule id instead of the generic import-not-allowed).
MODULE_RULES: dict[str, str] = {
    **dict.fromkeys(
        [
            "subprocess",
            "multiprocessing",
            "threading",
            "_thread",
            "concurrent",
            "pty",
            "signal",
            "sched",
            "asyncio",
            "_posixsubprocess",
            "posix",
            "nt",
            "pexpect",
            "shlex",
        ],
        "process",
    ),
    **dict.fromkeys(
        [
            "socket",
            "_socket",
            "ssl",
            "urllib",
            "http",
            "ftplib",
            "smtplib",
            "poplib",
            "imaplib",
            "telnetlib",
            "requests",
            "httpx",
            "aiohttp",
            "websocket",
            "websockets",
            "xmlrpc",
            "socketserver",
            "webbrowser",
            "selectors",
            "select",
        ],
        "network",
    ),
    **dict.fromkeys(["ctypes", "_ctypes", "cffi", "mmap"], "native-code"),
    **dict.fromkeys(
        [
            "cv2",
            "imageio",
            "av",
            "PIL",
            "skimage",
            "moviepy",
            "ffmpeg",
            "aud",
            "wave",
            "audioop",
            "aifc",
            "sunau",
            "imghdr",
            "decord",
            "torchvision",
            "matplotlib",
        ],
        "media-decode",
    ),
    **dict.fromkeys(["importlib", "imp", "pkgutil", "runpy", "zipimport", "addon_utils"], "dynamic-import"),
    **dict.fromkeys(
        [
            "builtins",
            "__builtin__",
            "inspect",
            "gc",
            "code",
            "codeop",
            "types",
            "marshal",
            "pickle",
            "dill",
            "shelve",
            "copyreg",
        ],
        "reflection",
    ),
    **dict.fromkeys(["shutil", "glob", "tempfile", "zipfile", "tarfile", "fileinput"], "file-outside-workdir"),
}

# Dotted call targets (after alias resolution) and their rule.
CALL_RULES: dict[str, str] = {
    **dict.fromkeys(
        [
            "exec",
            "eval",
            "compile",
            "execfile",
            "bpy.utils.execfile",
            "runpy.run_path",
            "runpy.run_module",
            "bpy.ops.script.python_file_run",
            "bpy.ops.text.run_script",
        ],
        "exec-eval",
    ),
    **dict.fromkeys(
        [
            "__import__",
            "bpy.utils.register_submodule_factory",
            "bpy.ops.preferences.addon_install",
            "bpy.ops.preferences.addon_enable",
            "bpy.ops.extensions.package_install",
            "bpy.ops.extensions.package_install_files",
            "bpy.utils.load_scripts",
            "bpy.utils.script_paths",
        ],
        "dynamic-import",
    ),
    **dict.fromkeys(
        [
            "globals",
            "locals",
            "vars",
            "breakpoint",
            "sys._getframe",
            "sys.settrace",
            "sys.setprofile",
            "sys.addaudithook",
            "object.__getattribute__",
            "object.__setattr__",
            "type",
        ],
        "reflection",
    ),
    **dict.fromkeys(
        [
            "os.system",
            "os.popen",
            "os.fork",
            "os.forkpty",
            "os.kill",
            "os.killpg",
            "os.startfile",
            "os.posix_spawn",
            "os.posix_spawnp",
            "os.spawnl",
            "os.spawnle",
            "os.spawnlp",
            "os.spawnlpe",
            "os.spawnv",
            "os.spawnve",
            "os.spawnvp",
            "os.spawnvpe",
            "os.execl",
            "os.execle",
            "os.execlp",
            "os.execlpe",
            "os.execv",
            "os.execve",
            "os.execvp",
            "os.execvpe",
            "os.register_at_fork",
            "os.abort",
            "bpy.ops.wm.quit_blender",
        ],
        "process",
    ),
    **dict.fromkeys(
        [
            "bpy.ops.wm.url_open",
            "bpy.ops.wm.url_open_preset",
            "bpy.ops.extensions.repo_sync",
            "bpy.ops.extensions.repo_sync_all",
        ],
        "network",
    ),
    **dict.fromkeys(
        [
            "bpy.ops.image.open",
            "bpy.ops.image.reload",
            "bpy.ops.image.replace",
            "bpy.ops.clip.open",
            "bpy.ops.sound.open",
            "bpy.ops.sound.open_mono",
            "bpy.ops.sequencer.movie_strip_add",
            "bpy.ops.sequencer.image_strip_add",
            "bpy.ops.sequencer.sound_strip_add",
            "bpy.ops.image.read_viewlayers",
            "bpy.ops.node.add_file",
            "bpy.ops.image.file_browse",
            "bpy.ops.object.camera_background_image_add",
            "bpy.ops.object.empty_image_add",
            "bpy.ops.image.import_as_mesh_planes",
            "bpy.ops.import_image.to_plane",
        ],
        "media-decode",
    ),
    **dict.fromkeys(
        [
            "bpy.ops.wm.open_mainfile",
            "bpy.ops.wm.append",
            "bpy.ops.wm.link",
            "bpy.ops.wm.recover_auto_save",
            "bpy.ops.wm.recover_last_session",
            "bpy.ops.wm.revert_mainfile",
            "bpy.data.libraries.load",
            "bpy.ops.wm.lib_reload",
            "bpy.ops.wm.lib_relocate",
            "bpy.ops.outliner.lib_operation",
        ],
        "load-external-blend",
    ),
    **dict.fromkeys(
        [
            "os.chdir",
            "os.fchdir",
            "os.chroot",
            "os.listdir",
            "os.scandir",
            "os.walk",
            "os.open",
            "os.remove",
            "os.unlink",
            "os.rmdir",
            "os.removedirs",
            "os.rename",
            "os.renames",
            "os.replace",
            "os.link",
            "os.symlink",
            "os.truncate",
            "os.chmod",
            "os.chown",
            "os.makedirs",
            "os.mkdir",
            "os.utime",
            "open",
            "pathlib.Path",
            "pathlib.PurePath",
            "pathlib.PosixPath",
            "io.open",
            "io.FileIO",
            "io.open_code",
        ],
        "file-outside-workdir",
    ),
}

# Method names that decode media whatever object they are called on (bpy.data aliases are common).
MEDIA_METHOD_PAIRS = {
    ("images", "load"),
    ("movieclips", "load"),
    ("sounds", "load"),
    ("volumes", "load"),
    ("texts", "load"),
    ("cache_files", "load"),
}
MEDIA_METHODS = frozenset({"new_movie", "new_image", "new_sound", "gl_load", "gl_touch"})

# numpy's array protocols that take a raw address (`{"data": (address, readonly), ...}` / a capsule): an array over
# any memory of the process, with no audited event (docs/THREAT_MODEL.md). No scene needs to define them.
RAW_MEMORY_NAMES = frozenset({"__array_interface__", "__array_struct__"})

# Attribute names that are gateways to interpreter internals.
DANGEROUS_ATTRS = frozenset(
    {
        "__builtins__",
        "__dict__",
        "__globals__",
        "__subclasses__",
        "__bases__",
        "__base__",
        "__mro__",
        "__code__",
        "__closure__",
        "__getattribute__",
        "__import__",
        "__loader__",
        "__spec__",
        "__self__",
        "__func__",
        "__reduce__",
        "__reduce_ex__",
        "__traceback__",
        "__class__",
        "__getattr__",
        "__setattr__",
        "__delattr__",
        "__init_subclass__",
        "f_globals",
        "f_locals",
        "f_back",
        "f_builtins",
        "gi_frame",
        "gi_code",
        "tb_frame",
        "co_code",
        "cr_frame",
        "func_globals",
        "modules",
        "_getframe",
        "driver_namespace",
    }
)
# `modules` / `driver_namespace` only matter on sys / bpy.app; checked with context below.
_CONTEXT_ATTRS = {"modules": ("sys",), "driver_namespace": ("bpy.app",), "_getframe": ("sys",)}
DANGEROUS_NAMES = frozenset({"__builtins__", "__loader__", "__spec__", "__import__"})

# Constant names that must never be the target of getattr/hasattr (string tricks on builtins/modules).
BLOCKED_ATTR_STRINGS = frozenset(
    {
        "exec",
        "eval",
        "compile",
        "open",
        "system",
        "popen",
        "__import__",
        "import_module",
        "load",
        "new_movie",
        "new_image",
        "new_sound",
        "open_mainfile",
        "spawnv",
        "execv",
        "fork",
        "urlopen",
        "socket",
        "connect",
    }
)

# Operator categories that load files, run code or reach the network: a computed name on them is a bypass attempt.
RISKY_OPS_CATEGORIES = frozenset(
    {
        "wm",
        "script",
        "text",
        "preferences",
        "extensions",
        "image",
        "sequencer",
        "clip",
        "sound",
        "import_scene",
        "import_mesh",
        "import_image",
        "import_curve",
        "import_anim",
        "node",
        "file",
        "outliner",
        "buttons",
        "screen",
        "ui",
    }
)
# bpy.data collections whose methods load media or Blender data from a path.
MEDIA_COLLECTIONS = frozenset(
    {"images", "movieclips", "sounds", "texts", "volumes", "cache_files", "libraries", "fonts"}
)
MOVIE_SOUND_EXTS = frozenset(
    {"mp4", "mov", "avi", "mkv", "webm", "mpg", "mpeg", "m4v", "ogv", "flv", "wav", "mp3", "ogg", "flac", "aac", "m4a"}
)

# Properties whose assignment makes Blender decode a file.
MEDIA_ASSIGNED_ATTRS = frozenset({"filepath", "filepath_raw", "directory", "source"})
MEDIA_SOURCE_VALUES = frozenset({"FILE", "SEQUENCE", "MOVIE", "TILED"})


@dataclass
class Violation:
    rule: str
    line: int
    message: str
    col: int = 0

    def to_dict(self) -> dict:
        return {"rule": self.rule, "line": self.line, "message": self.message}


@dataclass
class PolicyReport:
    path: str
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_dict(self) -> dict:
        return {"ok": self.ok, "violations": [v.to_dict() for v in self.violations]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


def path_outside(p: str) -> bool:
    """True if a literal path leaves the working folder (absolute, home, `..`, or a Blender `//..`)."""
    s = p.strip()
    if not s:
        return False
    if s.startswith("//"):  # Blender-relative to the .blend, which lives in the working folder
        s = s[2:]
    if s.startswith(("/", "~", "\\")) or (len(s) > 1 and s[1] == ":"):
        return True
    if "://" in s:
        return True
    parts = PurePosixPath(s.replace("\\", "/")).parts
    depth = 0
    for part in parts:
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in (".", ""):
            depth += 1
    return False


def _const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):  # f"..." with only literal parts
        if all(isinstance(v, ast.Constant) for v in node.values):
            return "".join(str(v.value) for v in node.values)
    return None


def _leading_str(node: ast.AST | None) -> str | None:
    """The literal prefix of a string expression ('/etc' + x, f'/etc/{x}', os.path.join('/etc', x))."""
    s = _const_str(node)
    if s is not None:
        return s
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _leading_str(node.left)
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    if isinstance(node, ast.Call) and node.args:
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        if name in ("join", "Path", "PurePath", "PosixPath", "abspath", "normpath", "realpath", "expanduser"):
            # any literal argument that is absolute or climbs out counts
            for a in node.args:
                s = _leading_str(a)
                if s is not None and path_outside(s):
                    return s
            return _leading_str(node.args[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path('/etc') / 'passwd'
        return _leading_str(node.left)
    return None


def _fold_str(node: ast.AST | None) -> str | None:
    """A string expression built only from constants ('lo' + 'ad', f'{"x"}', '_'.join(['a', 'b']))."""
    s = _const_str(node)
    if s is not None:
        return s
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _fold_str(node.left), _fold_str(node.right)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and v.format_spec is None and _fold_str(v.value) is not None:
                parts.append(_fold_str(v.value))
            else:
                return None
        return "".join(parts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        sep = _fold_str(node.func.value)
        parts = [_fold_str(e) for e in node.args[0].elts]
        if sep is not None and all(p is not None for p in parts):
            return sep.join(parts)
    return None


def _is_movie_or_sound(path: str) -> bool:
    return path.lower().rsplit(".", 1)[-1] in MOVIE_SOUND_EXTS if "." in path else False


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.violations: list[Violation] = []
        self.aliases: dict[str, str] = {}  # local name -> dotted module/object path
        self.modules: set[str] = set()  # top-level module names as resolved (os, sys, bpy, ...)
        self.str_values: dict[str, set[str] | None] = {}  # name -> every string it was bound to (None: unknown)
        self.media_vars: set[str] = set()  # names bound to a new/loaded image, clip or sound datablock

    # -- helpers -------------------------------------------------------------------------
    def add(self, rule: str, node: ast.AST, message: str) -> None:
        self.violations.append(Violation(rule, getattr(node, "lineno", 0), message, getattr(node, "col_offset", 0)))

    def dotted(self, node: ast.AST) -> str | None:
        """Dotted name of an expression with import aliases resolved (`o.system` -> `os.system`)."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Call):  # bpy.context.scene.sequence_editor_create().strips.new_movie
            inner = self.dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
        elif isinstance(node, ast.Name):
            parts.append(self.aliases.get(node.id, node.id))
        elif isinstance(node, ast.Subscript):
            inner = self.dotted(node.value)
            parts.append((inner or "?") + "[]")
        else:
            return None
        return ".".join(reversed(parts))

    def _module_rule(self, mod: str) -> str | None:
        top = mod.split(".")[0]
        if mod in ALLOWED_MODULES or top in ALLOWED_MODULES:
            if top == "os" and mod not in ("os", "os.path"):
                return "import-not-allowed"
            return None
        return MODULE_RULES.get(top, "import-not-allowed")

    def _check_import(self, node: ast.AST, mod: str, what: str) -> None:
        rule = self._module_rule(mod)
        if rule:
            self.add(rule, node, f"import of {what!r} is not allowed in a scene program ({RULES[rule]})")

    # -- imports -------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._check_import(node, a.name, a.name)
            self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            if a.name.split(".")[0] != "bpy":
                self.modules.add(a.name.split(".")[0])
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.add("import-not-allowed", node, "relative imports are not allowed (the program must be standalone)")
            return
        mod = node.module or ""
        for a in node.names:
            full = f"{mod}.{a.name}"
            if a.name == "*":
                self._check_import(node, mod, mod)
                continue
            # `from os import system` is an os import whose target is a blocked call
            rule = self._module_rule(mod)
            if rule:
                self.add(rule, node, f"import from {mod!r} is not allowed in a scene program ({RULES[rule]})")
            elif full in CALL_RULES and CALL_RULES[full] != "file-outside-workdir":
                r = CALL_RULES[full]
                self.add(r, node, f"importing {full!r} is not allowed ({RULES[r]})")
            self.aliases[a.asname or a.name] = full
        self.generic_visit(node)

    # -- aliases through assignment (D = bpy.data; s = os.system) ---------------------------
    def _bind_strings(self, name: str, values: set[str] | None) -> None:
        if name in self.str_values and self.str_values[name] is not None and values is not None:
            self.str_values[name] = self.str_values[name] | values
        elif name in self.str_values:
            self.str_values[name] = None  # bound to something unknown somewhere: unknown everywhere
        else:
            self.str_values[name] = values

    def visit_For(self, node: ast.For) -> None:
        if isinstance(node.target, ast.Name):
            vals = None
            if isinstance(node.iter, ast.List | ast.Tuple | ast.Set):
                got = [_fold_str(e) for e in node.iter.elts]
                vals = set(got) if got and all(g is not None for g in got) else None
            self._bind_strings(node.target.id, vals)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        target_dotted = self.dotted(node.value) if isinstance(node.value, ast.Attribute | ast.Name) else None
        folded = _fold_str(node.value)
        made = self.dotted(node.value.func) or "" if isinstance(node.value, ast.Call) else ""
        for t in node.targets:
            if isinstance(t, ast.Name):
                self._bind_strings(t.id, {folded} if folded is not None else None)
                if made.startswith(("bpy.data.images", "bpy.data.movieclips", "bpy.data.sounds")):
                    self.media_vars.add(t.id)
            if isinstance(t, ast.Name) and target_dotted:
                self.aliases[t.id] = target_dotted
            self._check_store(t, node.value, node)
        self.generic_visit(node)

    def _media_owner(self, owner: str) -> bool:
        """Is `owner` an image, movie clip or sound datablock (by its path or a name bound to one)?"""
        low = owner.lower()
        return any(k in low for k in ("image", "clip", "sound")) or owner.split(".")[0] in self.media_vars

    def _check_store(self, target: ast.AST, value: ast.AST, node: ast.AST) -> None:
        if not isinstance(target, ast.Attribute):
            return
        attr = target.attr
        owner = self.dotted(target.value) or ""
        if attr in MEDIA_ASSIGNED_ATTRS:
            s = _leading_str(value)
            if attr == "source" and s in MEDIA_SOURCE_VALUES:
                self.add("media-decode", node, f"setting {owner}.source = {s!r} makes Blender decode a file")
            elif attr != "source" and s is not None and path_outside(s):
                self.add("file-outside-workdir", node, f"{owner}.{attr} points outside the working folder: {s!r}")
            elif (
                attr in ("filepath", "filepath_raw")
                and s is None
                and self._mentions_outside(value)
                and self._media_owner(owner)
            ):
                self.add(
                    "file-outside-workdir", node, f"{owner}.{attr} is built from a path outside the working folder"
                )
            elif (
                attr in ("filepath", "filepath_raw")
                and s is not None
                and _is_movie_or_sound(s)
                and self._media_owner(owner)
            ):
                self.add(
                    "media-decode", node, f"assigning {owner}.{attr} = {s!r} makes Blender decode a movie or sound"
                )
        if attr in DANGEROUS_ATTRS and attr not in _CONTEXT_ATTRS:
            self.add("reflection", node, f"assignment to {attr!r} reaches interpreter internals")
        if attr == "binary_path":
            self.add("process", node, "changing bpy.app.binary_path prepares a process launch")

    # -- names and attributes --------------------------------------------------------------
    def _raw_memory(self, node: ast.AST, name: str | None) -> None:
        if name in RAW_MEMORY_NAMES:
            self.add("native-code", node, f"{name!r} hands numpy a raw memory address ({RULES['native-code']})")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._raw_memory(node, node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Constant(self, node: ast.Constant) -> None:
        self._raw_memory(node, node.value if isinstance(node.value, str) else None)

    def visit_Name(self, node: ast.Name) -> None:
        self._raw_memory(node, node.id)
        if node.id in DANGEROUS_NAMES:
            self.add("reflection", node, f"{node.id!r} reaches the interpreter's builtins/import machinery")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        self._raw_memory(node, attr)
        if attr in DANGEROUS_ATTRS:
            ctx = _CONTEXT_ATTRS.get(attr)
            owner = self.dotted(node.value) or ""
            if ctx is None or owner in ctx:
                self.add("reflection", node, f"attribute {attr!r} reaches interpreter internals")
        self.generic_visit(node)

    # -- calls ---------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func) or ""
        short = name.replace("()", "")
        rule = CALL_RULES.get(name) or CALL_RULES.get(short)
        parts = name.split(".")
        last = parts[-1] if parts else ""
        prev = parts[-2] if len(parts) > 1 else ""
        if rule == "file-outside-workdir":
            self._check_path_call(node, name)
        elif rule == "load-external-blend":
            self._check_blend_call(node, name)
        elif rule and not (short == "type" and len(node.args) != 3):
            self.add(rule, node, f"call to {name!r}: {RULES[rule]}")
        elif (prev.split("[")[0], last) in MEDIA_PAIRS_WITH_ALIASES:
            r = "load-external-blend" if prev == "libraries" else "media-decode"
            if prev == "libraries":
                self._check_blend_call(node, name)
            else:
                self.add(r, node, f"call to {name!r} loads a media file")
                self._literal_paths_outside(node, name)
        elif last in MEDIA_METHODS:
            self.add("media-decode", node, f"call to {name!r} decodes media")
            self._literal_paths_outside(node, name)
        elif last in ("open_mainfile", "append", "link") and ".ops.wm." in "." + name:
            self._check_blend_call(node, name)
        elif last == "as_module":
            self.add("exec-eval", node, f"{name!r} runs a text block as a module")
        elif last in ("import_module", "__import__", "reload"):
            self.add("dynamic-import", node, f"call to {name!r} imports a module at run time")
        elif last in (
            "read_text",
            "read_bytes",
            "write_text",
            "write_bytes",
            "open",
            "iterdir",
            "glob",
            "rglob",
            "unlink",
            "rmdir",
            "rename",
            "replace",
            "touch",
            "mkdir",
            "symlink_to",
        ):
            self._check_path_method(node, name)
        elif short.split(".")[0] in MODULE_RULES and "." in short:
            r = MODULE_RULES[short.split(".")[0]]
            self.add(r, node, f"call to {short!r}: {RULES[r]}")
        if short in ("getattr", "setattr", "delattr", "hasattr"):
            self._check_getattr(node, short)
        if short.startswith(
            ("bpy.ops.import_", "bpy.ops.wm.", "bpy.ops.render.", "bpy.ops.export", "bpy.ops.ptcache.")
        ):
            self._check_kw_paths(node, name, "file-outside-workdir")
        self.generic_visit(node)

    def _check_getattr(self, node: ast.Call, fn: str) -> None:
        if len(node.args) < 2:
            return
        target, attr = node.args[0], node.args[1]
        owner = self.dotted(target) or ""
        top = owner.split(".")[0]
        # owners where any computed name is a bypass attempt: modules, builtins, Blender's app/utils/path/script
        # gateways, the operator categories that load files or run code, or an unnamed expression
        risky_owner = (
            not owner
            or top in self.modules
            or top in ("__builtins__", "builtins")
            or owner.startswith(("bpy.app", "bpy.utils", "bpy.path"))
            or owner in ("bpy", "bpy.ops")
            or (owner.startswith("bpy.ops.") and owner.split(".")[2] in RISKY_OPS_CATEGORIES)
        )
        values = self._str_values(attr)
        if values is not None:  # every value the name can take is known: check each like a literal
            for v in sorted(values):
                self._check_attr_name(node, fn, owner, v)
            return
        if fn == "delattr":
            self.add("reflection", node, f"delattr with a computed attribute name on {owner or 'an expression'!r}")
            return
        frags = [
            c.value
            for c in ast.walk(attr)
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and len(c.value) >= 2
        ]
        hit = next((f for f in frags if any(f in b for b in BLOCKED_NAME_PARTS)), None)
        if hit is not None:
            self.add("reflection", node, f"{fn} builds an attribute name from {hit!r}, part of a blocked name")
        elif risky_owner:
            self.add(
                "reflection",
                node,
                f"{fn} with a computed attribute name on {owner or 'an expression'!r} can reach anything; use the "
                "attribute directly",
            )

    def _check_attr_name(self, node: ast.Call, fn: str, owner: str, s: str) -> None:
        if s.startswith("__") and s.endswith("__") or s in BLOCKED_ATTR_STRINGS or s in DANGEROUS_ATTRS:
            self.add("reflection", node, f"{fn}(…, {s!r}) reaches a blocked attribute indirectly")
        elif owner in ("os", "sys", "builtins", "importlib", "subprocess", "socket"):
            self.add("reflection", node, f"{fn} on module {owner!r}")
        elif owner.startswith("bpy.data") and s in MEDIA_COLLECTIONS:
            self.add("media-decode", node, f"{fn}(bpy.data, {s!r}) reaches a loader of media or Blender data")

    def _str_values(self, node: ast.AST) -> set[str] | None:
        """The strings an attribute-name expression can be: a literal, constant concatenation, or a tracked name."""
        folded = _fold_str(node)
        if folded is not None:
            return {folded}
        if isinstance(node, ast.Name):
            return self.str_values.get(node.id)
        return None

    def _first_path_arg(
        self, node: ast.Call, kw_names: tuple[str, ...] = ("file", "path", "filepath", "filename", "directory")
    ) -> ast.AST | None:
        if node.args:
            return node.args[0]
        for k in node.keywords:
            if k.arg in kw_names:
                return k.value
        return None

    def _check_path_call(self, node: ast.Call, name: str) -> None:
        short = name.replace("()", "")
        if short in ("os.chdir", "os.fchdir", "os.chroot"):
            self.add(
                "file-outside-workdir",
                node,
                f"{short} changes the working folder; stay in the folder the runner gives you",
            )
            return
        arg = self._first_path_arg(node)
        if short in ("os.listdir", "os.scandir", "os.walk") and arg is None:
            return
        s = _leading_str(arg)
        if s is not None and path_outside(s):
            self.add("file-outside-workdir", node, f"{short}({s!r}) is outside the working folder")
        elif arg is not None and self._mentions_outside(arg):
            self.add("file-outside-workdir", node, f"{short}(...) builds a path outside the working folder")

    def _check_path_method(self, node: ast.Call, name: str) -> None:
        # Path('/etc/passwd').read_text() -> the receiver carries the literal
        recv = node.func.value if isinstance(node.func, ast.Attribute) else None
        s = _leading_str(recv) if recv is not None else None
        if s is not None and path_outside(s):
            self.add("file-outside-workdir", node, f"{name} on {s!r} is outside the working folder")

    def _mentions_outside(self, node: ast.AST) -> bool:
        """Does a built path climb out (`..`), start absolute/at home, or join an absolute part?

        A constant after the first part of a concatenation is a suffix (`os.getcwd() + "/frames"` stays inside);
        `os.path.join(x, "/etc")` restarts at the absolute part, so there any absolute argument counts.
        """
        lead = _leading_str(node)
        if lead is not None and (lead.startswith(("/", "~")) and not lead.startswith("//")):
            return True
        for sub in ast.walk(node):
            c = _const_str(sub)
            if c is not None and any(part == ".." for part in c.replace("\\", "/").split("/")):
                return True
            if isinstance(sub, ast.Call):
                fname = self.dotted(sub.func) or ""
                if fname.endswith("expanduser"):
                    return True
                if fname.endswith(("path.join", "Path", "PurePath", "PosixPath", "joinpath")):
                    for a in sub.args[1:]:
                        c2 = _const_str(a)
                        if c2 is not None and c2.startswith(("/", "~")):
                            return True
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div):  # Path(x) / "/etc"
                c3 = _const_str(sub.right)
                if c3 is not None and c3.startswith("/"):
                    return True
        return False

    def _literal_paths_outside(self, node: ast.Call, name: str) -> None:
        for a in [*node.args, *(k.value for k in node.keywords)]:
            s = _const_str(a)
            if s is not None and ("/" in s or s.startswith("~")) and path_outside(s):
                self.add("file-outside-workdir", node, f"{name} reads {s!r}, outside the working folder")
                return

    def _check_kw_paths(self, node: ast.Call, name: str, rule: str) -> None:
        for k in node.keywords:
            if k.arg in ("filepath", "directory", "filename", "path"):
                s = _leading_str(k.value)
                if s is not None and path_outside(s):
                    self.add(rule, node, f"{name}({k.arg}={s!r}) is outside the working folder")

    def _check_blend_call(self, node: ast.Call, name: str) -> None:
        arg = self._first_path_arg(node)
        s = _const_str(arg)
        if s is not None and not path_outside(s) and not name.endswith("libraries.load"):
            return  # re-opening its own saved file in the working folder is fine
        where = repr(s) if s is not None else "a path the checker cannot prove to be inside the working folder"
        self.add("load-external-blend", node, f"{name} loads Blender data from {where}")


MEDIA_PAIRS_WITH_ALIASES = MEDIA_METHOD_PAIRS | {("libraries", "load")}
# Substrings a computed attribute name may not contain: it could be completed into one of these.
BLOCKED_NAME_PARTS = frozenset(
    BLOCKED_ATTR_STRINGS
    | DANGEROUS_ATTRS
    | MEDIA_COLLECTIONS
    | MEDIA_METHODS
    | {"as_module", "execfile", "python_file_run", "run_script", "addon", "movie", "libraries"}
)


def check_source(source: str, path: str = "scene.py") -> PolicyReport:
    """Check program text; returns every violation (sorted by line)."""
    rep = PolicyReport(path=path)
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        rep.violations.append(Violation("syntax-error", e.lineno or 0, f"{e.msg} (column {e.offset or 0})"))
        return rep
    except ValueError as e:  # null bytes
        rep.violations.append(Violation("syntax-error", 0, str(e)))
        return rep
    ck = _Checker()
    ck.visit(tree)
    seen: set[tuple[str, int, str]] = set()
    for v in sorted(ck.violations, key=lambda v: (v.line, v.col, v.rule)):
        key = (v.rule, v.line, v.message)
        if key not in seen:
            seen.add(key)
            rep.violations.append(v)
    return rep


def check_file(path: str | Path) -> PolicyReport:
    """Check a program file; raises InputError if it cannot be read."""
    from physcodegym.core.errors import InputError

    p = Path(path)
    if not p.is_file():
        raise InputError("scene program not found", file=str(p))
    try:
        src = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"scene program is not UTF-8 text: {e}", file=str(p)) from e
    return check_source(src, str(p))
