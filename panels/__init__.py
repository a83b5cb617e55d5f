"""The panel's UI classes; `registration` lists every class the extension registers."""

__all__ = ["registration"]  # the modules other packages may import
