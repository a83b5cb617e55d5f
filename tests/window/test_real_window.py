"""The extension in a real Blender window (Debian 13's Blender 4.3.2 under Xvfb, walled by scripts/blender).

The panel tests of tests/panel run the bpy module, which has no window, draws no panel and takes no click. Here the
zip is installed with Blender's own installer, Blender starts with its UI on a run's scene, and tests/window/driver.py
uses the X mouse and keyboard as a person would (PhysCodeGym tab, type the task id, Load, Run Audit), while the test
judges only what came out of the window: screenshots, the UI state the probe script wrote, Blender's Python log.
It fails when no panel is drawn (the Load button is not on the screen), a step has no effect, or Blender logs a
Python error. `make test-blender` runs these; the rootfs is built first when absent (never skipped).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realblender import LAUNCHER, install, launcher_env  # noqa: E402
from xwd import read_xwd, to_png  # noqa: E402

HERE = Path(__file__).resolve().parent
PYTHON_ERROR = re.compile(r"Traceback \(most recent call last\)|^Error: Python|Exception in|Error: Extension", re.M)


def drive(out: Path, blend: Path, user: Path, task_id: str = "ball_bounce") -> dict:
    """Run the driver inside the rootfs; returns {step name: step} (driver.json), the last failure under 'failed'."""
    out.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(
        [str(LAUNCHER), "--exec", "/usr/bin/python3", str(HERE / "driver.py"), str(out), str(blend), task_id],
        capture_output=True,
        text=True,
        timeout=900,
        env=launcher_env(out, user, blend.parent, user=user),
        cwd=out,
    )
    doc = json.loads((out / "driver.json").read_text()) if (out / "driver.json").exists() else {"steps": []}
    steps = {s["step"]: s for s in doc["steps"]}
    steps["_output"] = {"stdout": p.stdout[-3000:], "stderr": p.stderr[-3000:], "status": p.returncode}
    return steps


def python_errors(out: Path) -> list[str]:
    """Python errors Blender printed: the probe's line-buffered log, and Blender's own stdout (flushed at exit)."""
    found = []
    for name in ("blender_py.log", "blender.log"):
        path = out / name
        text = path.read_text(errors="replace") if path.exists() else ""
        found += [f"{name}: {text[max(0, m.start() - 200) : m.end() + 800]}" for m in PYTHON_ERROR.finditer(text)]
    return found


def sidebar(img: np.ndarray, state: dict) -> np.ndarray:
    """The sidebar region's pixels (Blender gives region x, y from the window's bottom-left)."""
    x, y, w, h = state["ui_region"]
    top = img.shape[0] - (y + h)
    return img[top : top + h, x : x + w]


def best_match(img: np.ndarray, template: str) -> float:
    tpl = cv2.cvtColor(cv2.imread(str(HERE / "templates" / template)), cv2.COLOR_BGR2GRAY)
    res = cv2.matchTemplate(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), tpl, cv2.TM_CCOEFF_NORMED)
    return float(res.max())


def test_panel_loads_a_task_and_lists_audit_findings_in_a_real_window(
    installed_user: Path, keyed_ball_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "window"
    steps = drive(out, keyed_ball_run / "scene.blend", installed_user)
    assert "failed" not in steps, f"the driver failed: {steps.get('failed')}\n{steps['_output']}"
    assert not python_errors(out), "Blender logged a Python error:\n" + "\n".join(python_errors(out))
    state = json.loads((out / "state.json").read_text())
    assert state["version"] == "4.3.2" and state["addons"] == ["bl_ext.user_default.physcodegym"]

    # the panel is drawn: the Task panel's Load button is on the screen, in the sidebar, after the tab press; and
    # the sidebar differs from the one drawn before, on the default Tool tab
    idle = read_xwd(out / "idle.xwd")
    assert best_match(sidebar(idle, state), "load_button.png") > 0.9
    before = read_xwd(out / "before_physcodegym_tab.xwd")
    assert best_match(sidebar(before, state), "load_button.png") < 0.8, "the panel was drawn before the tab press?"

    # the task loaded with its reference as a background strip, the checklist and events listed
    loaded = steps["task loaded"]["scene"]
    assert loaded["task_id"] == "ball_bounce" and loaded["checklist"] == 3 and loaded["events"] == 3
    assert loaded["reference_strip"] and loaded["reference_strip"] in loaded["vse_strips"]
    shot_loaded = read_xwd(out / "task_loaded.xwd")
    assert np.abs(sidebar(shot_loaded, state).astype(int) - sidebar(idle, state).astype(int)).mean() > 1.0

    # the audit ran in the background and its findings are listed: the keyframed ball is scripted motion
    done = steps["audit done"]
    assert done["jobs"]["audit"]["state"] == "done", done["jobs"]
    assert not done["scene"]["audit_status"].startswith("audit "), done["scene"]["audit_status"]  # error/invalid
    kinds = {(f["kind"], f["objects"]) for f in done["scene"]["findings"]}
    assert ("scripted_motion", "Ball") in kinds, kinds
    shot_audit = read_xwd(out / "audit.xwd")
    diff = np.abs(sidebar(shot_audit, state).astype(int) - sidebar(shot_loaded, state).astype(int))
    assert diff.max(axis=2).astype(bool).sum() > 2000, "the findings list is not drawn"
    for name in ("idle", "task_loaded", "audit"):  # for a look (docs/BLENDER.md shows three of these)
        to_png(out / f"{name}.xwd", out / f"{name}.png", scale=0.5)


def test_zip_with_python_313_wheels_installs_in_blender_4_3(rootfs: Path, tmp_path: Path) -> None:
    """The default zip (core wheels for Python 3.11 and 3.13) installs and enables in Debian's Blender (Python
    3.13): Blender keeps the cp313 wheels and the extension imports its pydantic from them."""
    from physcodegym.physcodegym_addon import package

    doc = package.build(tmp_path / "zip", wheel_set="core")
    names = doc["wheels"]
    assert any("cp311" in n for n in names) and any("cp313" in n for n in names), names
    user = tmp_path / "user"
    user.mkdir()
    p = install(Path(doc["zip"]), user)
    assert p.returncode == 0 and 'Installed "physcodegym"' in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    assert "incompatible" not in p.stdout + p.stderr
    probe = (
        "import bpy, pydantic_core; "
        "print('PCG', sorted(k for k in bpy.context.preferences.addons.keys() if 'physcodegym' in k), "
        "hasattr(bpy.types, 'PCG_PT_main'), pydantic_core.__file__)"
    )
    q = subprocess.run(
        [str(LAUNCHER), "-b", "--python-expr", probe],
        capture_output=True,
        text=True,
        timeout=300,
        env=launcher_env(user, user=user),
        cwd=user,
    )
    line = next((ln for ln in q.stdout.splitlines() if ln.startswith("PCG ")), "")
    assert "['bl_ext.user_default.physcodegym'] True" in line, q.stdout[-2000:] + q.stderr[-2000:]
    assert f"{user}/extensions/.local/lib/python3.13/site-packages/pydantic_core" in line
    assert not PYTHON_ERROR.search(q.stdout + q.stderr), q.stdout[-2000:]
