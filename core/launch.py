"""The one way to start a child process that runs one of our modules.

Two worlds start children:

- the Python that has the `bpy` module (this project's venv, a server, a test): the child is
  `[sys.executable, "-m", MODULE, *args]`;
- a real Blender binary (an artist's Blender running the extension): there `sys.executable` is Blender's
  bundled Python, which cannot import `bpy`, and the extension is imported as `bl_ext.<repo>.physcodegym`,
  not as an installed package. The child is the Blender binary itself in background mode,
  `[binary, "-b", "--factory-startup", "--python-exit-code", "1", "--python-expr", BOOTSTRAP, "--", *args]`,
  where BOOTSTRAP loads this package from its own folder under the name `physcodegym` and runs MODULE as
  `__main__` with `sys.argv = [MODULE, *args]`.

Children that need no bpy can use `python_argv` (Blender's bundled Python with the same bootstrap inside a
Blender binary). A real Blender prints a banner on stdout before our code runs; `last_json` reads a child's
JSON document whichever form started it. A leaf module: it imports nothing of ours, and never imports `bpy` itself (a
process that has not imported bpy is not inside Blender).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the extension root == the package `physcodegym`
PACKAGE = "physcodegym"


def blender_binary() -> str | None:
    """The Blender executable this process runs inside, or None (no bpy loaded, or the pip `bpy` module,
    whose `bpy.app.binary_path` is empty)."""
    bpy = sys.modules.get("bpy")
    app = getattr(bpy, "app", None)
    path = str(getattr(app, "binary_path", "") or "")
    if not path or not os.path.isfile(path):
        return None
    try:
        if os.path.samefile(path, sys.executable):  # a Python that embeds bpy is the module form
            return None
    except OSError:
        pass
    return path


def bootstrap(module: str, root: Path = PACKAGE_ROOT, extra_paths: list[str] | None = None) -> str:
    """Python source run by `blender --python-expr`: `physcodegym` from `root`, then `module` as __main__.

    The package is loaded from its folder whatever the folder is called (a checkout, or
    `extensions/<repo>/physcodegym`), so the child runs the same code as the parent. `extra_paths`
    (the parent's import path) are appended where missing, so wheels the extension installed stay importable.
    Exit status: the module's SystemExit code, 1 for an uncaught exception, else 0.
    """
    init = str(Path(root) / "__init__.py")
    lines = [
        "import importlib.util, os, runpy, sys, traceback",
        f"for _p in {list(extra_paths or [])!r}:",
        "    if _p not in sys.path and os.path.isdir(_p):",
        "        sys.path.append(_p)",
        f"if {PACKAGE!r} not in sys.modules:",
        f"    _s = importlib.util.spec_from_file_location({PACKAGE!r}, {init!r},",
        f"                                                submodule_search_locations=[{str(root)!r}])",
        "    _m = importlib.util.module_from_spec(_s)",
        f"    sys.modules[{PACKAGE!r}] = _m",
        "    _s.loader.exec_module(_m)",
        "_a = sys.argv[sys.argv.index('--') + 1:] if '--' in sys.argv else []",
        f"sys.argv = [{module!r}, *_a]",
        "_code = 0",
        "try:",
        f"    runpy.run_module({module!r}, run_name='__main__', alter_sys=True)",
        "except SystemExit as _e:",
        "    _code = _e.code if isinstance(_e.code, int) else (0 if _e.code is None else 1)",
        "    if not isinstance(_e.code, (int, type(None))):",
        "        print(_e.code, file=sys.stderr)",
        "except BaseException:",
        "    traceback.print_exc()",
        "    _code = 1",
        "sys.stdout.flush(); sys.stderr.flush()",
        "if _code:",
        "    os._exit(_code)",  # Blender's own exit would report 0
    ]
    return "\n".join(lines) + "\n"


def module_argv(module: str, args: list[str] | tuple[str, ...] = (), binary: str | None = None) -> list[str]:
    """Command line running `python -m MODULE ARGS` in a fresh process in which `bpy` imports.

    `binary`: a Blender executable to use (default: the one this process runs inside, if any).
    """
    args = [str(a) for a in args]
    binary = binary or blender_binary()
    if binary:
        expr = bootstrap(module, extra_paths=[p for p in sys.path if p])
        return [binary, "-b", "--factory-startup", "--python-exit-code", "1", "--python-expr", expr, "--", *args]
    return [sys.executable, "-m", module, *args]


def python_argv(module: str, args: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Command line running `python -m MODULE ARGS` for a child that needs no `bpy` (decoding, pure numpy work).

    Inside a Blender binary that is Blender's bundled Python (`sys.executable`) with the same bootstrap as the
    binary form, so the package and the extension's wheels import there; otherwise the module form.
    """
    args = [str(a) for a in args]
    if blender_binary():
        return [sys.executable, "-c", bootstrap(module, extra_paths=[p for p in sys.path if p]), "--", *args]
    return [sys.executable, "-m", module, *args]


def cli_argv(args: list[str] | tuple[str, ...] = (), binary: str | None = None) -> list[str]:
    """`physcodegym ARGS` (the command line) in a fresh process (see module_argv)."""
    return module_argv(PACKAGE, args, binary)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a child: ours plus unbuffered output; with the module form, the package importable
    as `physcodegym` when its folder carries that name (an unpacked extension outside any venv)."""
    env = dict(os.environ)
    if PACKAGE_ROOT.name == PACKAGE:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT.parent), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if extra:
        env.update(extra)
    return env


def last_json(text: str) -> Any:
    """The last line of `text` that is a JSON document (a real Blender prints a banner before ours), or None."""
    for line in reversed((text or "").strip().splitlines()):
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None
