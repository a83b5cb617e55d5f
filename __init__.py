"""PhysCodeGym: Blender extension entry point.

Blender imports this file to register the add-on. It only registers: the headless toolkit imports the
sub-packages directly, and nothing here may import bpy at module level (so `import physcodegym` works
without Blender).
"""


def register() -> None:
    from .panels import registration

    registration.register()


def unregister() -> None:
    from .panels import registration

    registration.unregister()
