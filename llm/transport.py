"""JSON-over-HTTP transport shared by the provider clients: retries, backoff, error mapping, accounting, logging.

Why one place: both wire formats fail the same ways (429 with Retry-After, 5xx, dropped connections, timeouts,
garbled bodies), and a single retry loop keeps the policy identical and testable against the loopback server.
The JSONL log has one line per HTTP attempt; secrets are redacted from headers and scrubbed from every string
(in case a server echoes a key back), and base64 images are replaced by their size and sha256 so a log of a
judge run stays readable.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from physcodegym.llm.base import ChatResponse, Message, ToolSpec, Usage
from physcodegym.llm.errors import (
    AuthError,
    BadRequest,
    ConnectionFailed,
    ContextTooLong,
    MalformedImage,
    MalformedResponse,
    ModelNotFound,
    ProviderError,
    RateLimited,
    ServerError,
    Timeout,
)

SECRET_HEADERS = {"authorization", "x-api-key", "api-key", "openai-api-key", "cookie"}
_B64_RE = re.compile(r"^(data:[\w/+.-]+;base64,)?[A-Za-z0-9+/=]{512,}$")
_CONTEXT_HINTS = (
    "context length",
    "context_length",
    "context window",
    "too many tokens",
    "prompt is too long",
    "maximum context",
    "too long",
    "exceeds the maximum",
    "reduce the length",
)
_IMAGE_HINTS = ("image", "invalid_image", "media_type")


@dataclass
class Prices:
    """USD per million tokens; zero means "not priced" (local servers), never a guess."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0

    @classmethod
    def coerce(cls, v: Prices | dict | tuple | None) -> Prices:
        if v is None:
            return cls()
        if isinstance(v, Prices):
            return v
        if isinstance(v, tuple):
            return cls(float(v[0]), float(v[1]))
        return cls(float(v.get("input_per_mtok", 0.0)), float(v.get("output_per_mtok", 0.0)))

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return input_tokens * self.input_per_mtok / 1e6 + output_tokens * self.output_per_mtok / 1e6


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter: attempt k waits uniform(0.5, 1) * min(max_s, base_s * 2**k).

    A Retry-After header wins over the computed delay; one longer than `max_retry_after_s` is not waited
    out (the caller gets RateLimited with the server's value instead of a silent hour-long sleep).
    """

    max_retries: int = 4
    base_s: float = 1.0
    max_s: float = 30.0
    max_retry_after_s: float = 120.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        return min(self.max_s, self.base_s * (2**attempt)) * (0.5 + 0.5 * rng.random())


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds, possibly fractional, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _redact(obj: Any, secrets: list[str]) -> Any:
    if isinstance(obj, dict):
        return {k: ("***" if k.lower() in SECRET_HEADERS else _redact(v, secrets)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_redact(v, secrets) for v in obj]
    if isinstance(obj, str):
        if len(obj) >= 512 and _B64_RE.match(obj):
            digest = hashlib.sha256(obj.encode()).hexdigest()[:16]
            return f"<base64 {len(obj)} chars sha256:{digest}>"
        for s in secrets:
            if s:
                obj = obj.replace(s, "***")
        return obj
    return obj


class JsonlLog:
    """Append-only JSONL, one line per attempt, thread-safe; every line is redacted before it is written."""

    def __init__(self, path: Path | str | None, secrets: Callable[[], list[str]]) -> None:
        self.path = Path(path) if path else None
        self._secrets = secrets
        self._lock = threading.Lock()

    def write(self, record: dict) -> None:
        if self.path is None:
            return
        line = json.dumps(_redact(record, [s for s in self._secrets() if s and len(s) >= 4]), default=str)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line + "\n")


@dataclass
class CallStats:
    """Running totals of one client (what a run's budget and report read)."""

    calls: int = 0
    attempts: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def classify_http_error(provider: str, status: int, body: str, retry_after: float | None) -> ProviderError:
    """Map an HTTP failure to the error class a caller can act on."""
    low = body.lower()
    kw = {"provider": provider, "status": status, "body": body}
    msg = _error_message(body) or f"HTTP {status}"
    if status == 429:
        return RateLimited(msg, retry_after_s=retry_after, **kw)
    if status >= 500:
        return ServerError(msg, **kw)
    if status in (401, 403):
        return AuthError(f"{msg} (check the API key)", **kw)
    if status == 404:
        return ModelNotFound(f"{msg} (model or endpoint not found at this base URL)", **kw)
    if status == 413 or any(h in low for h in _CONTEXT_HINTS):
        return ContextTooLong(msg, **kw)
    if any(h in low for h in _IMAGE_HINTS):
        return MalformedImage(msg, **kw)
    return BadRequest(msg, **kw)


def _error_message(body: str) -> str:
    try:
        doc = json.loads(body)
    except ValueError:
        return body.strip()[:300]
    err = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err.get("type") or err)[:300]
    if isinstance(err, str):
        return err[:300]
    return str(doc)[:300]


class Transport:
    """POST JSON with the retry policy; returns the parsed 2xx body or raises a ProviderError."""

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        log_path: Path | str | None = None,
        secrets: Callable[[], list[str]] = lambda: [],
        seed: int | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.log = JsonlLog(log_path, secrets)
        self.stats = CallStats()
        self._rng = random.Random(seed)
        self._session = requests.Session()
        self._lock = threading.Lock()

    def _scrub(self, text: str) -> str:
        """Remove our own secrets from server text (some servers echo the key in auth errors)."""
        for sec in self.log._secrets():
            if sec and len(sec) >= 4:
                text = text.replace(sec, "***")
        return text

    def _fail(self, err: ProviderError) -> ProviderError:
        with self._lock:
            name = type(err).__name__
            self.stats.errors[name] = self.stats.errors.get(name, 0) + 1
        return err

    def post(self, url: str, headers: dict[str, str], payload: dict) -> tuple[dict, str]:
        """Returns (parsed body, call id); the call id ties the usage line to the attempt lines in the log."""
        with self._lock:
            self.stats.calls += 1
        call_id = hashlib.sha256(f"{time.time_ns()}{id(payload)}".encode()).hexdigest()[:12]
        attempt = 0
        while True:
            t0 = time.monotonic()
            rec: dict[str, Any] = {
                "ts": time.time(),
                "call": call_id,
                "provider": self.provider,
                "model": self.model,
                "url": url,
                "attempt": attempt,
                "request_headers": headers,
                "request": payload,
            }
            err: ProviderError | None = None
            body_doc: dict | None = None
            retry_after: float | None = None
            with self._lock:
                self.stats.attempts += 1
            try:
                resp = self._session.post(url, headers=headers, data=json.dumps(payload), timeout=self.timeout_s)
                text = self._scrub(resp.text)
                rec["status"] = resp.status_code
                retry_after = parse_retry_after(resp.headers.get("retry-after"))
                if 200 <= resp.status_code < 300:
                    try:
                        body_doc = json.loads(text)
                        if not isinstance(body_doc, dict):
                            raise ValueError("top-level JSON is not an object")
                        rec["response"] = body_doc
                    except ValueError as e:
                        rec["response_text"] = text[:4000]
                        err = MalformedResponse(
                            f"unparseable response body ({e})",
                            provider=self.provider,
                            status=resp.status_code,
                            body=text,
                        )
                else:
                    rec["response_text"] = text[:4000]
                    err = classify_http_error(self.provider, resp.status_code, text, retry_after)
            except requests.Timeout as e:
                err = Timeout(f"no answer within {self.timeout_s:g} s ({type(e).__name__})", provider=self.provider)
            except requests.ConnectionError as e:
                err = ConnectionFailed(f"connection failed: {type(e).__name__}: {e}", provider=self.provider)
            except requests.RequestException as e:  # ChunkedEncodingError, ContentDecodingError, ...
                err = ConnectionFailed(f"transport error: {type(e).__name__}: {e}", provider=self.provider)
            rec["elapsed_s"] = round(time.monotonic() - t0, 4)
            if err is None:
                self.log.write(rec)
                assert body_doc is not None
                return body_doc, call_id
            rec["error"] = err.to_dict()
            if not err.retryable or attempt >= self.retry.max_retries:
                rec["final"] = True
                self.log.write(rec)
                raise self._fail(err)
            if retry_after is not None and isinstance(err, RateLimited | ServerError):
                if retry_after > self.retry.max_retry_after_s:
                    rec["final"] = True
                    self.log.write(rec)
                    raise self._fail(
                        RateLimited(
                            f"server asks to wait {retry_after:g} s "
                            f"(> max_retry_after_s={self.retry.max_retry_after_s:g})",
                            provider=self.provider,
                            status=err.status,
                            retry_after_s=retry_after,
                        )
                    )
                delay = retry_after
                rec["retry_after_s"] = retry_after
            else:
                delay = self.retry.delay(attempt, self._rng)
            rec["retry_in_s"] = round(delay, 4)
            self.log.write(rec)
            with self._lock:
                self.stats.retries += 1
            time.sleep(delay)
            attempt += 1

    def account(self, call_id: str, usage: Usage, prices: Prices) -> Usage:
        """Price one call, add it to the totals and log it (one `usage` line per successful call)."""
        usage.cost_usd = prices.cost(usage.input_tokens, usage.output_tokens)
        with self._lock:
            self.stats.input_tokens += usage.input_tokens
            self.stats.output_tokens += usage.output_tokens
            self.stats.cost_usd += usage.cost_usd
        self.log.write(
            {
                "ts": time.time(),
                "call": call_id,
                "provider": self.provider,
                "model": self.model,
                "usage": usage.model_dump(),
                "totals": self.stats.as_dict(),
            }
        )
        return usage


def post_chat(
    transport: Transport,
    url: str,
    headers: dict[str, str],
    payload: dict,
    parse: Callable[[dict], Any],
    what: str,
    provider: str,
    prices: Prices | None,
) -> Any:
    """POST one chat request, parse the answer with the provider's `parse`, account its usage.

    One place for both wire formats: a 200 whose body is not the expected shape is a MalformedResponse naming
    the provider and carrying the body (retrying it would not help), never a KeyError from deep inside."""
    doc, call_id = transport.post(url, headers, payload)
    try:
        resp = parse(doc)
    except (KeyError, TypeError, IndexError, ValueError) as e:
        raise MalformedResponse(
            f"response is not {what} ({type(e).__name__}: {e})",
            provider=provider,
            status=200,
            body=json.dumps(doc)[:2000],
        ) from e
    transport.account(call_id, resp.usage, prices)
    return resp


class HttpChatClient:
    """What the provider clients share: the API key (given, or from `api_key_env`, by default the provider's
    usual variable), prices, extra headers, the transport with its retry policy and log, and `chat`: the
    provider's payload POSTed to `chat_path` below `base_url`, its answer parsed by `parse` (`post_chat`).

    A client sets `name`, `default_base_url`, `default_key_env`, `chat_path`, `models_path`, `answer` (what one
    answer is called in a malformed-response error), `parse` (a staticmethod), `_headers` and `build_payload`."""

    name = ""
    default_base_url = ""
    default_key_env: str | None = None
    chat_path = ""
    models_path = ""
    answer = ""
    parse: Callable[[dict], ChatResponse]

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = ...,  # type: ignore[assignment]  # ... = the provider's usual variable
        timeout_s: float = 120.0,
        max_retries: int = 4,
        prices: Prices | dict | tuple | None = None,
        log_path: Path | str | None = None,
        *,
        api_key: str | None = None,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 30.0,
        max_retry_after_s: float = 120.0,
        extra_headers: dict[str, str] | None = None,
        seed: int | None = None,
    ) -> None:
        if api_key_env is ...:
            api_key_env = self.default_key_env
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self._api_key = api_key if api_key is not None else (os.environ.get(api_key_env) if api_key_env else None)
        self.prices = Prices.coerce(prices)
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
    def stats(self) -> CallStats:
        return self.transport.stats

    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def build_payload(
        self, messages: list[Message], tools: list[ToolSpec] | None, max_tokens: int, temperature: float | None
    ) -> dict:
        raise NotImplementedError

    def chat(self, messages: list[Message], tools: list[ToolSpec] | None = None, max_tokens: int = 4096,
             temperature: float | None = None) -> ChatResponse:
        payload = self.build_payload(messages, tools, max_tokens, temperature)
        return post_chat(self.transport, self.base_url + self.chat_path, self._headers(), payload, self.parse,
                         self.answer, self.name, self.prices)

    def list_models_request(self) -> tuple[str, dict[str, str]]:
        """GET endpoint and headers `physcodegym doctor` uses to test reachability without spending tokens."""
        return self.base_url + self.models_path, self._headers()
