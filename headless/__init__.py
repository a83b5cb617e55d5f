"""The command line: `cli` and one module per sub-command in `commands/` (auto-discovered)."""

__all__ = ["cli"]  # the modules other packages may import
