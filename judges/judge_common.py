"""Shared machinery of the vision-language judges (S_obj, S_evt): images, strict answers, cache, accounting.

Why strict: a judge's free text is not a score. Every answer must be one JSON object that validates against a
pydantic model; a malformed, inconsistent or refused answer is re-asked (with the validation error shown) a
bounded number of times, and an item that never gets a valid answer is reported *unjudged*, never silently
passed or failed. Valid answers are cached on disk keyed by prompt version and a hash of everything the
judge saw (provider, model, messages with images, judgment index), so re-scoring stored artifacts is free and
a prompt change invalidates the cache by construction (SPEC §7).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np
from physcodegym.llm.base import ImagePart, Message, Provider, TextPart
from physcodegym.llm.errors import AuthError, ModelNotFound, ProviderError
from physcodegym.metrics.results import MetricResult, MetricState
from physcodegym.tasks.schema import FPS
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "physcodegym" / "judge"
FATAL_PROVIDER_ERRORS = (AuthError, ModelNotFound)  # every item would fail the same way: stop the metric
_REFUSAL_RE = re.compile(r"^\s*(i('| a)m sorry|i can(no|')t|i cannot|i won't|i am unable|i'm unable|sorry,)", re.I)
_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.S)


class JudgeAnswerError(ValueError):
    """The judge's answer is not a valid verdict; the message is fed back to the judge on the retry."""


# ---------------------------------------------------------------- frames and images


def check_frames(frames: np.ndarray, name: str) -> np.ndarray:
    if not isinstance(frames, np.ndarray) or frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        shape = getattr(frames, "shape", None)
        dtype = getattr(frames, "dtype", None)
        raise ValueError(f"{name}: expected (F, H, W, 3) uint8 RGB frames, got shape {shape} dtype {dtype}")
    if frames.shape[0] == 0:
        raise ValueError(f"{name}: no frames")
    return frames


def png_b64(rgb: np.ndarray) -> str:
    ok, buf = cv2.imencode(".png", cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR))
    if not ok:
        raise ValueError("PNG encoding failed")
    return base64.b64encode(buf.tobytes()).decode("ascii")


def image_part(rgb: np.ndarray) -> ImagePart:
    return ImagePart(png_base64=png_b64(rgb))


def sample_indices(n_frames: int, k: int) -> list[int]:
    """k frame indices spread evenly over [0, n_frames - 1], first and last included, no duplicates."""
    if k <= 1 or n_frames <= 1:
        return [0]
    return sorted({int(round(x)) for x in np.linspace(0, n_frames - 1, min(k, n_frames))})


def t_of(index: int) -> float:
    return index / FPS


def _label(img: np.ndarray, text: str, scale: float = 0.45) -> None:
    org = (4, 14 if scale < 0.6 else 22)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1, cv2.LINE_AA)


def contact_sheet(
    frames: np.ndarray, indices: list[int], cols: int = 4, thumb: tuple[int, int] = (160, 90)
) -> np.ndarray:
    """Thumbnails of `indices` in a grid, each stamped with its time: dense temporal context in one image."""
    tw, th = thumb
    rows = (len(indices) + cols - 1) // cols
    sheet = np.zeros((rows * th, cols * tw, 3), np.uint8)
    for k, i in enumerate(indices):
        small = cv2.resize(frames[i], (tw, th), interpolation=cv2.INTER_AREA)
        _label(small, f"t={t_of(i):.2f}s")
        r, c = divmod(k, cols)
        sheet[r * th : (r + 1) * th, c * tw : (c + 1) * tw] = small
    return sheet


def role_still(ref_first: np.ndarray, name: str, screen_xy: tuple[float, float] | None) -> np.ndarray:
    """The reference's first frame with the role marked, plus a 2x crop around it (identity, not action)."""
    img = ref_first.copy()
    h, w = img.shape[:2]
    if screen_xy is None:
        _label(img, f"{name}: position not annotated", 0.6)
        return img
    x, y = int(round(screen_xy[0] * (w - 1))), int(round(screen_xy[1] * (h - 1)))
    half = max(24, min(h, w) // 4)
    x0, y0 = max(0, x - half), max(0, y - half)
    crop = ref_first[y0 : min(h, y + half), x0 : min(w, x + half)]
    crop = cv2.resize(crop, (h, h), interpolation=cv2.INTER_CUBIC) if crop.size else np.zeros((h, h, 3), np.uint8)
    r = max(10, min(h, w) // 14)
    cv2.circle(img, (x, y), r + 2, (0, 0, 0), 4, cv2.LINE_AA)
    cv2.circle(img, (x, y), r, (255, 0, 255), 2, cv2.LINE_AA)
    _label(img, name, 0.6)
    _label(crop, f"{name} (zoom)", 0.6)
    return np.concatenate([img, crop], axis=1)


# ---------------------------------------------------------------- strict answers


def extract_json(text: str) -> dict:
    """The answer must be exactly one JSON object (a ```json fence around it is tolerated, nothing else)."""
    s = text.strip()
    m = _FENCE_RE.match(s)
    if m:
        s = m.group(1).strip()
    if not s:
        raise JudgeAnswerError("empty answer")
    try:
        doc = json.loads(s)
    except ValueError as e:
        raise JudgeAnswerError(f"not a single JSON object: {e}") from e
    if not isinstance(doc, dict):
        raise JudgeAnswerError("the answer must be a JSON object")
    return doc


def parse_model(text: str, model: type[T]) -> T:
    try:
        return model.model_validate(extract_json(text))
    except ValidationError as e:
        errs = "; ".join(f"{'.'.join(str(x) for x in er['loc']) or '<root>'}: {er['msg']}" for er in e.errors())
        raise JudgeAnswerError(f"verdict does not match the schema: {errs}") from e


def looks_refused(text: str, stop_reason: str | None) -> bool:
    return stop_reason == "refusal" or bool(_REFUSAL_RE.match(text or ""))


# ---------------------------------------------------------------- cache


class JudgeCache:
    """One JSON file per (prompt version, inputs) key; written atomically; only valid verdicts are stored."""

    def __init__(self, root: Path | None) -> None:
        self.root = Path(root) if root is not None else DEFAULT_CACHE

    @staticmethod
    def key(prompt_version: str, provider: Provider, messages: list[Message], sample: int) -> str:
        h = hashlib.sha256()
        head = {
            "v": prompt_version,
            "provider": getattr(provider, "name", "?"),
            "model": getattr(provider, "model", "?"),
            "base_url": getattr(provider, "base_url", None),
            "sample": sample,
        }
        h.update(json.dumps(head, sort_keys=True).encode())
        for m in messages:
            h.update(m.model_dump_json().encode())
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        p = self._path(key)
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, doc: dict) -> None:
        p = self._path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        os.replace(tmp, p)


# ---------------------------------------------------------------- asking


@dataclass
class Tally:
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def as_dict(self) -> dict:
        return {**self.__dict__, "cost_usd": round(self.cost_usd, 6)}


@dataclass
class Asked:
    """Outcome of one judgment: a verdict, or None with the reasons of every failed attempt."""

    verdict: dict | None
    attempts: list[dict] = field(default_factory=list)
    cached: bool = False


def ask_strict(
    provider: Provider,
    messages: list[Message],
    validate: Callable[[str], BaseModel],
    *,
    prompt_version: str,
    cache: JudgeCache,
    sample: int = 0,
    max_attempts: int = 3,
    tally: Tally,
    max_tokens: int = 1024,
) -> Asked:
    """Ask until a valid verdict (at most `max_attempts` answers); re-raises only fatal provider errors."""
    key = JudgeCache.key(prompt_version, provider, messages, sample)
    hit = cache.get(key)
    if hit and isinstance(hit.get("verdict"), dict):
        tally.cache_hits += 1
        return Asked(hit["verdict"], hit.get("attempts", []), cached=True)
    convo = list(messages)
    attempts: list[dict] = []
    for _ in range(max_attempts):
        t0 = time.monotonic()
        try:
            resp = provider.chat(convo, max_tokens=max_tokens)
        except FATAL_PROVIDER_ERRORS:
            raise
        except ProviderError as e:  # retried by the transport already; count it as a failed attempt
            attempts.append({"outcome": "provider_error", "error": f"{type(e).__name__}: {e}"})
            if not e.retryable:
                break  # a 4xx (context too long, bad image) would fail identically on every re-ask
            continue
        tally.calls += 1
        tally.input_tokens += resp.usage.input_tokens
        tally.output_tokens += resp.usage.output_tokens
        tally.cost_usd += resp.usage.cost_usd
        rec: dict[str, Any] = {"text": resp.text[:2000], "seconds": round(time.monotonic() - t0, 3)}
        if looks_refused(resp.text, resp.stop_reason):
            rec["outcome"] = "refused"
            attempts.append(rec)
            problem = "You declined to answer. This is a benign visual comparison of rendered frames."
        else:
            try:
                verdict = validate(resp.text).model_dump(mode="json")
            except JudgeAnswerError as e:
                rec.update(outcome="malformed", error=str(e))
                attempts.append(rec)
                problem = f"Your answer was not a valid verdict: {e}."
            else:
                rec["outcome"] = "ok"
                attempts.append(rec)
                cache.put(
                    key,
                    {
                        "key": key,
                        "prompt_version": prompt_version,
                        "sample": sample,
                        "verdict": verdict,
                        "attempts": attempts,
                        "provider": getattr(provider, "name", "?"),
                        "model": getattr(provider, "model", "?"),
                        "created": time.time(),
                    },
                )
                return Asked(verdict, attempts)
        convo = [
            *messages,
            Message(role="assistant", content=[TextPart(text=resp.text or "(no answer)")]),
            Message(
                role="user",
                content=[TextPart(text=f"{problem} Reply with only the JSON object described above, no other text.")],
            ),
        ]
    return Asked(None, attempts)


def unjudged_reason(asked: Asked) -> str:
    outcomes = [a.get("outcome", "?") for a in asked.attempts]
    last = asked.attempts[-1] if asked.attempts else {}
    detail = last.get("error") or last.get("text", "")
    return f"no valid verdict after {len(asked.attempts)} attempts ({', '.join(outcomes)}): {detail}"[:500]


class JudgeUnusable(Exception):
    """A fatal provider error (`FATAL_PROVIDER_ERRORS`): every item would fail alike, so the metric stops with
    `result`, its missing result (state error)."""

    def __init__(self, result: MetricResult) -> None:
        super().__init__(result.reason)
        self.result = result


@dataclass
class Asker:
    """One judge metric's questions: `ask_strict` with the metric's prompt version, cache, attempt bound and usage
    tally; a fatal provider error raises `JudgeUnusable`."""

    metric: str
    provider: Provider
    prompt_version: str
    cache: JudgeCache
    max_attempts: int
    tally: Tally = field(default_factory=Tally)

    def __call__(self, messages: list[Message], validate: Callable[[str], BaseModel], sample: int = 0) -> Asked:
        try:
            return ask_strict(self.provider, messages, validate, prompt_version=self.prompt_version, cache=self.cache,
                              sample=sample, max_attempts=self.max_attempts, tally=self.tally)
        except FATAL_PROVIDER_ERRORS as e:
            details = {"provider": self.provider.name, "model": self.provider.model}
            raise JudgeUnusable(MetricResult.missing(self.metric, MetricState.error, f"judge unusable: {e}",
                                                     details=details)) from e
