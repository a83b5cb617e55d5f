"""The MCP face of a session: the SDK's low-level `Server` with the agent's tools, the task prompt and resources.

The low-level server is used (not the decorator layer) so that each tool's input schema is exactly the one the
LLM harness sends (`agent.tools.tool_specs()`, generated from the pydantic argument models) and the arguments
are validated by those same models inside `Toolbox.call`. Tool calls run in a worker thread (a Blender launch
takes minutes; the connection keeps answering pings meanwhile), one at a time per session.

- tools: `TOOL_DEFS` (video_info, get_frames, frame_grid, clip, write_file, read_file, run_scene, inspect_scene,
  render_preview, check_submission, finalize); a result is the JSON text plus the budget line, then one MCP
  image content (PNG) per image, `is_error` as the toolbox says;
- prompt `task`: the system and task prompt of `physcodegym agent`;
- resources `physcodegym://task` (the public description) and `physcodegym://budget` (launches, clock).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from physcodegym.agent.tools import TOOL_DEFS, tool_specs
from physcodegym.llm.base import ImagePart, TextPart
from physcodegym.mcp_server.session import McpSession, WorkspaceBusy

SERVER_NAME = "physcodegym"
PROMPT_NAME = "task"
TASK_URI = "physcodegym://task"
BUDGET_URI = "physcodegym://budget"
_OBSERVE = {"video_info", "get_frames", "frame_grid", "clip", "read_file", "check_submission"}
_TITLES = {
    "video_info": "Reference video metadata",
    "get_frames": "Reference frames at times",
    "frame_grid": "Grid of reference frames",
    "clip": "Reference frames at a rate",
    "write_file": "Write a workspace file",
    "read_file": "Read a workspace file",
    "run_scene": "Run scene.py in Blender (1 launch)",
    "inspect_scene": "Inspect the saved scene (1 launch)",
    "render_preview": "Render one frame (1 launch)",
    "check_submission": "Check the submission",
    "finalize": "Finalize the submission",
}
log = logging.getLogger("physcodegym.mcp")
HEARTBEAT_S = 5.0


def mcp_tools() -> list[types.Tool]:
    """The tool list as a client sees it: names, descriptions and schemas shared with the LLM harness."""
    out = []
    for spec, tdef in zip(tool_specs(), TOOL_DEFS, strict=True):
        ro = tdef.name in _OBSERVE
        out.append(
            types.Tool(
                name=spec.name,
                title=_TITLES.get(spec.name),
                description=spec.description,
                input_schema=spec.parameters,
                annotations=types.ToolAnnotations(
                    title=_TITLES.get(spec.name),
                    read_only_hint=ro,
                    destructive_hint=False,
                    idempotent_hint=ro,
                    open_world_hint=False,
                ),
            )
        )
    return out


def to_content(parts: list[TextPart | ImagePart]) -> list[types.TextContent | types.ImageContent]:
    content: list[types.TextContent | types.ImageContent] = []
    for p in parts:
        if isinstance(p, TextPart):
            content.append(types.TextContent(text=p.text))
        else:
            content.append(types.ImageContent(data=p.png_base64, mime_type="image/png"))
    return content


def _client_name(ctx: Any) -> str | None:
    try:
        cp = ctx.session.client_params
        if cp is not None and cp.client_info is not None:
            ci = cp.client_info
            return f"{ci.name}/{ci.version}" if getattr(ci, "version", None) else ci.name
    except Exception:
        pass
    try:
        info = (ctx.meta or {}).get(types.CLIENT_INFO_META_KEY) if isinstance(ctx.meta, dict) else None
        if isinstance(info, dict) and info.get("name"):
            return str(info["name"])
    except Exception:
        pass
    return None


async def _heartbeat(ctx: Any, name: str, every_s: float = HEARTBEAT_S) -> None:
    """Progress notifications every few seconds until cancelled, so clients with idle timeouts keep waiting."""
    t0 = anyio.current_time()
    while True:
        await anyio.sleep(every_s)
        elapsed = anyio.current_time() - t0
        try:
            await ctx.session.report_progress(round(elapsed, 1), None, f"{name}: running for {elapsed:.0f} s")
        except Exception:  # a client that went away: the call itself decides what happens
            log.debug("progress notification failed", exc_info=True)


def build_server(session: McpSession) -> Server:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=mcp_tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        session.set_client(_client_name(ctx))
        busy: str | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(_heartbeat, ctx, params.name)  # progress while a launch runs (no-op unless the client asked)
            try:
                res = await anyio.to_thread.run_sync(session.call, params.name, dict(params.arguments or {}))
            except WorkspaceBusy as e:  # another connection's call holds the session: the client may retry
                busy = str(e)
            finally:
                tg.cancel_scope.cancel()
        if busy is not None:
            return types.CallToolResult(content=[types.TextContent(text=json.dumps({"error": busy}))], is_error=True)
        return types.CallToolResult(content=to_content(res.parts), is_error=res.outcome.is_error)

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=PROMPT_NAME,
                    title=f"PhysCodeGym task {session.loaded_task.id}",
                    description="The task: rebuild the reference video as a Blender program whose motion comes from "
                    "simulated physics (the same system and task prompt as `physcodegym agent`).",
                )
            ]
        )

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT_NAME:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name!r}; prompts: {PROMPT_NAME}")
        return types.GetPromptResult(
            description=f"PhysCodeGym task {session.loaded_task.id}: {session.loaded_task.task.title}",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=session.prompt_text()))],
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=TASK_URI,
                    name="task",
                    title="Task description",
                    description=(
                        "The task's public description: id, title, category, video format, permitted set-up, "
                        "deliverable, limits."
                    ),
                    mime_type="application/json",
                ),
                types.Resource(
                    uri=BUDGET_URI,
                    name="budget",
                    title="Budget",
                    description=(
                        "Launches used and left, wall-clock time left, tool calls so far (shared by every connection)."
                    ),
                    mime_type="application/json",
                ),
            ]
        )

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == TASK_URI:
            doc = session.public_description()
        elif uri == BUDGET_URI:
            doc = await anyio.to_thread.run_sync(session.budget_doc)
        else:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"unknown resource {uri!r}; resources: {TASK_URI}, {BUDGET_URI}"
            )
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(doc, indent=2))]
        )

    return Server(
        SERVER_NAME,
        version="0.1.0",
        title="PhysCodeGym",
        description=(
            f"PhysCodeGym task {session.loaded_task.id}: observe the reference video, write scene.py, run it "
            "in Blender, finalize."
        ),
        instructions=(
            "Get the prompt 'task' (or read the resource physcodegym://task) for the assignment. Observe the video "
            "with video_info / frame_grid / get_frames / clip, write scene.py with write_file, run it with run_scene, "
            "and call finalize after a successful full run. run_scene, inspect_scene and render_preview each spend one "
            "Blender launch of a budget shared by every connection; every result ends with the budget left."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


async def serve_stdio(session: McpSession) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(session)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        session.close()


async def serve_http(session: McpSession, host: str = "127.0.0.1", port: int = 8765, path: str = "/mcp") -> None:
    """Streamable HTTP on a loopback address (every client of this server shares the one session)."""
    import uvicorn

    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError("the HTTP transport binds to a loopback address only")
    server = build_server(session)
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    cfg = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    try:
        await uvicorn.Server(cfg).serve()
    finally:
        session.close()
