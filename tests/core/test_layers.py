"""The package's dependency direction: every import points down the layer order of docs/ARCHITECTURE.md.

Parses every library module's imports with `ast` (no import is executed), maps each to its top package,
and fails on an edge that points up the order (which also rules out cycles). Lazy imports inside
functions count too: a dependency is a dependency whenever it runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

from physcodegym.testing.source_tree import project_files

ROOT = Path(__file__).resolve().parents[2]

# Lowest first. A package may import only packages before it in this list.
ORDER = [
    "core",  # 0 leaves: errors, atomic writes
    "samples",  # 1 data: scene samples (numpy)
    "tasks",  # 1 data: task schema, loader, packs
    "metrics",  # 2 pure computation: video, SSIM, LPIPS, motion, aggregates
    "llm",  # 2 pure computation: provider HTTP clients
    "probes",  # 3 Blender-side measurement
    "sandbox",  # 4 isolation: runner, policy, barrier
    "verifier",  # 5 verdicts: rubric, S_val, self-test
    "judges",  # 5 verdicts: vision-language judges
    "evaluator",  # 5 verdicts: the score of a candidate
    "authoring",  # 6 workflows: task build, verify, detect
    "agent",  # 6 workflows
    "batch",  # 6 workflows
    "report",  # 6 workflows
    "testing",  # 6 test support (loopback LLM, demo scenes)
    "mcp_server",  # 7 faces: the agent tools as an MCP server (over agent)
    "headless",  # 7 faces: the command line
    "physcodegym_addon",  # 7 faces: the Blender UI (add-on state, jobs)
    "operators",  # 7 faces
    "panels",  # 7 faces (registration lists operators and panels)
    "<root>",  # the extension's __init__ / __main__
]
SKIP = {".venv", ".venv-harbor", "tests", "benchmarks", "submissions", "packs", "library", "scripts", ".git", "build", "dist"}


def _package_of(rel: Path) -> str:
    return rel.parts[0] if len(rel.parts) > 1 else "<root>"


def _imports(path: Path, rel: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel.parts[: -node.level])
                mods = ["physcodegym." + ".".join(base + ([node.module] if node.module else []))]
            else:
                mods = [node.module or ""]
        else:
            continue
        for m in mods:
            parts = m.split(".")
            if parts[0] == "physcodegym" and len(parts) > 1 and parts[1]:
                out.add(parts[1])
    return out


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in project_files(ROOT, (".py",)):
        rel = path.relative_to(ROOT)
        if any(part in SKIP for part in rel.parts):
            continue
        src = _package_of(rel)
        for tgt in _imports(path, rel):
            if tgt != src:
                graph.setdefault(src, set()).add(tgt)
    return graph


def test_every_package_is_placed_in_the_order():
    top = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file() and p.name not in SKIP}
    assert top <= set(ORDER), f"packages missing from the layer order: {sorted(top - set(ORDER))}"


def test_no_import_points_up_the_layer_order():
    rank = {name: i for i, name in enumerate(ORDER)}
    upward = sorted(
        f"{src} -> {tgt}" for src, tgts in package_graph().items() for tgt in tgts if rank.get(tgt, -1) >= rank[src]
    )
    assert not upward, "imports pointing up the layer order (see docs/ARCHITECTURE.md): " + ", ".join(upward)


def test_the_check_sees_an_upward_edge(tmp_path):
    """The parser must notice a relative and an absolute upward import, or the test above could not fail."""
    mod = tmp_path / "core" / "bad.py"
    mod.parent.mkdir()
    mod.write_text("from ..headless import cli\nimport physcodegym.probes.audit.audit\n")
    assert _imports(mod, Path("core/bad.py")) == {"headless", "probes"}
