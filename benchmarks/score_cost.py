"""What `physcodegym score --metrics ssim,motion,val` costs against the `run --mode full` it scores.

Per task: run the shipped truth (`physcodegym run TRUTH --mode full`), or take an existing run folder from
`--runs DIR/<task>`, then score it `--repeat` times. Reported per task: wall and CPU seconds of both commands, the
ratio score/run (the goal: at most 0.25 on rigid tasks), the score's own step timings (`timings` in its
JSON: codec parity, S_val, S_ssim, decoding, S_mot) and its metric values. CPU is the command plus every descendant,
sampled from /proc every 0.1 s: the sandbox's walled children end killed rather than reaped, so the kernel's
RUSAGE_CHILDREN misses most of their time; a sampled process loses at most its last 0.1 s. On a machine shared with
other work the wall figures are noisy; CPU is the figure to compare.

`--encoders` also times the candidate-side H.264 encode on each run's frames with PyAV (what
`evaluator/codec_parity.py` uses) and with imageio-ffmpeg's bundled ffmpeg binary when that package is installed
(it is not a dependency; reported missing with the reason otherwise), same x264 settings, and says whether the two
decode to the same pixels: the measurement behind the choice of PyAV.

    .venv/bin/python benchmarks/score_cost.py [--tasks ball_bounce,milk_pour] [--runs DIR] [--repeat 1] [--encoders]

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "physcodegym.headless.cli"]
TICK = os.sysconf("SC_CLK_TCK")


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, user+system CPU seconds) for every visible process."""
    out: dict[int, tuple[int, float]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as fh:
                raw = fh.read().decode(errors="replace")
        except OSError:
            continue
        rest = raw[raw.rfind(")") + 2:].split()  # fields after "(comm)": state ppid ... utime(12) stime(13)
        out[int(d)] = (int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK)
    return out


def timed(cmd: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run `cmd`; (result, wall seconds, CPU seconds of it and all its descendants, sampled)."""
    seen: dict[int, float] = {}
    stop = threading.Event()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def sample() -> None:
        while not stop.is_set():
            table = _proc_table()
            tree, grew = {proc.pid}, True
            while grew:
                new = {p for p, (pp, _) in table.items() if pp in tree and p not in tree}
                tree |= new
                grew = bool(new)
            for p in tree:
                if p in table:
                    seen[p] = max(seen.get(p, 0.0), table[p][1])
            stop.wait(0.1)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, err = proc.communicate()
    stop.set()
    th.join()
    wall = time.perf_counter() - t0
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), wall, sum(seen.values())


def run_truth(task: str, out: Path) -> dict:
    res, wall, cpu = timed([*CLI, "run", str(ROOT / "tasks" / "packs" / task / "truth.py"), "--out", str(out),
                            "--mode", "full", "--json"], ROOT)
    doc = json.loads(res.stdout or "{}")
    if doc.get("status") != "ok":
        raise SystemExit(f"run of {task} failed: {doc.get('reason') or res.stderr[-500:]}")
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "program_seconds": doc.get("seconds")}


def score(task: str, run_dir: Path) -> dict:
    res, wall, cpu = timed([*CLI, "score", "--task", task, "--candidate", str(run_dir),
                            "--metrics", "ssim,motion,val", "--json"], ROOT)
    if res.returncode != 0:
        raise SystemExit(f"score of {task} failed (rc {res.returncode}): {res.stderr[-800:]}")
    doc = json.loads(res.stdout)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "timings": doc.get("timings"),
            "metrics": {k: doc["metrics"].get(k) for k in ("S_ssim", "S_mot", "S_val")},
            "codec_parity": doc.get("codec_parity")}


def encoders(run_dir: Path) -> dict:
    """H.264 encode of the run's frames: PyAV (in-process) against imageio-ffmpeg (a piped ffmpeg binary)."""
    import numpy as np
    from physcodegym.evaluator import codec_parity as cp
    from physcodegym.metrics.video import load_video

    frames = load_video(run_dir / "frames")
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="pcg_enc_") as td:
        t, c = time.perf_counter(), time.process_time()
        cp.write_h264(frames, Path(td) / "pyav.mp4")
        out["pyav"] = {"wall_s": round(time.perf_counter() - t, 3), "cpu_s": round(time.process_time() - c, 3)}
        try:
            import imageio_ffmpeg
        except ImportError as e:
            out["imageio_ffmpeg"] = {"missing": f"not installed ({e}); pip install imageio-ffmpeg to compare"}
            return out
        cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-f", "rawvideo",
               "-pix_fmt", "rgb24", "-s", f"{frames.shape[2]}x{frames.shape[1]}", "-r", str(cp.FPS), "-i", "-",
               "-vf", "scale=out_color_matrix=bt709:out_range=tv:flags=bicubic,format=yuv420p", "-c:v", "libx264",
               *[a for k, v in cp.X264_OPTIONS.items() for a in (f"-{k}", v)],
               "-g", str(cp.GOP_SIZE), "-bf", str(cp.MAX_B_FRAMES), "-threads", str(cp.X264_THREADS),
               "-color_range", "tv", "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709",
               "-y", str(Path(td) / "iio.mp4")]
        r0 = os.times()
        t = time.perf_counter()
        subprocess.run(cmd, input=np.ascontiguousarray(frames).tobytes(), check=True)
        r1 = os.times()
        cpu = (r1.user - r0.user) + (r1.system - r0.system) + (r1.children_user - r0.children_user) + (
            r1.children_system - r0.children_system)
        out["imageio_ffmpeg"] = {"wall_s": round(time.perf_counter() - t, 3), "cpu_s": round(cpu, 3),
                                 "version": imageio_ffmpeg.__version__}
        a, b = load_video(Path(td) / "pyav.mp4"), load_video(Path(td) / "iio.mp4")
        out["largest_pixel_difference"] = int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="ball_bounce,milk_pour")
    ap.add_argument("--runs", type=Path, help="folder with an existing full run per task (<runs>/<task>)")
    ap.add_argument("--repeat", type=int, default=1, help="score each run this many times (medians reported)")
    ap.add_argument("--encoders", action="store_true", help="also compare PyAV and imageio-ffmpeg encodes")
    args = ap.parse_args()
    doc: dict = {"benchmark": "score_cost", "metrics": "ssim,motion,val", "cpus": os.cpu_count(),
                 "load_avg_start": [round(x, 2) for x in os.getloadavg()], "tasks": {}}
    with tempfile.TemporaryDirectory(prefix="pcg_cost_") as td:
        for task in [t.strip() for t in args.tasks.split(",") if t.strip()]:
            print(f"score_cost: {task} ...", file=sys.stderr, flush=True)
            if args.runs:
                run_dir = args.runs / task
                rec = json.loads((run_dir / "run.json").read_text())
                run = {"wall_s": rec.get("seconds"), "cpu_s": None, "reused": str(run_dir),
                       "note": "wall from run.json; CPU not measured for a reused run"}
            else:
                run_dir = Path(td) / task
                run = run_truth(task, run_dir)
            scores = [score(task, run_dir) for _ in range(max(1, args.repeat))]
            med = sorted(scores, key=lambda s: s["wall_s"])[len(scores) // 2]
            entry = {"run": run, "score": med, "score_walls": [s["wall_s"] for s in scores],
                     "score_cpus": [s["cpu_s"] for s in scores],
                     "ratio_wall": round(med["wall_s"] / run["wall_s"], 3) if run.get("wall_s") else None,
                     "ratio_cpu": round(med["cpu_s"] / run["cpu_s"], 3) if run.get("cpu_s") else None}
            if args.encoders:
                entry["encoders"] = encoders(run_dir)
            doc["tasks"][task] = entry
    doc["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
