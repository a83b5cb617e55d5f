"""Task data: the schema (`schema`), loading a task by id or path (`loader`), the task set's manifest (`manifest`),
the event detectors the shipped annotation files use (`events`), and the packs and library folders themselves.

The data layer: no bpy, nothing from the workflows above it.
"""

__all__ = ["events", "loader", "manifest", "schema"]  # the modules other packages may import
