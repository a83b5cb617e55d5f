"""Physical validity verdicts: the audit of a submitted scene (`audit_run`, its one walled child `audit_worker`),
rubric aggregation, S_val for a run, the self-test."""

# the modules other packages may import
__all__ = ["audit_run", "rubric_eval", "selftest", "truth_counterfactuals", "validity"]
