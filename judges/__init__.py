"""Vision-language judges over the `llm` clients: the object checklist (S_obj) and the event items (S_evt)."""

__all__ = ["event_judge", "object_judge"]  # the modules other packages may import
