"""Each package's public face: another package imports only the modules its `__init__` names in `__all__`.

Why: a newcomer reads one `__init__` to learn what a package offers, and a module left out of the face (a worker
that runs in a child, a wire format, a detector behind the audit) can change without a caller elsewhere breaking.
Imports are parsed with `ast` (none is executed: several packages import bpy); tests, benchmarks and task data are
white-box and not checked.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from physcodegym.testing.source_tree import project_files

from .test_layers import ORDER, ROOT, SKIP, _package_of

# Test support is used by tests only; the root extension module registers and holds no API.
WITHOUT_FACE = {"testing", "<root>"}


def face(package: str) -> list[str]:
    """The `__all__` literal of `package/__init__.py` (read, not imported)."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def cross_package_uses(path: Path, rel: Path) -> list[tuple[str, str]]:
    """(package, module or name) for every import of another package of ours in one file."""
    src = _package_of(rel)
    out: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("physcodegym."):
            parts = node.module.split(".")
            names = [parts[2]] if len(parts) > 2 else [a.name for a in node.names]
            out += [(parts[1], n) for n in names if parts[1] != src]
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "physcodegym" and len(parts) > 2 and parts[1] != src:
                    out.append((parts[1], parts[2]))
    return out


def test_every_library_package_names_its_face_and_every_name_exists():
    for package in ORDER:
        if package in WITHOUT_FACE:
            continue
        names = face(package)
        assert names, f"{package}/__init__.py has no __all__ naming what other packages may import"
        folder = ROOT / package
        init = (folder / "__init__.py").read_text(encoding="utf-8")
        for n in names:
            exists = (folder / f"{n}.py").is_file() or (folder / n / "__init__.py").is_file() or f" {n}" in init
            assert exists, f"{package}.__all__ names {n!r}, which is neither a module nor defined in the package"


def test_other_packages_import_only_the_face():
    faces = {p: set(face(p)) for p in ORDER if p not in WITHOUT_FACE}
    wrong = []
    for path in project_files(ROOT, (".py",)):
        rel = path.relative_to(ROOT)
        if any(part in SKIP for part in rel.parts):
            continue
        for package, name in cross_package_uses(path, rel):
            if package in faces and name not in faces[package]:
                wrong.append(f"{rel}: physcodegym.{package}.{name}")
    assert not wrong, "imports of modules outside a package's public face (its __all__): " + ", ".join(sorted(wrong))


def test_the_check_sees_an_import_behind_the_face(tmp_path):
    """An import of a private module is found in both spellings, or the test above could not fail."""
    mod = tmp_path / "headless" / "bad.py"
    mod.parent.mkdir()
    mod.write_text("from physcodegym.sandbox.barrier import install\nimport physcodegym.llm.transport\n")
    uses = cross_package_uses(mod, Path("headless/bad.py"))
    assert ("sandbox", "barrier") in uses and ("llm", "transport") in uses
    assert "barrier" not in face("sandbox") and "transport" not in face("llm")


def test_the_package_is_importable_by_its_face():
    """The faces name real modules: every one can be found by the import system (found, not imported)."""
    for package in ("core", "tasks", "metrics", "sandbox", "evaluator", "verifier"):
        for n in face(package):
            assert importlib.util.find_spec(f"physcodegym.{package}.{n}") is not None, (package, n)
