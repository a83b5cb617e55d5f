"""Provider errors, one class per thing a caller can act on.

Retryable failures (rate limits, 5xx, dropped connections, timeouts, garbled bodies) are retried by the
transport; what escapes is either one of those after the retry budget ran out, or a 4xx that no retry can fix
(bad key, unknown model, context too long, malformed image), so callers can tell "try later" from "fix input".
"""

from __future__ import annotations


class ProviderError(Exception):
    """Base class: `status` is the HTTP status (None for transport failures), `body` a short excerpt."""

    retryable = False

    def __init__(self, message: str, *, provider: str = "", status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.body = body[:2000]

    def __str__(self) -> str:
        where = f"{self.provider}: " if self.provider else ""
        code = f"HTTP {self.status}: " if self.status else ""
        return f"{where}{code}{self.message}"

    def to_dict(self) -> dict:
        return {"type": type(self).__name__, "provider": self.provider, "status": self.status, "message": self.message}


class AuthError(ProviderError):
    """401/403: the API key is missing, wrong or lacks access."""


class ModelNotFound(ProviderError):
    """404: the model (or the endpoint path) does not exist at this base URL."""


class BadRequest(ProviderError):
    """Other 4xx: the request itself is wrong; retrying the same request cannot help."""


class ContextTooLong(BadRequest):
    """The prompt (text + images) exceeds the model's context window."""


class MalformedImage(BadRequest):
    """The server rejected an image (not a decodable PNG/JPEG, too large, wrong media type)."""


class RateLimited(ProviderError):
    """429 after the retry budget, or a Retry-After longer than the client is willing to wait."""

    retryable = True

    def __init__(self, message: str, *, retry_after_s: float | None = None, **kw) -> None:
        super().__init__(message, **kw)
        self.retry_after_s = retry_after_s


class ServerError(ProviderError):
    """5xx (including Anthropic's 529 overloaded) after the retry budget."""

    retryable = True


class ConnectionFailed(ServerError):
    """The connection was refused or dropped mid-response."""


class MalformedResponse(ServerError):
    """A 2xx whose body is not the JSON the wire format promises (truncated, wrong shape)."""


class Timeout(ProviderError):
    """No (complete) answer within the client's timeout, after the retry budget."""

    retryable = True
