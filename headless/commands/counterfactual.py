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
    p.add_argument("--unsafe-no-isolation", action="store_true",
                   help="re-bake without the bubblewrap wall (the scene's stored code and paths could reach the host)")
    p.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)  # the walled child itself


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
    from physcodegym.probes.scene.roles import load_roles_file, map_scene_roles, simple_mapping

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
    from physcodegym.probes.branches.counterfactual import public, run_counterfactual

    if args.truth:
        from physcodegym.verifier import truth_counterfactuals

        return truth_counterfactuals.measure(args.truth, Path(args.work_dir) if args.work_dir else None)
    if not args.target:
        raise InputError("give a run folder or .blend (or --truth TASK)", field="target")
    if not args.intervention:
        raise InputError("--intervention SPEC is required", field="--intervention")
    blend = _blend(args.target)
    from physcodegym.sandbox import wall

    if not getattr(args, "in_process", False) and not wall.inside_wall():
        return _walled(args, blend)
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
        from physcodegym.probes.audit.plots import plot_counterfactual

        plot_counterfactual(doc, Path(args.plot), roles or list(mapping)[:3])
        doc["plot"] = args.plot
    out = public(doc)
    if mdoc is not None:
        out["mapping_detail"] = mdoc
    return out


WALLED_TIMEOUT_S = 3600.0
WALLED_MEMORY_MB = 6144
MAX_KEPT_BYTES = 256 << 20


def _walled(args: argparse.Namespace, blend: Path) -> dict[str, Any]:
    """The command run again as a walled child (`sandbox.wall`, docs/THREAT_MODEL.md): the scene's folder read-only,
    the task as its task.json and every spec file copied into the child's scratch folder, the plot and the branch
    samples brought back from there (regular files, size-capped); the JSON document is the child's."""
    import shutil

    from physcodegym.core import launch
    from physcodegym.sandbox import wall
    from physcodegym.verifier.audit_run import isolation_mode

    mode = isolation_mode(bool(getattr(args, "unsafe_no_isolation", False)))
    src = blend.resolve()
    with wall.scratch_folder("pcg_counterfactual_") as scratch:
        fwd = ["counterfactual", str(src), "--json", "--in-process"]
        for opt in ("intervention", "control", "expected", "roles"):
            v = getattr(args, opt)
            if not v:
                continue
            if os.path.isfile(v):  # a spec file: its bytes, not its place
                dst = scratch / f"{opt}.json"
                shutil.copyfile(v, dst)
                v = str(dst)
            fwd += [f"--{opt}", v]
        if args.task:
            from physcodegym.tasks.loader import load_task

            lt = load_task(args.task)
            (scratch / "task").mkdir()
            (scratch / "task" / "task.json").write_bytes((lt.folder / "task.json").read_bytes())  # the rubric only
            fwd += ["--task", str(scratch / "task")]
        if args.frames:
            fwd += ["--frames", args.frames]
        if args.plot:
            fwd += ["--plot", str(scratch / "plot.png")]
        if args.work_dir:
            fwd += ["--work-dir", str(scratch / "work")]
        res = wall.run_walled(launch.cli_argv(fwd), scratch=scratch, readonly=[src.parent], isolation_mode=mode,
                              timeout_s=WALLED_TIMEOUT_S, memory_mb=WALLED_MEMORY_MB)
        doc = launch.last_json(res.stdout)
        if res.killed_reason or not isinstance(doc, dict):
            why = res.killed_reason or f"exited {res.returncode} without a result: {res.stderr.strip()[-400:]}"
            raise RuntimeError(f"counterfactual child stopped: {why}")
        err = doc.get("error")
        if res.returncode == 2 and isinstance(err, dict):
            raise InputError(err.get("message") or "bad input", file=err.get("file"), field=err.get("field"))
        if res.returncode != 0:
            raise RuntimeError(f"counterfactual child exited {res.returncode}: {err or doc}")
        doc.pop("plot", None)
        got = scratch / "plot.png"
        if args.plot and got.is_file() and not got.is_symlink() and got.stat().st_size < MAX_KEPT_BYTES:
            Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(got, args.plot)
            doc["plot"] = args.plot
        if args.work_dir and (scratch / "work").is_dir():
            kept = 0
            for f in sorted((scratch / "work").rglob("*")):
                if f.is_symlink() or not f.is_file() or kept + f.stat().st_size > MAX_KEPT_BYTES:
                    continue
                dst = Path(args.work_dir) / f.relative_to(scratch / "work")
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dst)
                kept += f.stat().st_size
        doc["isolation"] = wall.describe(mode)
    return doc
