"""A loopback LLM server on 127.0.0.1 that speaks both wire formats, for tests of anything that calls a model.

Real HTTP (stdlib `http.server` in a thread), so clients are exercised end to end: headers, JSON bodies,
timeouts, dropped connections. It validates every request it receives against the wire format (message
shapes and role order, tool declarations, tool-call/tool-result pairing, base64 images that must decode to
the declared format); an invalid request is answered with 400 and recorded, so a test can assert
`llm.validation_errors == []`. Answers are scripted, including faults:

    from physcodegym.testing.loopback import LoopbackLLM, Reply

    with LoopbackLLM(api_key="sk-test") as llm:
        llm.script([Reply.rate_limited(retry_after=0.05), Reply.ok('{"verdict": "pass"}')])
        client = OpenAIChat("m", base_url=llm.openai_base_url, api_key="sk-test")
        ...
        assert len(llm.requests) == 2

Endpoints: POST /v1/chat/completions (OpenAI-compatible; base URL `llm.openai_base_url`), POST /v1/messages
(Anthropic; base URL `llm.anthropic_base_url`), GET /v1/models (both). Replies are wire-neutral: the server
renders them in the format of the endpoint that was hit. A reply can also be a callable taking the
`RecordedRequest` and returning a Reply (or a string), and `respond_with(fn)` sets a fallback for when the
scripts are empty. pytest: `loopback = pytest.fixture(loopback_fixture)` in a conftest.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENAI, ANTHROPIC, ANY = "openai", "anthropic", "*"
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_MAGIC = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff", "image/gif": b"GIF8", "image/webp": b"RIFF"}
_DATA_URL = re.compile(r"^data:(image/[a-z]+);base64,(.*)$", re.S)


@dataclass
class Reply:
    """One scripted answer. Use the constructors; fields are public for unusual cases."""

    text: str = ""
    tool_calls: list[dict] = field(default_factory=list)  # {"name", "arguments": dict, "id"?: str}
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | dict | None = None  # raw body override (status/headers still apply)
    delay_s: float = 0.0  # wait before answering (client timeouts)
    truncate: str | None = None  # "body": half the JSON, consistent length; "stream": connection cut mid-body
    refusal: bool = False
    error_message: str = ""
    input_tokens: int | None = None  # None: a deterministic estimate from the request
    output_tokens: int | None = None
    stop_reason: str | None = None

    @classmethod
    def ok(cls, text: str, **kw: Any) -> Reply:
        return cls(text=text, **kw)

    @classmethod
    def tool(cls, name: str, arguments: dict, text: str = "", call_id: str | None = None, **kw: Any) -> Reply:
        call = {"name": name, "arguments": arguments}
        if call_id:
            call["id"] = call_id
        return cls(text=text, tool_calls=[call], **kw)

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = 0.05, message: str = "rate limit exceeded") -> Reply:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        return cls(status=429, headers=headers, error_message=message)

    @classmethod
    def server_error(cls, status: int = 500, message: str = "internal server error") -> Reply:
        return cls(status=status, error_message=message)

    @classmethod
    def http_error(cls, status: int, message: str) -> Reply:
        return cls(status=status, error_message=message)

    @classmethod
    def truncated(cls, text: str = '{"verdict": "pass"}', mid_stream: bool = False) -> Reply:
        return cls(text=text, truncate="stream" if mid_stream else "body")

    @classmethod
    def timeout(cls, delay_s: float = 2.0, text: str = "late") -> Reply:
        return cls(text=text, delay_s=delay_s)

    @classmethod
    def refuse(cls, message: str = "I can't help with that.") -> Reply:
        return cls(text=message, refusal=True)

    @classmethod
    def raw(cls, status: int, body: str | dict, headers: dict[str, str] | None = None) -> Reply:
        return cls(status=status, body=body, headers=dict(headers or {}))


ReplyLike = Reply | str | Callable[["RecordedRequest"], "Reply | str"]


@dataclass
class RecordedRequest:
    endpoint: str  # "openai" | "anthropic" | "models" | "unknown"
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    errors: list[str]
    t: float
    reply: str = ""  # what was sent back: "text", "tool", "429", "truncated:body", "invalid", ...

    @property
    def images(self) -> int:
        """Number of images in the request (either wire format)."""

        def count(x: Any) -> int:
            if isinstance(x, dict):
                return int(x.get("type") in ("image_url", "image")) + sum(count(v) for v in x.values())
            if isinstance(x, list):
                return sum(count(v) for v in x)
            return 0

        return count(self.body)

    def text(self) -> str:
        """All text of the request's messages (and system prompt), joined: for asserting what a model was shown."""
        out: list[str] = []

        def walk(x: Any) -> None:
            if isinstance(x, dict):
                if x.get("type") == "text" and isinstance(x.get("text"), str):
                    out.append(x["text"])
                for k, v in x.items():
                    if k in ("content", "system", "messages") and isinstance(v, str):
                        out.append(v)
                    elif k not in ("image_url", "source"):
                        walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        walk(self.body)
        return "\n".join(out)


# ---------------------------------------------------------------- validation


def _items(value: Any, where: str, need: str, errs: list[str]) -> list[tuple[str, Any]]:
    """(location, item) of each item of a non-empty list at `where`; for anything else the error `need` and
    no items."""
    if not isinstance(value, list) or not value:
        errs.append(f"{where}: {need}")
        return []
    return [(f"{where}[{j}]", v) for j, v in enumerate(value)]


def _check_image_bytes(data: str, media_type: str, where: str, errs: list[str]) -> None:
    if media_type not in _MAGIC:
        errs.append(f"{where}: unsupported media type {media_type!r}")
        return
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        errs.append(f"{where}: image data is not valid base64")
        return
    if not raw.startswith(_MAGIC[media_type]):
        errs.append(f"{where}: image bytes are not {media_type}")
    elif media_type == "image/png" and (len(raw) < 33 or raw[12:16] != b"IHDR"):
        errs.append(f"{where}: PNG has no IHDR chunk")


def _check_schema(schema: Any, where: str, errs: list[str]) -> None:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        errs.append(f"{where}: must be a JSON schema with type 'object'")
    elif "properties" in schema and not isinstance(schema["properties"], dict):
        errs.append(f"{where}.properties: must be an object")


def _check_tools(tools: Any, wire: str, errs: list[str]) -> set[str]:
    names: set[str] = set()
    if tools is None:
        return names
    if not isinstance(tools, list) or not tools:
        errs.append("tools: must be a non-empty list")
        return names
    for i, t in enumerate(tools):
        w = f"tools[{i}]"
        if not isinstance(t, dict):
            errs.append(f"{w}: must be an object")
            continue
        if wire == OPENAI:
            if t.get("type") != "function" or not isinstance(t.get("function"), dict):
                errs.append(f"{w}: must be {{'type': 'function', 'function': {{...}}}}")
                continue
            fn, schema_key, w = t["function"], "parameters", f"{w}.function"
        else:
            fn, schema_key = t, "input_schema"
        name = fn.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            errs.append(f"{w}.name: {name!r} is not a valid tool name")
        elif name in names:
            errs.append(f"{w}.name: duplicate tool {name!r}")
        else:
            names.add(name)
        if "description" in fn and not isinstance(fn["description"], str):
            errs.append(f"{w}.description: must be a string")
        _check_schema(fn.get(schema_key), f"{w}.{schema_key}", errs)
    return names


def validate_openai(body: Any, headers: dict[str, str], api_key: str | None) -> list[str]:
    errs: list[str] = []
    if api_key is not None and headers.get("authorization") != f"Bearer {api_key}":
        errs.append("header authorization: missing or not 'Bearer <key>'")
    if not isinstance(body, dict):
        return errs + ["body: must be a JSON object"]
    if not isinstance(body.get("model"), str) or not body["model"]:
        errs.append("model: required non-empty string")
    for k in ("max_tokens", "max_completion_tokens"):
        if k in body and (not isinstance(body[k], int) or isinstance(body[k], bool) or body[k] <= 0):
            errs.append(f"{k}: must be a positive integer")
    if "temperature" in body and (
        not isinstance(body["temperature"], int | float) or not 0 <= body["temperature"] <= 2
    ):
        errs.append("temperature: must be a number in [0, 2]")
    _check_tools(body.get("tools"), OPENAI, errs)
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return errs + ["messages: required non-empty list"]
    pending: set[str] = set()
    for i, m in enumerate(msgs):
        w = f"messages[{i}]"
        if not isinstance(m, dict):
            errs.append(f"{w}: must be an object")
            continue
        role = m.get("role")
        if role != "tool" and pending:
            errs.append(f"{w}: tool calls {sorted(pending)} have no tool message before this {role} message")
            pending = set()
        content = m.get("content")
        if role in ("system", "developer"):
            if not isinstance(content, str) and not (
                isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content)
            ):
                errs.append(f"{w}.content: system content must be text")
        elif role == "user":
            if isinstance(content, str):
                continue
            for pw, p in _items(content, f"{w}.content", "must be a string or a non-empty list of parts", errs):
                typ = p.get("type") if isinstance(p, dict) else None
                if typ == "text":
                    if not isinstance(p.get("text"), str):
                        errs.append(f"{pw}.text: must be a string")
                elif typ == "image_url":
                    url = (p.get("image_url") or {}).get("url") if isinstance(p.get("image_url"), dict) else None
                    if not isinstance(url, str):
                        errs.append(f"{pw}.image_url.url: required string")
                    elif url.startswith(("http://", "https://")):
                        pass
                    else:
                        mt = _DATA_URL.match(url)
                        if not mt:
                            errs.append(f"{pw}.image_url.url: not a data:image/...;base64 URL")
                        else:
                            _check_image_bytes(mt.group(2), mt.group(1), pw, errs)
                else:
                    errs.append(f"{pw}.type: unknown part type {typ!r}")
        elif role == "assistant":
            calls = m.get("tool_calls")
            if content is not None and not isinstance(content, str | list):
                errs.append(f"{w}.content: must be a string, a list or null")
            if calls is not None:
                for cw, c in _items(calls, f"{w}.tool_calls", "must be a non-empty list", errs):
                    fn = c.get("function") if isinstance(c, dict) else None
                    if (
                        not isinstance(c, dict)
                        or not isinstance(c.get("id"), str)
                        or c.get("type") != "function"
                        or not isinstance(fn, dict)
                    ):
                        errs.append(f"{cw}: needs id, type 'function' and function")
                        continue
                    if not isinstance(fn.get("name"), str):
                        errs.append(f"{cw}.function.name: required string")
                    try:
                        if not isinstance(json.loads(fn.get("arguments")), dict):
                            raise ValueError
                    except (TypeError, ValueError):
                        errs.append(f"{cw}.function.arguments: must be a JSON object encoded as a string")
                    pending.add(c["id"])
            elif content is None:
                errs.append(f"{w}: assistant message needs content or tool_calls")
        elif role == "tool":
            tid = m.get("tool_call_id")
            if tid not in pending:
                errs.append(f"{w}.tool_call_id: {tid!r} answers no pending tool call")
            pending.discard(tid)
            if not isinstance(content, str) and not (
                isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content)
            ):
                errs.append(f"{w}.content: tool content must be text")
        else:
            errs.append(f"{w}.role: unknown role {role!r}")
    if pending:
        errs.append(f"messages: tool calls {sorted(pending)} were never answered")
    return errs


def _check_anthropic_blocks(content: Any, role: str, w: str, errs: list[str], tool_ids: set[str]) -> tuple[set, set]:
    """Returns (tool_use ids declared, tool_result ids answered)."""
    uses: set[str] = set()
    results: set[str] = set()
    if isinstance(content, str):
        if not content:
            errs.append(f"{w}.content: empty string")
        return uses, results
    for bw, b in _items(content, f"{w}.content", "must be a string or a non-empty list of blocks", errs):
        typ = b.get("type") if isinstance(b, dict) else None
        if typ == "text":
            if not isinstance(b.get("text"), str) or not b["text"]:
                errs.append(f"{bw}.text: text blocks must be non-empty strings")
        elif typ == "image" and role == "user":
            src = b.get("source")
            if not isinstance(src, dict) or src.get("type") != "base64":
                errs.append(f"{bw}.source: must be {{'type': 'base64', 'media_type', 'data'}}")
            else:
                _check_image_bytes(src.get("data") or "", src.get("media_type") or "", bw, errs)
        elif typ == "tool_use" and role == "assistant":
            if (
                not isinstance(b.get("id"), str)
                or not isinstance(b.get("name"), str)
                or not isinstance(b.get("input"), dict)
            ):
                errs.append(f"{bw}: tool_use needs id, name and an input object")
            else:
                uses.add(b["id"])
        elif typ == "tool_result" and role == "user":
            tid = b.get("tool_use_id")
            if tid not in tool_ids:
                errs.append(f"{bw}.tool_use_id: {tid!r} answers no tool_use of the previous assistant turn")
            results.add(tid)
            inner = b.get("content")
            if inner:  # text and image blocks only (a nested tool_result answers nothing: empty id set)
                _check_anthropic_blocks(inner, "user", bw, errs, set())
        else:
            errs.append(f"{bw}.type: {typ!r} is not allowed in a {role} turn")
    return uses, results


def validate_anthropic(body: Any, headers: dict[str, str], api_key: str | None) -> list[str]:
    errs: list[str] = []
    if api_key is not None and headers.get("x-api-key") != api_key:
        errs.append("header x-api-key: missing or wrong")
    if not headers.get("anthropic-version"):
        errs.append("header anthropic-version: required")
    if not isinstance(body, dict):
        return errs + ["body: must be a JSON object"]
    if not isinstance(body.get("model"), str) or not body["model"]:
        errs.append("model: required non-empty string")
    mt = body.get("max_tokens")
    if not isinstance(mt, int) or isinstance(mt, bool) or mt <= 0:
        errs.append("max_tokens: required positive integer")
    if "temperature" in body and (
        not isinstance(body["temperature"], int | float) or not 0 <= body["temperature"] <= 1
    ):
        errs.append("temperature: must be a number in [0, 1]")
    sysp = body.get("system")
    if (
        sysp is not None
        and not isinstance(sysp, str)
        and not (isinstance(sysp, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in sysp))
    ):
        errs.append("system: must be a string or a list of text blocks")
    _check_tools(body.get("tools"), ANTHROPIC, errs)
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return errs + ["messages: required non-empty list"]
    prev_role = None
    open_uses: set[str] = set()
    for i, m in enumerate(msgs):
        w = f"messages[{i}]"
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("user", "assistant"):
            errs.append(f"{w}.role: must be 'user' or 'assistant' (system goes in the top-level field), got {role!r}")
            continue
        if prev_role is None and role != "user":
            errs.append(f"{w}.role: the first message must be a user message")
        if role == prev_role:
            errs.append(f"{w}.role: roles must alternate ({role!r} twice)")
        uses, results = _check_anthropic_blocks(m.get("content"), role, w, errs, open_uses)
        if role == "user":
            missing = open_uses - results
            if missing:
                errs.append(f"{w}: tool_use ids {sorted(missing)} need tool_result blocks in this turn")
            open_uses = set()
        else:
            if open_uses:
                errs.append(f"{w}: tool_use ids {sorted(open_uses)} were never answered")
            open_uses = uses
        prev_role = role
    return errs


# ---------------------------------------------------------------- rendering


def _estimate_tokens(body: Any) -> int:
    txt = RecordedRequest("", "", "", {}, body, [], 0.0).text()
    n_img = RecordedRequest("", "", "", {}, body, [], 0.0).images
    return 10 + len(txt) // 4 + 100 * n_img


def _render(wire: str, reply: Reply, body: dict, n: int) -> dict:
    model = body.get("model", "loopback") if isinstance(body, dict) else "loopback"
    inp = reply.input_tokens if reply.input_tokens is not None else _estimate_tokens(body)
    out = (
        reply.output_tokens
        if reply.output_tokens is not None
        else max(1, len(reply.text) // 4 + 10 * len(reply.tool_calls))
    )
    calls = [dict(c, id=c.get("id") or f"call_loop_{n}_{k}") for k, c in enumerate(reply.tool_calls)]
    if wire == OPENAI:
        msg: dict[str, Any] = {"role": "assistant", "content": None if reply.refusal else (reply.text or None)}
        if reply.refusal:
            msg["refusal"] = reply.text
        if calls:
            msg["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for c in calls
            ]
        stop = reply.stop_reason or ("tool_calls" if calls else "stop")
        return {
            "id": f"chatcmpl-loop-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": msg, "finish_reason": stop}],
            "usage": {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out},
        }
    blocks: list[dict] = [{"type": "text", "text": reply.text}] if reply.text else []
    blocks += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]} for c in calls]
    stop = reply.stop_reason or ("refusal" if reply.refusal else "tool_use" if calls else "end_turn")
    return {
        "id": f"msg_loop_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": inp, "output_tokens": out},
    }


def _error_body(wire: str, status: int, message: str) -> dict:
    etype = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    if wire == ANTHROPIC:
        return {"type": "error", "error": {"type": etype, "message": message}}
    return {"error": {"message": message, "type": etype, "code": None}}


# ---------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None, cut: bool = False) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if cut:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        llm = self.server.llm
        headers = {k.lower(): v for k, v in self.headers.items()}
        rec = RecordedRequest("models", "GET", self.path, headers, None, [], time.monotonic())
        if self.path.rstrip("/") not in ("/v1/models", "/models"):
            rec.reply = "404"
            llm._record(rec)
            self._send(404, json.dumps(_error_body(OPENAI, 404, f"no route {self.path}")).encode())
            return
        key_ok = (
            llm.api_key is None
            or headers.get("x-api-key") == llm.api_key
            or headers.get("authorization") == f"Bearer {llm.api_key}"
        )
        rec.reply = "models" if key_ok else "401"
        llm._record(rec)
        if not key_ok:
            self._send(401, json.dumps(_error_body(OPENAI, 401, "invalid api key")).encode())
            return
        doc = {"object": "list", "data": [{"id": m, "object": "model", "type": "model"} for m in llm.models]}
        self._send(200, json.dumps(doc).encode())

    def do_POST(self) -> None:  # noqa: N802
        llm = self.server.llm
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?")[0].rstrip("/")
        wire = (
            OPENAI
            if path in ("/v1/chat/completions", "/chat/completions")
            else ANTHROPIC
            if path == "/v1/messages"
            else "unknown"
        )
        length = int(headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw.decode("utf-8"))
            parse_err: list[str] = []
        except (UnicodeDecodeError, ValueError) as e:
            body, parse_err = None, [f"body: not valid JSON ({e})"]
        rec = RecordedRequest(wire, "POST", self.path, headers, body, [], time.monotonic())
        if wire == "unknown":
            rec.reply = "404"
            llm._record(rec)
            self._send(404, json.dumps(_error_body(OPENAI, 404, f"no route {self.path}")).encode())
            return
        if parse_err:
            rec.errors = parse_err
        else:
            rec.errors = (validate_openai if wire == OPENAI else validate_anthropic)(body, headers, llm.api_key)
        if rec.errors:
            rec.reply = "invalid"
            llm._record(rec)
            auth = any(e.startswith("header authorization") or e.startswith("header x-api-key") for e in rec.errors)
            status = 401 if auth else 400
            self._send(status, json.dumps(_error_body(wire, status, "; ".join(rec.errors))).encode())
            return
        llm._record(rec)
        reply = llm._next_reply(wire, rec)
        n = llm._counter()
        if reply.delay_s > 0:
            rec.reply = f"delayed:{reply.delay_s:g}"
            if llm._stop.wait(reply.delay_s):
                return
        if reply.body is not None:
            rec.reply = rec.reply or f"raw:{reply.status}"
            data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
            self._send(reply.status, data.encode(), reply.headers)
            return
        if reply.status != 200:
            rec.reply = rec.reply or str(reply.status)
            self._send(
                reply.status, json.dumps(_error_body(wire, reply.status, reply.error_message)).encode(), reply.headers
            )
            return
        data = json.dumps(_render(wire, reply, body, n)).encode()
        if reply.truncate == "body":
            rec.reply = "truncated:body"
            self._send(200, data[: len(data) // 2], reply.headers)
        elif reply.truncate == "stream":
            rec.reply = "truncated:stream"
            self._send(200, data, reply.headers, cut=True)
        else:
            rec.reply = rec.reply or ("refusal" if reply.refusal else "tool" if reply.tool_calls else "text")
            self._send(200, data, reply.headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    llm: LoopbackLLM


class LoopbackLLM:
    """Context manager: a scripted LLM server on 127.0.0.1 (ephemeral port) for the duration of the block."""

    def __init__(
        self, api_key: str | None = None, models: tuple[str, ...] = ("loopback-judge", "loopback-agent")
    ) -> None:
        self.api_key = api_key  # None: accept any (or no) key
        self.models = list(models)
        self._queues: dict[str, deque[ReplyLike]] = {OPENAI: deque(), ANTHROPIC: deque(), ANY: deque()}
        self._responder: Callable[[RecordedRequest], Reply | str] | None = None
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._n = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> LoopbackLLM:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.llm = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="loopback-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # addresses
    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    # scripting
    def script(self, replies: list[ReplyLike], endpoint: str = ANY) -> LoopbackLLM:
        """Queue replies (in order) for one endpoint ("openai", "anthropic") or for whichever is hit ("*")."""
        if endpoint not in self._queues:
            raise ValueError(f"endpoint must be one of {sorted(self._queues)}")
        with self._lock:
            self._queues[endpoint].extend(replies)
        return self

    def respond_with(self, fn: Callable[[RecordedRequest], Reply | str] | None) -> LoopbackLLM:
        """Fallback responder used when the scripts for an endpoint are empty."""
        self._responder = fn
        return self

    def pending(self) -> int:
        with self._lock:
            return sum(len(q) for q in self._queues.values())

    def clear(self) -> None:
        with self._lock:
            for q in self._queues.values():
                q.clear()
            self._requests.clear()

    # inspection
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Requests to the two chat endpoints (model listings and unknown routes left out)."""
        return [r for r in self.requests if r.endpoint in (OPENAI, ANTHROPIC)]

    @property
    def validation_errors(self) -> list[str]:
        return [f"request {i} ({r.endpoint}): {e}" for i, r in enumerate(self.requests) for e in r.errors]

    # internals
    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(rec)

    def _counter(self) -> int:
        with self._lock:
            self._n += 1
            return self._n

    def _next_reply(self, wire: str, rec: RecordedRequest) -> Reply:
        with self._lock:
            q = self._queues[wire] if self._queues[wire] else self._queues[ANY]
            item: ReplyLike | None = q.popleft() if q else self._responder
        if item is None:
            return Reply.server_error(500, "loopback: no scripted reply left")
        if callable(item) and not isinstance(item, Reply):
            item = item(rec)
        return Reply(text=item) if isinstance(item, str) else item


def loopback_fixture() -> Iterator[LoopbackLLM]:
    """Generator for a pytest fixture: `loopback = pytest.fixture(loopback_fixture)` in a conftest."""
    with LoopbackLLM() as llm:
        yield llm


_JUDGE_ITEM = re.compile(r"(Checklist|Event) item id: (\S+)")


def judge_responder(verdict: str = "pass") -> Callable[[RecordedRequest], Reply]:
    """A responder that answers the S_obj / S_evt judges' questions with a valid verdict (demos, smoke tests).

    It reads the item id from the prompt and returns the JSON the judge's schema asks for, so a scripted
    `physcodegym score` run exercises the whole judge path without a real model.
    """

    def respond(req: RecordedRequest) -> Reply:
        text = req.text()
        m = _JUDGE_ITEM.search(text)
        if not m:
            return Reply.ok("loopback: not a judge prompt")
        ok = verdict == "pass"
        if m.group(1) == "Checklist":
            layout = None if "Initial layout: (none given" in text else ok
            doc = {
                "item_id": m.group(2),
                "checks": {"category": True, "count": ok, "attributes": True, "layout": layout},
                "observed_count": 1,
                "verdict": verdict,
                "reason": "loopback judge",
            }
        else:
            doc = {
                "item_id": m.group(2),
                "verdict": verdict,
                "evidence": [{"start_s": 0.0, "end_s": 1.0}],
                "reason": "loopback judge",
            }
        return Reply.ok(json.dumps(doc))

    return respond


def main(argv: list[str] | None = None) -> int:
    """`python -m physcodegym.testing.loopback [--port N] [--judge pass|fail]`: serve until interrupted."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m physcodegym.testing.loopback", description=main.__doc__)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--api-key", default=None, help="require this key (default: accept any)")
    ap.add_argument("--judge", choices=("pass", "fail"), default="pass", help="verdict of the built-in judge responder")
    a = ap.parse_args(argv)
    import signal

    def _terminate(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)  # background jobs ignore SIGINT; TERM must still print the summary
    llm = LoopbackLLM(api_key=a.api_key)
    llm.respond_with(judge_responder(a.judge))
    llm._server = _Server(("127.0.0.1", a.port), _Handler)
    llm._server.llm = llm
    print(
        json.dumps(
            {"url": llm.url, "openai_base_url": llm.openai_base_url, "anthropic_base_url": llm.anthropic_base_url}
        ),
        flush=True,
    )
    try:
        llm._server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        llm._stop.set()
        llm._server.server_close()
        print(json.dumps({"requests": len(llm.requests), "validation_errors": llm.validation_errors}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
