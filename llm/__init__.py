"""LLM clients over plain HTTP (OpenAI-compatible chat completions, Anthropic messages).

They are shared by the judges and the agent, so they live below both. Others build a client with `factory` and
speak the message types of `base`; the wire formats stay private.
"""

__all__ = ["base", "errors", "factory"]  # the modules other packages may import
