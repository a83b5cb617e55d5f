"""End to end: the loop against the loopback LLM with a scripted trajectory and real Blender runs.

inspect video -> premature finalize (refused) -> write a crashing scene.py -> run (fails) -> try to read
the truth program / video (refused) -> fix -> preview -> inspect -> full run -> stale finalize (refused)
-> restore -> check -> finalize; then budget accounting, trace content and secrecy are asserted.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import cv2
import pytest
from physcodegym.agent import prompts
from physcodegym.agent.budget import BudgetLimits
from physcodegym.agent.trace import read_trace
from physcodegym.testing.loopback import Reply

from .scenes import CRASHING, FIXED

pytestmark = pytest.mark.timeout(600)


SCRIPT = [
    ("video_info", {}),
    ("frame_grid", {"start": 0, "end": 8, "count": 8}),
    ("get_frames", {"times": [0.0, 4.0]}),
    ("clip", {"start": 0.0, "end": 1.0, "rate": 5}),
    ("finalize", {}),  # premature: refused
    ("write_file", {"path": "scene.py", "text": CRASHING}),
    ("run_scene", {"mode": "bake_only"}),  # launch 1: crashes
    ("read_file", {"path": "TRUTH"}),  # refused (absolute path)
    ("read_file", {"path": "../../truth.py"}),  # refused
    ("write_file", {"path": "scene.py", "text": FIXED}),
    ("render_preview", {"frame": 60}),  # launch 2
    ("run_scene", {"mode": "bake_only"}),  # launch 3
    ("inspect_scene", {}),  # launch 4
    ("run_scene", {"mode": "full"}),  # launch 5
    ("write_file", {"path": "scene.py", "text": FIXED + "# tweak\n"}),
    ("finalize", {}),  # refused: scene.py changed after the full run
    ("write_file", {"path": "scene.py", "text": FIXED}),
    ("check_submission", {}),
    ("finalize", {}),
]


def test_scripted_run_end_to_end(tmp_path, loopback, agent_task):
    lt = agent_task
    truth_text = lt.truth_program.read_text()
    script = [(n, {"path": str(lt.truth_program)} if a == {"path": "TRUTH"} else a) for n, a in SCRIPT]
    loopback.script([Reply.tool(n, a, text=f"step {i + 1}") for i, (n, a) in enumerate(script)])
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "physcodegym", "agent", "--task", str(lt.folder), "--provider", "openai",
           "--model", "loopback-agent", "--base-url", loopback.openai_base_url, "--out", str(run_dir),
           "--max-launches", "6", "--keep-images", "4", "--metrics", "ssim,motion", "--json"]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=580)
    assert cp.returncode == 0, cp.stderr[-3000:]
    doc = json.loads(cp.stdout)

    # -- outcome ---------------------------------------------------------------------------
    assert doc["status"] == "finalized", doc
    assert loopback.validation_errors == []
    assert loopback.pending() == 0
    assert doc["steps"] == len(script)
    sub = run_dir / "submission"
    assert (sub / "scene.py").read_text() == FIXED
    assert (sub / "scene.blend").is_file()
    frames = sorted((sub / "frames").glob("*.png"))
    assert len(frames) == 240 and frames[0].name == "0001.png"
    assert cv2.imread(str(frames[100])).shape == (360, 640, 3)
    on_disk = json.loads((run_dir / "agent_run.json").read_text())
    assert on_disk["status"] == "finalized" and on_disk["finalized"]["launch"] == 5

    # -- the submission was scored like `physcodegym score` ---------------------------------
    score = doc["score"]
    assert 0.0 <= score["metrics"]["S_ssim"] <= 1.0 and 0.0 <= score["metrics"]["S_mot"] <= 1.0
    assert on_disk["score"]["metrics"] == score["metrics"]

    # -- budget accounting -----------------------------------------------------------------
    assert doc["budget"]["launches_used"] == 5 and doc["budget"]["launches_left"] == 1
    assert doc["budget"]["launches_by_tool"] == {"run_scene": 3, "render_preview": 1, "inspect_scene": 1}
    recs = read_trace(run_dir / "trace.jsonl")
    tools = [r for r in recs if r["type"] == "tool"]
    assert [t["name"] for t in tools] == [n for n, _ in script]
    left = [int(re.search(r"launches left (\d+)/6", t["result_text"]).group(1)) for t in tools]
    expect, n = [], 6
    for name, _ in script:
        if name in ("run_scene", "render_preview", "inspect_scene"):
            n -= 1
        expect.append(n)
    assert left == expect  # every result states the remaining budget, and only launches spend it
    assert [t["launch"] for t in tools] == [n in ("run_scene", "render_preview", "inspect_scene") for n, _ in script]
    assert "LAST launch" in tools[13]["result_text"]  # after launch 5 of 6
    assert "launches 5/6" in cp.stderr  # the live progress display (stderr)

    # -- tool results ----------------------------------------------------------------------
    by = {i: t for i, t in enumerate(tools)}
    info = json.loads(by[0]["result_text"].split("\n")[0])
    assert info["frames"] == 240 and info["fps"] == 30 and info["duration_s"] == 8.0
    assert len(by[1]["images"]) == 1 and len(by[2]["images"]) == 2 and len(by[3]["images"]) == 6
    premature = json.loads(by[4]["result_text"].split("\n")[0])
    assert by[4]["is_error"] and premature["refused"] and "scene.py does not exist" in premature["problems"][0]
    crash = json.loads(by[6]["result_text"].split("\n")[0])
    assert by[6]["is_error"] and crash["status"] == "failed" and "kind" in crash["log_tail"], crash
    assert by[7]["is_error"] and by[8]["is_error"]
    pv = json.loads(by[10]["result_text"].split("\n")[0])
    assert pv["status"] == "ok" and pv["frame"] == 60 and len(by[10]["images"]) == 1
    img = cv2.imread(str(run_dir / by[10]["images"][0]))
    assert img.shape == (360, 640, 3)
    structure = json.loads(by[12]["result_text"].split("\n")[0])["structure"]
    objs = {o["name"]: o for o in structure["objects"]}
    assert objs["Ball"]["rigid_body"]["type"] == "ACTIVE" and objs["Ground"]["rigid_body"]["type"] == "PASSIVE"
    assert structure["scene"]["rigidbody_world"]["is_baked"] is True and structure["scene"]["fps"] == 30
    full = json.loads(by[13]["result_text"].split("\n")[0])
    assert full["status"] == "ok" and full["frames_found"] == 240 and full["has_blend"]
    stale = json.loads(by[15]["result_text"].split("\n")[0])
    assert stale["refused"] and any("changed after the latest full run" in p for p in stale["problems"])
    assert json.loads(by[17]["result_text"].split("\n")[0])["ok"] is True
    assert json.loads(by[18]["result_text"].split("\n")[0])["finalized"] is True

    # -- trace -----------------------------------------------------------------------------
    models = [r for r in recs if r["type"] == "model"]
    assert len(models) == len(script) and all(m["usage"]["input_tokens"] > 0 for m in models)
    assert all("seconds" in m and "budget" in m for m in models)
    assert recs[0]["type"] == "start" and recs[-1]["type"] == "end" and recs[-1]["status"] == "finalized"
    for t in tools:
        for ref in t["images"]:
            assert (run_dir / ref).is_file()  # images by file reference
    revs = sorted((run_dir / "revisions").glob("scene_r*.py"))
    assert [r.read_text() for r in revs] == [CRASHING, FIXED, FIXED + "# tweak\n", FIXED]

    # -- context management: only the newest 4 images are re-sent ----------------------------
    last_req = loopback.chat_requests[-1]
    assert last_req.images <= 4
    assert loopback.chat_requests[4].images == 4  # 1 grid + 2 frames + 6 clip images were shown, 4 are kept
    assert "[older image omitted" in loopback.chat_requests[4].text()

    # -- secrecy: nothing the model saw names or contains the reference file or truth.py ----
    seen = "\n".join(r.text() for r in loopback.chat_requests)
    assert str(lt.video_path) not in seen and lt.video_path.name not in seen
    assert str(lt.folder) not in seen
    prompt_text = prompts.SYSTEM_PROMPT + prompts.task_prompt(lt.task, BudgetLimits(max_launches=6))
    secret_lines = [ln for ln in truth_text.splitlines() if len(ln.strip()) > 12 and ln.strip() not in prompt_text]
    assert secret_lines
    assert not any(ln in seen for ln in secret_lines)
    results = "\n".join(t["result_text"] for t in tools)
    assert str(lt.folder) not in results and not any(ln in results for ln in secret_lines)
