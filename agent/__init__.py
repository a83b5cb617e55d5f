"""The coding agent: its loop (`loop`), tools (`tools`), budget, prompts, traces, reading a run folder while it
runs (`run_files`) and the Harbor export. The inspect worker runs in a walled child only.
"""

__all__ = [
    "budget",
    "harbor_export",
    "loop",
    "prompts",
    "run_document",
    "run_files",
    "tools",
    "trace",
]  # the modules other packages may import
