"""AST rewrites of a scene program for the runner's cheap modes.

`bake_only` and `preview` must not render the 240-frame animation. Assigning to
`bpy.ops.render.render` does not patch it (bpy.ops builds callers on attribute access, measured), so
the program's render calls are rewritten to call a helper the bootstrap provides:
`__pcg_render__("render" | "opengl", *original_arguments, **original_keywords)`; in a full run the
helper calls the real operator, so the program compiles the same way in every mode. Line numbers
are kept, so tracebacks still point at the user's lines. Standard library only (loaded by path inside the child).
"""

from __future__ import annotations

import ast

HELPER = "__pcg_render__"
RENDER_CALLS = {"bpy.ops.render.render", "bpy.ops.render.opengl"}


class _RenderRewriter(ast.NodeTransformer):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.count = 0

    def _dotted(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def visit_Import(self, node: ast.Import) -> ast.AST:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        d = self._dotted(node.value) if isinstance(node.value, ast.Attribute | ast.Name) else None
        if d and d.startswith("bpy"):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.aliases[t.id] = d
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = self._dotted(node.func)
        if name in RENDER_CALLS:
            self.count += 1
            op = ast.Constant(value=name.rsplit(".", 1)[1])
            new = ast.Call(func=ast.Name(id=HELPER, ctx=ast.Load()), args=[op, *node.args], keywords=node.keywords)
            return ast.copy_location(new, node)
        return node


def rewrite_renders(tree: ast.Module) -> tuple[ast.Module, int]:
    """Replace render calls by the helper; returns the tree and how many calls were rewritten."""
    rw = _RenderRewriter()
    tree = rw.visit(tree)
    ast.fix_missing_locations(tree)
    return tree, rw.count
