"""Latency of the agent's observation tools on a shipped task (decode once, then numpy slicing + PNG encode).

Prints one JSON line: decode seconds and mean milliseconds per call of each observation tool.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from physcodegym.agent.budget import Budget
from physcodegym.agent.tools import Toolbox
from physcodegym.tasks.loader import load_task


def main() -> None:
    task = sys.argv[1] if len(sys.argv) > 1 else "ball_bounce"
    lt = load_task(task)
    with tempfile.TemporaryDirectory() as d:
        box = Toolbox(Path(d), lt.video_path, Budget())
        t0 = time.perf_counter()
        box.frames()
        decode = time.perf_counter() - t0
        calls = {
            "video_info": {},
            "get_frames": {"times": [0, 1, 2, 3]},
            "frame_grid": {"start": 0, "end": 8, "count": 16},
            "clip": {"start": 0, "end": 4, "rate": 6},
        }
        res = {}
        for name, args in calls.items():
            n = 10
            t0 = time.perf_counter()
            for _ in range(n):
                out = box.call(name, args)
            res[name] = {"ms": round((time.perf_counter() - t0) / n * 1000, 2), "images": len(out.images),
                         "png_kb": round(sum(len(b) for b in out.images) / 1024, 1)}
    print(json.dumps({"bench": "agent_observation", "task": task, "decode_s": round(decode, 3), "tools": res}))


if __name__ == "__main__":
    main()
