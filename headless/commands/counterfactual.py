"""`physcodegym counterfactual`: re-bake an intervened copy of a native scene and compare with the baseline.

    physcodegym counterfactual DIR_OR_BLEND --intervention SPEC [--control SPEC] [--expected JSON]
                               [--task TASK | --roles FILE] [--frames S:E] [--plot PNG] --json
    physcodegym counterfactual --truth TASK [--json]     # write TASK/truth_counterfactuals.json

SPEC is JSON (`{"kind": "disable_contact", "roles": ["a", "b"]}`), a path to a JSON file, or the
short form `kind:role1,role2[:key=value,...]` (e.g. `scale_gravity::factor=0.5`,
`shift_release:ball:offset=0.1/0/0`). Roles are task roles when `--task`/`--roles` is given,
object names otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from physcodegym.core.errors import InputError, from_validation
from pydantic import ValidationError

NAME = "counterfactual"
HELP = "re-simulate an intervened copy of a native scene and compare with the baseline"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", nargs="?", help="run folder (with scene.blend) or a .blend file")
    p.add_argument("--intervention", help="intervention SPEC (JSON, JSON file, or kind:roles[:k=v,...])")
    p.add_argument("--control", help="matched control SPEC applied on top of the intervention")
    p.add_argument("--expected", help="expected response (JSON or file) to get a verdict")
    p.add_argument("--task", help="task id or folder: map its roles onto the scene")
    p.add_argument("--roles", help="roles.json {role: object} mapping file")
    p.add_argument("--frames", help="S:E frame range to re-bake and compare (default: the scene's)")
    p.add_argument("--plot", help="write baseline / intervened / control trajectories to this PNG")
    p.add_argument(
        "--truth",
        metavar="TASK",
        help="measure every counterfactual criterion on TASK's truth scene; write truth_counterfactuals.json",
    )
    p.add_argument("--work-dir", help="keep branch samples here (default: a temporary folder)")


def _num(v: str) -> Any:
    if "/" in v:
        return [float(x) for x in v.split("/")]
    try:
        return float(v)
    except ValueError:
        return v


def parse_spec(spec: str, what: str = "--intervention") -> Any:
    """Intervention from JSON text, a JSON file, or `kind:roles[:k=v,...]`."""
    from physcodegym.tasks.schema import Intervention

    raw: Any
    src = spec
    if os.path.isfile(spec):
        src = Path(spec).read_text(encoding="utf-8")
    if src.lstrip().startswith("{"):
        try:
            raw = json.loads(src)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON: {e.msg}", file=spec if os.path.isfile(spec) else None, field=what) from e
    else:
        parts = spec.split(":")
        raw = {"kind": parts[0], "roles": [r for r in (parts[1].split(",") if len(parts) > 1 else []) if r]}
        if len(parts) > 2 and parts[2]:
            raw["params"] = {k: _num(v) for k, v in (kv.split("=", 1) for kv in parts[2].split(","))}
    try:
        return Intervention.model_validate(raw)
    except ValidationError as e:
        raise from_validation(e, prefix=what) from e


def _expected(text: str) -> Any:
    from physcodegym.tasks.schema import ExpectedResponse

    src = Path(text).read_text(encoding="utf-8") if os.path.isfile(text) else text
    try:
        return ExpectedResponse.model_validate(json.loads(src))
    except (json.JSONDecodeError, ValidationError) as e:
        raise InputError(f"bad expected response: {e}", field="--expected") from e


def _blend(target: str) -> Path:
    p = Path(target)
    b = p / "scene.blend" if p.is_dir() else p
    if not b.is_file() or b.suffix != ".blend":
        raise InputError("no native scene (.blend) here", file=str(b))
    return b


def _mapping(blend: Path, task: str | None, roles: str | None) -> tuple[dict[str, str], dict[str, Any] | None]:
    from physcodegym.probes.roles import load_roles_file, map_scene_roles, simple_mapping

    if roles:
        return load_roles_file(Path(roles)), None
    if (blend.parent / "roles.json").is_file() and not task:
        return load_roles_file(blend.parent / "roles.json"), None
    if task:
        import bpy
        from physcodegym.tasks.loader import load_task

        loaded_task = load_task(task)
        bpy.ops.wm.open_mainfile(filepath=str(blend))
        doc = map_scene_roles(loaded_task.task, bpy.context.scene, blend.parent)
        return simple_mapping(doc), doc
    return {}, None


def run(args: argparse.Namespace) -> dict[str, Any]:
    from physcodegym.probes.counterfactual import public, run_counterfactual

    if args.truth:
        from physcodegym.verifier import truth_counterfactuals

        return truth_counterfactuals.measure(args.truth, Path(args.work_dir) if args.work_dir else None)
    if not args.target:
        raise InputError("give a run folder or .blend (or --truth TASK)", field="target")
    if not args.intervention:
        raise InputError("--intervention SPEC is required", field="--intervention")
    blend = _blend(args.target)
    iv = parse_spec(args.intervention)
    ctrl = parse_spec(args.control, "--control") if args.control else None
    exp = _expected(args.expected) if args.expected else None
    mapping, mdoc = _mapping(blend, args.task, args.roles)
    roles = list(
        dict.fromkeys([*iv.roles, *(ctrl.roles if ctrl else []), *([exp.role, *exp.preserved_roles] if exp else [])])
    )
    for r in roles:
        mapping.setdefault(r, r)  # unmapped names are taken as object names
    frames = None
    if args.frames:
        try:
            a, b = (int(x) for x in args.frames.split(":"))
        except ValueError as e:
            raise InputError("frames must be S:E", field="--frames") from e
        frames = (a, b)
    doc = run_counterfactual(
        blend,
        iv,
        mapping,
        frames=frames,
        control=ctrl,
        expected=exp,
        work_dir=Path(args.work_dir) if args.work_dir else None,
    )
    if args.plot and doc.get("_samples"):
        from physcodegym.probes.plots import plot_counterfactual

        plot_counterfactual(doc, Path(args.plot), roles or list(mapping)[:3])
        doc["plot"] = args.plot
    out = public(doc)
    if mdoc is not None:
        out["mapping_detail"] = mdoc
    return out
