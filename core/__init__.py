"""Leaf modules every layer may import: error types (`errors`), atomic file writes (`atomic`), how a bpy child
exits (`exit`), ...

Nothing here imports anything else of ours, so no library depends on the command line or the UI for them.
"""
