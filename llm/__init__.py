"""LLM clients over plain HTTP (OpenAI-compatible chat completions, Anthropic messages), shared by the judges and the agent."""
