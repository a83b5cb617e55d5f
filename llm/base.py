"""Provider-neutral chat types shared by the judges and the agent loop.

Concrete clients (OpenAI-compatible chat completions, Anthropic messages) translate these to their
wire formats; nothing above this layer knows which provider it talks to.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field


class ImagePart(BaseModel):
    type: Literal["image"] = "image"
    png_base64: str  # PNG bytes, base64
    media_type: str = "image/png"


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any]


class ToolResult(BaseModel):
    tool_call_id: str
    content: list[TextPart | ImagePart]
    is_error: bool = False


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: list[TextPart | ImagePart] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)  # assistant only
    tool_results: list[ToolResult] = Field(default_factory=list)  # role == "tool"


class ToolSpec(BaseModel):
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class ChatResponse(BaseModel):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    stop_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    raw: dict[str, Any] | None = None


class Provider(Protocol):
    name: str
    model: str

    def chat(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
    ) -> ChatResponse: ...
