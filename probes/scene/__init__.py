"""Reading a baked scene the way it renders: per-frame samples (`sampling`), evaluated world
geometry, kinematics, the shared definitions of rendered, simulated and collider (`physics`), the objects' roles,
what moves an object (`sources`), the camera's view (`screen`), the render-side configuration and the safety
switches every trusted child sets before it opens a submitted scene (`render_safety`).
"""

__all__ = [
    "geometry",
    "kinematics",
    "physics",
    "render_config",
    "render_safety",
    "roles",
    "sampling",
    "screen",
    "sources",
]  # the modules others may import
