"""The repository's docs stay the reference the code points at: no dead module names, no missing finding kinds."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from physcodegym.testing.source_tree import project_files

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "docs" / "ARCHITECTURE.md", ROOT / "docs" / "SPEC.md", ROOT / "docs" / "GUIDE.md", ROOT / "README.md"]


def _section(text: str, number: int) -> str:
    m = re.search(rf"^## {number}\. .*?(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"docs/SPEC.md has no section {number}"
    return m.group(0)


def test_spec_lists_every_finding_kind_in_order() -> None:
    from physcodegym.probes.audit.findings import FINDING_KINDS

    sec = _section((ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8"), 5)
    kinds = re.findall(r"^\| `([a-z_]+)` \|", sec, flags=re.M)
    assert tuple(kinds) == FINDING_KINDS


def test_spec_sections_cited_in_the_code_exist() -> None:
    """Every `SPEC §n` in the package names a section of docs/SPEC.md."""
    spec = (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8")
    have = {int(n) for n in re.findall(r"^## (\d+)\. ", spec, flags=re.M)}
    cited: dict[int, set[str]] = {}
    for path in [*project_files(ROOT, (".py",)), *DOCS]:
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".venv", ".venv-harbor", ".git", "build", "dist"}:
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            at = line.find("SPEC")  # every "§n" after it on the line: "SPEC §4, §7" cites both
            for n in re.findall(r"§ ?(\d+)", line[at:]) if at >= 0 else []:
                cited.setdefault(int(n), set()).add(str(rel))
    missing = {n: sorted(files) for n, files in cited.items() if n not in have}
    assert not missing, f"SPEC sections cited but absent from docs/SPEC.md: {missing}"


# References to things that are not in the repository: issue numbers, a paper and its tables, sections and
# appendices. The repository's reference is docs/SPEC.md ("SPEC §n"); a bare "§n" must follow a "SPEC" on its line.
_OUTSIDE_REFS = [
    ("an issue number", re.compile(r"\bissues? ?#?\d|(?<![\w:&/#])#\d{1,4}\b(?![0-9a-fA-F])", re.I)),
    # a paper as a source ("the paper", "the paper's", "paper §4"), not paper as a material (cups, clips, leaves)
    ("a paper", re.compile(r"\b(?:the|this|that|our|a|its) papers?\b(?! (?:cups?|balls?|clips?|towels?|planes?|sheets?)\b)|"
                           r"\bpapers?(?:'s|\s*§|\s*\(\d)", re.I)),
    ("a paper's table, section or appendix", re.compile(r"\bTab\. ?\d|\bSec\. ?\d|\bappendix\b", re.I)),
    ("a section of no document", re.compile(r"^(?:(?!SPEC).)*§", re.M)),
]


def _outside_refs(text: str) -> list[str]:
    """The references in `text` that point at nothing in the repository, each as `line n: kind: line text`."""
    found = []
    for kind, pattern in _OUTSIDE_REFS:
        for m in pattern.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"line {line}: {kind}: {text.splitlines()[line - 1].strip()[:100]}")
    return found


def _repo_text_files() -> list[Path]:
    skip = {".venv", ".venv-harbor", ".git", "build", "dist", ".ruff_cache", "physcodegym.egg-info"}
    files = project_files(ROOT, (".py", ".md"))
    return sorted(p for p in files if p.relative_to(ROOT).parts[0] not in skip and p != Path(__file__).resolve())


def test_no_reference_points_outside_the_repository() -> None:
    """Code and docs cite docs/SPEC.md, never an issue number, a paper, its tables or its appendices."""
    bad = []
    for path in _repo_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name == "SPEC.md":  # the reference itself: its "§n" are its own sections
            text = text.replace("§", "SPEC §")
        bad += [f"{path.relative_to(ROOT)} {r}" for r in _outside_refs(text)]
    assert not bad, "references to things not in the repository (point at docs/SPEC.md):\n" + "\n".join(bad)


def test_the_reference_check_sees_each_kind() -> None:
    text = "\n".join([
        "see issue 12", "fixed in #19.", "as in the paper", "the Tab. 2 layout", "(Sec. 4.3)", "appendix D",
        "paper §4.1 budgets", "SPEC §4, §7 (fine)", "color:#000; (fine)", "docs/SPEC.md §6 (fine)",
        "two paper cups and a crumpled paper ball (fine)", "the paper's 156 clips",
    ])
    lines = sorted({int(r.split(":")[0].split()[1]) for r in _outside_refs(text)})
    assert lines == [1, 2, 3, 4, 5, 6, 7, 12]


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
        "`physcodegym.probes.worker`, `physcodegym.probes.audit.audit.audit_scene`, `physcodegym.probes.audit.audit.nothing_here`"
    )
    assert _dead_names(text) == ["physcodegym.probes.audit.audit.nothing_here", "physcodegym.probes.worker"]


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
