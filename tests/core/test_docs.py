"""The repository's docs stay the reference the code points at: no dead module names, no missing finding kinds."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "docs" / "ARCHITECTURE.md", ROOT / "docs" / "SPEC.md", ROOT / "README.md"]


def _section(text: str, number: int) -> str:
    m = re.search(rf"^## {number}\. .*?(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"docs/SPEC.md has no section {number}"
    return m.group(0)


def test_spec_lists_every_finding_kind_in_order() -> None:
    from physcodegym.probes.findings import FINDING_KINDS

    sec = _section((ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8"), 5)
    kinds = re.findall(r"^\| `([a-z_]+)` \|", sec, flags=re.M)
    assert tuple(kinds) == FINDING_KINDS


def test_spec_sections_cited_in_the_code_exist() -> None:
    """Every `SPEC §n` in the package names a section of docs/SPEC.md."""
    spec = (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8")
    have = {int(n) for n in re.findall(r"^## (\d+)\. ", spec, flags=re.M)}
    cited: dict[int, set[str]] = {}
    for path in [*ROOT.rglob("*.py"), *DOCS]:
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".venv", ".venv-harbor", ".git", "build", "dist"}:
            continue
        for n in re.findall(r"SPEC(?:\.md)? ?§ ?(\d+)", path.read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(int(n), set()).add(str(rel))
    missing = {n: sorted(files) for n, files in cited.items() if n not in have}
    assert not missing, f"SPEC sections cited but absent from docs/SPEC.md: {missing}"


def _dead_names(text: str) -> list[str]:
    """`physcodegym.x.y` names in `text` that resolve to no module (or attribute of one)."""
    dead = []
    for name in sorted(set(re.findall(r"\bphyscodegym(?:\.[a-z_][a-z0-9_]*)+", text))):
        parts = name.split(".")
        ok = False
        for i in range(len(parts), 1, -1):  # longest importable prefix; the rest must be attributes
            try:
                spec = importlib.util.find_spec(".".join(parts[:i]))
            except (ImportError, ValueError):
                spec = None
            if spec is not None:
                ok = i == len(parts) or _has_attrs(spec, parts[i:])
                break
        if not ok:
            dead.append(name)
    return dead


def test_modules_named_in_the_docs_exist() -> None:
    dead = [f"{doc.name}: {n}" for doc in DOCS for n in _dead_names(doc.read_text(encoding="utf-8"))]
    assert not dead, "docs name modules or attributes that do not exist: " + ", ".join(dead)


def test_the_docs_check_sees_a_dead_name() -> None:
    text = (
        "`physcodegym.probes.worker`, `physcodegym.probes.audit.audit_scene`, `physcodegym.probes.audit.nothing_here`"
    )
    assert _dead_names(text) == ["physcodegym.probes.audit.nothing_here", "physcodegym.probes.worker"]


def _has_attrs(spec, attrs: list[str]) -> bool:
    """Whether the module's source defines the first attribute (checked in its text: no import, no bpy)."""
    if spec.origin is None or not spec.origin.endswith(".py"):
        return False
    src = Path(spec.origin).read_text(encoding="utf-8")
    return re.search(rf"^\s*(def|class)\s+{attrs[0]}\b|^\s*{attrs[0]}\s*[:=]", src, flags=re.M) is not None


def test_architecture_table_names_the_layer_order() -> None:
    """docs/ARCHITECTURE.md's package table lists the packages in the order the import-graph test enforces."""
    from tests.core.test_layers import ORDER

    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \d+ [^|]*\| ([^|]+) \|", text, flags=re.M)
    folders = [f for row in rows for f in re.findall(r"`([a-z_]+)/`", row)]
    assert folders == [p for p in ORDER if p != "<root>"]
