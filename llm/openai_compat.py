"""OpenAI-compatible chat completions over plain HTTP (OpenAI, vLLM, Ollama, OpenRouter, LM Studio, ...).

Wire format: POST {base_url}/chat/completions with `messages` (text and `image_url` data-URL parts), `tools`
as `{"type": "function", "function": {...}}`, answers with `choices[0].message.content` / `.tool_calls`
(arguments as a JSON string) and `usage.prompt_tokens` / `completion_tokens`. Tool results go back as
role `tool` messages; the chat-completions format has no images in tool messages, so images returned by a
tool follow in one user message right after the tool messages.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from physcodegym.llm.base import ChatResponse, ImagePart, Message, TextPart, ToolCall, ToolSpec, Usage
from physcodegym.llm.transport import Prices, RetryPolicy, Transport, post_chat


def _parts(content: list[TextPart | ImagePart]) -> list[dict]:
    out: list[dict] = []
    for p in content:
        if isinstance(p, TextPart):
            out.append({"type": "text", "text": p.text})
        else:
            out.append({"type": "image_url", "image_url": {"url": f"data:{p.media_type};base64,{p.png_base64}"}})
    return out


def _text_only(content: list[TextPart | ImagePart]) -> str:
    return "\n".join(p.text for p in content if isinstance(p, TextPart))


def to_openai_messages(messages: list[Message]) -> list[dict]:
    """Provider-neutral messages -> chat-completions messages."""
    out: list[dict] = []
    for m in messages:
        if m.role == "system":
            out.append({"role": "system", "content": _text_only(m.content)})
        elif m.role == "user":
            out.append({"role": "user", "content": _parts(m.content)})
        elif m.role == "assistant":
            d: dict[str, Any] = {"role": "assistant", "content": _text_only(m.content) or None}
            if m.tool_calls:
                d["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in m.tool_calls
                ]
            out.append(d)
        else:  # tool
            images: list[dict] = []
            for r in m.tool_results:
                text = _text_only(r.content) or ("(error)" if r.is_error else "(no text output)")
                if r.is_error:
                    text = f"ERROR: {text}"
                out.append({"role": "tool", "tool_call_id": r.tool_call_id, "content": text})
                imgs = [p for p in r.content if isinstance(p, ImagePart)]
                if imgs:
                    images.append({"type": "text", "text": f"Images returned by tool call {r.tool_call_id}:"})
                    images.extend(_parts(imgs))
            if images:
                out.append({"role": "user", "content": images})
    return out


def to_openai_tools(tools: list[ToolSpec]) -> list[dict]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def parse_openai_response(doc: dict) -> ChatResponse:
    """Chat-completions body -> ChatResponse; a shape error raises KeyError/TypeError/IndexError."""
    choice = doc["choices"][0]
    msg = choice["message"]
    calls = []
    for c in msg.get("tool_calls") or []:
        raw = c["function"].get("arguments") or "{}"
        try:
            args = json.loads(raw) if isinstance(raw, str) else dict(raw)
            if not isinstance(args, dict):
                args = {"__invalid_arguments__": raw}
        except ValueError:
            args = {"__invalid_arguments__": raw}  # the agent loop reports this back to the model
        calls.append(ToolCall(id=c["id"], name=c["function"]["name"], arguments=args))
    text = msg.get("content") or ""
    stop = choice.get("finish_reason")
    if msg.get("refusal"):
        text, stop = msg["refusal"], "refusal"
    u = doc.get("usage") or {}
    usage = Usage(input_tokens=int(u.get("prompt_tokens") or 0), output_tokens=int(u.get("completion_tokens") or 0))
    return ChatResponse(text=text, tool_calls=calls, stop_reason=stop, usage=usage, raw=doc)


class OpenAIChat:
    """Client for any OpenAI-compatible `/chat/completions` endpoint."""

    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        max_retries: int = 4,
        prices: Prices | dict | tuple | None = None,
        log_path: Path | str | None = None,
        *,
        api_key: str | None = None,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 30.0,
        max_retry_after_s: float = 120.0,
        max_tokens_field: str = "max_tokens",
        extra_headers: dict[str, str] | None = None,
        seed: int | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key if api_key is not None else (os.environ.get(api_key_env) if api_key_env else None)
        self.prices = Prices.coerce(prices)
        self.max_tokens_field = max_tokens_field  # newer OpenAI reasoning models want "max_completion_tokens"
        self.extra_headers = dict(extra_headers or {})
        self.transport = Transport(
            self.name,
            model,
            timeout_s=timeout_s,
            retry=RetryPolicy(
                max_retries=max_retries, base_s=backoff_base_s, max_s=backoff_max_s, max_retry_after_s=max_retry_after_s
            ),
            log_path=log_path,
            secrets=lambda: [self._api_key or ""],
            seed=seed,
        )

    @property
    def stats(self):  # noqa: ANN201 - CallStats
        return self.transport.stats

    def _headers(self) -> dict[str, str]:
        h = {"content-type": "application/json", **self.extra_headers}
        if self._api_key:
            h["authorization"] = f"Bearer {self._api_key}"
        return h

    def build_payload(
        self, messages: list[Message], tools: list[ToolSpec] | None, max_tokens: int, temperature: float | None
    ) -> dict:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages),
            self.max_tokens_field: max_tokens,
        }
        if temperature is not None:
            payload["temperature"] = temperature
        if tools:
            payload["tools"] = to_openai_tools(tools)
        return payload

    def chat(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
    ) -> ChatResponse:
        payload = self.build_payload(messages, tools, max_tokens, temperature)
        return post_chat(
            self.transport,
            f"{self.base_url}/chat/completions",
            self._headers(),
            payload,
            parse_openai_response,
            "a chat completion",
            self.name,
            self.prices,
        )

    def list_models_request(self) -> tuple[str, dict[str, str]]:
        """GET endpoint and headers `physcodegym doctor` uses to test reachability without spending tokens."""
        return f"{self.base_url}/models", self._headers()
