"""Run a scene program (truth.py or a submission) in this process, optionally without its render.

Why: rebuilding a task and re-checking its truth trajectories must not pay 240 renders each time,
and until the sandbox runner offers `mode="bake_only"` the build needs its own way to drop the
render calls. The program source is rewritten (AST) so every `bpy.ops.render.render(...)` call is
replaced by a no-op; everything else (geometry, bakes, the saved `scene.blend`) runs unchanged.

    python -m physcodegym.authoring.truthrun PROGRAM --cwd DIR [--bake-only] [--preview 1,120,240]
"""

from __future__ import annotations

import argparse
import ast
import os
from pathlib import Path

RENDER_CALL = "bpy.ops.render.render"


class _DropRender(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if ast.unparse(node.func) == RENDER_CALL:
            return ast.copy_location(ast.Constant(value=None), node)
        return node


def strip_render(source: str, filename: str = "<program>") -> str:
    """Source with every `bpy.ops.render.render(...)` call replaced by `None`."""
    tree = _DropRender().visit(ast.parse(source, filename=filename))
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def run_program_inline(program: Path, cwd: Path, bake_only: bool = False) -> None:
    """Execute `program` as __main__ with `cwd` as working directory (creates it)."""
    cwd.mkdir(parents=True, exist_ok=True)
    src = program.read_text(encoding="utf-8")
    if bake_only:
        src = strip_render(src, str(program))
    os.chdir(cwd)
    code = compile(src, str(program), "exec")
    exec(code, {"__name__": "__main__", "__file__": str(program)})


def render_preview(frames: list[int], out: Path) -> list[Path]:
    """Render single stills of the current scene (used while authoring a task)."""
    import bpy

    sc = bpy.context.scene
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in frames:
        sc.frame_set(f)
        p = out / f"preview_{f:04d}.png"
        sc.render.filepath = str(p)
        bpy.ops.render.render(write_still=True)
        paths.append(p)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("program", type=Path)
    ap.add_argument("--cwd", type=Path, required=True)
    ap.add_argument("--bake-only", action="store_true")
    ap.add_argument("--preview", default="", help="comma-separated frames to render as stills after the run")
    a = ap.parse_args(argv)
    program = a.program.resolve()
    cwd = a.cwd.resolve()
    run_program_inline(program, cwd, bake_only=a.bake_only or bool(a.preview))
    if a.preview:
        render_preview([int(x) for x in a.preview.split(",")], cwd / "preview")
    return 0


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
