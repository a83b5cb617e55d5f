"""Client-side cost of the judges (image encoding, request building, HTTP, validation) against the loopback judge.

A real model's latency dominates in practice; this measures what PhysCodeGym itself adds per candidate, the
request size a real provider would receive (bytes and images per call) and the warm-cache re-score time.
Prints one JSON line. Run: .venv/bin/python benchmarks/judge_overhead.py
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from physcodegym.judges.event_judge import judge_events
from physcodegym.judges.object_judge import judge_objects
from physcodegym.llm.openai_compat import OpenAIChat
from physcodegym.tasks.loader import load_task
from physcodegym.testing.loopback import LoopbackLLM, judge_responder

TASK = {
    "id": "bench_judge", "title": "ball hits block", "category": "rigid", "subcategory": "collision-chain",
    "roles": [{"name": "ball", "description": "red ball", "screen_xy": [0.2, 0.5]},
              {"name": "block", "description": "blue block", "screen_xy": [0.75, 0.5]}],
    "checklist": [{"id": f"obj_{i}", "category": "ball", "count": 1, "attributes": ["red"], "layout": "left"}
                  for i in range(4)],
    "events": [{"id": f"ev_{i}", "description": "the ball hits the block", "roles": ["ball", "block"],
                "interval": {"start_s": 1.0, "end_s": 2.0}, "weight": 1.0, "key": i == 0} for i in range(4)],
    "rubric": {"criteria": [{"id": "c", "description": "sim", "weight": 1, "check": "moves_by_simulation"}]},
}


def frames(n: int = 240, noisy: bool = False) -> np.ndarray:
    """Smooth-shaded frames (like Workbench renders) or, as a worst case for PNG size, a noise texture."""
    out = np.empty((n, 360, 640, 3), np.uint8)
    if noisy:
        tex = np.random.default_rng(0).integers(60, 120, (360, 640, 3), dtype=np.uint8)
    else:
        yy, xx = np.mgrid[0:360, 0:640]
        tex = np.stack([60 + xx * 80 // 640, 70 + yy * 60 // 360, 90 + (xx + yy) * 40 // 1000], -1).astype(np.uint8)
    for i in range(n):
        out[i] = tex
        cv2.circle(out[i], (int(100 + 400 * i / n), 180), 30, (220, 30, 30), -1)
    return out


def run(noisy: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "bench_judge"
        folder.mkdir()
        (folder / "task.json").write_text(json.dumps(TASK))
        lt = load_task(folder)
        cand, ref = frames(noisy=noisy), frames(30, noisy=noisy)
        with LoopbackLLM() as llm:
            llm.respond_with(judge_responder("pass"))
            p = OpenAIChat("loopback-judge", base_url=llm.openai_base_url, api_key="x")
            t0 = time.perf_counter()
            obj = judge_objects(lt, cand, p, cache_dir=Path(tmp) / "c")
            t1 = time.perf_counter()
            evt = judge_events(lt, ref, cand, p, cache_dir=Path(tmp) / "c")
            t2 = time.perf_counter()
            judge_objects(lt, cand, p, cache_dir=Path(tmp) / "c")
            judge_events(lt, ref, cand, p, cache_dir=Path(tmp) / "c")
            t3 = time.perf_counter()
            reqs = llm.chat_requests
            sizes = [len(json.dumps(r.body)) for r in reqs]
            obj_req = next(r for r in reqs if "Checklist item id" in r.text())
            evt_req = next(r for r in reqs if "Event item id" in r.text())
        return {
            "calls": len(reqs), "S_obj": obj.value, "S_evt": evt.value,
            "obj_cold_s": round(t1 - t0, 3), "evt_cold_s": round(t2 - t1, 3), "both_warm_cache_s": round(t3 - t2, 3),
            "obj_request_images": obj_req.images, "evt_request_images": evt_req.images,
            "mean_request_mb": round(float(np.mean(sizes)) / 1e6, 3), "max_request_mb": round(max(sizes) / 1e6, 3),
        }


def main() -> None:
    print(json.dumps({"benchmark": "judge_overhead", "frames": 240, "obj_items": len(TASK["checklist"]),
                      "evt_items": len(TASK["events"]), "judgments_per_event": 3,
                      "smooth": run(noisy=False), "noise_worst_case": run(noisy=True)}))


if __name__ == "__main__":
    main()
