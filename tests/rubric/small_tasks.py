"""Small copies of shipped tasks for the self-test rows in CI.

A small copy is the shipped truth program with fewer frames and a coarser cloth or fewer particles, and the
shipped task.json with the times that fall past its end moved inside it: the same objects, layout, solver,
colliders and rubric checks, so the same detectors decide each defect, but a defect's re-bake costs seconds
instead of minutes (cloth_drape's own row re-bakes a 36x36 self-colliding cloth for 240 frames: 358 s for the
basic defects and 308 s for two concealment defects in a measured CI run; its small copy does all seven in
about 50 s). The full matrix on the shipped tasks themselves is `physcodegym selftest --all`.

Every substitution must match the shipped text exactly once: a change to the shipped truth that a small copy
no longer follows fails here, loudly, instead of testing something else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from physcodegym.tasks.loader import PACKS_DIR, LoadedTask, load_task


@dataclass(frozen=True)
class SmallCopy:
    """How a small copy differs from its shipped task: text replacements in truth.py, and for the task.json the
    new reading time of each counterfactual criterion and the new interval of each event past the end."""

    source: str
    truth: dict[str, str]
    cf_at_s: dict[str, float] = field(default_factory=dict)
    events: dict[str, tuple[float, float]] = field(default_factory=dict)


SMALL: dict[str, SmallCopy] = {
    # 2 s, a 16x16 cloth without the render subdivision, cloth quality 4 (shipped: 8 s, 36x36, 6)
    "cloth_drape_small": SmallCopy(
        "cloth_drape",
        {"FRAMES = 240": "FRAMES = 60", '"grid": 36,': '"grid": 16,', '"subsurf": 1,': '"subsurf": 0,',
         '"quality": 6,': '"quality": 4,'},
        events={"rests": (1.8, 1.9)}),
    # 3 s, the pour over 2 s with 500 drops (shipped: 8 s, 4 s, 1400)
    "milk_pour_small": SmallCopy(
        "milk_pour",
        {"FRAMES = 240": "FRAMES = 90", "'count': 1400,": "'count': 500,", "'pour_frames': [10, 130],":
         "'pour_frames': [10, 70],"},
        cf_at_s={"cf_no_glass_contact": 2.8},
        events={"filling": (0.5, 2.2), "stops": (2.3, 2.4), "stays_full": (2.4, 2.9)}),
    # 2 s, the pour over 1.3 s with 250 drops (shipped: 8 s, 4.3 s, 700)
    "liquid_duck_small": SmallCopy(
        "liquid_duck",
        {"FRAMES = 240": "FRAMES = 60", "'count': 700,": "'count': 250,", "'pour_frames': [10, 140],":
         "'pour_frames': [10, 50],"},
        events={"runs_off": (0.9, 1.6), "stops": (1.7, 1.9)}),
    # 3 s, the jet over 1.8 s with 500 drops (shipped: 8 s, 4.8 s, 1600)
    "hose_jet_small": SmallCopy(
        "hose_jet",
        {"FRAMES = 240": "FRAMES = 90", "'count': 1600,": "'count': 500,", "'jet_frames': [5, 150],":
         "'jet_frames': [5, 60],"},
        cf_at_s={"cf_no_gravity": 2.8},
        events={"collects": (0.367, 2.3), "jet_stops": (2.3, 2.9)}),
    # 3 s, a 20x14 flag grid (shipped: 8 s, 30x20)
    "flag_wind_small": SmallCopy(
        "flag_wind",
        {"FRAMES = 240": "FRAMES = 90", "'grid': [30, 20],": "'grid': [20, 14],"},
        cf_at_s={"cf_no_wind": 2.5},
        events={"blown_back": (0.267, 1.8), "streams": (1.8, 2.9)}),
    # 5 s, 4 layers of 9 beads (shipped: 8 s, 10 layers)
    "bead_pile_small": SmallCopy(
        "bead_pile",
        {"FRAMES = 240": "FRAMES = 150", '"layers": 10,': '"layers": 4,'},
        cf_at_s={"cf_no_tray": 4.5},
        events={"pour": (0.2, 2.5), "pile": (1.5, 3.5), "settled": (3.5, 4.9)}),
}


def _replace_once(text: str, old: str, new: str, where: str) -> str:
    if text.count(old) != 1:
        raise AssertionError(f"{where}: {old!r} occurs {text.count(old)} times in the shipped truth (expected once)")
    return text.replace(old, new)


def small_task(task_id: str, root: Path) -> LoadedTask:
    """The small copy `task_id` (a key of SMALL), written under `root/_small/<task_id>` once and loaded."""
    spec = SMALL[task_id]
    folder = root / "_small" / task_id
    if not (folder / "task.json").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        src = PACKS_DIR / spec.source
        truth = (src / "truth.py").read_text()
        for old, new in spec.truth.items():
            truth = _replace_once(truth, old, new, str(src / "truth.py"))
        (folder / "truth.py").write_text(truth)
        doc: dict[str, Any] = json.loads((src / "task.json").read_text())
        doc["id"] = task_id
        doc["title"] = f"{doc['title']} (small copy for the self-test in CI)"
        doc["truth"] = {"program": "truth.py", "trajectories": "truth_trajectories.npz",
                        "counterfactuals": "truth_counterfactuals.json"}  # neither exists: nothing to compare with
        doc.pop("video", None)
        crit = {c["id"]: c for c in doc["rubric"]["criteria"]}
        for cid, at in spec.cf_at_s.items():
            crit[cid]["counterfactual"]["expected"]["at_s"] = at
        for ev in doc["events"]:
            if ev["id"] in spec.events:
                ev["interval"] = dict(zip(("start_s", "end_s"), spec.events[ev["id"]], strict=True))
        (folder / "task.json").write_text(json.dumps(doc, indent=1))
    return load_task(folder)
