"""Physical validity verdicts: rubric aggregation, S_val for a run (through a trusted audit child), the self-test."""
