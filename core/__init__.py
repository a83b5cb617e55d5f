"""Leaf modules every layer may import: error types (`errors`) and atomic file writes (`atomic`).

Nothing here imports anything else of ours, so no library depends on the command line or the UI for them.
"""
