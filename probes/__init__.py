"""Live-scene measurement in Blender (bpy), one sub-package per concept, lowest first: `scene`
(reading a baked scene), `branches` (re-simulated copies of it), `audit` (the task-independent scan and its
findings), `defects` (the self-test's injections) and `rebake` (the worker child that runs branches). A sub-package
imports only those before it (`tests/core/test_probes_layout.py`); the rubric's checks are `verifier.checks`.
"""

__all__ = ["scene", "branches", "audit", "defects", "rebake"]  # the sub-packages, lowest first
