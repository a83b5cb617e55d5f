"""The audit: the task-independent scan of a native scene (`audit.audit_scene`, `audit.audit_path`),
its detectors (`detect_*`, `static_defects`, `params`, `visibility`, `effects`, `render_match`), its thresholds
(`audit_base`), its findings (`findings`) and plots.
"""

__all__ = ["audit", "audit_base", "findings", "params", "plots"]  # the modules others may import
