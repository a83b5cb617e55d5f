"""OpenAI-compatible chat completions over plain HTTP (OpenAI, vLLM, Ollama, OpenRouter, LM Studio, ...).

Wire format: POST {base_url}/chat/completions with `messages` (text and `image_url` data-URL parts), `tools`
as `{"type": "function", "function": {...}}`, answers with `choices[0].message.content` / `.tool_calls`
(arguments as a JSON string) and `usage.prompt_tokens` / `completion_tokens`. Tool results go back as
role `tool` messages; the chat-completions format has no images in tool messages, so images returned by a
tool follow in one user message right after the tool messages.
"""

from __future__ import annotations

import json
from typing import Any

from physcodegym.llm.base import ChatResponse, ImagePart, Message, TextPart, ToolCall, ToolSpec, Usage
from physcodegym.llm.transport import HttpChatClient


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


class OpenAIChat(HttpChatClient):
    """Client for any OpenAI-compatible `/chat/completions` endpoint."""

    name = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_key_env = "OPENAI_API_KEY"
    chat_path, models_path = "/chat/completions", "/models"
    answer = "a chat completion"
    parse = staticmethod(parse_openai_response)

    def __init__(self, model: str, *args: Any, max_tokens_field: str = "max_tokens", **kw: Any) -> None:
        """`HttpChatClient`'s arguments; `max_tokens_field`: newer OpenAI reasoning models want
        "max_completion_tokens"."""
        super().__init__(model, *args, **kw)
        self.max_tokens_field = max_tokens_field

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
