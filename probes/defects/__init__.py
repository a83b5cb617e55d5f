"""The self-test's defect injections: the ways a scene can cheat, applied to a shipped truth in a
branch (`defects.inject_defect`) so the self-test can show the audit and the rubric catch each one.
"""

__all__ = ["defects"]  # the modules others may import
