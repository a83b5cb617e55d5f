"""End to end over MCP: the SDK's client drives `physcodegym mcp` (stdio subprocess) through a scripted session
on a shipped task, then the submission is scored with `physcodegym score --metrics ssim,motion`.

list tools / prompt / resources -> observe (video_info, frame_grid, get_frames, clip) -> premature finalize
(refused) -> crashing scene.py -> run (fails) -> reads of the truth program, the session files and a planted
link (refused) -> fixed scene.py -> preview -> bake -> inspect -> full run -> check -> finalize -> a call after
finalize (refused); then trace, run.json, budget, secrecy and the score are asserted.
"""

from __future__ import annotations

import json
import os
import re

import anyio
import pytest
from physcodegym.agent import prompts
from physcodegym.agent.budget import BudgetLimits
from physcodegym.agent.run_files import read_progress
from physcodegym.agent.tools import TOOL_DEFS, tool_specs
from physcodegym.agent.trace import AGENT_RUN_FILE, read_trace

from .conftest import budget_line, cli, connect, decode_png, result_doc, scenes

pytestmark = pytest.mark.timeout(900)
LAUNCHES = 5


def test_scripted_mcp_session_end_to_end(tmp_path, shipped_task):
    lt = shipped_task
    ws = tmp_path / "session"
    (ws / "workspace").mkdir(parents=True)
    os.symlink(lt.truth_program, ws / "workspace" / "notes.py")  # a link planted in the workspace: never followed
    seen: list[str] = []  # every text the client received
    calls: list[tuple[str, dict, object]] = []
    beats: list[str] = []  # progress messages received during the full run

    async def session() -> dict:
        out: dict = {}
        async with connect(lt, ws, "--max-launches", str(LAUNCHES)) as c:
            out["tools"] = (await c.list_tools()).tools
            out["prompts"] = (await c.list_prompts()).prompts
            out["prompt"] = await c.get_prompt("task")
            out["resources"] = (await c.list_resources()).resources
            out["task_res"] = await c.read_resource("physcodegym://task")

            async def call(name: str, args: dict, progress=None):
                res = await c.call_tool(name, args, progress_callback=progress)
                calls.append((name, args, res))
                seen.extend(x.text for x in res.content if x.type == "text")
                return res

            await call("video_info", {})
            await call("frame_grid", {"start": 0, "end": 8, "count": 8})
            await call("get_frames", {"times": [0.0, 4.0]})
            await call("clip", {"start": 0.0, "end": 1.0, "rate": 5})
            await call("finalize", {})  # premature: refused
            await call("write_file", {"path": "scene.py", "text": scenes.CRASHING})
            await call("run_scene", {"mode": "bake_only"})  # launch 1: crashes
            await call("read_file", {"path": str(lt.truth_program)})  # absolute: refused
            await call("read_file", {"path": "../../" + lt.truth_program.name})  # '..': refused
            await call("read_file", {"path": "../state.json"})  # the session's own files: refused
            await call("read_file", {"path": "notes.py"})  # a planted symbolic link: refused
            await call("write_file", {"path": "scene.py", "text": scenes.FIXED})
            await call("render_preview", {"frame": 60})  # launch 2
            await call("run_scene", {"mode": "bake_only"})  # launch 3
            await call("inspect_scene", {})  # launch 4
            async def on_progress(progress, total, message):
                beats.append(message)

            await call("run_scene", {"mode": "full"}, on_progress)  # launch 5, with progress notifications
            await call("check_submission", {})
            await call("finalize", {})
            await call("video_info", {})  # after finalize: refused
            out["budget_res"] = await c.read_resource("physcodegym://budget")
        return out

    out = anyio.run(session)
    names = [n for n, _, _ in calls]
    res = {i: r for i, (_, _, r) in enumerate(calls)}

    # -- what the client sees: the same tools and schemas as the LLM harness, the prompt, the resources ----------
    tools = {t.name: t for t in out["tools"]}
    assert list(tools) == [t.name for t in TOOL_DEFS]
    for spec in tool_specs():
        assert tools[spec.name].input_schema == spec.parameters and tools[spec.name].description == spec.description
    assert [p.name for p in out["prompts"]] == ["task"]
    prompt_text = out["prompt"].messages[0].content.text
    assert prompt_text == prompts.SYSTEM_PROMPT + "\n\n" + prompts.task_prompt(lt.task, BudgetLimits(max_launches=LAUNCHES))
    assert f"at most {LAUNCHES} Blender launches" in prompt_text
    assert {r.uri for r in out["resources"]} == {"physcodegym://task", "physcodegym://budget"}
    desc = json.loads(out["task_res"].contents[0].text)
    assert desc["id"] == lt.id and desc["category"] == lt.task.category.value and desc["limits"]["max_launches"] == LAUNCHES
    assert "events" not in desc and "checklist" not in desc and "truth" not in desc

    # -- tool results -----------------------------------------------------------------------------------------
    info = result_doc(res[0])
    assert (info["frames"], info["fps"], info["duration_s"]) == (240, 30, 8.0)
    images = {i: [x for x in r.content if x.type == "image"] for i, r in res.items()}
    assert [len(images[i]) for i in (1, 2, 3)] == [1, 2, 6]
    assert all(x.mime_type == "image/png" for i in (1, 2, 3) for x in images[i])
    assert decode_png(images[2][0].data).shape == (360, 640, 3)
    assert res[4].is_error and result_doc(res[4])["refused"]
    crash = result_doc(res[6])
    assert res[6].is_error and crash["status"] == "failed" and "kind" in crash["log_tail"]
    for i in (7, 8, 9, 10):
        assert res[i].is_error, (names[i], calls[i][1], res[i].content[0].text)
    assert "symbolic links" in result_doc(res[10])["error"]
    pv = result_doc(res[12])
    assert not res[12].is_error and pv["status"] == "ok" and pv["frame"] == 60
    assert decode_png(images[12][0].data).shape == (360, 640, 3)
    structure = result_doc(res[14])["structure"]
    objs = {o["name"]: o for o in structure["objects"]}
    assert objs["Ball"]["rigid_body"]["type"] == "ACTIVE" and objs["Ground"]["rigid_body"]["type"] == "PASSIVE"
    full = result_doc(res[15])
    assert not res[15].is_error and full["status"] == "ok" and full["frames_found"] == 240 and full["has_blend"]
    assert "no launches left" in budget_line(res[15])
    assert beats and all(b.startswith("run_scene: running for") for b in beats)  # the client's idle timer is fed
    assert result_doc(res[16])["ok"] is True
    assert not res[17].is_error and result_doc(res[17])["finalized"] is True
    assert res[18].is_error and "already finalized" in result_doc(res[18])["error"]

    # every result states the remaining budget, and only launches spend it
    left = [int(re.search(r"launches left (\d+)/5", budget_line(r)).group(1)) for _, _, r in calls]
    expect, n = [], LAUNCHES
    for name in names:
        n -= name in ("run_scene", "render_preview", "inspect_scene")
        expect.append(n)
    assert left == expect
    assert "LAST launch" in budget_line(res[14])
    bud = json.loads(out["budget_res"].contents[0].text)
    assert bud["launches_used"] == LAUNCHES and bud["launches_left"] == 0 and bud["finalized"] is True
    assert bud["launches_by_tool"] == {"run_scene": 3, "render_preview": 1, "inspect_scene": 1}

    # -- the session folder is an agent run folder: trace, run.json, revisions, submission ----------------------
    recs = read_trace(ws / "trace.jsonl")
    assert recs[0]["type"] == "start" and recs[0]["provider"] == "mcp" and recs[0]["tools"] == [t.name for t in TOOL_DEFS]
    tool_recs = [r for r in recs if r["type"] == "tool"]
    assert [r["name"] for r in tool_recs] == names
    assert [r["is_error"] for r in tool_recs] == [r.is_error for _, _, r in calls]
    assert [r["launch"] for r in tool_recs] == [n in ("run_scene", "render_preview", "inspect_scene") for n in names]
    for r in tool_recs:
        for ref in r["images"]:
            assert (ws / ref).is_file()
    end = [r for r in recs if r["type"] == "end"]
    assert len(end) == 1 and end[0]["status"] == "finalized"
    assert recs[-1]["type"] == "disconnect"
    run = json.loads((ws / AGENT_RUN_FILE).read_text())
    assert run["status"] == "finalized" and run["provider"] == "mcp" and run["finalized"]["launch"] == 5
    assert run["budget"]["launches_used"] == 5 and run["steps"] == len(calls)
    assert [p.read_text() for p in sorted((ws / "revisions").glob("scene_r*.py"))] == [scenes.CRASHING, scenes.FIXED]
    sub = ws / "submission"
    assert (sub / "scene.py").read_text() == scenes.FIXED and (sub / "scene.blend").is_file()
    progress = read_progress(ws)  # the panel's reader of agent run folders
    assert progress["status"] == "finalized" and progress["launches"] == 5
    assert progress["submission_blend"] == str(sub / "scene.blend")
    assert len(list((sub / "frames").glob("*.png"))) == 240

    # -- secrecy: nothing the client received names the task folder or carries the truth program ----------------
    received = "\n".join(seen) + prompt_text + out["task_res"].contents[0].text + out["budget_res"].contents[0].text
    assert str(lt.folder) not in received and lt.video_path.name not in received
    truth_lines = [ln.strip() for ln in lt.truth_program.read_text().splitlines() if len(ln.strip()) > 20]
    leaked = [ln for ln in truth_lines if ln in received and ln not in scenes.FIXED + scenes.CRASHING]
    assert not leaked, leaked[:3]

    # -- scored like any run ------------------------------------------------------------------------------------
    code, stdout, stderr = cli("score", "--task", str(lt.folder), "--candidate", str(sub), "--metrics", "ssim,motion", "--json")
    assert code == 0, stderr[-2000:]
    score = json.loads(stdout)
    for m in ("S_ssim", "S_mot"):
        assert 0.0 < score["metrics"][m] <= 1.0, score
    print("\nMCP session score:", json.dumps({k: score.get(k) for k in ("metrics", "missing", "S_vis", "S_phys", "S_tot")}))
