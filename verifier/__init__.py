"""Physical validity verdicts: rubric aggregation, S_val for a run (through a trusted audit child), the self-test."""

__all__ = ["rubric_eval", "selftest", "truth_counterfactuals", "validity"]  # the modules other packages may import
