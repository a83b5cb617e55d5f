"""Leaf modules every layer may import: error types (`errors`), atomic file writes (`atomic`), how a bpy child
exits (`exit`), hashing, how a child of ours starts (`launch`), limits and determinism.

Nothing here imports anything else of ours, so no library depends on the command line or the UI for them.
"""

__all__ = [
    "atomic",
    "determinism",
    "errors",
    "exit",
    "hashing",
    "launch",
    "limits",
]  # the modules other packages may import
