"""Registers the add-on's classes (preferences, properties, operators, panels).

Filled in by the Blender panel work (issue 8); kept importable without side effects.
"""


def register() -> None:
    pass


def unregister() -> None:
    pass
