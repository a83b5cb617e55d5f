"""Faults over MCP (real `physcodegym mcp` subprocesses, the SDK's client): the launch budget spent, finalize
before a full run, a client that disconnects mid-launch and reconnects, the wall clock running out, a second
connection finding the session busy, bad session folders; and the streamable HTTP transport.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import time

import anyio
import pytest
from physcodegym.agent.trace import AGENT_RUN_FILE, read_trace
from physcodegym.core.errors import InputError
from physcodegym.headless.cli import main as cli_main
from physcodegym.mcp_server.session import McpSession

from .conftest import budget_line, connect, physcodegym_argv, processes_mentioning, result_doc, scenes

pytestmark = pytest.mark.timeout(600)


async def _budget(c) -> dict:
    return json.loads((await c.read_resource("physcodegym://budget")).contents[0].text)


def test_budget_spent_and_finalize_before_full_run_persist_across_reconnects(tmp_path, shipped_task):
    ws = tmp_path / "s"

    async def first() -> dict:
        r: dict = {}
        async with connect(shipped_task, ws, "--max-launches", "1") as c:
            await c.call_tool("write_file", {"path": "scene.py", "text": scenes.FIXED})
            r["early_finalize"] = await c.call_tool("finalize", {})
            r["bake"] = await c.call_tool("run_scene", {"mode": "bake_only"})  # the only launch
            r["finalize_after_bake"] = await c.call_tool("finalize", {})  # a bake is not a full run
            r["full"] = await c.call_tool("run_scene", {"mode": "full"})
            r["preview"] = await c.call_tool("render_preview", {"frame": 10})
            r["inspect"] = await c.call_tool("inspect_scene", {})
            r["tamper"] = await c.call_tool("write_file", {"path": "../budget.json", "text": '{"launches_used": 0}'})
            r["observe"] = await c.call_tool("get_frames", {"times": [1.0]})
            r["budget"] = await _budget(c)
        return r

    r = anyio.run(first)
    assert r["early_finalize"].is_error and "no full run yet" in " ".join(result_doc(r["early_finalize"])["problems"])
    assert not r["bake"].is_error and result_doc(r["bake"])["status"] == "ok"
    assert "no launches left" in budget_line(r["bake"])
    fin = result_doc(r["finalize_after_bake"])
    assert r["finalize_after_bake"].is_error and fin["refused"] and any("no full run yet" in p for p in fin["problems"])
    for k in ("full", "preview", "inspect"):
        assert r[k].is_error and "launch budget exhausted" in result_doc(r[k])["error"], (k, r[k].content[0].text)
    assert r["tamper"].is_error
    assert not r["observe"].is_error and [x.type for x in r["observe"].content] == ["text", "image"]  # observation stays free
    assert r["budget"]["launches_used"] == 1 and r["budget"]["launches_left"] == 0
    assert sorted(p.name for p in (ws / "launches").iterdir()) == ["001_run_scene"]  # refused launches started nothing

    async def second() -> dict:
        out: dict = {}
        async with connect(shipped_task, ws) as c:  # a new server process on the same folder
            out["budget"] = await _budget(c)
            out["full"] = await c.call_tool("run_scene", {"mode": "full"})
            out["finalize"] = await c.call_tool("finalize", {})
            out["prompt"] = (await c.get_prompt("task")).messages[0].content.text
        return out

    s = anyio.run(second)
    assert s["budget"]["launches_left"] == 0 and s["budget"]["max_launches"] == 1
    assert s["full"].is_error and "launch budget exhausted" in result_doc(s["full"])["error"]
    assert s["finalize"].is_error and result_doc(s["finalize"])["refused"]
    assert "at most 1 Blender launches" in s["prompt"]  # the limits of the first start hold
    recs = read_trace(ws / "trace.jsonl")
    assert [r["segment"] for r in recs if r["type"] == "start"] == [1, 2]
    assert not any(r["type"] == "end" for r in recs)
    assert json.loads((ws / AGENT_RUN_FILE).read_text())["status"] == "stopped"
    # the limits of a session cannot be raised by restarting the server with other flags
    with pytest.raises(InputError, match="cannot change") as e:
        McpSession(shipped_task, ws, max_launches=5)
    assert e.value.field == "--max-launches"


def test_client_disconnects_mid_launch_and_reconnects(tmp_path, shipped_task):
    ws = tmp_path / "s"
    marker = str(ws / "launches" / "001_run_scene")

    async def first() -> None:
        async with connect(shipped_task, ws, "--max-launches", "1") as c:
            await c.call_tool("write_file", {"path": "scene.py", "text": scenes.FIXED})
            async with anyio.create_task_group() as tg:
                tg.start_soon(c.call_tool, "run_scene", {"mode": "full"})
                with anyio.fail_after(240):
                    while not ((ws / "pending_call.json").is_file() and processes_mentioning(marker)):
                        await anyio.sleep(0.2)  # Blender is running this launch
                tg.cancel_scope.cancel()
        # leaving the client: stdin closed, then the SDK stops the server process (SIGTERM after its grace period)

    anyio.run(first)
    deadline = time.monotonic() + 20
    while processes_mentioning(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_mentioning(marker), "the Blender child of the cut-off launch outlived its server"
    assert json.loads((ws / "budget.json").read_text())["launches_used"] == 1  # counted the moment it was spent

    async def second() -> dict:
        out: dict = {}
        async with connect(shipped_task, ws) as c:
            out["budget"] = await _budget(c)
            out["info"] = await c.call_tool("video_info", {})
            out["run"] = await c.call_tool("run_scene", {"mode": "bake_only"})
            out["finalize"] = await c.call_tool("finalize", {})
        return out

    s = anyio.run(second)
    assert s["budget"]["launches_used"] == 1 and s["budget"]["launches_left"] == 0
    assert not s["info"].is_error
    assert s["run"].is_error and "launch budget exhausted" in result_doc(s["run"])["error"]
    assert s["finalize"].is_error and result_doc(s["finalize"])["refused"]
    recs = read_trace(ws / "trace.jsonl")
    tools = [r for r in recs if r["type"] == "tool"]
    cut = [r for r in tools if r.get("interrupted")]
    assert len(cut) == 1 and cut[0]["name"] == "run_scene" and cut[0]["launch"] is True and cut[0]["is_error"]
    assert [r["name"] for r in tools] == ["write_file", "run_scene", "video_info", "run_scene", "finalize"]
    assert not (ws / "pending_call.json").exists()
    assert [r["segment"] for r in recs if r["type"] == "start"] == [1, 2]


def test_wall_clock_ends_the_session(tmp_path, shipped_task):
    ws = tmp_path / "s"

    async def go() -> dict:
        async with connect(shipped_task, ws, "--time-limit", "1") as c:
            await anyio.sleep(1.2)
            return {
                "info": await c.call_tool("video_info", {}),
                "write": await c.call_tool("write_file", {"path": "scene.py", "text": scenes.FIXED}),
                "finalize": await c.call_tool("finalize", {}),
            }

    r = anyio.run(go)
    for k, res in r.items():
        assert res.is_error and "wall-clock limit reached" in result_doc(res)["error"], k
    assert not (ws / "workspace" / "scene.py").exists()
    doc = json.loads((ws / AGENT_RUN_FILE).read_text())
    assert doc["status"] == "budget_exhausted"
    ends = [x for x in read_trace(ws / "trace.jsonl") if x["type"] == "end"]
    assert len(ends) == 1 and ends[0]["status"] == "budget_exhausted"


def test_a_busy_session_is_reported_not_raced(tmp_path, shipped_task):
    """A call waits for another connection's running call; past --lock-wait it is refused with the holder named."""
    ws = tmp_path / "s"

    async def go() -> dict:
        out: dict = {}
        async with connect(shipped_task, ws, "--lock-wait", "0.5") as c:
            out["free"] = await c.call_tool("video_info", {})
            fd = os.open(ws / ".session.lock", os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # another process is in the middle of a call
                os.pwrite(fd, b"tool run_scene since now (pid 1)", 0)
                out["busy"] = await c.call_tool("video_info", {})
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
            out["after"] = await c.call_tool("video_info", {})
        return out

    r = anyio.run(go)
    assert not r["free"].is_error and not r["after"].is_error
    assert r["busy"].is_error and "busy" in result_doc(r["busy"])["error"] and "run_scene" in result_doc(r["busy"])["error"]
    assert [x["name"] for x in read_trace(ws / "trace.jsonl") if x["type"] == "tool"] == ["video_info", "video_info"]


def test_bad_session_folders_are_refused(tmp_path, task_copy, capfd):
    """Checked before anything is served (in-process: the same constructor the command calls)."""
    bad = {
        "inside": task_copy.folder / "ws",  # the session inside the task folder
        "around": task_copy.folder.parent,  # the task folder inside the session
    }
    link = tmp_path / "linked"
    link.mkdir()
    os.symlink(task_copy.folder, link / "workspace")  # workspace/ a link to the task folder
    bad["linked"] = link
    for name, folder in bad.items():
        with pytest.raises(InputError) as e:
            McpSession(task_copy, folder)
        assert e.value.field == "--workspace", name
        assert ("overlaps the task folder" if name != "linked" else "not a link") in str(e.value), name
    assert not (task_copy.folder / "ws").exists() and not (task_copy.folder.parent / "session.json").exists()
    McpSession(task_copy, tmp_path / "fine")  # the twin: a folder beside the task is accepted
    with pytest.raises(InputError, match="belongs to task"):
        McpSession(load_task_as(task_copy, "other_task", tmp_path), tmp_path / "fine")
    # stdout carries the protocol over stdio, so --json is refused there (exit 2, the reason on stdout as JSON)
    assert cli_main(["mcp", "--task", str(task_copy.folder), "--workspace", str(tmp_path / "j"), "--json"]) == 2
    doc = json.loads(capfd.readouterr().out)
    assert doc["error"]["field"] == "--json"


def load_task_as(task, new_id: str, tmp_path):
    """A copy of `task` under another id (a different task pointed at an existing session folder)."""
    import shutil

    from physcodegym.tasks.loader import load_task

    dst = tmp_path / new_id
    shutil.copytree(task.folder, dst)
    doc = json.loads((dst / "task.json").read_text())
    doc["id"] = new_id
    (dst / "task.json").write_text(json.dumps(doc))
    return load_task(dst)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http_transport_shares_the_session(tmp_path, shipped_task):
    from mcp import Client

    ws = tmp_path / "s"
    port = _free_port()
    argv = physcodegym_argv() + ["mcp", "--task", str(shipped_task.folder), "--workspace", str(ws), "--max-launches", "3", "--http", str(port)]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, proc.stderr.read()[-2000:]
            assert time.monotonic() < deadline, "the HTTP server did not start listening"
            time.sleep(0.2)

        async def go() -> dict:
            async with Client(f"http://127.0.0.1:{port}/mcp") as c:
                return {
                    "tools": [t.name for t in (await c.list_tools()).tools],
                    "grid": await c.call_tool("frame_grid", {"count": 4}),
                    "bad": await c.call_tool("get_frames", {"times": []}),
                    "budget": await _budget(c),
                }

        r = anyio.run(go)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "run_scene" in r["tools"] and len(r["tools"]) == 11
    assert [x.type for x in r["grid"].content] == ["text", "image"] and not r["grid"].is_error
    assert r["bad"].is_error and "invalid arguments for get_frames" in result_doc(r["bad"])["error"]  # the pydantic models validate
    assert r["budget"]["tool_calls"] == 2 and r["budget"]["max_launches"] == 3

    async def again() -> dict:
        async with connect(shipped_task, ws) as c:  # the same session folder over stdio afterwards
            return await _budget(c)

    assert anyio.run(again)["tool_calls"] == 2
    assert json.loads((ws / AGENT_RUN_FILE).read_text())["transport"] == "stdio"


def test_a_planted_scene_link_is_never_run_or_submitted(tmp_path, shipped_task):
    """A scene.py linked to the truth program (planted with a client's own file tools) is refused by every tool
    that would run, check or submit it; the twin, a plain file with the same bytes, is accepted."""
    ws = tmp_path / "s"
    (ws / "workspace").mkdir(parents=True)
    scene = ws / "workspace" / "scene.py"
    other = tmp_path / "elsewhere.py"
    other.write_text(scenes.FIXED)
    scene_tools = [("run_scene", {"mode": "bake_only"}), ("render_preview", {"frame": 1}), ("check_submission", {}), ("finalize", {})]

    async def go() -> dict:
        out: dict = {}
        async with connect(shipped_task, ws, "--max-launches", "2") as c:
            os.symlink(shipped_task.truth_program, scene)
            out["linked"] = [await c.call_tool(n, a) for n, a in scene_tools]
            scene.unlink()
            os.link(other, scene)  # a hard link to a file outside the workspace
            out["hard"] = await c.call_tool("check_submission", {})
            scene.unlink()
            scene.write_text(scenes.FIXED)  # the twin: a plain file (written with the client's own tools)
            out["plain"] = await c.call_tool("check_submission", {})
        return out

    r = anyio.run(go)
    for (name, _), res in zip(scene_tools, r["linked"], strict=True):
        assert res.is_error and "symbolic link" in result_doc(res)["error"], name
    assert r["hard"].is_error and "hard link" in result_doc(r["hard"])["error"]
    assert not r["plain"].is_error and "no full run yet" in " ".join(result_doc(r["plain"])["problems"])
    assert not (ws / "launches").exists() and json.loads((ws / "budget.json").read_text())["launches_used"] == 0
    revs = json.loads((ws / "state.json").read_text())["revisions"]
    assert len(revs) == 1 and (ws / revs[0]["file"]).read_text() == scenes.FIXED  # the native edit became a revision
