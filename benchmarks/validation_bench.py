"""Cost of the artifact validation of one 240-frame run (SPEC §3; target < 1 s), printed as one JSON line.

Builds a scratch folder as a program leaves it (240 real 640x360 PNG frames with texture and noise, so they
compress like renders, and a real zstd-compressed scene.blend saved by bpy in a child), then measures, median
of `--repeat` rounds:
- `accept_s`: `sandbox.artifacts.accept_outputs` (lstat + O_NOFOLLOW open, one-link check, headers, the same
  PNG decode the scorer does, sha256 of every byte, rename into OUT/), what the runner adds after every run;
- `accept_cpu_s`: its CPU seconds (all threads): what it costs on an idle machine, whatever the load here;
- `verify_s`: `validated_run` (record read without links, every accepted file re-hashed), what `score`,
  `audit` and `batch` pay before they read a run;
- `read_frames_s`: reading the 240 frames through `read_verified` (hash-checked bytes) as the scorer does;
- `media_audit_s` (once): the trusted post-run media audit child (bpy start, open with Auto Run off).

Run: `.venv/bin/python benchmarks/validation_bench.py [--repeat 5] [--blend-mb 50]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _frames(folder: Path, n: int) -> int:
    import cv2
    import numpy as np

    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:360, 0:640]
    base = np.stack([(xx * 255 // 640), (yy * 255 // 360), ((xx + yy) % 255)], -1).astype(np.uint8)
    total = 0
    for i in range(1, n + 1):
        img = base.copy()
        cv2.circle(img, (40 + i * 2, 180), 40, (30, 30, 220), -1)
        img = cv2.add(img, rng.integers(0, 12, img.shape, dtype=np.uint8))
        p = folder / f"{i:04d}.png"
        cv2.imwrite(str(p), img)
        total += p.stat().st_size
    return total


def _blend(path: Path, mb: int) -> None:
    """A real scene.blend; `mb` MiB of mesh data so the hash and block walk see a baked-scene-sized file."""
    from physcodegym.core.limits import run_limited

    verts = max(8, mb * 1024 * 1024 // 40)
    code = ("import bpy, sys, numpy as np\nbpy.ops.wm.read_factory_settings(use_empty=True)\n"
            f"n = {verts}\nme = bpy.data.meshes.new('m'); me.vertices.add(n)\n"
            "me.vertices.foreach_set('co', np.random.default_rng(0).random(3 * n, dtype=np.float32))\n"
            "ob = bpy.data.objects.new('o', me); bpy.context.scene.collection.objects.link(ob)\n"
            "sc = bpy.context.scene; sc.frame_start, sc.frame_end = 1, 240\n"
            "bpy.ops.wm.save_as_mainfile(filepath=sys.argv[-1])\n")
    res = run_limited([sys.executable, "-c", code, str(path)], timeout_s=300, memory_mb=None)
    if res.returncode != 0:
        raise SystemExit(f"could not save the benchmark blend: {res.stderr[-1000:]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--frames", type=int, default=240)
    ap.add_argument("--blend-mb", type=int, default=50, help="mesh data in the benchmark scene.blend (MiB, before zstd)")
    ap.add_argument("--frames-from", default=None, help="a real run's frames/ folder to copy instead of synthetic frames")
    a = ap.parse_args()
    from physcodegym.sandbox import artifacts as A
    from physcodegym.sandbox.media_audit import run_trusted
    from physcodegym.sandbox.runner import RunRecord

    root = Path(tempfile.mkdtemp(prefix="pcg_valbench_"))
    try:
        src = root / "src"
        if a.frames_from:
            shutil.copytree(a.frames_from, src / "frames")
            frame_bytes = sum(p.stat().st_size for p in (src / "frames").iterdir())
        else:
            frame_bytes = _frames(src / "frames", a.frames)
        _blend(src / "scene.blend", a.blend_mb)
        blend_bytes = (src / "scene.blend").stat().st_size
        acc_t, acc_cpu, ver_t, read_t = [], [], [], []
        out = root / "out"
        for _ in range(a.repeat):
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(src, out / "sandbox")
            os.sync()
            t, c = time.perf_counter(), time.process_time()
            acc = A.accept_outputs(out / "sandbox", out, "full", a.frames)
            acc_t.append(time.perf_counter() - t)
            acc_cpu.append(time.process_time() - c)
            assert acc.reason is None, acc.reason
            (out / "run.json").write_text(RunRecord(status="ok", artifacts=acc.artifacts, expected_frames=a.frames).model_dump_json())
            t = time.perf_counter()
            vr = A.validated_run(out)
            ver_t.append(time.perf_counter() - t)
            assert vr.valid, vr.reason
            t = time.perf_counter()
            fd = A.open_dir(out)
            try:
                for n in vr.frame_names():
                    A.read_verified(out, n, vr.artifacts, root_fd=fd)
            finally:
                os.close(fd)
            read_t.append(time.perf_counter() - t)
        media = run_trusted(str(out / "scene.blend"), str(out))
        doc = {
            "bench": "validation", "frames": a.frames, "frames_source": "real run" if a.frames_from else "synthetic (noisy)",
            "load_avg_1m": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(), "frame_mib": round(frame_bytes / 2**20, 1),
            "blend_mib": round(blend_bytes / 2**20, 1), "repeat": a.repeat,
            "accept_s": round(statistics.median(acc_t), 3), "accept_cpu_s": round(statistics.median(acc_cpu), 3), "verify_s": round(statistics.median(ver_t), 3),
            "read_frames_s": round(statistics.median(read_t), 3), "media_audit_s": media.get("seconds"),
            "media_audit_ok": media.get("ok"), "target_s": 1.0,
            "within_target": statistics.median(acc_t) < 1.0 and statistics.median(ver_t) < 1.0,
            "limits": A.limits(),
        }
        print(json.dumps(doc))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
