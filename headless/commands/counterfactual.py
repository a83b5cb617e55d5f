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
import tempfile
from pathlib import Path
from typing import Any

from physcodegym.core.errors import InputError, from_validation
from pydantic import ValidationError

NAME = "counterfactual"
HELP = "re-simulate an intervened copy of a native scene and compare with the baseline (SPEC §7)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", nargs="?", help="run folder (with scene.blend) or a .blend file")
    p.add_argument("--intervention", help="intervention SPEC (JSON, JSON file, or kind:roles[:k=v,...])")
    p.add_argument("--control", help="matched control SPEC applied on top of the intervention")
    p.add_argument("--expected", help="expected response (JSON or file) to get a verdict")
    p.add_argument("--task", help="task id or folder: map its roles onto the scene")
    p.add_argument("--roles", help="roles.json {role: object} mapping file")
    p.add_argument("--frames", help="S:E frame range to re-bake and compare (default: the scene's)")
    p.add_argument("--plot", help="write baseline / intervened / control trajectories to this PNG")
    p.add_argument("--truth", metavar="TASK", help="measure every counterfactual criterion on TASK's truth scene; write truth_counterfactuals.json")
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

        lt = load_task(task)
        bpy.ops.wm.open_mainfile(filepath=str(blend))
        doc = map_scene_roles(lt.task, bpy.context.scene, blend.parent)
        return simple_mapping(doc), doc
    return {}, None


def plot(doc: dict[str, Any], path: Path, roles: list[str]) -> None:
    """Top-down x/z tracks per role: baseline, intervened, control."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from physcodegym.probes.counterfactual import track

    s = doc["_samples"]
    fig, axes = plt.subplots(1, max(1, len(roles)), figsize=(5 * max(1, len(roles)), 4), squeeze=False)
    for ax, role in zip(axes[0], roles, strict=False):
        name = doc["mapping"].get(role, role)
        for key, style in (("baseline", "k-"), ("intervened", "r--"), ("control", "b:")):
            smp = s.get(key)
            tr = track(smp, name) if smp is not None else None
            if tr is not None:
                t = (smp.frames - 1) / smp.fps
                ax.plot(t, tr[:, 0], style, label=f"{key} x")
                ax.plot(t, tr[:, 2], style, alpha=0.5, label=f"{key} z")
        ax.set_title(f"{role} ({name})")
        ax.set_xlabel("t (s)")
        ax.set_ylabel("m")
        ax.legend(fontsize=7)
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    os.replace(tmp, path)


def truth_counterfactuals(task: str, work_dir: Path | None = None) -> dict[str, Any]:
    """Measure each counterfactual criterion on the task's truth scene; write truth_counterfactuals.json atomically."""
    from physcodegym.probes.counterfactual import public, run_counterfactual
    from physcodegym.tasks.loader import load_task
    from physcodegym.verifier.selftest import truth_blend, truth_mapping

    lt = load_task(task)
    tmp = tempfile.TemporaryDirectory(prefix="pcg_truthcf_") if work_dir is None else None
    wd = Path(work_dir) if work_dir else Path(tmp.name)
    try:
        blend = truth_blend(lt, wd)
        mapping = truth_mapping(lt)
        out: dict[str, Any] = {"task": lt.id, "criteria": {}}
        for c in lt.task.rubric.criteria:
            if c.counterfactual is None:
                continue
            cf = c.counterfactual
            doc = run_counterfactual(blend, cf.intervention, mapping, control=cf.control, expected=cf.expected, work_dir=wd / f"cf_{c.id}")
            v = doc.get("verdict", {})
            out["criteria"][c.id] = {
                "intervention": cf.intervention.model_dump(mode="json"),
                "expected": cf.expected.model_dump(mode="json"),
                "took_effect": doc.get("took_effect"),
                "measured": (v.get("intervened") or {}).get("value"),
                "ratio": v.get("ratio"),
                "preserved": v.get("preserved"),
                "control": (v.get("control") or {}).get("value") if v.get("control") else None,
                "passed": v.get("passed"),
                "reason": v.get("reason") or doc.get("reason"),
                "trajectories": public(doc).get("trajectories"),
            }
        target = lt.truth_counterfactuals or (lt.folder / "truth_counterfactuals.json")
        tmpf = target.with_name(target.name + ".tmp")
        tmpf.write_text(json.dumps(out, indent=1, default=str))
        os.replace(tmpf, target)
        out["written"] = str(target)
        return out
    finally:
        if tmp is not None:
            tmp.cleanup()


def run(args: argparse.Namespace) -> dict[str, Any]:
    from physcodegym.probes.counterfactual import public, run_counterfactual

    if args.truth:
        return truth_counterfactuals(args.truth, Path(args.work_dir) if args.work_dir else None)
    if not args.target:
        raise InputError("give a run folder or .blend (or --truth TASK)", field="target")
    if not args.intervention:
        raise InputError("--intervention SPEC is required", field="--intervention")
    blend = _blend(args.target)
    iv = parse_spec(args.intervention)
    ctrl = parse_spec(args.control, "--control") if args.control else None
    exp = _expected(args.expected) if args.expected else None
    mapping, mdoc = _mapping(blend, args.task, args.roles)
    roles = list(dict.fromkeys([*iv.roles, *(ctrl.roles if ctrl else []), *([exp.role, *exp.preserved_roles] if exp else [])]))
    for r in roles:
        mapping.setdefault(r, r)  # unmapped names are taken as object names
    frames = None
    if args.frames:
        try:
            a, b = (int(x) for x in args.frames.split(":"))
        except ValueError as e:
            raise InputError("frames must be S:E", field="--frames") from e
        frames = (a, b)
    doc = run_counterfactual(blend, iv, mapping, frames=frames, control=ctrl, expected=exp, work_dir=Path(args.work_dir) if args.work_dir else None)
    if args.plot and doc.get("_samples"):
        plot(doc, Path(args.plot), roles or list(mapping)[:3])
        doc["plot"] = args.plot
    out = public(doc)
    if mdoc is not None:
        out["mapping_detail"] = mdoc
    return out
