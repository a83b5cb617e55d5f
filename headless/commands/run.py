"""`physcodegym run SCENE.py --out DIR`: execute a scene program in isolation (SPEC §3, §7)."""

from __future__ import annotations

import argparse
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAME = "run"
HELP = (
    "run a scene program in isolation (static check; bubblewrap wall: read-only system, only its scratch folder "
    "writable, no network, own PID namespace; limits; run-time barrier) and verify its outputs"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("program", help="the scene program (scene.py)")
    p.add_argument("--out", required=True, help="output folder (the program's working directory)")
    p.add_argument("--timeout", type=float, default=1800.0, help="wall-clock limit in seconds (default 1800)")
    p.add_argument("--memory-mb", type=int, default=8192, help="address-space limit in MiB (0: none; default 8192)")
    p.add_argument("--mode", choices=("full", "bake_only", "preview"), default="full")
    p.add_argument("--frame", type=int, default=None, help="frame to render in --mode preview")
    p.add_argument("--frames", type=int, default=240, help="expected frame count (default 240, the contract)")
    p.add_argument("--blender", default=None, help="Blender binary (default $PHYSCODEGYM_BLENDER, else the bpy module)")
    p.add_argument(
        "--unsafe-no-isolation",
        action="store_true",
        help="run without the operating-system wall (bubblewrap): only the in-process audit hook and limits; "
        "the run record says so. Never for untrusted programs",
    )


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.sandbox.runner import run_program

    prog = Path(args.program)
    if not prog.is_file():
        raise InputError("scene program not found", file=str(prog))
    if args.timeout <= 0:
        raise InputError("must be positive", field="--timeout")
    if args.mode == "preview" and args.frame is not None and not 1 <= args.frame <= 100000:
        raise InputError("frame out of range", field="--frame")
    from physcodegym.sandbox import isolation as wall

    isolation = "none" if args.unsafe_no_isolation else "bwrap"
    try:
        wall.require(isolation)
    except wall.IsolationUnavailable as e:  # refuse up front, with what to do; nothing is run or written
        raise InputError(str(e), field=wall.UNSAFE_FLAG) from e
    rec = run_program(
        prog,
        Path(args.out),
        timeout_s=args.timeout,
        memory_mb=args.memory_mb or None,
        mode=args.mode,
        preview_frame=args.frame,
        expected_frames=args.frames,
        blender_binary=args.blender,
        isolation=isolation,
    )
    doc = rec.model_dump()
    doc["run_dir"] = str(Path(args.out).resolve())
    human = f"{rec.status} in {rec.seconds:.1f} s -> {Path(args.out) / 'run.json'} [isolation: {rec.isolation}]" + (
        f"\n{rec.reason}" if rec.reason else ""
    )
    # a failed/timeout/policy run is a recorded result (exit 0); scripts read `status`
    return CommandResult(doc, human=human)
