"""Task authoring: build a shipped task from its hidden `truth.py`, verify it, generate family members, import a
real video as a task skeleton.

Above the data layer (`tasks` holds the schema, the loader, the event detectors and the packs): authoring runs the
truth program in the sandbox, samples it in Blender and writes the pack's generated files.
"""

__all__ = ["build", "families", "importer", "sheet", "verify"]  # the modules other packages may import
