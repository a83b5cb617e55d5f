"""Vision-language judges over the `llm` clients: the object checklist (S_obj) and the event items (S_evt)."""
