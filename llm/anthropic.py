"""Anthropic messages API over plain HTTP.

Wire format: POST {base_url}/v1/messages with headers `x-api-key` and `anthropic-version`; `system` is a
top-level string; `messages` alternate user/assistant with content blocks (`text`, `image` with a base64
`source`, `tool_use`, `tool_result`); tools are `{"name", "description", "input_schema"}`. Tool results are
`tool_result` blocks inside a user turn, and may carry images. Consecutive same-role turns are merged so the
alternation rule always holds.
"""

from __future__ import annotations

from typing import Any

from physcodegym.llm.base import ChatResponse, ImagePart, Message, TextPart, ToolCall, ToolSpec, Usage
from physcodegym.llm.transport import HttpChatClient

ANTHROPIC_VERSION = "2023-06-01"


def _blocks(content: list[TextPart | ImagePart]) -> list[dict]:
    out: list[dict] = []
    for p in content:
        if isinstance(p, TextPart):
            out.append({"type": "text", "text": p.text})
        else:
            out.append(
                {"type": "image", "source": {"type": "base64", "media_type": p.media_type, "data": p.png_base64}}
            )
    return out


def to_anthropic(messages: list[Message]) -> tuple[str | None, list[dict]]:
    """Provider-neutral messages -> (system text, alternating messages)."""
    system = "\n\n".join(p.text for m in messages if m.role == "system" for p in m.content if isinstance(p, TextPart))
    turns: list[dict] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "user":
            role, blocks = "user", _blocks(m.content)
        elif m.role == "assistant":
            role = "assistant"
            blocks = [b for b in _blocks(m.content) if b["type"] == "text" and b["text"]]
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
        else:
            role = "user"
            blocks = [
                {
                    "type": "tool_result",
                    "tool_use_id": r.tool_call_id,
                    "content": _blocks(r.content),
                    "is_error": r.is_error,
                }
                for r in m.tool_results
            ]
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return (system or None), turns


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def parse_anthropic_response(doc: dict) -> ChatResponse:
    texts, calls = [], []
    for b in doc["content"]:
        if b["type"] == "text":
            texts.append(b["text"])
        elif b["type"] == "tool_use":
            calls.append(ToolCall(id=b["id"], name=b["name"], arguments=dict(b.get("input") or {})))
    u = doc.get("usage") or {}
    inp = (
        int(u.get("input_tokens") or 0)
        + int(u.get("cache_read_input_tokens") or 0)
        + int(u.get("cache_creation_input_tokens") or 0)
    )
    usage = Usage(input_tokens=inp, output_tokens=int(u.get("output_tokens") or 0))
    return ChatResponse(text="".join(texts), tool_calls=calls, stop_reason=doc.get("stop_reason"), usage=usage, raw=doc)


class AnthropicMessages(HttpChatClient):
    """Client for the Anthropic messages API (or a compatible proxy at `base_url`)."""

    name = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_key_env = "ANTHROPIC_API_KEY"
    chat_path, models_path = "/v1/messages", "/v1/models"
    answer = "a messages answer"
    parse = staticmethod(parse_anthropic_response)

    def __init__(self, model: str, *args: Any, anthropic_version: str = ANTHROPIC_VERSION, **kw: Any) -> None:
        """`HttpChatClient`'s arguments and the `anthropic-version` header."""
        super().__init__(model, *args, **kw)
        self.anthropic_version = anthropic_version

    def _headers(self) -> dict[str, str]:
        h = {"content-type": "application/json", "anthropic-version": self.anthropic_version, **self.extra_headers}
        if self._api_key:
            h["x-api-key"] = self._api_key
        return h

    def build_payload(
        self, messages: list[Message], tools: list[ToolSpec] | None, max_tokens: int, temperature: float | None
    ) -> dict:
        system, turns = to_anthropic(messages)
        payload: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": turns}
        if system:
            payload["system"] = system
        if temperature is not None:
            payload["temperature"] = temperature
        if tools:
            payload["tools"] = to_anthropic_tools(tools)
        return payload
