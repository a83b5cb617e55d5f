"""Start-up cost of the bubblewrap wall per run (SPEC §3; target <= 1 s against a 20-40 s run).

Three measurements, each the median of N repetitions (default 5), alternating the two variants so load on a
shared machine hits both alike:

- `bwrap_true_s`: bwrap with the full wall around `/bin/true` (namespaces, binds, /proc, /dev, tmpfs) vs `true`;
- `import_bpy_s`: `python -I -c "import bpy"` behind the wall vs bare (the wall's effect on the child's start);
- `run_program_s`: a whole `run_program` of a bpy program that only imports bpy (bake_only mode, so no render),
  behind the wall vs `--unsafe-no-isolation` (everything the runner does: static check, spawn, validation).

Prints one JSON document: {"bwrap_true_s": {...}, "import_bpy_s": {...}, "run_program_s": {...}} where each entry
has "wall", "bare" and "overhead" (median seconds). Usage: `python benchmarks/isolation_bench.py [N]`.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from physcodegym.sandbox import isolation as wall
from physcodegym.sandbox.runner import run_program


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _pair(n: int, walled, bare) -> dict:
    w, b = [], []
    for _ in range(n):
        w.append(_timed(walled))
        b.append(_timed(bare))
    mw, mb = statistics.median(w), statistics.median(b)
    return {"wall": round(mw, 3), "bare": round(mb, 3), "overhead": round(mw - mb, 3), "n": n}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    pr = wall.require("bwrap")
    with tempfile.TemporaryDirectory(prefix="pcg_isobench_") as d:
        root = Path(d)
        scratch = root / "run" / "sandbox"
        scratch.mkdir(parents=True)
        env = wall.child_env(scratch, "bwrap")

        def sh(argv: list[str]) -> None:
            subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        true_argv = wall.bwrap_argv(["/bin/true"], scratch=scratch, bwrap=pr.bwrap)
        res = {"bwrap": pr.version, "bwrap_true_s": _pair(n, lambda: sh(true_argv), lambda: sh(["/bin/true"]))}
        py = [sys.executable, "-I", "-c", "import bpy"]
        py_argv = wall.bwrap_argv(py, scratch=scratch, bwrap=pr.bwrap)
        res["import_bpy_s"] = _pair(n, lambda: sh(py_argv), lambda: sh(py))
        prog = root / "scene.py"
        prog.write_text("import bpy\nimport os\nbpy.ops.wm.save_as_mainfile(filepath=os.path.abspath('scene.blend'))\n")

        def run(isolation: str) -> None:
            rec = run_program(prog, root / f"out_{isolation}", timeout_s=120, mode="bake_only", isolation=isolation)
            if rec.status != "ok":
                raise SystemExit(f"benchmark run failed ({isolation}): {rec.status} {rec.reason}\n{rec.log_tail}")

        res["run_program_s"] = _pair(n, lambda: run("bwrap"), lambda: run("none"))
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
