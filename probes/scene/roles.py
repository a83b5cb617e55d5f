"""Map rubric roles to scene objects: explicit file, then first-frame projection + colour, then names.

A candidate's program names its objects freely, so names are the weakest source. The task annotates
where each role is on the first reference frame (`screen_xy`) and its colour (`color_rgb`); we project
every candidate object's first-frame centre through the scene camera and assign roles to objects with a
minimum-cost matching. Every mapped role carries its source and a confidence in [0, 1].
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.core.errors import InputError

ROLES_FILE = "roles.json"
MAX_SCREEN_DIST = 0.12  # normalised image units; farther is not a projection match
SKIP_TYPES = {"CAMERA", "LIGHT", "LIGHT_PROBE", "SPEAKER"}


def load_roles_file(path: Path) -> dict[str, str]:
    """Read {role: object_name}; InputError names the file and the bad field."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise InputError("roles file not found", file=str(path)) from e
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON at line {e.lineno}: {e.msg}", file=str(path)) from e
    if not isinstance(raw, dict):
        raise InputError("roles file must be an object {role: object_name}", file=str(path))
    for k, v in raw.items():
        if not isinstance(v, str):
            raise InputError("object name must be a string", file=str(path), field=k)
    return dict(raw)


def candidate_objects(scene: Any) -> list[dict[str, Any]]:
    """First-frame screen position and dominant colour of every visible object (bpy)."""
    from bpy_extras.object_utils import world_to_camera_view

    scene.frame_set(scene.frame_start)
    cam = scene.camera
    out = []
    for ob in scene.objects:
        if ob.type in SKIP_TYPES:
            continue
        c: dict[str, Any] = {"name": ob.name, "type": ob.type, "screen_xy": None, "color_rgb": None}
        if cam is not None:
            p = world_to_camera_view(scene, cam, ob.matrix_world.translation)
            if p.z > 0:
                c["screen_xy"] = (float(p.x), float(1.0 - p.y))  # origin top-left like the annotation
        mats = [s.material for s in getattr(ob, "material_slots", []) if s.material is not None]
        if mats:
            c["color_rgb"] = tuple(float(x) for x in mats[0].diffuse_color[:3])
        elif ob.type == "MESH" and ob.color is not None:
            c["color_rgb"] = tuple(float(x) for x in ob.color[:3])
        out.append(c)
    return out


def _name_score(role: Any, name: str) -> float:
    low = name.lower()
    if role.truth_object and name == role.truth_object:
        return 1.0
    if low == role.name:
        return 0.95
    hints = [h.lower() for h in role.name_hints] + [role.name, *role.name.split("_")]
    if role.truth_object:
        hints.append(role.truth_object.lower())
    best = 0.0
    for h in hints:
        if h and len(h) >= 3 and h in low:
            best = max(best, 0.5 + 0.4 * len(h) / max(len(low), 1))
    return best


def map_roles(task: Any, candidates: list[dict[str, Any]], explicit: dict[str, str] | None = None) -> dict[str, Any]:
    """Return {"roles": {role: {object, confidence, source}}, "unmapped": [...], "problems": [...]}."""
    from scipy.optimize import linear_sum_assignment

    names = [c["name"] for c in candidates]
    roles: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    used: set[str] = set()
    blocked: set[str] = set()
    for role, obj in (explicit or {}).items():
        if not any(r.name == role for r in task.roles):
            problems.append(f"roles file names unknown role {role!r}")
            continue
        if obj not in names:
            # an explicit declaration is not second-guessed: the role stays unmapped and its criteria fail
            problems.append(f"roles file maps {role!r} to missing object {obj!r}")
            blocked.add(role)
            continue
        roles[role] = {"object": obj, "confidence": 1.0, "source": "explicit"}
        used.add(obj)

    # Projection + colour: one assignment over all annotated roles.
    pending = [r for r in task.roles if r.name not in roles and r.name not in blocked and r.screen_xy is not None]
    cands = [c for c in candidates if c["name"] not in used and c["screen_xy"] is not None]
    if pending and cands:
        cost = np.full((len(pending), len(cands)), 10.0)
        for i, r in enumerate(pending):
            for j, c in enumerate(cands):
                d = math.dist(r.screen_xy, c["screen_xy"])
                if d > MAX_SCREEN_DIST:
                    continue
                col = 0.0
                if r.color_rgb is not None and c["color_rgb"] is not None:
                    col = math.dist(r.color_rgb, c["color_rgb"]) / math.sqrt(3)
                cost[i, j] = d / MAX_SCREEN_DIST + 0.5 * col - 0.2 * _name_score(r, c["name"])
        rows, cols = linear_sum_assignment(cost)
        for i, j in zip(rows, cols, strict=True):
            if cost[i, j] >= 10.0:
                continue
            conf = float(max(0.05, min(1.0, 1.0 - 0.5 * max(cost[i, j], 0.0))))
            roles[pending[i].name] = {"object": cands[j]["name"], "confidence": round(conf, 3), "source": "projection"}
            used.add(cands[j]["name"])

    for r in task.roles:
        if r.name in roles or r.name in blocked:
            continue
        scored = sorted(((_name_score(r, n), n) for n in names if n not in used), reverse=True)
        if scored and scored[0][0] > 0:
            s, n = scored[0]
            roles[r.name] = {"object": n, "confidence": round(s, 3), "source": "name"}
            used.add(n)
    unmapped = [r.name for r in task.roles if r.name not in roles]
    return {"roles": roles, "unmapped": unmapped, "problems": problems}


def map_scene_roles(task: Any, scene: Any, run_dir: Path | None = None,
                    roles_file: Path | None = None) -> dict[str, Any]:
    """Map roles on a live scene, reading `roles.json` from the run folder (or `roles_file`) if present."""
    explicit = None
    if roles_file is not None:
        explicit = load_roles_file(roles_file)
    elif run_dir is not None and (Path(run_dir) / ROLES_FILE).is_file():
        explicit = load_roles_file(Path(run_dir) / ROLES_FILE)
    return map_roles(task, candidate_objects(scene), explicit)


def simple_mapping(mapping: dict[str, Any]) -> dict[str, str]:
    """{role: object_name} from a map_roles result."""
    return {k: v["object"] for k, v in mapping.get("roles", {}).items()}
