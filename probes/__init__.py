"""Live-scene measurement in Blender (bpy): sampling a baked scene, the physics audit and its findings, the rubric's
checks, counterfactual re-simulation, render safety, and the self-test's defect injections.
"""

__all__ = [
    "audit",
    "audit_base",
    "checks",
    "counterfactual",
    "defects",
    "findings",
    "params",
    "plots",
    "render_safety",
    "resimulation",
    "roles",
    "sampling",
]  # the modules other packages may import
