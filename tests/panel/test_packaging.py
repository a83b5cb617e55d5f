"""Extension packaging: the manifest validates, the zip builds, and the built extension installs, registers,
draws and unregisters in a fresh Blender process whose Python lacks the optional heavy dependencies; a panel job
started there as inside a real Blender binary runs through the binary on the extension's own code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("bpy")

from physcodegym.physcodegym_addon import package  # noqa: E402
from physcodegym.testing.blender_standin import write_standin  # noqa: E402

# Runs in a fresh process: heavy optional modules are made unimportable before anything loads.
CHILD = r"""
import importlib.abc, json, sys
BLOCK = {"torch", "lpips", "cv2", "skimage", "scipy", "matplotlib"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCK:
            raise ImportError(f"{name} blocked for this test")
        return None
sys.meta_path.insert(0, Block())
import bpy
import addon_utils
out = {}
r = bpy.ops.extensions.package_install_files(filepath=sys.argv[1], repo="user_default", enable_on_install=True)
mod = "bl_ext.user_default.physcodegym"
out["installed"] = mod in bpy.context.preferences.addons
out["ops"] = sorted(o for o in dir(bpy.ops.physcodegym) if not o.startswith("_"))
out["alias"] = sys.modules["physcodegym"].__name__
from physcodegym.physcodegym_addon import preferences
prefs = bpy.context.preferences.addons[mod].preferences
out["prefs"] = [type(preferences.get()).__name__, prefs.openai_key_env if prefs else None]
from physcodegym.physcodegym_addon import features
out["features"] = {k: features.status(k) for k in features.REQUIREMENTS}

class L:  # tolerant layout: every call returns another layout
    enabled = active = alert = True
    def __getattr__(self, name):
        def f(*a, **k):
            out.setdefault("calls", []).append(name)
            return L()
        return f

for name in ("PCG_PT_main", "PCG_PT_task", "PCG_PT_reference", "PCG_PT_agent", "PCG_PT_audit", "PCG_PT_counterfactual", "PCG_PT_rubric", "PCG_PT_scores"):
    holder = type("P", (), {"layout": L()})()
    getattr(bpy.types, name).draw(holder, bpy.context)
out["load_task"] = list(bpy.ops.physcodegym.load_task(task=sys.argv[2], with_reference=True))
out["strip"] = bpy.context.scene.physcodegym.reference_strip
# a panel job started as inside a real Blender: through the binary (a stand-in), with the extension's own code
from physcodegym.core import launch
from physcodegym.physcodegym_addon import jobs
bpy.app.binary_path = sys.argv[3]
job = jobs.submit(jobs.Job("t_child", launch.cli_argv(["tasks", "show", sys.argv[2], "--json"])))
jobs.wait("t_child", timeout=150)
out["child"] = {"argv0": job.argv[0], "state": job.state, "message": job.message, "log": job.log[-5:],
                "id": (job.doc or {}).get("task", {}).get("id"), "root": str(launch.PACKAGE_ROOT)}
addon_utils.disable(mod, default_set=True)
out["after_disable"] = hasattr(bpy.types, "PCG_PT_main") or hasattr(bpy.types.Scene, "physcodegym")
print("RESULT " + json.dumps(out))
"""


def test_manifest_validates() -> None:
    v = package.validate()
    assert v["ok"], v["output"]


def test_built_extension_installs_registers_and_degrades(tmp_path: Path, task_folder: Path) -> None:
    doc = package.build(tmp_path / "out", wheel_set="none")
    z = Path(doc["zip"])
    names = zipfile.ZipFile(z).namelist()
    assert "blender_manifest.toml" in names and "panels/registration.py" in names and "panels/main.py" in names
    assert not [n for n in names if n.startswith(("tests/", ".venv/", ".git/", ".pytest_cache/")) or "__pycache__" in n]
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    standin = write_standin(tmp_path / "blender")
    p = subprocess.run([sys.executable, "-c", CHILD, str(z), str(task_folder), str(standin)], capture_output=True, text=True, timeout=300,
                       env=env, cwd=str(tmp_path))
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, p.stdout[-2000:] + p.stderr[-2000:]
    out = json.loads(line[7:])
    assert out["installed"] and "load_task" in out["ops"] and "run_audit" in out["ops"]
    assert out["alias"] == "bl_ext.user_default.physcodegym"  # the toolkit imported from the extension itself
    assert out["prefs"] == ["PCG_AddonPreferences", "OPENAI_API_KEY"]  # preferences bound to the extension's module
    f = out["features"]
    assert f["lpips"] == [False, "not available: torch missing"]
    assert f["score"][0] is False and "cv2 missing" in f["score"][1]
    assert f["rubric_eval"] == [False, "not available: scipy missing"]
    assert f["tasks"] == [True, ""] and f["audit"][0] is True
    assert "label" in out["calls"] and out["load_task"] == ["FINISHED"] and out["strip"] == "PCG Reference"
    assert out["after_disable"] is False
    child = out["child"]  # the job ran through the binary, on the installed extension's code
    assert child["argv0"] == str(standin) and child["state"] == "done", child
    assert child["id"] == "panel_drop" and Path(child["root"]).is_relative_to(tmp_path / "user"), child
