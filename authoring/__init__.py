"""Task authoring: build a shipped task from its hidden `truth.py`, verify it, detect timed events, encode media.

Above the data layer (`tasks` holds the schema, the loader and the packs): authoring runs the truth program
in the sandbox, samples it in Blender and writes the pack's generated files.
"""
