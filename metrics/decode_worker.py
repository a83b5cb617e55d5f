"""Bounded decode of a candidate video in its own process.

`python -m physcodegym.metrics.decode_worker SRC OUT.npy --frames N`.


The parent (`metrics.video.decode_video_limited`) has checked the container header already (size, frame count,
fps) and runs this under a time and address-space limit, so a stream whose coded size disagrees with its
header cannot take the scorer's memory. Reads at most N + 1 frames (the task's count, never a number from the
file); every decoded frame must be 640x360; writes (N, 360, 640, 3) uint8 RGB to OUT.npy (OUT "-": check only,
as the runner does for an accepted render.mp4). Exit 0 on success,
3 with one JSON line {"error": ...} on stdout when the stream breaks the contract.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="physcodegym-decode")
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--frames", type=int, required=True)
    a = ap.parse_args(argv)
    import cv2
    import numpy as np
    from physcodegym.tasks.schema import SCORE_HEIGHT, SCORE_WIDTH

    def fail(msg: str) -> int:
        print(json.dumps({"error": msg}))
        return 3

    n_max = int(a.frames)
    cap = cv2.VideoCapture(a.src)
    try:
        if not cap.isOpened():
            return fail("video cannot be opened (unreadable or not a video)")
        out = np.empty((n_max, SCORE_HEIGHT, SCORE_WIDTH, 3), np.uint8)
        n = 0
        while n <= n_max:
            ok, bgr = cap.read()
            if not ok:
                break
            if bgr.shape[:2] != (SCORE_HEIGHT, SCORE_WIDTH):
                return fail(
                    f"frame {n + 1} decodes to {bgr.shape[1]}x{bgr.shape[0]} (expected {SCORE_WIDTH}x{SCORE_HEIGHT})"
                )
            if n == n_max:
                return fail(f"the stream holds more than {n_max} frames")
            cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB, dst=out[n])
            n += 1
    finally:
        cap.release()
    if n != n_max:
        return fail(f"expected {n_max} frames, decoded {n}")
    if a.out != "-":  # "-": check only (the runner's validation)
        np.save(a.out, out, allow_pickle=False)
    print(json.dumps({"frames": n}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
