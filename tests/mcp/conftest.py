"""Fixtures for the MCP server tests: a shipped task, the agent tests' scene programs, an SDK client over stdio.

Every test drives a real `physcodegym mcp ...` subprocess with the official SDK's own client
(`mcp.Client(StdioServerParameters(...))`), so the wire format, the stdio claim and the process lifecycle
are the ones a coding agent gets.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import cv2
import numpy as np
import pytest
from physcodegym.tasks.loader import PACKS_DIR, LoadedTask, load_task

REPO = Path(__file__).resolve().parents[2]


def _load_agent_scenes():
    spec = importlib.util.spec_from_file_location("pcg_agent_test_scenes", REPO / "tests" / "agent" / "scenes.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


scenes = _load_agent_scenes()  # CRASHING / FIXED: the ball-on-a-plane programs of the agent e2e test


def physcodegym_argv() -> list[str]:
    exe = Path(sys.executable).with_name("physcodegym")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "physcodegym"]


def server_params(task: LoadedTask | str, workspace: Path, *extra: str):
    from mcp.client.stdio import StdioServerParameters

    argv = physcodegym_argv() + ["mcp", "--task", str(task.folder if isinstance(task, LoadedTask) else task), "--workspace", str(workspace), *extra]
    return StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, "PYTHONUNBUFFERED": "1"})


@asynccontextmanager
async def connect(task: LoadedTask, workspace: Path, *extra: str) -> AsyncIterator:
    from mcp import Client

    async with Client(server_params(task, workspace, *extra), read_timeout_seconds=900) as client:
        yield client


def result_doc(res) -> dict:
    """The JSON document of a tool result (the first text content, before the budget line)."""
    assert res.content and res.content[0].type == "text", res
    return json.loads(res.content[0].text.split("\n")[0])


def budget_line(res) -> str:
    return res.content[0].text.split("\n", 1)[1]


def decode_png(b64: str) -> np.ndarray:
    import base64

    img = cv2.imdecode(np.frombuffer(base64.b64decode(b64), np.uint8), cv2.IMREAD_COLOR)
    assert img is not None, "image content is not a decodable PNG"
    return img


def cli(*args: str, timeout: float = 600) -> tuple[int, str, str]:
    import subprocess

    cp = subprocess.run(physcodegym_argv() + list(args), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return cp.returncode, cp.stdout, cp.stderr


@pytest.fixture(scope="session")
def shipped_task() -> LoadedTask:
    """A shipped task with its reference video and truth program (the issue asks for one)."""
    for folder in sorted(PACKS_DIR.glob("*/task.json")):
        try:
            lt = load_task(folder.parent)
        except Exception:
            continue
        if lt.video_path.is_file() and lt.truth_program and lt.truth_program.is_file():
            return lt
    pytest.fail("no shipped task with a reference video and truth.py")


@pytest.fixture(scope="session")
def task_copy(shipped_task: LoadedTask, tmp_path_factory: pytest.TempPathFactory) -> LoadedTask:
    """The shipped task copied to a temporary folder (tests that place session folders around a task folder)."""
    dst = tmp_path_factory.mktemp("taskcopy") / shipped_task.id
    dst.mkdir()
    for name in ("task.json", shipped_task.task.video.file, shipped_task.task.truth.program):
        shutil.copy2(shipped_task.folder / name, dst / name)
    return load_task(dst)


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention `text` (an orphaned Blender child would)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        cmd = raw.replace(b"\0", b" ").decode("utf-8", "replace")
        if text in cmd and state != "Z":
            out.append(f"{pid}: {cmd[:200]}")
    return out
