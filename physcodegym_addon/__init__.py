"""The Blender add-on's state: features, background jobs, preferences, scene properties, plots; the UI
(`operators/`, `panels/`) reads it.
"""

__all__ = [
    "features",
    "jobs",
    "plot",
    "preferences",
    "properties",
    "state",
    "witness",
]  # the modules other packages may import
