"""The `physcodegym agent` command over the Anthropic wire (no artifact: scored 0), and the
context management of long runs (old images dropped first, oldest turns folded into a running summary)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from physcodegym.agent.loop import LoopConfig, _groups, build_view
from physcodegym.llm.base import ImagePart, Message, TextPart, ToolCall, ToolResult
from physcodegym.testing.loopback import Reply

from .scenes import FIXED

pytestmark = pytest.mark.timeout(600)


def test_agent_command_over_anthropic_wire(tmp_path, loopback, synth_task):
    loopback.script([
        Reply.tool("video_info", {}),
        Reply.tool("get_frames", {"times": [0.5, 2.0]}),
        Reply.tool("write_file", {"path": "scene.py", "text": FIXED}),
        Reply.tool("finalize", {}),  # refused: never run
    ] + [Reply.ok("I am done.")] * 4)
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "physcodegym", "agent", "--task", str(synth_task.folder), "--provider", "anthropic",
           "--model", "loopback-agent", "--base-url", loopback.anthropic_base_url, "--out", str(run),
           "--max-launches", "3", "--json"]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr[-3000:]
    doc = json.loads(cp.stdout)
    assert doc["status"] == "stopped" and doc["finalized"] is None and doc["budget"]["launches_left"] == 3
    assert doc["score"]["state"] == "no_submission" and doc["score"]["S_tot"] == 0.0  # no artifact scores 0
    assert all(r.endpoint == "anthropic" for r in loopback.chat_requests) and loopback.validation_errors == []
    assert loopback.chat_requests[2].images == 2
    first = loopback.chat_requests[0].text()
    assert first.index("Keep the LAST launch") < first.index("Rebuild the scene")  # the reminder leads the task prompt
    assert "at most 3 Blender launches" in first
    assert json.loads((run / "agent_run.json").read_text())["score"]["state"] == "no_submission"
    assert "step" in cp.stderr and "launches 0/3" in cp.stderr  # the live progress line went to stderr

    bad = subprocess.run([*cmd[:-1], "--max-launches", "-1", "--json"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["field"] == "--max-launches"
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)  # same --out without --resume
    assert again.returncode == 2 and "trace" in json.loads(again.stdout)["error"]["message"]


def _png() -> ImagePart:
    return ImagePart(png_base64="iVBORw0KGgo=")


def _history(turns: int, text_len: int = 100) -> list[Message]:
    h = [Message(role="system", content=[TextPart(text="sys")]), Message(role="user", content=[TextPart(text="task")])]
    for i in range(turns):
        h.append(Message(role="assistant", content=[TextPart(text=f"turn {i}")], tool_calls=[ToolCall(id=f"c{i}", name="get_frames", arguments={"times": [i]})]))
        h.append(Message(role="tool", tool_results=[ToolResult(tool_call_id=f"c{i}", content=[TextPart(text="x" * text_len), _png(), _png()])]))
    return h


def test_context_drops_old_images_first_then_folds_turns():
    h = _history(10)
    notes = [f"step {i + 1}: get_frames -> 2 images" for i in range(10)]
    view, info = build_view(h, notes, LoopConfig(keep_images=3, context_chars=10**9))
    imgs = [p for m in view for tr in m.tool_results for p in tr.content if isinstance(p, ImagePart)]
    assert len(imgs) == 3 and info["dropped_images"] == 17 and info["folded_turns"] == 0
    last_two = [p for tr in view[-1].tool_results for p in tr.content]
    assert isinstance(last_two[1], ImagePart) and isinstance(last_two[2], ImagePart)  # the newest are kept
    assert len(view) == len(h) and h[3].tool_results[0].content[1].type == "image"  # the history itself is untouched

    big = _history(10, text_len=5000)
    view, info = build_view(big, notes, LoopConfig(keep_images=2, context_chars=20_000, min_recent_turns=2))
    assert info["folded_turns"] >= 6 and info["chars"] <= 20_000
    summary = view[1].content[-1].text
    assert summary.startswith("Running summary") and "step 1: get_frames" in summary
    assert view[1].content[0].text == "task"
    # tool calls and results stay paired after folding
    groups = _groups(view[2:])
    assert groups and all(g[0].role == "assistant" and g[1].tool_results[0].tool_call_id == g[0].tool_calls[0].id for g in groups)
    view, info = build_view(big, notes, LoopConfig(keep_images=2, context_chars=10, min_recent_turns=2))
    assert len(_groups(view[2:])) == 2  # never folds the most recent turns away
