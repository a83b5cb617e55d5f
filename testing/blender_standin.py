"""A stand-in for a Blender binary, for testing child processes started from inside "a real Blender".

The pip `bpy` module has no binary, so tests write this executable and set it as `bpy.app.binary_path`.
It behaves like `blender -b [--factory-startup] [--python-exit-code N] --python-expr EXPR -- ARGS` as far
as our children can tell:

- its Python has the packages Blender would bundle (`bpy`, numpy, the venv's wheels) but not this project's
  editable install: it runs with `-S` and adds the site-packages folders to `sys.path` without processing
  `.pth` files, so `import physcodegym` fails unless the bootstrap loads the package from its folder;
- it prints a banner on stdout before running the expression and "Blender quit" after it;
- `sys.argv` holds every argument (Blender's own ones too); `bpy` is imported first and
  `bpy.app.binary_path` is the stand-in itself, so grandchildren are started through it as well;
- every start appends one JSON line (its arguments) to the file `PHYSCODEGYM_STANDIN_LOG` names or, when that is
  unset (a child whose environment was built from nothing), to `<stand-in>.starts.jsonl` if it can;
- an uncaught exception exits with the `--python-exit-code` value (0 if not given), otherwise 0;
  an unknown flag is an error (exit 64), so a malformed command line cannot pass.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

BANNER = "Blender 5.0.1 (stand-in for tests)"

_SOURCE = r"""#!{python} -S
import sys, traceback
for _p in {site!r}:
    if _p not in sys.path:
        sys.path.append(_p)
print({banner!r}, flush=True)
args = sys.argv[1:]
rest = args[args.index("--") + 1:] if "--" in args else []
own = args[:args.index("--")] if "--" in args else args
expr, exit_code, background, i = None, 0, False, 0
while i < len(own):
    a = own[i]
    if a in ("-b", "--background"):
        background = True
    elif a == "--factory-startup":
        pass
    elif a == "--python-exit-code":
        i += 1; exit_code = int(own[i])
    elif a == "--python-expr":
        i += 1; expr = own[i]
    else:
        print(f"stand-in blender: unknown argument {{a!r}}", file=sys.stderr)
        sys.exit(64)
    i += 1
if not background or expr is None:
    print("stand-in blender: only `-b --python-expr EXPR` is supported", file=sys.stderr)
    sys.exit(64)
import os, json
# one line per start: which of our modules ran through the binary; to $PHYSCODEGYM_STANDIN_LOG, or (a child whose
# environment was built from nothing) beside the stand-in, when that folder is writable
_m = [ln for ln in (expr or "").splitlines() if ln.startswith("sys.argv = [")]
try:
    with open(os.environ.get("PHYSCODEGYM_STANDIN_LOG") or {path!r} + ".starts.jsonl", "a", encoding="utf-8") as _f:
        _f.write(json.dumps({{"pid": os.getpid(), "argv": sys.argv[1:], "module_line": _m[0] if _m else None}}) + "\n")
except OSError:
    pass
import bpy
bpy.app.binary_path = {path!r}
sys.argv = [{path!r}, *args]
try:
    exec(compile(expr, "<string>", "exec"), {{"__name__": "__main__"}})
except SystemExit:
    raise
except BaseException:
    traceback.print_exc()
    sys.stdout.flush()
    sys.exit(exit_code)
print("\nBlender quit", flush=True)
"""


def write_standin(path: Path) -> Path:
    """Write the stand-in executable at `path` (runs with this interpreter); returns `path`."""
    path = Path(path)
    site = [p for p in sys.path if p.rstrip(os.sep).endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
    path.write_text(_SOURCE.format(python=sys.executable, site=site, banner=BANNER, path=str(path)), encoding="utf-8")
    path.chmod(0o755)
    return path
