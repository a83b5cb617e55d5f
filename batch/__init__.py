"""Batch evaluation: the results store (SQLite, `store`), the scheduler (process pool or Ray) and accounting
(SPEC §8)."""

__all__ = ["accounting", "scheduler", "store"]  # the modules other packages may import
