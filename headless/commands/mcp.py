"""`physcodegym mcp --task T --workspace DIR [--max-launches 20 --time-limit 10800] [--http PORT]`.

Serves the tools of `physcodegym agent` to any MCP client (a coding CLI or an editor) over stdio, or over
streamable HTTP on 127.0.0.1 with `--http PORT`. DIR is the session folder, laid out like an agent run folder
(`workspace/` holds the agent's files; `trace.jsonl`, `agent_run.json`, `submission/` after finalize); the launch
budget and the wall clock live there, so a client that disconnects and reconnects continues the same budget.
Score the result like any agent run: `physcodegym score --task T --candidate DIR/submission`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from physcodegym.core.errors import InputError
from physcodegym.headless.cli import CommandResult

NAME = "mcp"
HELP = "serve a task's agent tools as an MCP server (stdio, or streamable HTTP on 127.0.0.1)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, help="task id or folder")
    p.add_argument("--workspace", required=True, help="session folder (created if missing; reuse it to reconnect)")
    p.add_argument(
        "--max-launches",
        type=int,
        default=None,
        help="Blender launches of the session (default 20; fixed at the first start)",
    )
    p.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="wall-clock seconds from the first start (default 10800; fixed at the first start)",
    )
    p.add_argument("--run-timeout", type=float, default=1800.0, help="timeout of one Blender launch in seconds")
    p.add_argument("--memory-mb", type=int, default=8192, help="memory limit of one Blender launch")
    p.add_argument(
        "--http",
        type=int,
        default=None,
        metavar="PORT",
        help="serve streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio",
    )
    p.add_argument(
        "--lock-wait", type=float, default=30.0, help="seconds a call waits for another connection's running call"
    )


def run(args: argparse.Namespace) -> CommandResult:
    import anyio
    from physcodegym.mcp_server.server import serve_http, serve_stdio
    from physcodegym.mcp_server.session import McpSession
    from physcodegym.tasks.loader import load_task

    if args.http is None and getattr(args, "json", False):
        raise InputError(
            "--json cannot be combined with the stdio transport: stdout carries the MCP protocol", field="--json"
        )
    if args.http is not None and not (0 < args.http < 65536):
        raise InputError("must be a TCP port 1..65535", field="--http")
    if args.run_timeout <= 0:
        raise InputError("must be > 0 seconds", field="--run-timeout")
    loaded_task = load_task(args.task)
    session = McpSession(
        loaded_task,
        Path(args.workspace),
        max_launches=args.max_launches,
        time_limit_s=args.time_limit,
        run_timeout_s=args.run_timeout,
        memory_mb=args.memory_mb,
        transport="stdio" if args.http is None else "http",
        lock_wait_s=args.lock_wait,
    )

    def _terminated(signum: int, frame: object) -> None:
        # the client is stopping this server (possibly mid-call): leave the session resumable and go. A call cut
        # off here stays in pending_call.json and is traced as interrupted by the next connection; a Blender
        # child dies with its launching thread (PR_SET_PDEATHSIG in the runner).
        try:
            session.mark_stopped()
        finally:
            os._exit(128 + signum)

    signal.signal(signal.SIGTERM, _terminated)
    if args.http is None:
        anyio.run(serve_stdio, session)
        os.dup2(2, 1)  # the client has gone: whatever the CLI prints now must not land on the closed protocol pipe
    else:
        print(
            f"physcodegym mcp: http://127.0.0.1:{args.http}/mcp (task {loaded_task.id}, session {session.run_dir})",
            file=sys.stderr,
        )
        anyio.run(serve_http, session, "127.0.0.1", args.http)
    doc = session.run_doc()
    human = (
        f"{loaded_task.id}: {doc.status}; tool calls {doc.steps}, launches "
        f"{doc.budget.launches_used}/{doc.budget.max_launches}\nsession folder: {session.run_dir}"
        + (
            f"\nscore it: physcodegym score --task {loaded_task.id} --candidate {session.run_dir / 'submission'}"
            if doc.finalized
            else ""
        )
    )
    return CommandResult(doc.to_json(), human=human)
