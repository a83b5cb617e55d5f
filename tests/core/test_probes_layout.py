"""The sub-packages of `probes/`: one concept each, imports pointing down their order, faces.

Why: `probes/` was one flat folder of five concepts. Each sub-package now says what it offers in its `__init__`
(`__all__`), imports only sub-packages before it in PROBES_ORDER (so no circle among them), and no module sits
directly in `probes/` again. Imports are parsed with `ast` (none is executed: these modules import bpy); lazy imports
inside functions count too. Tests, benchmarks and task data are white-box and not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

from physcodegym.testing.source_tree import project_files

from .test_faces import face
from .test_layers import ROOT, SKIP

# Lowest first: a sub-package imports only sub-packages of a lower rank (equal ranks do not import each other).
PREFIX = "physcodegym.probes."
PROBES_ORDER: dict[str, int] = {"scene": 0, "branches": 1, "audit": 2, "defects": 2, "rebake": 3}


def probes_uses(path: Path) -> list[tuple[str, str]]:
    """(sub-package, module or name) for every import of `physcodegym.probes.<sub>...` in one file."""
    out: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith(PREFIX):
            parts = node.module.split(".")
            out += [(parts[2], parts[3])] if len(parts) > 3 else [(parts[2], a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[:2] == ["physcodegym", "probes"] and len(parts) > 3:
                    out.append((parts[2], parts[3]))
    return out


def _sub_of(rel: Path) -> str | None:
    return rel.parts[1] if len(rel.parts) > 2 and rel.parts[0] == "probes" else None


def _library_files() -> list[tuple[Path, Path]]:
    files = []
    for path in project_files(ROOT, (".py",)):
        rel = path.relative_to(ROOT)
        if not any(part in SKIP for part in rel.parts):
            files.append((path, rel))
    return files


def test_every_module_of_probes_is_in_a_placed_sub_package():
    folder = ROOT / "probes"
    flat = sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")
    assert not flat, f"modules directly in probes/ (put each in the sub-package of its concept): {flat}"
    subs = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    assert subs == set(PROBES_ORDER), f"probes/ sub-packages not in PROBES_ORDER (or gone): {subs ^ set(PROBES_ORDER)}"
    assert face("probes") == sorted(PROBES_ORDER, key=PROBES_ORDER.get)


def test_sub_packages_import_only_lower_ones():
    wrong = []
    for path, rel in _library_files():
        src = _sub_of(rel)
        for sub, _name in probes_uses(path) if src else []:
            if sub != src and PROBES_ORDER.get(sub, 99) >= PROBES_ORDER[src]:
                wrong.append(f"{rel}: probes.{src} -> probes.{sub}")
    assert not wrong, "imports pointing up (or across) the probes sub-package order: " + ", ".join(sorted(set(wrong)))


def test_code_outside_a_sub_package_imports_only_its_face():
    faces = {s: set(face(f"probes/{s}")) for s in PROBES_ORDER}
    for sub, names in faces.items():
        assert names, f"probes/{sub}/__init__.py has no __all__"
        for n in names:
            assert (ROOT / "probes" / sub / f"{n}.py").is_file(), f"probes.{sub}.__all__ names {n!r}, not a module"
    wrong = []
    for path, rel in _library_files():
        for sub, name in probes_uses(path):
            if sub != _sub_of(rel) and sub in faces and name not in faces[sub]:
                wrong.append(f"{rel}: physcodegym.probes.{sub}.{name}")
    assert not wrong, "imports of modules outside a probes sub-package's __all__: " + ", ".join(sorted(wrong))


def test_the_check_sees_an_upward_and_a_private_import(tmp_path):
    """Both spellings are parsed, or the tests above could not fail."""
    mod = tmp_path / "bad.py"
    mod.write_text("from physcodegym.probes.rebake.cf_worker import rebake\nimport physcodegym.probes.audit.nox\n")
    assert probes_uses(mod) == [("rebake", "cf_worker"), ("audit", "nox")]
    assert PROBES_ORDER["rebake"] > PROBES_ORDER["scene"] and "nox" not in face("probes/audit")
