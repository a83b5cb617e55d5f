"""Scoring a candidate: the six metrics and the aggregates, combining `metrics`, `judges` and `verifier` (never bpy).

`scoring.score_run` returns a `score_document.ScoreDocument`, the typed score document of SPEC §7; code that reads
one back from disk validates it with `score_document.read_score`."""

__all__ = ["score_document", "scoring"]  # the modules other packages may import
