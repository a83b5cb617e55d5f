"""The agent tools as a Model Context Protocol server (SPEC §7): `physcodegym mcp --task T --workspace DIR`.

`session.py` holds the transport-free part (one workspace: the shared Toolbox, the persisted launch budget and
wall clock, the trace, agent_run.json, interrupted calls); `server.py` maps it onto the MCP SDK's low-level server
(tools, the task prompt, the public description and budget resources) over stdio or streamable HTTP.
"""

__all__ = ["server", "session"]  # the modules other packages may import
