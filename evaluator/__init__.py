"""Scoring a candidate: the six metrics and the aggregates, combining `metrics`, `judges` and `verifier` (never bpy)."""

__all__ = ["scoring"]  # the modules other packages may import
