"""LLM clients over plain HTTP (OpenAI-compatible chat completions, Anthropic messages).

They are shared by the judges and the agent, so they live below both.
"""
