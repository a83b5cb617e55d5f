"""The agent tools as shell commands (`pcg ...`), for native coding CLIs run through Harbor.

Same Toolbox, same rules as the function-calling harness: observation is free, `run`, `inspect` and
`preview` each spend one of the launches (state kept in $PCG_STATE between invocations), `finalize`
refuses until the latest full run came from the current scene.py. Images are written to
$PCG_WORKSPACE/observations/ and their paths printed; every command prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from physcodegym.agent.budget import Budget, BudgetLimits
from physcodegym.agent.tools import Toolbox
from physcodegym.agent.trace import write_json_atomic

COMMANDS = {
    "video-info": ("video_info", "metadata of the reference video"),
    "frames": ("get_frames", "frames at times (seconds): pcg frames 0 1.5 3"),
    "grid": ("frame_grid", "grid of evenly spaced frames: pcg grid [START END COUNT]"),
    "clip": ("clip", "frames sampled at a rate: pcg clip START END RATE"),
    "run": ("run_scene", "run scene.py once (ONE launch); --bake-only skips rendering"),
    "inspect": ("inspect_scene", "structure of the latest saved scene.blend (ONE launch)"),
    "preview": ("render_preview", "render one frame of the simulated scene (ONE launch): pcg preview FRAME"),
    "check": ("check_submission", "policy and output check (no launch)"),
    "finalize": ("finalize", "submit; refused unless the latest full run is of the current scene.py"),
    "budget": (None, "launches left"),
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pcg", description="PhysCodeGym task tools (observation, Blender launches, submission)"
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, (_, helptext) in COMMANDS.items():
        sp = sub.add_parser(name, help=helptext)
        if name == "frames":
            sp.add_argument("times", nargs="+", type=float)
        elif name == "grid":
            sp.add_argument("start", nargs="?", type=float, default=0.0)
            sp.add_argument("end", nargs="?", type=float, default=8.0)
            sp.add_argument("count", nargs="?", type=int, default=8)
        elif name == "clip":
            sp.add_argument("start", type=float)
            sp.add_argument("end", type=float)
            sp.add_argument("rate", type=float)
        elif name == "run":
            sp.add_argument("--bake-only", action="store_true")
        elif name == "preview":
            sp.add_argument("frame", type=int)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    state = Path(os.environ.get("PCG_STATE", "/var/lib/pcg"))
    workspace = Path(os.environ.get("PCG_WORKSPACE", "/app"))
    video = Path(os.environ.get("PCG_VIDEO", "/opt/physcodegym/task/reference.mp4"))
    limits = BudgetLimits(max_launches=int(os.environ.get("PCG_MAX_LAUNCHES", "20")), wall_clock_s=1e9)
    bpath = state / "budget.json"
    budget = Budget.from_dict(json.loads(bpath.read_text()), limits) if bpath.is_file() else Budget(limits=limits)
    box = Toolbox(
        state, video, budget, workspace=workspace, run_timeout_s=float(os.environ.get("PCG_RUN_TIMEOUT", "1800"))
    )
    tool = COMMANDS[args.cmd][0]
    if tool is None:
        doc: dict = {"budget": budget.remaining()}
        code = 0
    else:
        targs = {k: v for k, v in vars(args).items() if k not in ("cmd", "bake_only")}
        if args.cmd == "run":
            targs = {"mode": "bake_only" if args.bake_only else "full"}
        out = box.call(tool, targs)
        doc = dict(out.data)
        if out.images:
            obs = workspace / "observations"
            obs.mkdir(parents=True, exist_ok=True)
            n = len(list(obs.glob("*.png")))
            paths = []
            for k, b in enumerate(out.images):
                p = obs / f"{n + k + 1:04d}_{args.cmd}.png"
                p.write_bytes(b)
                paths.append(str(p))
            doc["images"] = paths
        doc["budget"] = budget.line()
        code = 1 if out.is_error else 0
    budget.elapsed_before_s = 0.0
    write_json_atomic(bpath, budget.to_dict())
    sys.stdout.write(json.dumps(doc, default=str) + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
