"""Child processes: the module form in a Python with the bpy module, the Blender binary form inside a Blender.

The choice is measured in real bpy processes (the pip module has an empty `bpy.app.binary_path`; setting it
makes the process look like a Blender binary). The binary form runs end to end through a stand-in executable
that behaves like `blender -b --python-expr` and cannot import this project unless the bootstrap loads it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from physcodegym.core import launch
from physcodegym.testing.blender_standin import BANNER, write_standin
from physcodegym.testing.source_tree import project_files

ROOT = Path(__file__).resolve().parents[2]

# Runs in a fresh process with the real bpy module; argv[1] = stand-in path or "" (no binary), argv[2] = task folder.
PARENT = r"""
import json, subprocess, sys
import bpy
from physcodegym.core import launch
from physcodegym.sandbox.runner import configured_blender
out = {"before": launch.module_argv("physcodegym.x", ["a"]), "binary_before": launch.blender_binary(),
       "runner_before": configured_blender()}
if sys.argv[1]:
    bpy.app.binary_path = sys.argv[1]
out["binary"] = launch.blender_binary()
out["runner"] = configured_blender()
runs = {}
cases = (("show", ["tasks", "show", sys.argv[2], "--json"]), ("bad", ["tasks", "show", "/nonexistent/task", "--json"]))
for name, args in cases:
    argv = launch.cli_argv(args)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=240, env=launch.child_env())
    runs[name] = {"argv0": argv[0], "flags": argv[1:6], "rc": p.returncode, "doc": launch.last_json(p.stdout),
                  "stdout_head": p.stdout.splitlines()[:1], "stderr": p.stderr[-1500:]}
argv = launch.python_argv("physcodegym", ["tasks", "show", sys.argv[2], "--json"])  # a child that needs no bpy
p = subprocess.run(argv, capture_output=True, text=True, timeout=240)
runs["python"] = {"argv": argv[:2], "rc": p.returncode, "doc": launch.last_json(p.stdout), "stderr": p.stderr[-1500:]}
out["runs"] = runs
print("RESULT " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_standin(tmp_path_factory.mktemp("blender") / "blender")


def _parent(binary: str) -> dict:
    task = ROOT / "tasks" / "packs" / "ball_bounce"
    p = subprocess.run([sys.executable, "-c", PARENT, binary, str(task)], capture_output=True, text=True, timeout=600)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, p.stdout[-2000:] + p.stderr[-2000:]
    return json.loads(line[7:])


def test_module_form_without_a_blender_binary() -> None:
    """This test process has not imported bpy: no binary, children are `python -m MODULE`."""
    assert "bpy" not in sys.modules or not launch.blender_binary()
    assert launch.module_argv("physcodegym.probes.rebake.cf_worker", ["--blend", "x.blend"]) == [
        sys.executable,
        "-m",
        "physcodegym.probes.rebake.cf_worker",
        "--blend",
        "x.blend",
    ]
    assert launch.cli_argv(["audit", 3]) == [sys.executable, "-m", "physcodegym", "audit", "3"]


def test_binary_form_argv_and_bootstrap(standin: Path) -> None:
    argv = launch.module_argv("physcodegym.agent.inspect_worker", ["a b", "c"], binary=str(standin))
    assert argv[:6] == [str(standin), "-b", "--factory-startup", "--python-exit-code", "1", "--python-expr"]
    assert argv[7:] == ["--", "a b", "c"]  # arguments pass untouched after `--`
    expr = argv[6]
    compile(expr, "<bootstrap>", "exec")
    assert repr(str(launch.PACKAGE_ROOT / "__init__.py")) in expr and "'physcodegym.agent.inspect_worker'" in expr


def test_the_standin_cannot_import_the_project_by_itself(standin: Path) -> None:
    """Without the bootstrap our package is not importable there (as in Blender's bundled Python), so the
    end-to-end test below proves the bootstrap, not the venv's editable install."""
    p = subprocess.run(
        [str(standin), "-b", "--python-exit-code", "3", "--python-expr", "import physcodegym"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 3 and "No module named 'physcodegym'" in p.stderr
    p = subprocess.run(
        [str(standin), "-b", "--python-expr", "import bpy; print(bpy.app.binary_path)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0 and p.stdout.splitlines()[:2] == [BANNER, str(standin)]
    assert subprocess.run([str(standin), "--bogus"], capture_output=True, timeout=60).returncode == 64


def test_pip_bpy_process_uses_the_module_form() -> None:
    out = _parent("")
    assert out["binary_before"] is None and out["binary"] is None
    assert out["before"][:2] == [sys.executable, "-m"]
    show, bad = out["runs"]["show"], out["runs"]["bad"]
    assert show["argv0"] == sys.executable and show["rc"] == 0, show["stderr"]
    assert show["doc"]["task"]["id"] == "ball_bounce"
    assert bad["rc"] == 2 and bad["doc"]["error"]["type"] == "input"
    assert out["runs"]["python"]["argv"] == [sys.executable, "-m"] and out["runs"]["python"]["rc"] == 0


def test_inside_a_blender_binary_children_run_through_it(standin: Path) -> None:
    """End to end: a bpy process whose `bpy.app.binary_path` is a Blender binary starts the command line
    through `binary -b --python-expr`; the JSON document comes back past the banner and exit codes survive."""
    out = _parent(str(standin))
    assert out["before"][:2] == [sys.executable, "-m"]  # the choice follows binary_path, measured live
    assert out["binary"] == str(standin)
    # the sandbox runs scene programs with the same binary (its own Python could not import bpy)
    assert out["runner_before"] is None and out["runner"] == str(standin)
    show, bad = out["runs"]["show"], out["runs"]["bad"]
    assert show["argv0"] == str(standin) and show["flags"][:2] == ["-b", "--factory-startup"]
    assert show["stdout_head"] == [BANNER]  # it really went through the stand-in
    assert show["rc"] == 0, show["stderr"]
    assert show["doc"]["task"]["id"] == "ball_bounce"
    assert (
        bad["rc"] == 2
        and bad["doc"]["error"]["type"] == "input"
        and "/nonexistent/task" in bad["doc"]["error"]["message"]
    )
    py = out["runs"]["python"]  # no-bpy children: the bundled Python with the same bootstrap
    assert py["argv"] == [sys.executable, "-c"] and py["rc"] == 0 and py["doc"]["task"]["id"] == "ball_bounce", py[
        "stderr"
    ]


def test_last_json_skips_banners_and_non_json() -> None:
    assert launch.last_json('Blender 5.0.1\n{"a": 1}\n\nBlender quit\n') == {"a": 1}
    assert launch.last_json("no json here\n{broken\n") is None
    assert launch.last_json("") is None


# ---------------------------------------------------------------- every child start goes through core.launch

# The sandbox starts its scene-program child under its own isolation wall (sandbox/runner.py, sandbox/bootstrap.py);
# it is the one place allowed to build a child command line itself.
OWN_CHILDREN = {"sandbox"}


def _direct_starts(path: Path) -> list[int]:
    """Lines where a list/tuple holds `sys.executable` next to one of our module names (`python -m physcodegym...`)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.List, ast.Tuple)):
            continue
        exe = any(
            isinstance(e, ast.Attribute)
            and e.attr == "executable"
            and isinstance(e.value, ast.Name)
            and e.value.id == "sys"
            for e in node.elts
        )
        ours = any(
            isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.split(".")[0] == "physcodegym"
            for e in node.elts
        )
        if exe and ours:
            lines.append(node.lineno)
    return lines


def test_children_are_started_through_core_launch() -> None:
    """`[sys.executable, "-m", "physcodegym..."]` breaks inside a real Blender (its Python cannot import bpy)."""
    skip = {".venv", ".venv-harbor", "tests", "benchmarks", "submissions", "packs", "library", "scripts", ".git", "build", "dist"}
    bad = []
    for path in project_files(ROOT, (".py",)):
        rel = path.relative_to(ROOT)
        if any(part in skip for part in rel.parts) or rel.parts[0] in OWN_CHILDREN or rel == Path("core/launch.py"):
            continue
        bad += [f"{rel}:{n}" for n in _direct_starts(path)]
    assert not bad, "start these children with physcodegym.core.launch.module_argv / cli_argv: " + ", ".join(
        sorted(bad)
    )


def test_the_routing_check_sees_a_direct_start(tmp_path: Path) -> None:
    mod = tmp_path / "bad.py"
    mod.write_text(
        'import sys\ncmd = [sys.executable, "-m", "physcodegym.probes.rebake.cf_worker", "x"]\n'
        'ok = [sys.executable, "-m", "pip"]\n'
    )
    assert _direct_starts(mod) == [2]


@pytest.mark.parametrize("module", ["physcodegym", "physcodegym.headless.cli"])
def test_both_module_forms_print_the_command_s_document(module: str) -> None:
    """`python -m physcodegym.headless.cli` (what benchmarks/score_cost.py runs) printed every result of a command
    that returns a CommandResult as its repr in a JSON string: run as __main__, the file was a second copy whose
    CommandResult class was not the one the commands return."""
    p = subprocess.run([sys.executable, "-m", module, "check", str(ROOT / "submissions" / "faithful-agent" /
                                                                  "ball_bounce" / "scene.py"), "--json"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-1500:]
    assert json.loads(p.stdout) == {"ok": True, "violations": []}
