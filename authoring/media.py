"""Reference-video encoding for shipped tasks, and the check that it stays faithful to the PNG frames.

Why Blender's own ffmpeg (VSE image-sequence render, H.264, CRF "perceptually lossless"): it is in
the bpy wheel (no system ffmpeg here), the result decodes with cv2.VideoCapture, and the measured
SSIM of decoded frames against the source PNGs is reported by `ssim_against_frames` so the
encoder's loss is a number, not a belief.

    python -m physcodegym.authoring.media FRAMES_DIR OUT.mp4     # encode (needs bpy)
    python -m physcodegym.authoring.media render SCENE.blend FRAMES_DIR LOG.jsonl [--threads N]

`render` draws the reference frames of a saved truth scene (`scene.blend`, written by truth.py after its bake)
one frame at a time, each written to a hidden part file and renamed into place, so a frame on disk is always
whole. It renders only the frames not on disk yet: a build killed in the middle of its render starts again at
the first missing frame. After each frame it appends `{"frame", "wall_s", "cpu_s"}` to LOG.jsonl, so the render
seconds of a task add up across interrupted sessions. Why not `render(animation=True)` in the sandboxed truth
run: that run cannot stop and resume, and the sandbox pins its child to one CPU.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

FPS = 30


def frame_files(frames_dir: Path) -> list[Path]:
    return sorted(Path(frames_dir).glob("[0-9][0-9][0-9][0-9].png"))


def encode_frames(frames_dir: Path, out_mp4: Path, crf: str = "PERC_LOSSLESS") -> Path:
    """Encode frames_dir/0001.png... to an H.264 mp4 at 30 fps with a VSE render (runs in bpy)."""
    import bpy

    files = frame_files(frames_dir)
    if not files:
        raise FileNotFoundError(f"no NNNN.png frames in {frames_dir}")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    first = bpy.data.images.load(str(files[0]))
    width, height = first.size  # the frames' own size (640x360 for a task; the build tests' tiny task is smaller)
    bpy.data.images.remove(first)
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = width, height, 100
    sc.render.fps, sc.render.fps_base = FPS, 1.0
    sc.frame_start, sc.frame_end = 1, len(files)
    sc.view_settings.view_transform = "Standard"  # pass the PNG colours through untouched
    sc.view_settings.look = "None"
    sed = sc.sequence_editor_create()
    strip = sed.strips.new_image(name="frames", filepath=str(files[0]), channel=1, frame_start=1)
    for f in files[1:]:
        strip.elements.append(f.name)
    sc.render.use_sequencer = True
    ims = sc.render.image_settings
    ims.media_type = "VIDEO"
    ims.file_format = "FFMPEG"
    ff = sc.render.ffmpeg
    ff.format, ff.codec = "MPEG4", "H264"
    ff.constant_rate_factor = crf
    ff.ffmpeg_preset = "GOOD"
    ff.gopsize = 30
    out_mp4 = Path(out_mp4)
    tmp = out_mp4.with_name(out_mp4.stem + ".tmp.mp4")
    sc.render.filepath = str(tmp)
    sc.render.use_file_extension = False
    bpy.ops.render.render(animation=True)
    os.replace(tmp, out_mp4)
    return out_mp4


PLAN_FILE = "render_plan.json"  # beside the render log: what this session renders (frames_total, frames_reused)
PART_SUFFIX = ".part.png"  # a frame being written; never a frame file (frame_files reads NNNN.png only)


def frame_name(frame: int) -> str:
    return f"{frame:04d}.png"


def unbaked_caches(scene) -> list[str]:
    """Simulation state the saved scene does not hold: point caches not baked, and geometry-node simulation
    zones. Frames of such a scene are only right when reached in order (frame_set steps the solver)."""
    out = []
    rbw = scene.rigidbody_world
    if rbw is not None and rbw.enabled and rbw.point_cache and not rbw.point_cache.is_baked:
        out.append("rigid body world")
    for ob in scene.objects:
        for ps in ob.particle_systems:
            if ps.settings.physics_type != "NO" and not ps.point_cache.is_baked:
                out.append(f"{ob.name}/{ps.name}")
        for md in ob.modifiers:
            cache = getattr(md, "point_cache", None)
            if cache is not None and md.type in ("CLOTH", "SOFT_BODY") and not cache.is_baked:
                out.append(f"{ob.name}/{md.name}")
            ng = getattr(md, "node_group", None) if md.type == "NODES" else None
            if ng is not None and any(n.bl_idname == "GeometryNodeSimulationOutput" for n in ng.nodes):
                out.append(f"{ob.name}/{md.name} (simulation zone)")
    return out


def render_settings(scene) -> dict:
    """What made the frames (recorded in build.json as the reference's provenance)."""
    r = scene.render
    doc = {"engine": r.engine, "width": r.resolution_x * r.resolution_percentage // 100,
           "height": r.resolution_y * r.resolution_percentage // 100,
           "frames": [scene.frame_start, scene.frame_end], "view_transform": scene.view_settings.view_transform,
           "look": scene.view_settings.look}
    if r.engine == "CYCLES":
        cy = scene.cycles
        doc.update({"samples": cy.samples,
                    "adaptive_threshold": round(cy.adaptive_threshold, 4) if cy.use_adaptive_sampling else None,
                    "denoiser": cy.denoiser if cy.use_denoising else None,
                    "denoising_prefilter": cy.denoising_prefilter if cy.use_denoising else None,
                    "denoising_quality": cy.denoising_quality if cy.use_denoising else None,
                    "max_bounces": cy.max_bounces, "seed": cy.seed})
    elif r.engine == "BLENDER_EEVEE":
        doc["samples"] = scene.eevee.taa_render_samples
    else:
        doc["samples"] = None  # Workbench: one pass plus its anti-aliasing
        doc["render_aa"] = scene.display.render_aa
    return doc


def render_frames(blend: Path, frames_dir: Path, log: Path, threads: int = 0) -> dict:
    """Render the frames of `blend` that `frames_dir` does not hold yet (runs in bpy); returns what it did."""
    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(blend), load_ui=False)
    sc = bpy.context.scene
    sc.render.threads_mode = "FIXED" if threads > 0 else "AUTO"
    if threads > 0:
        sc.render.threads = int(threads)
    sc.render.use_file_extension = False
    frames_dir.mkdir(parents=True, exist_ok=True)
    for part in frames_dir.glob("*" + PART_SUFFIX):
        part.unlink()  # a frame the killed session was writing
    every = list(range(sc.frame_start, sc.frame_end + 1))
    todo = [f for f in every if not (frames_dir / frame_name(f)).is_file()]
    unbaked = unbaked_caches(sc)
    doc = {"blender": bpy.app.version_string, "render": render_settings(sc), "frames_total": len(every),
           "frames_reused": len(every) - len(todo), "frames_rendered": 0, "first_rendered": todo[0] if todo else None,
           "unbaked": unbaked, "threads": threads}
    tmp_plan = log.with_name(PLAN_FILE + ".tmp")
    tmp_plan.write_text(json.dumps(doc), encoding="utf-8")
    os.replace(tmp_plan, log.with_name(PLAN_FILE))  # the parent's progress lines read the totals from it
    pending = set(todo)
    with open(log, "a", encoding="utf-8") as lf:
        for f in every:
            if f not in pending:
                if unbaked and f < todo[-1]:
                    sc.frame_set(f)  # step the solver through the frames already on disk
                continue
            sc.frame_set(f)
            part = frames_dir / f".{frame_name(f)[:-4]}{PART_SUFFIX}"
            sc.render.filepath = str(part)
            t0, c0 = time.perf_counter(), time.process_time()
            bpy.ops.render.render(write_still=True)
            row = {"frame": f, "wall_s": round(time.perf_counter() - t0, 3),
                   "cpu_s": round(time.process_time() - c0, 3)}
            # logged before the frame is renamed into place: every frame on disk has its seconds in the log (a
            # kill between the two re-renders the frame and logs it again; the last row of a frame counts)
            lf.write(json.dumps(row) + "\n")
            lf.flush()
            os.replace(part, frames_dir / frame_name(f))
            doc["frames_rendered"] += 1
            print("FRAME " + json.dumps(row), flush=True)
    return doc


def decode_video(path: Path) -> np.ndarray:
    """(F, H, W, 3) uint8 RGB frames of a video (cv2)."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    out = []
    try:
        while True:
            ok, fr = cap.read()
            if not ok:
                break
            out.append(cv2.cvtColor(fr, cv2.COLOR_BGR2RGB))
    finally:
        cap.release()
    return np.stack(out) if out else np.zeros((0, 0, 0, 3), np.uint8)


def ssim_against_frames(mp4: Path, frames_dir: Path, step: int = 8) -> dict:
    """SSIM (grey, scikit-image) of decoded video frames vs the PNGs, every `step`-th frame."""
    import cv2
    from skimage.metrics import structural_similarity

    vid = decode_video(mp4)
    files = frame_files(frames_dir)
    vals = []
    for i in range(0, min(len(files), len(vid)), step):
        png = cv2.cvtColor(cv2.imread(str(files[i])), cv2.COLOR_BGR2GRAY)
        dec = cv2.cvtColor(vid[i], cv2.COLOR_RGB2GRAY)
        vals.append(float(structural_similarity(png, dec, data_range=255)))
    return {
        "decoded_frames": int(len(vid)),
        "png_frames": len(files),
        "ssim_mean": round(float(np.mean(vals)), 5) if vals else None,
        "ssim_min": round(float(np.min(vals)), 5) if vals else None,
        "sampled": len(vals),
    }


def main(argv: list[str] | None = None) -> int:
    a = sys.argv[1:] if argv is None else argv
    if a and a[0] == "render":
        threads = int(a[a.index("--threads") + 1]) if "--threads" in a else 0
        doc = render_frames(Path(a[1]), Path(a[2]), Path(a[3]), threads=threads)
        print("DONE " + json.dumps(doc), flush=True)
        return 0
    encode_frames(Path(a[0]), Path(a[1]), *(a[2:3]))
    return 0


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
