"""Fault tests: provider errors mid-run, launch budget running out, wall-clock/token caps, a killed run resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from physcodegym.agent.budget import BudgetLimits
from physcodegym.agent.loop import AgentRun, LoopConfig
from physcodegym.agent.trace import read_trace
from physcodegym.llm.factory import make_provider
from physcodegym.testing.loopback import Reply

from .scenes import FIXED

pytestmark = pytest.mark.timeout(600)
NO_SLEEP = {"sleep": lambda s: None}


def _provider(llm):
    return make_provider("openai", "loopback-agent", base_url=llm.openai_base_url, api_key="sk-test", max_retries=1, backoff_base_s=0.01)


def _cfg(**kw) -> LoopConfig:
    return LoopConfig(**{"max_nudges": 1, **kw})


def test_retryable_provider_error_mid_run_is_retried(tmp_path, loopback, synth_task):
    loopback.script([
        Reply.tool("video_info", {}),
        Reply.server_error(503), Reply.server_error(503),  # the transport's own retry also fails: the loop retries
        Reply.tool("get_frames", {"times": [1.0]}),
        Reply.ok("done?"), Reply.ok("done."),
    ])
    ar = AgentRun(synth_task, _provider(loopback), tmp_path / "run", cfg=_cfg(), **NO_SLEEP)
    doc = ar.run()
    assert doc["status"] == "stopped" and doc["steps"] == 4
    recs = read_trace(tmp_path / "run" / "trace.jsonl")
    errs = [r for r in recs if r["type"] == "error"]
    assert len(errs) == 1 and errs[0]["error"]["type"] == "ServerError" and errs[0]["error"]["status"] == 503
    assert [r["name"] for r in recs if r["type"] == "tool"] == ["video_info", "get_frames"]
    assert loopback.validation_errors == []


def test_fatal_provider_error_ends_cleanly_and_resumes(tmp_path, loopback, synth_task):
    loopback.script([Reply.tool("video_info", {}), Reply.http_error(400, "malformed request")])
    run = tmp_path / "run"
    doc = AgentRun(synth_task, _provider(loopback), run, cfg=_cfg(), **NO_SLEEP).run()
    assert doc["status"] == "provider_error" and "400" in doc["reason"]
    assert json.loads((run / "agent_run.json").read_text())["status"] == "provider_error"
    n_before = len(loopback.chat_requests)
    loopback.script([Reply.tool("frame_grid", {"count": 4}), Reply.ok("thinking"), Reply.ok("still thinking")])
    doc2 = AgentRun(synth_task, _provider(loopback), run, cfg=_cfg(), resume=True, **NO_SLEEP).run()
    assert doc2["status"] == "stopped" and doc2["steps"] == 4  # 1 step before + 3 after resuming
    assert doc2["budget"]["elapsed_s"] >= doc["budget"]["elapsed_s"]  # the wall clock carries over
    assert doc2["budget"]["input_tokens"] > doc["budget"]["input_tokens"]
    first_after = loopback.chat_requests[n_before]
    assert '"fps": 30' in first_after.text()  # the resumed conversation carries the earlier tool result
    recs = read_trace(run / "trace.jsonl")
    assert [r["segment"] for r in recs if r["type"] == "start"] == [1, 2]
    assert [r["status"] for r in recs if r["type"] == "end"] == ["provider_error", "stopped"]
    assert loopback.validation_errors == []


def test_launch_budget_running_out(tmp_path, loopback, synth_task):
    loopback.script([
        Reply.tool("write_file", {"path": "scene.py", "text": FIXED.replace("bpy.ops.render.render(animation=True)\n", "")}),
        Reply.tool("run_scene", {"mode": "bake_only"}),
        Reply.tool("run_scene", {"mode": "bake_only"}),
        Reply.tool("render_preview", {"frame": 10}),  # refused: no launch left
        Reply.tool("finalize", {}),  # refused: no full run
    ])
    loopback.respond_with(lambda req: Reply.tool("video_info", {}))
    run = tmp_path / "run"
    ar = AgentRun(synth_task, _provider(loopback), run, limits=BudgetLimits(max_launches=2), cfg=_cfg(steps_after_launches_exhausted=3))
    doc = ar.run()
    assert doc["status"] == "budget_exhausted" and "launch budget exhausted" in doc["reason"]
    assert doc["finalized"] is None and not (run / "submission").exists()
    assert ar.budget.launches_used == 2 and len(list((run / "launches").iterdir())) == 2
    tools = [r for r in read_trace(run / "trace.jsonl") if r["type"] == "tool"]
    assert [t["launch"] for t in tools[:4]] == [False, True, True, False]
    assert tools[3]["is_error"] and "launch budget exhausted" in tools[3]["result_text"]
    assert "LAST launch" in tools[1]["result_text"] and "no launches left" in tools[2]["result_text"]
    assert tools[4]["is_error"] and "no full run" in tools[4]["result_text"]
    assert doc["steps"] == 3 + 3  # launches ran out after step 3; three more steps were allowed


def test_wall_clock_and_token_caps_end_the_run(tmp_path, loopback, synth_task):
    loopback.script([Reply.tool("video_info", {}, delay_s=0.6), Reply.tool("video_info", {})])
    doc = AgentRun(synth_task, _provider(loopback), tmp_path / "a", limits=BudgetLimits(wall_clock_s=0.5)).run()
    assert doc["status"] == "budget_exhausted" and "wall-clock" in doc["reason"] and doc["steps"] == 1
    loopback.clear()
    loopback.script([Reply.tool("video_info", {}, input_tokens=900, output_tokens=200), Reply.tool("video_info", {})])
    doc = AgentRun(synth_task, _provider(loopback), tmp_path / "b", limits=BudgetLimits(max_tokens=1000)).run()
    assert doc["status"] == "budget_exhausted" and "token cap" in doc["reason"] and doc["budget"]["tokens_used"] == 1100


def test_interrupted_launch_is_counted_on_resume(tmp_path, loopback, synth_task):
    """A run killed between the model's run_scene call and its result: resume counts the launch, reports it."""
    loopback.script([
        Reply.tool("write_file", {"path": "scene.py", "text": "import bpy\n"}),
        Reply.tool("run_scene", {"mode": "bake_only"}),
        Reply.ok("a"), Reply.ok("b"),
    ])
    run = tmp_path / "run"
    AgentRun(synth_task, _provider(loopback), run, cfg=_cfg()).run()
    lines = (run / "trace.jsonl").read_text().splitlines()
    cut = next(i for i, ln in enumerate(lines) if json.loads(ln).get("type") == "model" and json.loads(ln)["step"] == 2)
    (run / "trace.jsonl").write_text("\n".join(lines[: cut + 1]) + "\n" + lines[cut + 1][:20])  # + a torn line
    loopback.script([Reply.ok("c"), Reply.ok("d")])
    n = len(loopback.chat_requests)
    ar = AgentRun(synth_task, _provider(loopback), run, cfg=_cfg(), resume=True)
    assert ar.budget.launches_used == 1 and ar.budget.launches_by_tool == {"run_scene": 1}
    ar.run()
    assert "interrupted" in loopback.chat_requests[n].text()
    assert loopback.validation_errors == []


def test_killed_cli_run_resumes(tmp_path, loopback, synth_task):
    """`physcodegym agent` killed (SIGKILL) while waiting for the model; `--resume` continues from the trace."""
    run = tmp_path / "run"
    loopback.script([
        Reply.tool("video_info", {}),
        Reply.tool("write_file", {"path": "scene.py", "text": FIXED.replace("bpy.ops.render.render(animation=True)\n", "")}),
        Reply.tool("run_scene", {"mode": "bake_only"}),
        Reply.tool("get_frames", {"times": [2.0]}, delay_s=120),  # the harness is killed while waiting for this
    ])
    cmd = [sys.executable, "-m", "physcodegym", "agent", "--task", str(synth_task.folder), "--provider", "openai",
           "--model", "loopback-agent", "--base-url", loopback.openai_base_url, "--out", str(run), "--no-score", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while len(loopback.chat_requests) < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert len(loopback.chat_requests) == 4, "the scripted run did not reach the 4th model call"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert json.loads((run / "agent_run.json").read_text())["status"] == "running"
    loopback.clear()
    loopback.script([Reply.tool("check_submission", {})] + [Reply.ok("nothing to do")] * 4)  # 4th text reply: stop
    cp = subprocess.run(cmd + ["--resume", "--max-steps", "50"], capture_output=True, text=True, timeout=240)
    doc = json.loads(cp.stdout)
    assert doc["status"] == "stopped" and doc["budget"]["launches_used"] == 1 and doc["steps"] == 3 + 5
    first = loopback.chat_requests[0].text()
    assert '"mode": "bake_only", "status": "ok"' in first  # the launch result from before the kill
    recs = read_trace(run / "trace.jsonl")
    assert [r["type"] for r in recs].count("start") == 2
    assert [r["name"] for r in recs if r["type"] == "tool"] == ["video_info", "write_file", "run_scene", "check_submission"]
