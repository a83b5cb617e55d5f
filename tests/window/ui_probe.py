"""Runs inside the real (GUI) Blender of the window test, as `blender --python ui_probe.py`.

Why: a GUI Blender's stdout is buffered until it exits and it has no API the test process can query, so this
script (1) sends Python's stdout/stderr, where Blender prints the traceback of a failing operator, line-buffered
to `$PCG_WIN_DIR/blender_py.log`; (2) opens the 3D view's sidebar full-window, as a user would with N and Ctrl+Space (the
driver clicks the PhysCodeGym tab); (3) writes what the UI holds (`state.json`: regions, the panel's registered classes,
the scene's PhysCodeGym state, background jobs) every quarter second; (4) quits when the driver writes `quit`.
It never presses a button: the driver does that with the X mouse and keyboard (xdotool).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

import bpy

OUT = Path(os.environ["PCG_WIN_DIR"])
_log = open(OUT / "blender_py.log", "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (lives as long as Blender)
sys.stdout = sys.stderr = _log
T0 = time.monotonic()
_SETUP = {"done": False}


def _view3d() -> tuple[object, object, object] | None:
    """(window, area, UI region) of the largest 3D view."""
    for win in bpy.context.window_manager.windows:
        areas = [a for a in win.screen.areas if a.type == "VIEW_3D"]
        if areas:
            area = max(areas, key=lambda a: a.width * a.height)
            ui = next((r for r in area.regions if r.type == "UI"), None)
            return win, area, ui
    return None


def _setup() -> None:
    found = _view3d()
    if found is None:
        return
    win, area, ui = found
    area.spaces[0].show_region_ui = True
    if area.width < win.width - 10:  # not yet full-window
        with bpy.context.temp_override(window=win, area=area, region=area.regions[-1]):
            bpy.ops.screen.screen_full_area()
        return  # the screen changed: the regions are new next tick
    _SETUP["done"] = True  # the PhysCodeGym tab: the driver clicks it (a person's way, and it works in every version)


def _state() -> dict:
    doc: dict = {"t": round(time.monotonic() - T0, 2), "setup": _SETUP["done"], "version": bpy.app.version_string}
    doc["addons"] = [k for k in bpy.context.preferences.addons.keys() if "physcodegym" in k]
    doc["panel_registered"] = hasattr(bpy.types, "PCG_PT_main")
    doc["blend"] = bpy.data.filepath
    found = _view3d()
    if found is not None:
        win, area, ui = found
        doc["window"] = [win.width, win.height]
        doc["area"] = [area.x, area.y, area.width, area.height]
        if ui is not None:
            doc["ui_region"] = [ui.x, ui.y, ui.width, ui.height]
            doc["tab"] = getattr(ui, "active_panel_category", None)
    sc = bpy.context.scene
    st = getattr(sc, "physcodegym", None)
    if st is not None:
        doc["scene"] = {
            "task_ref": st.task_ref,
            "task_id": st.task_id,
            "task_status": st.task_status,
            "checklist": len(st.checklist),
            "events": len(st.events),
            "reference_strip": st.reference_strip,
            "audit_status": st.audit_status,
            "findings": [{"kind": f.kind, "objects": f.objects, "frames": f.frames} for f in st.findings],
        }
        seq = sc.sequence_editor
        strips = getattr(seq, "strips_all", None) or getattr(seq, "sequences_all", None) or [] if seq else []
        doc["scene"]["vse_strips"] = [s.name for s in strips]
    try:
        from physcodegym.physcodegym_addon import jobs

        doc["jobs"] = {n: {"running": j.running, "state": j.state, "message": j.message} for n, j in jobs.JOBS.items()}
    except ImportError as e:
        doc["jobs_error"] = str(e)
    return doc


def _tick() -> float | None:
    try:
        if not _SETUP["done"]:
            _setup()
        doc = _state()
        found = _view3d()
        if found is not None and found[2] is not None:
            # Xvfb has no compositor and Blender redraws a region only on its own events: without this a tab
            # switch or a finished job may stay undrawn while the screen looks settled
            found[2].tag_redraw()
        tmp = OUT / "state.json.tmp"
        tmp.write_text(json.dumps(doc))
        tmp.replace(OUT / "state.json")
        if (OUT / "quit").exists():
            bpy.ops.wm.quit_blender()
            return None
    except Exception:  # a bug here must show in the log the test reads, never stop the probe silently
        traceback.print_exc()
    return 0.25


print(f"ui_probe: Blender {bpy.app.version_string}, Python {sys.version.split()[0]}")
bpy.app.timers.register(_tick, first_interval=0.5, persistent=True)
