"""Fixtures for provider and judge tests: the real loopback HTTP server, a small task, synthetic videos."""

from __future__ import annotations

import json
import re
from collections import defaultdict, deque
from pathlib import Path

import cv2
import numpy as np
import pytest
from physcodegym.tasks.loader import LoadedTask, load_task
from physcodegym.testing.loopback import LoopbackLLM, RecordedRequest, Reply, loopback_fixture

loopback = pytest.fixture(loopback_fixture)

KEY = "sk-loop-SECRET-0123456789"

TASK = {
    "id": "judge_unit",
    "title": "Red ball rolls into a blue block",
    "category": "rigid",
    "subcategory": "collision-chain",
    "roles": [
        {"name": "ball", "description": "red ball", "screen_xy": [0.2, 0.5]},
        {"name": "block", "description": "blue block", "screen_xy": [0.7, 0.5]},
        {"name": "floor", "description": "grey floor", "core": False},
    ],
    "checklist": [
        {"id": "obj_ball", "category": "ball", "count": 1, "attributes": ["red"], "layout": "left of the block",
         "roles": ["ball"]},
        {"id": "obj_block", "category": "block", "count": 1, "attributes": ["blue"], "roles": ["block"]},
        {"id": "obj_floor", "category": "floor", "count": 1, "roles": ["floor"]},
    ],
    "events": [
        {"id": "ev_roll", "description": "the red ball rolls to the right", "roles": ["ball", "floor"],
         "interval": {"start_s": 0.13, "end_s": 0.87}, "weight": 1.0, "evidence": "SECRET-EVIDENCE-NOTE"},
        {"id": "ev_hit", "kind": "order", "description": "the ball hits the block", "roles": ["ball", "block"],
         "interval": {"start_s": 0.913, "end_s": 1.077}, "weight": 2.0, "after": ["ev_roll"]},
        {"id": "ev_push", "kind": "final_state", "description": "the block ends displaced to the right",
         "roles": ["block"], "interval": {"start_s": 1.2, "end_s": 1.97}, "weight": 1.0, "key": True},
    ],
    "rubric": {"criteria": [{"id": "c_sim", "description": "ball simulated", "weight": 1, "roles": ["ball"],
                             "check": "moves_by_simulation"}]},
}


@pytest.fixture
def task(tmp_path: Path) -> LoadedTask:
    folder = tmp_path / "judge_unit"
    folder.mkdir()
    (folder / "task.json").write_text(json.dumps(TASK))
    return load_task(folder)


def video(n: int = 48, ball=(220, 30, 30), block=(30, 30, 220), bg=(90, 90, 90)) -> np.ndarray:
    """A real little animation: a ball moving right towards a block (RGB uint8, 360x640)."""
    frames = np.empty((n, 360, 640, 3), np.uint8)
    for i in range(n):
        f = frames[i]
        f[:] = bg
        x = int(128 + 300 * i / max(1, n - 1))
        cv2.circle(f, (x, 180), 30, ball, -1)
        cv2.rectangle(f, (448, 140), (520, 220), block, -1)
    return frames


@pytest.fixture
def cand_frames() -> np.ndarray:
    return video()


@pytest.fixture
def ref_frames() -> np.ndarray:
    """Reference whose frames after the first are pure green: any green pixel shown to the judge is a leak."""
    v = video(12)
    v[1:] = (0, 255, 0)
    return v


_ITEM_RE = re.compile(r"(?:Checklist|Event) item id: (\w+)")


def item_of(req: RecordedRequest) -> str | None:
    m = _ITEM_RE.search(req.text())
    return m.group(1) if m else None


class ItemScript:
    """Responder for the judge tests: per item id, a queue of replies consumed in call order."""

    def __init__(self) -> None:
        self.queues: dict[str, deque] = defaultdict(deque)
        self.calls: dict[str, int] = defaultdict(int)

    def add(self, item: str, *replies: Reply | str) -> ItemScript:
        self.queues[item].extend(replies)
        return self

    def __call__(self, req: RecordedRequest) -> Reply | str:
        item = item_of(req)
        self.calls[item] += 1
        q = self.queues.get(item)
        if not q:
            return Reply.server_error(500, f"test script has no reply left for item {item}")
        return q.popleft()


def obj_answer(item: str, ok: bool = True, layout: bool | None = True, **over) -> str:
    doc = {"item_id": item, "checks": {"category": True, "count": ok, "attributes": True, "layout": layout},
           "observed_count": 1 if ok else 2, "verdict": "pass" if ok else "fail", "reason": "seen"}
    doc.update(over)
    return json.dumps(doc)


def evt_answer(item: str, verdict: str, evidence=((0.2, 0.8),), **over) -> str:
    doc = {"item_id": item, "verdict": verdict, "evidence": [{"start_s": a, "end_s": b} for a, b in evidence],
           "reason": "looked"}
    doc.update(over)
    return json.dumps(doc)


@pytest.fixture
def llm() -> LoopbackLLM:
    with LoopbackLLM(api_key=KEY) as server:
        yield server
