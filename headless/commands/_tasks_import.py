"""`physcodegym tasks import` (a sub-command of tasks.py; the leading underscore keeps the CLI from listing it as a
command).

    physcodegym tasks import VIDEO --id ID --category C[/S] [--start S --end S] [--url URL] [--licence L]
                                   [--out ROOT] [--json]

normalises any clip to a reference (240 frames, 30 fps, 640x360, letterboxed) and writes a task skeleton
(`authoring.importer`); `tasks validate` then lists what an annotator still has to add.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAMES: tuple[str, ...] = ("import",)


def _default_root() -> str:
    """The first $PHYSCODEGYM_TASKS root (where ids are looked up first), else the current folder."""
    roots = [p for p in os.environ.get("PHYSCODEGYM_TASKS", "").split(os.pathsep) if p]
    return roots[0] if roots else "."


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the sub-command(s) on `physcodegym tasks`."""
    p = sub.add_parser("import",
                       help="make a task skeleton from a real video (normalised to 240 frames, 30 fps, 640x360)")
    p.add_argument("video")
    p.add_argument("--id", required=True, dest="task_id", help="task id (folder name under --out)")
    p.add_argument("--category", required=True, help="category[/subcategory], e.g. rigid/falling-bouncing or wind")
    p.add_argument("--title", default=None, help="task title (default: from the file name)")
    p.add_argument("--start", type=float, default=0.0, help="first second of the clip to use (default 0)")
    p.add_argument("--end", type=float, default=None, help="last second (default: start + 8 s or the clip's end)")
    p.add_argument("--out", default=None, help="task root folder (default: first $PHYSCODEGYM_TASKS root, else .)")
    p.add_argument("--encoder", default="auto", choices=("auto", "h264", "mp4v"),
                   help="h264: Blender's ffmpeg (like shipped references; default when bpy is present); mp4v: cv2")
    p.add_argument("--force", action="store_true", help="replace an existing task folder's task.json and video")
    p.add_argument("--url", default=None, help="where the clip came from (recorded as its provenance)")
    p.add_argument("--licence", "--license", dest="licence", default=None,
                   help="the clip's licence as you state it, e.g. 'CC BY 4.0' (recorded, not checked)")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> CommandResult:
    if args.tasks_cmd != "import":
        raise InputError(f"unknown tasks sub-command {args.tasks_cmd!r}")
    from physcodegym.authoring.importer import import_video

    doc = import_video(Path(args.video), args.task_id, args.category, Path(args.out or _default_root()),
                       start_s=args.start,
                       end_s=args.end, title=args.title, encoder=args.encoder, force=args.force,
                       url=args.url, licence=args.licence)
    s = doc["source"]
    lb = s["letterbox"]
    lines = [
        f"imported {s['file']} -> {doc['folder']}",
        f"  source {s['width']}x{s['height']} rot {s['rotation_deg']} {s['fps']:.3f} "
        f"fps{' (VFR)' if s['variable_frame_rate'] else ''} {s['duration_s']:.2f} s; used {s['trim_start_s']:.2f}-"
        f"{s['trim_end_s']:.2f} s",
        f"  picture {lb['width']}x{lb['height']} at ({lb['x']},{lb['y']}) in 640x360; encoder {s['encoder']} (SSIM "
        f"{s['encode_ssim_mean']})",
    ]
    if s["held"]:
        h = s["held"]
        lines.append(f"  clip shorter than 8 s: frames {h['from_frame']}-240 repeat the last frame (footage ends at "
                     f"{h['source_ends_s']:.2f} s)")
    lines += ["  still to annotate:"] + [f"    {m['field']}: {m['need']}" for m in doc["missing"]]
    return CommandResult(doc, human="\n".join(lines))
