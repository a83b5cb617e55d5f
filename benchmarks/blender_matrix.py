"""The extension and the runner on the Blender versions people run; prints one JSON document.

    python benchmarks/blender_matrix.py [--targets bpy-4.2,bpy-4.5,bpy-5.0,bpy-5.2,debian-4.3] [--tasks ball_bounce|all]
        [--work DIR]

Targets: the bpy modules 4.2.23 LTS, 4.5.15 LTS (Python 3.11 venvs), 5.0.1 (the project's .venv), 5.2.3 LTS (a
Python 3.13 venv), each with the project importable (a .pth naming a folder that holds a `physcodegym` link to this
checkout; the venvs live outside the repository, default /work/venvs/bpy42, bpy45, bpy523: see docs/BLENDER.md for
the commands); and Debian 13's Blender 4.3.2 binary through scripts/blender (`make blender`).

For each target: (1) the extension registers and unregisters cleanly (bpy modules: `addon_utils.enable` of the
package; the binary: the zip installed with Blender's own `extension install-file --enable`, then disabled), with
any refusal message; (2) the runner runs each shipped truth (tasks/packs/*/truth.py) bake-only: status and
seconds (the binary through PHYSCODEGYM_BLENDER=scripts/blender, which can only run with --unsafe-no-isolation: the
launcher walls it instead); (3) `physcodegym audit RUN --task ID` of the truth's run: S_val and the findings (must be
1.0 and none). Why a script and not a test: it is CPU-heavy (a bake and an audit per task and version), and the
venvs are set-up outside the repository.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
VENVS = Path(os.environ.get("PHYSCODEGYM_MATRIX_VENVS", "/work/venvs"))
LAUNCHER = REPO / "scripts" / "blender"
TARGETS: dict[str, dict[str, Any]] = {
    "bpy-4.2": {"python": VENVS / "bpy42" / "bin" / "python"},
    "bpy-4.5": {"python": VENVS / "bpy45" / "bin" / "python"},
    "bpy-5.0": {"python": REPO / ".venv" / "bin" / "python"},
    "bpy-5.2": {"python": VENVS / "bpy523" / "bin" / "python"},
    "debian-4.3": {"binary": LAUNCHER},
}

REGISTER_PROBE = """
import json, sys
import bpy, addon_utils
doc = {"version": bpy.app.version_string, "python": sys.version.split()[0]}
errors = []
def handle_error(ex):
    errors.append(f"{type(ex).__name__}: {ex}")
name = MODULE
if name.startswith("bl_ext."):
    doc["enabled_at_start"] = name in bpy.context.preferences.addons
else:
    addon_utils.enable(name, default_set=True, handle_error=handle_error)
doc["registered"] = hasattr(bpy.types, "PCG_PT_main") and hasattr(bpy.context.scene, "physcodegym")
addon_utils.disable(name, default_set=True, handle_error=handle_error)
doc["unregistered"] = not hasattr(bpy.types, "PCG_PT_main") and not hasattr(bpy.types.Scene, "physcodegym")
doc["errors"] = errors
print("PCG_MATRIX " + json.dumps(doc))
"""


def _last(tag: str, text: str) -> dict | None:
    for line in reversed(text.splitlines()):
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1 :])
    return None


def _last_json(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def _run_watch(cmd: list[str], env: dict, cwd: Path, timeout: float, grace: float = 30.0) -> dict:
    """Run `cmd` in its own process group with stdout/stderr in files. When a JSON document is complete on stdout
    but the process (or its children) does not exit within `grace` seconds, the group is killed and `hung_at_exit`
    set: bpy 4.5 modules were measured to block in a futex at interpreter exit after their work was done."""
    import signal

    out_f = tempfile.NamedTemporaryFile("w+", suffix=".out", delete=False)  # noqa: SIM115
    err_f = tempfile.NamedTemporaryFile("w+", suffix=".err", delete=False)  # noqa: SIM115
    p = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env, cwd=cwd, start_new_session=True)
    t0 = time.monotonic()
    done_at: float | None = None
    hung = timed_out = False
    while p.poll() is None:
        time.sleep(1.0)
        if done_at is None and _last_json(Path(out_f.name).read_text(errors="replace")) is not None:
            done_at = time.monotonic()
        if done_at is not None and time.monotonic() - done_at > grace:
            hung = True
        elif time.monotonic() - t0 > timeout:
            timed_out = True
        if hung or timed_out:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    # the group's other members (workers the child started) too
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, signal.SIGKILL)
    res = {
        "stdout": Path(out_f.name).read_text(errors="replace"),
        "stderr": Path(err_f.name).read_text(errors="replace"),
        "returncode": p.returncode,
        "hung_at_exit": hung,
        "timed_out": timed_out,
    }
    for f in (out_f, err_f):
        f.close()
        os.unlink(f.name)
    return res


def _launcher_env(*writable: Path, user: Path | None = None) -> dict[str, str]:
    env = dict(os.environ, PHYSCODEGYM_BLENDER_RW=":".join(str(p) for p in writable))
    if user is not None:
        env["BLENDER_USER_RESOURCES"] = str(user)
    return env


def check_register(name: str, target: dict, work: Path) -> dict:
    """Enable and disable the extension in a fresh process of the target."""
    t0 = time.perf_counter()
    if "python" in target:
        code = REGISTER_PROBE.replace("MODULE", repr("physcodegym"))
        user = Path(tempfile.mkdtemp(prefix="user_", dir=work))
        env = dict(os.environ, BLENDER_USER_RESOURCES=str(user))
        p = subprocess.run([str(target["python"]), "-c", code], capture_output=True, text=True, env=env, timeout=600)
    else:
        from physcodegym.physcodegym_addon import package

        zip_doc = package.build(work / "zip", wheel_set="none")
        user = work / "user"
        user.mkdir(exist_ok=True)
        inst = subprocess.run(
            [str(LAUNCHER), "-b", "--factory-startup", "--command", "extension", "install-file", "-r",
             "user_default", "--enable", zip_doc["zip"]],
            capture_output=True, text=True, env=_launcher_env(work, user=user), cwd=work, timeout=600,
        )  # fmt: skip
        if inst.returncode != 0 or 'Installed "physcodegym"' not in inst.stdout:
            return {"ok": False, "error": (inst.stdout + inst.stderr)[-1500:], "seconds": time.perf_counter() - t0}
        code = REGISTER_PROBE.replace("MODULE", repr("bl_ext.user_default.physcodegym"))
        p = subprocess.run(
            [str(LAUNCHER), "-b", "--python-expr", code],
            capture_output=True, text=True, env=_launcher_env(work, user=user), cwd=work, timeout=600,
        )  # fmt: skip
    doc = _last("PCG_MATRIX", p.stdout)
    if doc is None:
        return {"ok": False, "error": (p.stdout + p.stderr)[-1500:], "seconds": round(time.perf_counter() - t0, 2)}
    traceback_seen = "Traceback (most recent call last)" in p.stdout + p.stderr
    doc["ok"] = bool(doc["registered"] and doc["unregistered"] and not doc["errors"] and not traceback_seen)
    if traceback_seen:
        doc["traceback"] = (p.stdout + p.stderr)[-1500:]
    doc["seconds"] = round(time.perf_counter() - t0, 2)
    return doc


def run_truth(name: str, target: dict, task: str, work: Path) -> dict:
    """Bake-only run of the task's truth, then its audit with the task's rubric (S_val)."""
    truth = REPO / "tasks" / "packs" / task / "truth.py"
    out = work / f"run_{task}"
    row: dict[str, Any] = {"task": task}
    t0 = time.perf_counter()
    if "python" in target:
        py = str(target["python"])
        cmd = [py, "-m", "physcodegym", "run", str(truth), "--out", str(out), "--mode", "bake_only", "--json"]
        env = dict(os.environ)
        env.pop("PHYSCODEGYM_BLENDER", None)
        cwd = work
    else:
        cmd = [str(REPO / ".venv" / "bin" / "python"), "-m", "physcodegym", "run", str(truth), "--out", str(out),
               "--mode", "bake_only", "--json", "--unsafe-no-isolation"]  # fmt: skip
        env = _launcher_env(work)
        env["PHYSCODEGYM_BLENDER"] = str(LAUNCHER)
        cwd = work
    p = _run_watch(cmd, env, cwd, timeout=3600)
    rec = _last_json(p["stdout"]) or {}
    row.update(
        run_status=rec.get("status"),
        run_reason=rec.get("reason"),
        blender=rec.get("bpy_version"),
        run_seconds=round(time.perf_counter() - t0, 2),
    )
    if rec.get("status") != "ok":
        if not rec:
            row["run_error"] = (p["stdout"] + p["stderr"])[-1500:]
        return row
    t1 = time.perf_counter()
    args = ["audit", str(out), "--task", task, "--json", "--no-evidence"]
    if "python" in target:
        a = _run_watch([py, "-m", "physcodegym", *args], env, work, timeout=1800)
    else:
        expr = _bootstrap_expr()
        a = _run_watch(
            [str(LAUNCHER), "-b", "--factory-startup", "--python-exit-code", "1", "--python-expr", expr, "--", *args],
            _launcher_env(work), work, timeout=1800,
        )  # fmt: skip
    doc = _last_json(a["stdout"]) or {}
    findings = doc.get("findings") or []
    row.update(
        s_val=doc.get("S_val"),
        s_val_reason=doc.get("S_val_reason"),
        findings=[f"{f.get('kind')}:{f.get('objects')}" for f in findings],
        audit_seconds=round(time.perf_counter() - t1, 2),
    )
    row["audit_status"] = doc.get("status")
    if a["hung_at_exit"] or a["timed_out"]:
        row["audit_process"] = "hung at exit after its result (killed)" if a["hung_at_exit"] else "timed out (killed)"
    if not doc:
        row["audit_error"] = (a["stdout"] + a["stderr"])[-1500:]
    return row


def _bootstrap_expr() -> str:
    """`python -m physcodegym` inside the Blender binary, the package loaded from this checkout (core.launch)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "physcodegym", REPO / "__init__.py", submodule_search_locations=[str(REPO)]
    )
    if "physcodegym" not in sys.modules:
        mod = importlib.util.module_from_spec(spec)
        sys.modules["physcodegym"] = mod
        spec.loader.exec_module(mod)
    from physcodegym.core import launch

    return launch.bootstrap("physcodegym", root=REPO)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--tasks", default="ball_bounce", help="comma list of task ids, or 'all' (every shipped truth)")
    ap.add_argument("--work", default=None, help="work folder (default: a new temp folder)")
    ap.add_argument("--skip-register", action="store_true")
    a = ap.parse_args(argv)
    tasks = (
        sorted(p.parent.name for p in (REPO / "tasks" / "packs").glob("*/truth.py"))
        if a.tasks == "all"
        else [t for t in a.tasks.split(",") if t]
    )
    work = Path(a.work or tempfile.mkdtemp(prefix="pcg_matrix_")).resolve()
    result: dict[str, Any] = {"tasks": tasks, "targets": {}}
    for name in [t for t in a.targets.split(",") if t]:
        target = TARGETS[name]
        tw = work / name
        tw.mkdir(parents=True, exist_ok=True)
        exe = target.get("python") or target.get("binary")
        if not Path(exe).exists():
            result["targets"][name] = {"missing": f"{exe} does not exist (docs/BLENDER.md: how to make it)"}
            continue
        t0 = time.perf_counter()
        entry: dict[str, Any] = {}
        if not a.skip_register:
            entry["register"] = check_register(name, target, tw)
        entry["truths"] = [run_truth(name, target, task, tw) for task in tasks]
        ok = [r for r in entry["truths"] if r.get("run_status") == "ok"]
        clean = [r for r in ok if r.get("s_val") == 1.0 and not r.get("findings")]
        entry["summary"] = {
            "registers": entry.get("register", {}).get("ok"),
            "truths_run_ok": f"{len(ok)}/{len(tasks)}",
            "truths_clean": f"{len(clean)}/{len(tasks)}",
            "seconds": round(time.perf_counter() - t0, 1),
        }
        result["targets"][name] = entry
        print(json.dumps({name: entry["summary"]}), file=sys.stderr, flush=True)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
