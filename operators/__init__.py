"""Thin Blender operators over the libraries, one module per workflow of the panel."""

__all__ = [
    "agent_ops",
    "audit_ops",
    "counterfactual_ops",
    "rubric_ops",
    "task_ops",
]  # the modules other packages may import
